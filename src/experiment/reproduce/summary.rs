//! The outcome as a markdown summary and as one self-contained HTML page, each claim
//! set beside the reference bundle's.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::judge::{ClaimResult, ErosionCheck};
use super::outcome::Reproduction;
use super::suite::SweepPlan;
use crate::experiment::report::html::{charts, escape, self_contained_page, HtmlError};
use crate::experiment::results::{Meta, POINTS_CSV};
use crate::readable_number;
use crate::table::markdown_table;

/// The columns of the claims table.
const HEADER: [&str; 6] = [
    "claim",
    "verdict",
    "effect [95% interval]",
    "stable",
    "erosion against its base",
    "reference",
];

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
    match c.interval {
        Some((low, high)) => format!(
            "{} (net change {} [{}, {}] of its base's, margin {}%)",
            c.verdict,
            n(c.ratio),
            n(low),
            n(high),
            n(c.margin * 100.0)
        ),
        None => format!("{} (net change {} of its base's)", c.verdict, n(c.ratio)),
    }
}

/// The reference's outcome of the same claim, and whether the verdicts agree.
fn reference_text(claim: &ClaimResult, reference: Option<&Reproduction>) -> String {
    let Some(r) = reference else {
        return "-".into();
    };
    match r.claims.iter().find(|c| c.id == claim.id) {
        Some(c) => {
            let effect = c.effect.as_ref().map_or("-".into(), |e| e.text());
            let agree = match c.verdict == claim.verdict {
                true => "agrees",
                false => "differs",
            };
            format!("{}, {effect} ({agree})", c.verdict.as_str())
        }
        None => "not in the reference".into(),
    }
}

/// Each claim's row of the table, as text.
fn rows(outcome: &Reproduction, reference: Option<&Reproduction>) -> Vec<[String; 6]> {
    outcome
        .claims
        .iter()
        .map(|c| {
            [
                c.topic.clone(),
                c.verdict.as_str().into(),
                c.effect.as_ref().map_or("-".into(), |e| e.text()),
                stable_text(c.stable).into(),
                erosion_text(c.erosion.as_ref()),
                reference_text(c, reference),
            ]
        })
        .collect()
}

/// The lines that say what ran, where and at what scale.
fn provenance(
    outcome: &Reproduction,
    reference: Option<(&Path, &Reproduction)>,
    reference_dir: &Path,
) -> Vec<String> {
    let s = &outcome.scale;
    let mut lines = vec![
        format!(
            "Device: {}, driver {}, Vulkan {}; vkerode commit {}.",
            outcome.device, outcome.driver, outcome.vulkan, outcome.commit
        ),
        format!(
            "Scale: {}² erosion-noise terrain, {} droplets of lifetime 30 per run, {} droplet seeds per point; {:.0} s of a {:.0} s budget (calibration: {:.3} s a run and {:.3} µs a cell).",
            s.size,
            s.droplets,
            s.seeds,
            outcome.elapsed_s,
            outcome.budget_s,
            outcome.calibration.fixed_s,
            outcome.calibration.per_cell_s * 1e6
        ),
        format!(
            "Speed verdicts: a bootstrap interval of the ratio of pooled median GPU times, against a noise threshold of {}.",
            outcome.threshold_source
        ),
    ];
    lines.push(match reference {
        Some((dir, r)) => format!(
            "Reference: {} (`{}`), {}² with {} seeds, commit {}.",
            r.device,
            dir.display(),
            r.scale.size,
            r.scale.seeds,
            r.commit
        ),
        None => format!(
            "Reference: none at `{}` (reproduce.json); give one with --reference.",
            reference_dir.display()
        ),
    });
    lines
}

/// The claim's effect (what it is, and its value with the interval's level), then its
/// further figures.
fn effect_and_figures(c: &ClaimResult) -> Vec<(String, String)> {
    let effect = c.effect.iter().map(|e| {
        let level = match e.interval {
            Some(_) => " [95% interval]",
            None => "",
        };
        (format!("effect: {}{level}", e.what), e.text())
    });
    effect.chain(c.figures.iter().cloned()).collect()
}

/// The summary in markdown.
pub fn markdown(
    outcome: &Reproduction,
    reference: Option<(&Path, &Reproduction)>,
    reference_dir: &Path,
) -> String {
    let mut out = format!("# The paper's claims on {}\n\n", outcome.device);
    for line in provenance(outcome, reference, reference_dir) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    markdown_table(
        &mut out,
        &HEADER,
        rows(outcome, reference.map(|(_, r)| r))
            .into_iter()
            .map(Vec::from),
    );
    for c in &outcome.claims {
        let _ = write!(
            out,
            "\n## {}: {}\n\n> {}\n\nTested: {}\n\nVerdict: **{}**: {}.\n",
            c.topic,
            c.verdict.as_str(),
            c.paper,
            c.tested,
            c.verdict.as_str(),
            c.why
        );
        let figures = effect_and_figures(c);
        if !figures.is_empty() {
            out.push('\n');
            for (what, value) in figures {
                let _ = writeln!(out, "- {what}: {value}");
            }
        }
    }
    out
}

/// The summary as one self-contained page, with the charts of each sweep (its plan
/// and results folder).
pub fn html(
    outcome: &Reproduction,
    reference: Option<(&Path, &Reproduction)>,
    reference_dir: &Path,
    sweeps: &[(&SweepPlan, PathBuf)],
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
    for row in rows(outcome, reference.map(|(_, r)| r)) {
        let verdict_class = row[1].replace(' ', "-");
        body += "<tr>";
        for (i, cell) in row.iter().enumerate() {
            match i {
                1 => {
                    let _ = write!(body, "<td class=\"{verdict_class}\">{}</td>", escape(cell));
                }
                _ => {
                    let _ = write!(body, "<td>{}</td>", escape(cell));
                }
            }
        }
        body += "</tr>\n";
    }
    body += "</table>\n";
    for c in &outcome.claims {
        let _ = write!(
            body,
            "<h2>{}: {}</h2>\n<blockquote>{}</blockquote>\n<p>Tested: {}</p>\n<p>Verdict: <b>{}</b>: {}.</p>\n",
            escape(&c.topic),
            escape(c.verdict.as_str()),
            escape(&c.paper),
            escape(&c.tested),
            escape(c.verdict.as_str()),
            escape(&c.why)
        );
        let figures = effect_and_figures(c);
        if !figures.is_empty() {
            body += "<ul>\n";
            for (what, value) in &figures {
                let _ = writeln!(body, "<li>{}: {}</li>", escape(what), escape(value));
            }
            body += "</ul>\n";
        }
    }
    for (plan, folder) in sweeps {
        let meta = Meta::read(folder).ok();
        let _ = writeln!(
            body,
            "<h2>The {} sweep</h2>\n<p>{}</p>",
            escape(plan.name),
            escape(plan.description)
        );
        body += &charts(&folder.join(POINTS_CSV), meta.as_ref())?;
    }
    Ok(self_contained_page(
        &format!("The paper's claims on {}", outcome.device),
        &body,
    ))
}
