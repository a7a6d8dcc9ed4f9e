//! The outcome as a markdown summary and as one self-contained HTML page: each claim
//! beside the reference at the same scale, a forest plot of the claims' effects against
//! their bands, each step's settings with their seeds pooled, and the grid's pictures.

use std::fmt::Write as _;
use std::path::Path;

use super::evidence::{joined, Figure, Setting, StepFiles};
use super::judge::Evidence;
use super::judge::FRAGILITY_MIN_SEEDS;
use super::outcome::{
    sides, Beside, ClaimResult, ErosionCheck, ReferenceBundle, Reproduction, FRAGILE_SHARE,
};
use super::suite::{Step, STEPS};
use crate::experiment::report::html::{
    escape, pictures, self_contained_page, strip_xml_declaration, HtmlError,
};
use crate::experiment::report::intervals::{IntervalChart, IntervalRow};
use crate::readable_number;
use crate::stats::bootstrap::MIN_SAMPLES;
use crate::stats::{median_interval, Moments};
use crate::table::markdown_table;
use crate::terrain::pictures::drawn;

/// The columns of the claims table.
const HEADER: [&str; 7] = [
    "claim",
    "verdict",
    "effect [95% interval] (unit; direction)",
    "scale, seeds",
    "stable",
    "erosion against its base",
    "reference at the same scale",
];

const CHART_WIDTH: u32 = 1000;

fn stable_text(stable: Option<bool>) -> &'static str {
    match stable {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    }
}

fn erosion_text(check: Option<&ErosionCheck>) -> String {
    let Some(c) = check else { return "-".into() };
    let n = readable_number;
    let word = match c.verdict.differs() {
        true => "different",
        false => c.verdict.as_str(),
    };
    match c.interval {
        Some((low, high)) => format!(
            "{word} (net change {} [{}, {}] of its base's, margin {}%)",
            n(c.ratio),
            n(low),
            n(high),
            n(c.margin * 100.0)
        ),
        None => format!("{word} (net change {} of its base's)", n(c.ratio)),
    }
}

fn reference_text(claim: &ClaimResult, reference: Option<&ReferenceBundle>) -> String {
    reference.map_or("-".into(), |r| r.beside(claim).text(claim))
}

/// Each claim's row of the table, as text.
fn rows(outcome: &Reproduction, reference: Option<&ReferenceBundle>) -> Vec<[String; 7]> {
    outcome
        .claims
        .iter()
        .map(|c| {
            [
                c.topic.clone(),
                c.verdict_text(),
                c.effect.as_ref().map_or("-".into(), |e| e.text()),
                format!("{}², {} seeds", c.scale.size, c.seeds.len()),
                stable_text(c.stable).into(),
                erosion_text(c.erosion.as_ref()),
                reference_text(c, reference),
            ]
        })
        .collect()
}

/// The lines that say what ran, where, at what scale and in how much time.
fn provenance(
    outcome: &Reproduction,
    reference: Option<&ReferenceBundle>,
    reference_dir: Option<&Path>,
) -> Vec<String> {
    let s = &outcome.scale;
    let c = &outcome.calibration;
    let kept = outcome.elapsed_s / outcome.budget_s;
    let mut lines = vec![
        format!(
            "Device: {}, driver {}, Vulkan {}; vkerode commit {}.",
            outcome.device, outcome.driver, outcome.vulkan, outcome.commit
        ),
        format!(
            "Scale: {}² erosion-noise terrain{}, {} droplets of lifetime 30 per run; each claim's seeds are in the table.",
            s.size,
            if s.on_ladder() { "" } else { " (below the ladder of 1024², 2048² and 4096² that a reference holds)" },
            s.droplets
        ),
    ];
    if let Some(choice) = &outcome.scale_choice {
        lines.push(format!("Why {}²: {}.", s.size, choice.why));
    }
    lines.extend([
        format!(
            "Time: {:.0} s of a {:.0} s budget ({:.0}%), {:.0} s predicted by the calibration (a droplet point {:.3} s + {:.3} µs a cell, a grid seed {:.3} s + {:.3} µs a cell{}){}.",
            outcome.elapsed_s,
            outcome.budget_s,
            kept * 100.0,
            outcome.predicted_s,
            c.droplet_point.fixed_s,
            c.droplet_point.per_cell_s * 1e6,
            c.grid_seed.fixed_s,
            c.grid_seed.per_cell_s * 1e6,
            match c.stopped.is_empty() {
                true => String::new(),
                false => format!(", measured at {}; no larger side: {}", c.sides_text(), c.stopped),
            },
            if kept > 1.1 { "; the budget was overrun by more than 10%" } else { "" }
        ),
        match outcome.cuts.is_empty() {
            true => "Cut to keep the budget: nothing.".into(),
            false => format!("Cut to keep the budget: {}.", outcome.cuts.join("; ")),
        },
        format!(
            "Speed verdicts: a bootstrap interval of the ratio of pooled median GPU times (each point at least {MIN_SAMPLES} repetitions, at its noise target, and every seed's own ratio on the same side), against a noise threshold of {}. A verdict that more than {}% of bootstrap draws of its seeds (from {FRAGILITY_MIN_SEEDS} seeds) would judge otherwise is fragile.",
            outcome.threshold_source,
            readable_number(FRAGILE_SHARE * 100.0)
        ),
    ]);
    lines.push(match reference {
        Some(r) => format!(
            "Reference: {} ({}) at {}; each claim is set beside it at its own scale only.",
            r.device(),
            r.dir.display(),
            sides(&r.sizes())
        ),
        None => match reference_dir {
            Some(dir) => format!(
                "Reference: none at {} (reproduce.json); give one with --reference.",
                dir.display()
            ),
            None => "Reference: none (--no-reference).".into(),
        },
    });
    lines
}

/// The claim's effect (what it is, and its value with the interval's level), then its
/// further figures, its seeds and what the reference says across scales.
fn details(c: &ClaimResult, reference: Option<&ReferenceBundle>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = c
        .effect
        .iter()
        .map(|e| {
            let level = if e.interval.is_some() {
                " [95% interval]"
            } else {
                ""
            };
            (format!("effect: {}{level}", e.what), e.text())
        })
        .collect();
    if let Some(band) = c.band {
        out.push((
            "band of no effect".into(),
            format!(
                "{} to {}",
                readable_number(band.low),
                readable_number(band.high)
            ),
        ));
    }
    out.extend(c.figures.iter().cloned());
    let seeds: Vec<String> = c.seeds.iter().map(u32::to_string).collect();
    out.push(("droplet seeds".into(), seeds.join(", ")));
    if let Some(share) = c.flip_share {
        out.push((
            "bootstrap draws of the seeds that judge it otherwise".into(),
            format!("{}%", readable_number(share * 100.0)),
        ));
    }
    if let Some(note) = reference.and_then(|r| r.scale_dependence(&c.id)) {
        out.push(("the reference".into(), note));
    }
    out
}

/// The summary in markdown.
pub fn markdown(
    outcome: &Reproduction,
    reference: Option<&ReferenceBundle>,
    reference_dir: Option<&Path>,
) -> String {
    let mut out = format!("# The paper's claims on {}\n\n", outcome.device);
    for line in provenance(outcome, reference, reference_dir) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    markdown_table(
        &mut out,
        &HEADER,
        rows(outcome, reference).into_iter().map(Vec::from),
    );
    for c in &outcome.claims {
        let _ = write!(
            out,
            "\n## {}: {}\n\n> {}\n\nTested: {}\n\nVerdict: **{}**: {}.\n",
            c.topic,
            c.verdict_text(),
            c.paper,
            c.tested,
            c.verdict_text(),
            c.why
        );
        out.push('\n');
        for (what, value) in details(c, reference) {
            let _ = writeln!(out, "- {what}: {value}");
        }
    }
    out
}

/// The forest plot: every claim whose effect is a ratio, its interval against its band,
/// and the reference's at the same scale in the row below.
fn forest(outcome: &Reproduction, reference: Option<&ReferenceBundle>) -> IntervalChart {
    let mut rows = Vec::new();
    for c in &outcome.claims {
        let Some(effect) = c.effect.as_ref().filter(|e| e.unit == "ratio") else {
            continue;
        };
        let band = c.band.map(|b| (b.low, b.high));
        rows.push(IntervalRow {
            label: format!("{}: {}", c.topic, c.verdict_text()),
            value: effect.value,
            interval: effect.interval,
            band,
            reference: false,
        });
        let beside = reference.map(|r| r.beside(c));
        if let Some(Beside::Agrees(r) | Beside::Differs(r)) = beside {
            if let Some(e) = &r.effect {
                rows.push(IntervalRow {
                    label: format!("  reference, {}²: {}", r.scale.size, r.verdict_text()),
                    value: e.value,
                    interval: e.interval,
                    band,
                    reference: true,
                });
            }
        }
    }
    IntervalChart {
        title: "Each claim's effect with its 95% interval; shaded: its band of no effect".into(),
        x_label: "new / base (a ratio, log scale; lower is better for every one)".into(),
        log_x: true,
        rows,
    }
}

/// Numbers in numeric order; text keeps the sweep's order (its axis as written).
fn numeric_order(values: &mut [String]) {
    if values.iter().all(|v| v.parse::<f64>().is_ok()) {
        values.sort_by(|a, b| {
            let number = |v: &String| v.parse::<f64>().unwrap_or(f64::NAN);
            number(a).total_cmp(&number(b))
        });
    }
}

/// A row of the median GPU time of `rows`' repetitions, every seed pooled, with the
/// median's 95% interval.
fn time_row(files: &StepFiles, label: String, rows: &[usize]) -> Option<IntervalRow> {
    let pooled = files.pooled(rows);
    Some(IntervalRow {
        label,
        value: files.median_ms(rows)?,
        interval: median_interval(&pooled),
        band: None,
        reference: false,
    })
}

/// A row of the mean over seeds of the figure `column` in `rows`, with its 95% Student interval.
fn mean_row(
    files: &StepFiles,
    label: String,
    rows: &[usize],
    column: Figure,
) -> Option<IntervalRow> {
    let values: Vec<f64> = files
        .per_seed(rows, column, &files.seeds())
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    let m = Moments::of(&values);
    m.mean.is_finite().then(|| IntervalRow {
        label,
        value: m.mean,
        interval: m.mean_interval(0.95),
        band: None,
        reference: false,
    })
}

/// One row per value of `setting` (in numeric order), `label` naming it.
fn rows_by(
    files: &StepFiles,
    setting: Setting,
    label: impl Fn(&str) -> String,
    row: impl Fn(&StepFiles, String, &[usize]) -> Option<IntervalRow>,
) -> Vec<IntervalRow> {
    let mut values = files.distinct(&files.rows(&[]), setting);
    numeric_order(&mut values);
    values
        .iter()
        .filter_map(|v| row(files, label(v), &files.rows(&[(setting, v)])))
        .collect()
}

/// The charts of one step: its settings, seeds pooled.
fn step_charts(step: Step, files: &StepFiles) -> Vec<IntervalChart> {
    let time = |title: &str, rows: Vec<IntervalRow>| {
        IntervalChart {
        title: title.into(),
        x_label: "median GPU time per run, ms (every seed's repetitions pooled; 95% interval of the median)".into(),
        log_x: false,
        rows,
    }
    };
    match step.name() {
        "workgroup" => vec![time(
            "The paper's kernel by workgroup size",
            rows_by(files, Setting::Workgroup, |w| format!("workgroup {w}"), time_row),
        )],
        "batching" => {
            let mut rows: Vec<IntervalRow> =
                time_row(files, "global spawning".into(), &files.rows(&[(Setting::Spawn, "global")]))
                    .into_iter()
                    .collect();
            let tiled = files.rows(&[(Setting::Spawn, "tiled")]);
            let mut tiles = files.distinct(&tiled, Setting::Tile);
            numeric_order(&mut tiles);
            rows.extend(tiles.iter().rev().filter_map(|t| {
                let of_tile = files.rows(&[(Setting::Spawn, "tiled"), (Setting::Tile, t)]);
                time_row(files, format!("tiled, {t}² tiles"), &of_tile)
            }));
            vec![time("Global against tiled spawning (workgroup 64)", rows)]
        }
        "stagger" => vec![
            time(
                "2 passes, unstaggered and staggered",
                rows_by(files, Setting::Stagger, |s| format!("stagger {s}"), time_row),
            ),
            IntervalChart {
                title: "Subgroup conflicts, unstaggered and staggered".into(),
                x_label: "same-cell adds within a subgroup per 1000 atomics (mean over seeds, 95% interval)".into(),
                log_x: false,
                rows: rows_by(files, Setting::Stagger, |s| format!("stagger {s}"), |f, l, r| {
                    mean_row(f, l, r, Figure::SubgroupConflicts)
                }),
            },
        ],
        "atomics" => vec![time(
            "The paper's int atomics against float, racy and deterministic adds",
            rows_by(files, Setting::Atomics, |a| a.to_string(), time_row),
        )],
        _ => vec![IntervalChart {
            title: "The cost of erosion: droplets and the grid at matched water".into(),
            x_label: "GPU ms per height unit of eroded depth (mean over seeds, 95% interval; lower is cheaper)".into(),
            log_x: true,
            rows: rows_by(files, Setting::Algorithm, |a| a.to_string(), |f, l, rows| {
                let per_seed = |column| f.per_seed(rows, column, &f.seeds());
                let costs: Vec<f64> = joined(&per_seed(Figure::GpuMs), &per_seed(Figure::ErodedDepth))
                    .into_iter()
                    .map(|(_, ms, depth)| ms / depth)
                    .collect();
                let m = Moments::of(&costs);
                m.mean.is_finite().then(|| IntervalRow {
                    label: l,
                    value: m.mean,
                    interval: m.mean_interval(0.95),
                    band: None,
                    reference: false,
                })
            }),
        }],
    }
}

fn figure(chart: &IntervalChart) -> String {
    // A chart that cannot be drawn is said so on the page, which keeps the rest.
    match drawn(|| chart.svg(CHART_WIDTH)) {
        Ok(Some(svg)) => format!("<figure>{}</figure>\n", strip_xml_declaration(&svg)),
        Ok(None) => format!(
            "<p class=\"none\">{}: nothing to draw.</p>\n",
            escape(&chart.title)
        ),
        Err(reason) => format!(
            "<p class=\"none\">{}: not drawn ({}).</p>\n",
            escape(&chart.title),
            escape(&reason.to_string())
        ),
    }
}

/// The summary as one self-contained page.
pub fn html(
    outcome: &Reproduction,
    reference: Option<&ReferenceBundle>,
    reference_dir: Option<&Path>,
    evidence: &Evidence,
    grid_pictures: Option<&Path>,
) -> Result<String, HtmlError> {
    let mut body = String::new();
    for line in provenance(outcome, reference, reference_dir) {
        let _ = writeln!(body, "<p class=\"note\">{}</p>", escape(&line));
    }
    body += "<table>\n<tr>";
    for h in HEADER {
        let _ = write!(body, "<th>{}</th>", escape(h));
    }
    body += "</tr>\n";
    for (c, row) in outcome.claims.iter().zip(rows(outcome, reference)) {
        let verdict_class = c.verdict.as_str().replace(' ', "-");
        body += "<tr>";
        for (i, cell) in row.iter().enumerate() {
            let class = if i == 1 { verdict_class.as_str() } else { "" };
            let _ = write!(body, "<td class=\"{class}\">{}</td>", escape(cell));
        }
        body += "</tr>\n";
    }
    body += "</table>\n<h2>The claims' effects</h2>\n";
    body += &figure(&forest(outcome, reference));
    body += "<p class=\"note\">The racy adds' lost share and the determinism count are not ratios: the table and their sections give them.</p>\n";
    for c in &outcome.claims {
        let _ = write!(
            body,
            "<h2>{}: {}</h2>\n<blockquote>{}</blockquote>\n<p>Tested: {}</p>\n<p>Verdict: <b>{}</b>: {}.</p>\n<ul>\n",
            escape(&c.topic),
            escape(&c.verdict_text()),
            escape(&c.paper),
            escape(&c.tested),
            escape(&c.verdict_text()),
            escape(&c.why)
        );
        for (what, value) in details(c, reference) {
            let _ = writeln!(
                body,
                "<li>{}: {}</li>",
                escape(what.as_str()),
                escape(&value)
            );
        }
        body += "</ul>\n";
    }
    for step in STEPS {
        let Some(files) = evidence.steps.get(step.name()) else {
            continue;
        };
        let _ = writeln!(
            body,
            "<h2>The {} step</h2>\n<p>{}</p>",
            escape(step.name()),
            escape(step.description())
        );
        for chart in step_charts(step, files) {
            body += &figure(&chart);
        }
    }
    if let Some(folder) = grid_pictures {
        body += "<h2>The grid's pictures (the first seed)</h2>\n";
        for (path, mime, data) in pictures(folder)? {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let _ = writeln!(
                body,
                "<figure><img alt=\"{}\" src=\"data:{mime};base64,{data}\"><figcaption>{}</figcaption></figure>",
                escape(name.as_deref().unwrap_or("")),
                escape(name.as_deref().unwrap_or(""))
            );
        }
    }
    Ok(self_contained_page(
        &format!("The paper's claims on {}", outcome.device),
        &body,
    ))
}
