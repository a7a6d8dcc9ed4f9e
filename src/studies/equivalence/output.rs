//! What an equivalence run writes: `runs.csv` (one row per run, its provenance and
//! every figure), `verdicts.csv` (one row per variant, reference and figure, the map
//! test and the pair's verdict), `verdicts.md` (the same for reading) and
//! `equivalence.json` (everything, with the margins). The columns are written once
//! here, for the files and for docs/results.md.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::figures::{figure_names, CHANGE_FIGURES};
use super::plan::{EquivalenceOptions, Plan, PAPER};
use super::run::{Role, RunRecord, Runs};
use super::verdict::{
    judge, margin_of, verdict_word, BySeed, FigureSamples, Groups, PairVerdict, ALPHA,
    DEFAULT_MARGIN, INTERVAL_LEVEL, MAP_TEST, MARGINS,
};
use crate::experiment::results::columns::{ColumnDeclaration, COMMIT, DRIVER};
use crate::experiment::Provenance;
use crate::stats::Verdict;
use crate::table::{values_of, Column, Section};
use crate::terrain::files::{write_atomically, WriteError};
use crate::terrain::metrics::Landform;

pub const RUNS_CSV: &str = "runs.csv";
pub const VERDICTS_CSV: &str = "verdicts.csv";
pub const VERDICTS_MD: &str = "verdicts.md";
pub const JSON_FILE: &str = "equivalence.json";

/// The reference names in verdicts: the paper's kernel (a) and the sequential CPU
/// reference (b).
const SEQUENTIAL: &str = "sequential";

/// The plan a row of runs.csv or verdicts.csv belongs to, declared once for both.
const EXPERIMENT: ColumnDeclaration = (
    "experiment",
    "text",
    "the plan's name (the config's, or `equivalence`)",
);
const CONFIG_HASH: ColumnDeclaration = (
    "config_hash",
    "FNV-1a hex",
    "the plan as understood, description aside: equal for equal runs",
);

/// A run's row, before its figures.
#[derive(Clone, Debug, Default, Serialize)]
struct RunColumns {
    experiment: String,
    config_hash: String,
    configuration: String,
    group: String,
    role: String,
    engine: String,
    droplet_seed: u32,
    job: String,
    device: String,
    driver: String,
    commit: String,
    cached: bool,
    kernel: String,
    dispatches: usize,
    gpu_ms: Option<f64>,
    wall_ms: f64,
    settings: String,
}

impl Section for RunColumns {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        EXPERIMENT,
        CONFIG_HASH,
        ("configuration", "text", "the configuration(s) the run belongs to (its axes' values), joined by `; `"),
        ("group", "text", "the speed variant, `paper` for reference (a), `sequential` for reference (b)"),
        ("role", "text", "variant, paper (reference a) or sequential (reference b)"),
        ("engine", "text", "gpu or cpu-sequential"),
        ("droplet_seed", "seed", "the run's droplet seed"),
        ("job", "FNV-1a hex", "the job of its sequential reference: its settings without the GPU-only keys, and the terrain"),
        ("device", "text", "the Vulkan device, or the CPU reference"),
        DRIVER,
        COMMIT,
        ("cached", "true/false", "a sequential run read from a cache, not run now"),
        ("kernel", "text", "the module that ran (GPU only)"),
        ("dispatches", "count", "dispatches of the run (GPU only)"),
        ("gpu_ms", "ms", "GPU time of the run (timestamps)"),
        ("wall_ms", "ms", "host time of the run, upload and read-back included"),
        ("settings", "text", "its settings that differ from the defaults, KEY=VALUE joined by spaces"),
    ];
}

/// One row of verdicts.csv.
#[derive(Clone, Debug, Default, Serialize)]
struct VerdictColumns {
    experiment: String,
    config_hash: String,
    device: String,
    driver: String,
    commit: String,
    configuration: String,
    variant: String,
    reference: String,
    figure: String,
    n_variant: usize,
    n_reference: usize,
    paired: Option<bool>,
    pairs: Option<usize>,
    mean_variant: Option<f64>,
    sd_variant: Option<f64>,
    mean_reference: Option<f64>,
    sd_reference: Option<f64>,
    difference: Option<f64>,
    relative_difference: Option<f64>,
    interval_low: Option<f64>,
    interval_high: Option<f64>,
    margin_relative: Option<f64>,
    margin: Option<f64>,
    df: Option<f64>,
    p_equivalent: Option<f64>,
    p_equivalent_holm: Option<f64>,
    map_statistic: Option<f64>,
    p_different: Option<f64>,
    p_different_holm: Option<f64>,
    verdict: String,
}

impl Section for VerdictColumns {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        EXPERIMENT,
        CONFIG_HASH,
        ("device", "text", "the Vulkan device the GPU runs ran on"),
        DRIVER,
        COMMIT,
        ("configuration", "text", "the configuration (its axes' values)"),
        ("variant", "text", "the speed variant"),
        ("reference", "text", "paper (reference a: the paper's kernel in the same configuration) or sequential (reference b: the sequential CPU reference of the job)"),
        ("figure", "text", "a figure of runs.csv; `change_map` for the permutation test on the smoothed change maps; `(all)` for the pair's verdict"),
        ("n_variant", "runs", "the variant's runs with the figure"),
        ("n_reference", "runs", "the reference's runs with the figure"),
        ("paired", "true/false", "whether the tests paired the runs by droplet seed (at least 2 seeds at which both sides have the figure; for change_map, enough pairs for the paired test to reach alpha: 6 at 0.05); false: Welch's tests, or the unpaired map test"),
        ("pairs", "seeds", "the seeds at which both sides have the figure (change_map: a map): the paired tests' n"),
        ("mean_variant", "the figure's unit", "the variant's mean"),
        ("sd_variant", "the figure's unit", "its standard deviation across seeds (n - 1)"),
        ("mean_reference", "the figure's unit", "the reference's mean"),
        ("sd_reference", "the figure's unit", "its standard deviation across seeds"),
        ("difference", "the figure's unit", "the difference tested: the mean over the seed pairs of variant - reference where paired, else mean_variant - mean_reference"),
        (
            "relative_difference",
            "share",
            "difference / |mean_reference|; empty where that mean is 0",
        ),
        ("interval_low", "the figure's unit", "the low end of the difference's 90% interval (TOST's at alpha 0.05, before Holm's correction; paired where paired, else Welch's)"),
        ("interval_high", "the figure's unit", "its high end"),
        ("margin_relative", "share", "the figure's margin of equivalence as a share of |mean_reference|, fixed in advance (the margins table)"),
        ("margin", "the figure's unit", "margin_relative x |mean_reference|"),
        ("df", "degrees of freedom", "pairs - 1 where paired, else Welch-Satterthwaite's (empty where the differences have no spread)"),
        ("p_equivalent", "p", "TOST: the larger one-sided p (paired t, else Welch's) of a difference of at least the margin"),
        ("p_equivalent_holm", "p", "p_equivalent after Holm's correction across the pair's figures"),
        ("map_statistic", "height units squared", "change_map: the mean over blocks of the squared difference of the groups' mean smoothed change maps"),
        ("p_different", "p", "the two-sided p of equal means (paired t, else Welch's); for change_map, the permutation test's p (sign flips within seed pairs where paired, else shuffles of the runs)"),
        ("p_different_holm", "p", "p_different after Holm's correction across the pair's figures and its map test"),
        ("verdict", "text", "equivalent (TOST after Holm <= 0.05), different (the difference test after Holm <= 0.05 and not equivalent) or inconclusive; for (all): different if a figure or the map is, equivalent if every figure is, else inconclusive"),
    ];
}

/// The figure columns of runs.csv: the change's, then the landform's.
pub fn figure_columns() -> Vec<Column> {
    CHANGE_FIGURES
        .iter()
        .map(|&(name, unit, meaning)| Column::new(name, unit, meaning))
        .chain(Landform::columns().into_iter().map(|c| Column {
            meaning: format!("of the map after: {}", c.meaning),
            ..c
        }))
        .collect()
}

/// The columns of runs.csv: the run's, then one per figure.
pub fn runs_columns() -> Vec<Column> {
    let mut columns = RunColumns::columns();
    columns.extend(figure_columns());
    columns
}

pub fn verdicts_columns() -> Vec<Column> {
    VerdictColumns::columns()
}

/// A figure's margin, as the report lists it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Margin {
    pub figure: String,
    pub relative: f64,
    pub reason: String,
}

/// One variant against one reference in one configuration.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct PairReport {
    pub variant: String,
    /// paper or sequential.
    pub reference: String,
    pub runs_variant: usize,
    pub runs_reference: usize,
    #[serde(flatten)]
    pub verdict: PairVerdict,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ConfigurationReport {
    pub label: String,
    /// The reference (a)'s settings, its seed aside.
    pub settings: serde_json::Value,
    pub pairs: Vec<PairReport>,
}

/// What equivalence.json says.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct EquivalenceReport {
    pub experiment: String,
    pub description: String,
    pub config_hash: String,
    /// Where the GPU runs ran.
    pub provenance: Provenance,
    pub options: EquivalenceOptions,
    pub alpha: f64,
    pub default_margin: f64,
    pub margins: Vec<Margin>,
    pub references_run: usize,
    pub references_cached: usize,
    pub configurations: Vec<ConfigurationReport>,
}

/// Every figure's name over the runs, in order: the known ones, then any other.
fn names_over(runs: &[RunRecord]) -> Vec<String> {
    let mut names = figure_names();
    for r in runs {
        for n in r.figures.names() {
            if !names.iter().any(|m| m == n) {
                names.push(n.to_string());
            }
        }
    }
    names
}

fn groups_of<'r>(
    names: &[String],
    variant: &[&'r RunRecord],
    reference: &[&'r RunRecord],
) -> Groups<'r> {
    let values = |runs: &[&RunRecord], name: &str| -> BySeed<f64> {
        runs.iter()
            .filter_map(|r| Some((r.seed, r.figures.get(name)?)))
            .filter(|(_, v)| v.is_finite())
            .collect()
    };
    let maps = |runs: &[&'r RunRecord]| -> BySeed<&'r [f32]> {
        runs.iter()
            .map(|r| (r.seed, r.map.values.as_slice()))
            .collect()
    };
    let shape = variant
        .first()
        .map_or((0, 0, 0), |r| (r.map.width, r.map.height, r.map.block));
    Groups {
        figures: names
            .iter()
            .map(|n| FigureSamples {
                figure: n.clone(),
                variant: values(variant, n),
                reference: values(reference, n),
            })
            .filter(|f| !f.variant.is_empty() || !f.reference.is_empty())
            .collect(),
        variant_maps: maps(variant),
        reference_maps: maps(reference),
        map_shape: shape,
    }
}

impl EquivalenceReport {
    pub fn judge(plan: &Plan, runs: &Runs) -> Self {
        let names = names_over(&runs.records);
        let in_group = |label: &str, group: &str| -> Vec<&RunRecord> {
            let mut found: Vec<&RunRecord> = runs
                .records
                .iter()
                .filter(|r| r.group == group && r.configurations.iter().any(|c| c == label))
                .collect();
            found.sort_by_key(|r| r.seed);
            found
        };
        let configurations = plan
            .configurations
            .iter()
            .map(|c| {
                let paper = in_group(&c.label, PAPER);
                let paper: Vec<&RunRecord> = paper
                    .into_iter()
                    .filter(|r| r.role == Role::Paper)
                    .collect();
                let sequential = in_group(&c.label, SEQUENTIAL);
                let pairs = plan
                    .variants
                    .iter()
                    .flat_map(|v| {
                        let runs: Vec<&RunRecord> = in_group(&c.label, &v.label)
                            .into_iter()
                            .filter(|r| r.role == Role::Variant)
                            .collect();
                        [(PAPER, &paper), (SEQUENTIAL, &sequential)].map(|(name, reference)| {
                            let seed = crate::hash::fnv1a64(
                                format!("{}|{}|{name}", c.label, v.label).as_bytes(),
                            ) as u32;
                            PairReport {
                                variant: v.label.clone(),
                                reference: name.into(),
                                runs_variant: runs.len(),
                                runs_reference: reference.len(),
                                verdict: judge(
                                    &groups_of(&names, &runs, reference),
                                    plan.options.permutations as usize,
                                    seed,
                                ),
                            }
                        })
                    })
                    .collect();
                ConfigurationReport {
                    label: c.label.clone(),
                    settings: serde_json::to_value(&c.settings).unwrap_or_default(),
                    pairs,
                }
            })
            .collect();
        let listed: BTreeSet<&str> = MARGINS.iter().map(|m| m.0).collect();
        let margins = MARGINS
            .iter()
            .map(|&(figure, relative, reason)| Margin {
                figure: figure.into(),
                relative,
                reason: reason.into(),
            })
            .chain(
                names
                    .iter()
                    .filter(|n| !listed.contains(n.as_str()))
                    .map(|n| Margin {
                        figure: n.clone(),
                        relative: margin_of(n).0,
                        reason: "not in the table: the default margin".into(),
                    }),
            )
            .collect();
        Self {
            experiment: plan.name.clone(),
            description: plan.description.clone(),
            config_hash: plan.config_hash.clone(),
            provenance: runs.provenance.clone(),
            options: plan.options.clone(),
            alpha: ALPHA,
            default_margin: DEFAULT_MARGIN,
            margins,
            references_run: runs.references_run,
            references_cached: runs.references_cached,
            configurations,
        }
    }

    /// The verdict of `variant` against `reference` in configuration `label`.
    pub fn verdict(&self, label: &str, variant: &str, reference: &str) -> Option<Verdict> {
        self.configurations
            .iter()
            .find(|c| c.label == label)?
            .pairs
            .iter()
            .find(|p| p.variant == variant && p.reference == reference)
            .map(|p| p.verdict.verdict)
    }

    /// One line per pair, for the console.
    pub fn lines(&self) -> Vec<String> {
        self.configurations
            .iter()
            .flat_map(|c| {
                c.pairs.iter().map(move |p| {
                    format!(
                        "{}: {} against {}: {}",
                        c.label,
                        p.variant,
                        reference_name(&p.reference),
                        summary(&p.verdict)
                    )
                })
            })
            .collect()
    }
}

fn reference_name(reference: &str) -> &'static str {
    match reference {
        PAPER => "the paper's kernel (a)",
        _ => "the sequential reference (b)",
    }
}

/// `equivalent (9 of 9 figures)`, `different (2 of 9 figures; map)`.
fn summary(p: &PairVerdict) -> String {
    let n = p.figures.len();
    let detail = match p.verdict {
        Verdict::Same | Verdict::Unclear => {
            format!("{} of {n} figures equivalent", p.equivalent_figures)
        }
        Verdict::Lower | Verdict::Higher | Verdict::Different => {
            let map = if p.map.different {
                "; the change map"
            } else {
                ""
            };
            format!("{} of {n} figures different{map}", p.different_figures)
        }
    };
    format!("{} ({detail})", verdict_word(p.verdict))
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

fn csv_text(header: &[String], rows: &[Vec<String>]) -> Result<Vec<u8>, std::io::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(header).map_err(std::io::Error::other)?;
    for row in rows {
        writer.write_record(row).map_err(std::io::Error::other)?;
    }
    writer
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))
}

fn runs_rows(plan: &Plan, runs: &Runs, names: &[String]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header: Vec<String> = RunColumns::columns().into_iter().map(|c| c.name).collect();
    header.extend(names.iter().cloned());
    let rows = runs
        .records
        .iter()
        .map(|r| {
            let columns = RunColumns {
                experiment: plan.name.clone(),
                config_hash: plan.config_hash.clone(),
                configuration: r.configurations.join("; "),
                group: r.group.clone(),
                role: r.role.as_str().into(),
                engine: match r.role {
                    Role::Sequential => "cpu-sequential".into(),
                    _ => "gpu".into(),
                },
                droplet_seed: r.seed,
                job: r.job.clone(),
                device: r.device.clone(),
                driver: r.driver.clone(),
                commit: r.commit.clone(),
                cached: r.cached,
                kernel: r.kernel.clone(),
                dispatches: r.dispatches,
                gpu_ms: r.gpu_ms,
                wall_ms: r.wall_ms,
                settings: r.settings.clone(),
            };
            let mut row = values_of(&columns);
            row.extend(
                names
                    .iter()
                    .map(|n| r.figures.get(n).map_or(String::new(), |v| v.to_string())),
            );
            row
        })
        .collect();
    (header, rows)
}

fn verdict_rows(report: &EquivalenceReport) -> Vec<Vec<String>> {
    let p = &report.provenance;
    let base = |c: &ConfigurationReport, pair: &PairReport| VerdictColumns {
        experiment: report.experiment.clone(),
        config_hash: report.config_hash.clone(),
        device: p.device.clone(),
        driver: p.driver_info.clone(),
        commit: p.git_commit.to_string(),
        configuration: c.label.clone(),
        variant: pair.variant.clone(),
        reference: pair.reference.clone(),
        ..VerdictColumns::default()
    };
    let mut rows = Vec::new();
    for c in &report.configurations {
        for pair in &c.pairs {
            for f in &pair.verdict.figures {
                rows.push(values_of(&VerdictColumns {
                    figure: f.figure.clone(),
                    n_variant: f.variant.n,
                    n_reference: f.reference.n,
                    paired: Some(f.paired),
                    pairs: Some(f.pairs),
                    mean_variant: finite(f.variant.mean),
                    sd_variant: finite(f.variant.sd),
                    mean_reference: finite(f.reference.mean),
                    sd_reference: finite(f.reference.sd),
                    difference: finite(f.difference),
                    relative_difference: f.relative_difference,
                    interval_low: f.interval_low.and_then(finite),
                    interval_high: f.interval_high.and_then(finite),
                    margin_relative: Some(f.margin_relative),
                    margin: finite(f.margin),
                    df: f.df,
                    p_equivalent: finite(f.p_equivalent),
                    p_equivalent_holm: finite(f.p_equivalent_holm),
                    p_different: finite(f.p_different),
                    p_different_holm: finite(f.p_different_holm),
                    verdict: verdict_word(f.verdict).into(),
                    ..base(c, pair)
                }));
            }
            let map = &pair.verdict.map;
            rows.push(values_of(&VerdictColumns {
                figure: MAP_TEST.into(),
                n_variant: pair.runs_variant,
                n_reference: pair.runs_reference,
                paired: map.test.map(|t| t.paired),
                pairs: Some(map.pairs),
                map_statistic: map.test.map(|t| t.statistic),
                p_different: map.test.map(|t| t.p),
                p_different_holm: finite(map.p_different_holm),
                verdict: match map.different {
                    true => "different",
                    false => "no difference shown",
                }
                .into(),
                ..base(c, pair)
            }));
            rows.push(values_of(&VerdictColumns {
                figure: "(all)".into(),
                n_variant: pair.runs_variant,
                n_reference: pair.runs_reference,
                verdict: verdict_word(pair.verdict.verdict).into(),
                ..base(c, pair)
            }));
        }
    }
    rows
}

fn number(v: f64) -> String {
    if v.is_finite() {
        crate::readable_number(v)
    } else {
        "—".into()
    }
}

fn percent(v: f64) -> String {
    if v.is_finite() {
        format!("{:+.3}%", 100.0 * v)
    } else {
        "—".into()
    }
}

/// A figure's test as verdicts.md names it.
fn test_name(paired: bool, pairs: usize) -> String {
    match paired {
        true => format!("paired, {pairs} seeds"),
        false => "Welch".into(),
    }
}

fn p_value(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2e}")
    } else {
        "—".into()
    }
}

/// verdicts.md: the verdicts of every pair, the margins, then each pair's figures.
pub fn markdown(report: &EquivalenceReport) -> String {
    let mut out = format!("# Equivalence: {}\n\n", report.experiment);
    if !report.description.trim().is_empty() {
        let _ = writeln!(out, "{}\n", report.description.trim());
    }
    let o = &report.options;
    let p = &report.provenance;
    let _ = writeln!(
        out,
        "Device: {} ({} {}), vkerode {}. Each variant and the paper's kernel (reference a) ran droplet seeds {}..{} \
         ({} runs each); the sequential CPU reference (reference b) seeds {}..{} ({} runs{}). Each figure's tests pair \
         the runs by droplet seed where both sides ran it (at least two seeds; Welch's otherwise), at alpha {} after \
         Holm's correction across each pair's figures; the change maps' permutation test with {} relabellings, paired \
         likewise where the paired test can reach alpha (docs/equivalence.md).\n",
        p.device,
        p.driver,
        p.driver_info,
        p.git_commit,
        o.first_seed,
        o.first_seed + o.seeds - 1,
        o.seeds,
        o.first_seed,
        o.first_seed + o.reference_seeds - 1,
        o.reference_seeds,
        match report.references_cached {
            0 => String::new(),
            n => format!(", {n} of them from the cache"),
        },
        ALPHA,
        o.permutations,
    );
    out.push_str("## Verdicts\n\n| configuration | variant | against the paper's kernel (a) | against the sequential reference (b) |\n| --- | --- | --- | --- |\n");
    for c in &report.configurations {
        let variants: Vec<&str> =
            c.pairs
                .iter()
                .map(|p| p.variant.as_str())
                .fold(Vec::new(), |mut v, name| {
                    if !v.contains(&name) {
                        v.push(name);
                    }
                    v
                });
        for v in variants {
            let of = |reference: &str| {
                c.pairs
                    .iter()
                    .find(|p| p.variant == v && p.reference == reference)
                    .map_or("—".to_string(), |p| {
                        format!("**{}**", summary(&p.verdict))
                    })
            };
            let _ = writeln!(
                out,
                "| {} | {v} | {} | {} |",
                c.label,
                of(PAPER),
                of(SEQUENTIAL)
            );
        }
    }
    out.push_str("\n## Margins\n\nFixed in advance, as a share of the reference's mean.\n\n| figure | margin | why |\n| --- | --- | --- |\n");
    for m in &report.margins {
        let _ = writeln!(
            out,
            "| {} | {}% | {} |",
            m.figure,
            100.0 * m.relative,
            m.reason
        );
    }
    for c in &report.configurations {
        for pair in &c.pairs {
            let _ = writeln!(
                out,
                "\n## {}: {} against {}\n\n{} runs against {}: **{}**.\n",
                c.label,
                pair.variant,
                reference_name(&pair.reference),
                pair.runs_variant,
                pair.runs_reference,
                summary(&pair.verdict)
            );
            let _ = writeln!(
                out,
                "| figure | variant (mean ± sd) | reference (mean ± sd) | test | difference | {}% interval | margin | p TOST (Holm) | p different (Holm) | verdict |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
                100.0 * INTERVAL_LEVEL
            );
            for f in &pair.verdict.figures {
                let relative = |end: Option<f64>| {
                    percent(end.map_or(f64::NAN, |e| e / f.reference.mean.abs()))
                };
                let _ = writeln!(
                    out,
                    "| {} | {} ± {} | {} ± {} | {} | {} | [{}, {}] | ±{}% | {} | {} | {} |",
                    f.figure,
                    number(f.variant.mean),
                    number(f.variant.sd),
                    number(f.reference.mean),
                    number(f.reference.sd),
                    test_name(f.paired, f.pairs),
                    percent(f.relative_difference.unwrap_or(f64::NAN)),
                    relative(f.interval_low),
                    relative(f.interval_high),
                    100.0 * f.margin_relative,
                    p_value(f.p_equivalent_holm),
                    p_value(f.p_different_holm),
                    verdict_word(f.verdict)
                );
            }
            let map = &pair.verdict.map;
            let _ = writeln!(
                out,
                "| {MAP_TEST} ({}x{} blocks of {} cells) | | | {} | {} | | | | {} | {} |",
                map.width,
                map.height,
                map.block,
                match map.test {
                    Some(t) if t.paired => format!("sign flips, {} pairs", map.pairs),
                    _ => "shuffles".into(),
                },
                map.test.map_or("—".into(), |t| number(t.statistic)),
                p_value(map.p_different_holm),
                match map.different {
                    true => "different",
                    false => "no difference shown",
                }
            );
        }
    }
    out
}

/// What makes one file's bytes.
type FileBytes<'a> = dyn Fn() -> Result<Vec<u8>, std::io::Error> + 'a;

/// Writes runs.csv, verdicts.csv, verdicts.md and equivalence.json into `dir`.
pub fn write_all(
    dir: &Path,
    plan: &Plan,
    runs: &Runs,
    report: &EquivalenceReport,
) -> Result<Vec<PathBuf>, WriteError> {
    let names = names_over(&runs.records);
    let (header, rows) = runs_rows(plan, runs, &names);
    let verdicts_header: Vec<String> = VerdictColumns::columns()
        .into_iter()
        .map(|c| c.name)
        .collect();
    let verdicts = verdict_rows(report);
    let mut written = Vec::new();
    let files: [(&str, Box<FileBytes>); 4] = [
        (RUNS_CSV, Box::new(|| csv_text(&header, &rows))),
        (
            VERDICTS_CSV,
            Box::new(|| csv_text(&verdicts_header, &verdicts)),
        ),
        (VERDICTS_MD, Box::new(|| Ok(markdown(report).into_bytes()))),
        (
            JSON_FILE,
            Box::new(|| serde_json::to_vec_pretty(report).map_err(std::io::Error::other)),
        ),
    ];
    for (name, bytes) in files {
        let path = dir.join(name);
        write_atomically(&path, |out| std::io::Write::write_all(out, &bytes()?))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_columns_are_documented() {
        assert_eq!(crate::table::undocumented::<super::RunColumns>(), None);
        assert_eq!(crate::table::undocumented::<super::VerdictColumns>(), None);
    }
}
