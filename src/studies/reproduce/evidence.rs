//! The files a claim is judged from: a step's results folders (one per round of seeds)
//! read as one table, with each point's repetitions; the grid's runs likewise. Every
//! query takes a draw of seeds (the seeds run, or a bootstrap draw of them with
//! repeats), so that a verdict and its fragility are computed by one rule.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::erosion::droplets::{
    key, MASS_INTENDED, MASS_LOST, MASS_TRUNCATED, SUBGROUP_CONFLICTS_PER_1000, UNSTABLE,
};
use crate::experiment::report::check_set;
use crate::experiment::results::columns::ALGORITHM;
use crate::experiment::results::{
    read_points, read_samples, PointRow, ResultsError, StopReason, POINTS_CSV, SAMPLES_CSV,
};
use crate::readable_number;
use crate::stats::bootstrap::MIN_SAMPLES;
use crate::stats::{median, Moments};
use crate::studies::strategy_comparison::{
    records_base_level, RunRecord, RunRecords, STRATEGIES_CSV,
};

/// A setting the claims pick rows by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    Algorithm,
    Workgroup,
    Spawn,
    Tile,
    Stagger,
    Atomics,
}

impl Setting {
    const ALL: [Setting; 6] = [
        Setting::Algorithm,
        Setting::Workgroup,
        Setting::Spawn,
        Setting::Tile,
        Setting::Stagger,
        Setting::Atomics,
    ];

    /// Its key, as the setting declares it (its column in points.csv).
    fn key(self) -> &'static str {
        match self {
            Setting::Algorithm => ALGORITHM.0,
            Setting::Workgroup => key::WORKGROUP,
            Setting::Spawn => key::SPAWN,
            Setting::Tile => key::TILE,
            Setting::Stagger => key::STAGGER,
            Setting::Atomics => key::ATOMICS,
        }
    }
}

/// A figure of a row the claims weigh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// A point's net change (points.csv).
    TotalHeightChange,
    /// Cells that differ between a point's two timed reruns (points.csv).
    RerunCellsDiffering,
    /// The droplets' contention figures (points.csv).
    SubgroupConflicts,
    MassIntended,
    MassLost,
    MassTruncated,
    /// A grid run's median GPU time and eroded depth (strategies.csv).
    GpuMs,
    ErodedDepth,
}

impl Figure {
    /// Derived from the last variant, so a figure added before it is counted.
    const COUNT: usize = Figure::ErodedDepth as usize + 1;
}

/// One row of a step as the claims read it: a point of its sweep (points.csv, through
/// the typed reader) or a run of the grid (strategies.csv, through its record). What its
/// file lacks is none.
#[derive(Clone, Debug, Default)]
pub struct StepRow {
    seed: Option<u32>,
    /// As written, by [`Setting`].
    settings: [Option<String>; Setting::ALL.len()],
    /// By [`Figure`].
    figures: [Option<f64>; Figure::COUNT],
    /// Whether the point ran unstable, as written (`true`/`false`).
    unstable: Option<String>,
    /// The point, why its repetitions stopped and their relative IQR.
    point: Option<String>,
    stop_reason: Option<String>,
    gpu_ms_rel_iqr: Option<f64>,
}

impl StepRow {
    fn of_point(row: PointRow) -> Self {
        let text = |key| row.setting(key).map(str::to_string);
        let mut figures = [None; Figure::COUNT];
        for (figure, value) in [
            (Figure::TotalHeightChange, row.total_height_change()),
            (Figure::RerunCellsDiffering, row.rerun_cells_differing()),
            (
                Figure::SubgroupConflicts,
                row.setting_number(SUBGROUP_CONFLICTS_PER_1000.0),
            ),
            (Figure::MassIntended, row.setting_number(MASS_INTENDED.0)),
            (Figure::MassLost, row.setting_number(MASS_LOST.0)),
            (Figure::MassTruncated, row.setting_number(MASS_TRUNCATED.0)),
        ] {
            figures[figure as usize] = value;
        }
        Self {
            seed: row.setting_number(key::DROPLET_SEED).map(|s| s as u32),
            settings: Setting::ALL.map(|s| text(s.key())),
            figures,
            unstable: text(UNSTABLE.0),
            point: row.point_text().map(str::to_string),
            stop_reason: row.stop_reason().map(str::to_string),
            gpu_ms_rel_iqr: row.gpu_ms_rel_iqr(),
        }
    }

    fn of_run(run: RunRecord) -> Self {
        let mut row = Self {
            seed: run.seed,
            ..Self::default()
        };
        row.settings[Setting::Algorithm as usize] = run.algorithm;
        row.figures[Figure::GpuMs as usize] = run.gpu_ms;
        row.figures[Figure::ErodedDepth as usize] = run.eroded_depth;
        row
    }

    pub fn setting(&self, setting: Setting) -> Option<&str> {
        self.settings[setting as usize].as_deref()
    }

    pub fn figure(&self, figure: Figure) -> Option<f64> {
        self.figures[figure as usize]
    }
}

/// One step's rows over all its folders.
pub struct StepFiles {
    rows: Vec<StepRow>,
    /// Each row's (folder, point, worker), which key its repetitions.
    keys: Vec<(usize, usize, usize)>,
    samples: BTreeMap<(usize, usize, usize), Vec<f64>>,
    /// Whether its rows record the sea the grid drained into (grid runs since it).
    records_base_level: bool,
}

/// The results folders under `dir` that hold `file`, in order (each round's own).
pub fn folders_holding(dir: &Path, file: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.join(file).is_file() {
            found.push(path);
        } else if path.is_dir() {
            found.extend(folders_holding(&path, file));
        }
    }
    found
}

/// Keeps the first folder's columns (a file with none takes the next's), and refuses a
/// folder whose file's columns are not those.
fn same_header(first: &mut Vec<String>, next: &[String], path: &Path) -> Result<(), ResultsError> {
    if first.is_empty() {
        *first = next.to_vec();
        return Ok(());
    }
    if first != next {
        return Err(ResultsError::Mismatch {
            path: path.to_path_buf(),
            reason: "its columns are not those of the step's other folders".into(),
        });
    }
    Ok(())
}

impl StepFiles {
    /// Whether its rows record the sea the grid drained into: grid runs from before
    /// it were measured by another method.
    pub fn records_base_level(&self) -> bool {
        self.records_base_level
    }

    /// A sweep's folders: each one's points.csv (on the current columns) and samples.csv.
    pub fn sweep(folders: &[PathBuf]) -> Result<Self, ResultsError> {
        let mut files = Self::empty();
        let mut header = Vec::new();
        for (f, folder) in folders.iter().enumerate() {
            // Judged only on times compare would judge: finite, above 0, its samples'.
            check_set(folder)?;
            let points = read_points(&folder.join(POINTS_CSV))?;
            same_header(&mut header, &points.header, folder)?;
            for row in points.point_rows() {
                let index = |n: Option<f64>| n.map(|v| v as usize);
                files.keys.push((
                    f,
                    index(row.point()).unwrap_or(row.index()),
                    index(row.worker()).unwrap_or(0),
                ));
                files.rows.push(StepRow::of_point(row));
            }
            for s in read_samples(&folder.join(SAMPLES_CSV))? {
                files
                    .samples
                    .entry((f, s.point, s.worker))
                    .or_default()
                    .push(s.gpu_ms);
            }
        }
        Ok(files)
    }

    /// The grid's folders: each one's strategies.csv.
    pub fn grid(folders: &[PathBuf]) -> Result<Self, ResultsError> {
        let mut files = Self::empty();
        let mut header = Vec::new();
        for (f, folder) in folders.iter().enumerate() {
            let runs = RunRecords::read(&folder.join(STRATEGIES_CSV))?;
            same_header(&mut header, &runs.header, folder)?;
            files.keys.extend((0..runs.runs.len()).map(|r| (f, r, 0)));
            files
                .rows
                .extend(runs.runs.into_iter().map(StepRow::of_run));
        }
        files.records_base_level = records_base_level(&header);
        Ok(files)
    }

    fn empty() -> Self {
        Self {
            rows: Vec::new(),
            keys: Vec::new(),
            samples: BTreeMap::new(),
            records_base_level: false,
        }
    }

    fn seed_of(&self, row: usize) -> Option<u32> {
        self.rows[row].seed
    }

    /// The seeds its rows ran, each once, in order.
    pub fn seeds(&self) -> Vec<u32> {
        let mut seeds: Vec<u32> = (0..self.rows.len())
            .filter_map(|r| self.seed_of(r))
            .collect();
        seeds.sort_unstable();
        seeds.dedup();
        seeds
    }

    /// The rows whose settings hold these values.
    pub fn rows(&self, filter: &[(Setting, &str)]) -> Vec<usize> {
        (0..self.rows.len())
            .filter(|&r| {
                filter
                    .iter()
                    .all(|(s, v)| self.rows[r].setting(*s) == Some(*v))
            })
            .collect()
    }

    /// The values `setting` takes in the rows, in their order, each once.
    pub fn distinct(&self, rows: &[usize], setting: Setting) -> Vec<String> {
        let mut values: Vec<String> = Vec::new();
        for v in rows.iter().filter_map(|&r| self.rows[r].setting(setting)) {
            if !values.iter().any(|seen| seen == v) {
                values.push(v.to_string());
            }
        }
        values
    }

    /// The rows of each seed of `draw`, in its order, a seed drawn twice twice.
    pub fn drawn(&self, rows: &[usize], draw: &[u32]) -> Vec<usize> {
        draw.iter()
            .flat_map(|&seed| {
                rows.iter()
                    .copied()
                    .filter(move |&r| self.seed_of(r) == Some(seed))
            })
            .collect()
    }

    /// Every repetition of the rows' points.
    pub fn pooled(&self, rows: &[usize]) -> Vec<f64> {
        rows.iter()
            .filter_map(|&r| self.samples.get(&self.keys[r]))
            .flatten()
            .copied()
            .collect()
    }

    /// The median of the rows' pooled repetitions, in ms.
    pub fn median_ms(&self, rows: &[usize]) -> Option<f64> {
        median(&self.pooled(rows))
    }

    /// For each seed of `draw` that has one: the mean of `figure` over its rows.
    pub fn per_seed(&self, rows: &[usize], figure: Figure, draw: &[u32]) -> Vec<(u32, f64)> {
        draw.iter()
            .filter_map(|&seed| {
                let values: Vec<f64> = self
                    .drawn(rows, &[seed])
                    .into_iter()
                    .filter_map(|r| self.rows[r].figure(figure))
                    .collect();
                (!values.is_empty()).then(|| (seed, Moments::of(&values).mean))
            })
            .collect()
    }

    /// For each seed of `draw`: the median time of its rows' pooled repetitions.
    pub fn seed_medians(&self, rows: &[usize], draw: &[u32]) -> Vec<(u32, f64)> {
        draw.iter()
            .filter_map(|&seed| Some((seed, self.median_ms(&self.drawn(rows, &[seed]))?)))
            .collect()
    }

    /// Why the rows' times cannot be weighed, where one cannot: it stopped before its
    /// noise target, or ran fewer repetitions than a verdict needs.
    pub fn unweighable(&self, rows: &[usize]) -> Option<String> {
        rows.iter().find_map(|&r| {
            let row = &self.rows[r];
            let point = row.point.as_deref().unwrap_or("?");
            let reason = row.stop_reason.as_deref().unwrap_or("");
            if reason != StopReason::NoiseTarget.as_str() {
                let iqr = row.gpu_ms_rel_iqr.map(readable_number);
                return Some(format!(
                    "point {point} stopped at {} (relative IQR {})",
                    if reason.is_empty() {
                        "no noise target"
                    } else {
                        reason
                    },
                    iqr.unwrap_or_else(|| "-".into())
                ));
            }
            let reps = self.samples.get(&self.keys[r]).map_or(0, Vec::len);
            (reps < MIN_SAMPLES).then(|| {
                format!("point {point} ran {reps} repetitions, fewer than the {MIN_SAMPLES} a verdict needs")
            })
        })
    }

    /// Whether every row is stable: `Some(false)` if one is not, none where unjudged.
    pub fn stable(&self, rows: &[usize]) -> Option<bool> {
        let judged: Vec<bool> = rows
            .iter()
            .filter_map(|&r| match self.rows[r].unstable.as_deref()? {
                "true" => Some(false),
                "false" => Some(true),
                _ => None,
            })
            .collect();
        (!judged.is_empty()).then(|| judged.iter().all(|&s| s))
    }
}

/// The values of `a` beside those of `b` of the same seed, in `a`'s order (a seed
/// drawn twice, twice); a seed one side lacks is left out.
pub fn joined(a: &[(u32, f64)], b: &[(u32, f64)]) -> Vec<(u32, f64, f64)> {
    let by_seed: BTreeMap<u32, f64> = b.iter().copied().collect();
    a.iter()
        .filter_map(|&(seed, x)| Some((seed, x, *by_seed.get(&seed)?)))
        .collect()
}

/// For each seed both sides have, new over base, where it is finite.
pub fn paired_ratios(base: &[(u32, f64)], new: &[(u32, f64)]) -> Vec<(u32, f64)> {
    joined(base, new)
        .into_iter()
        .map(|(seed, b, n)| (seed, n / b))
        .filter(|(_, r)| r.is_finite())
        .collect()
}

#[cfg(test)]
pub(super) mod planted {
    //! Step files from planted rows, for the judges' tests.
    use super::*;
    use crate::experiment::results::CsvText;

    /// A planted point: its settings as (column, value), its seed, and its repetitions.
    pub struct Row<'a> {
        pub settings: Vec<(&'a str, String)>,
        pub seed: u32,
        pub times_ms: Vec<f64>,
    }

    pub fn files(rows: &[Row]) -> StepFiles {
        let mut header: Vec<String> = vec!["point".into(), key::DROPLET_SEED.into()];
        for row in rows {
            for (column, _) in &row.settings {
                if !header.iter().any(|h| h == column) {
                    header.push(column.to_string());
                }
            }
        }
        let mut table = CsvText {
            header: header.clone(),
            rows: Vec::new(),
        };
        let mut files = StepFiles::empty();
        for (i, row) in rows.iter().enumerate() {
            let mut values = vec![i.to_string(), row.seed.to_string()];
            for column in &header[2..] {
                let value = row.settings.iter().find(|(c, _)| c == column);
                values.push(value.map_or(String::new(), |(_, v)| v.clone()));
            }
            table.rows.push(values);
            files.keys.push((0, i, 0));
            files.samples.insert((0, i, 0), row.times_ms.clone());
        }
        files.rows = table.point_rows().map(StepRow::of_point).collect();
        files
    }
}

#[cfg(test)]
mod tests {
    use super::planted::{files, Row};
    use super::*;

    #[test]
    fn a_draw_repeats_the_seeds_it_draws_twice_and_leaves_out_the_others() {
        let row = |seed: u32, ms: f64| Row {
            settings: vec![("total_height_change", format!("{ms}"))],
            seed,
            times_ms: vec![ms; 3],
        };
        let f = files(&[row(1, 1.0), row(2, 2.0), row(3, 3.0)]);
        let all = f.rows(&[]);
        assert_eq!(f.seeds(), [1, 2, 3]);
        assert_eq!(f.drawn(&all, &[3, 3, 1]), [2, 2, 0]);
        assert_eq!(f.pooled(&f.drawn(&all, &[2, 2])), [2.0; 6]);
        assert_eq!(
            f.per_seed(&all, Figure::TotalHeightChange, &[3, 1]),
            [(3, 3.0), (1, 1.0)]
        );
        assert_eq!(
            paired_ratios(&[(1, 2.0), (2, 4.0)], &[(1, 1.0), (2, 1.0)]),
            [(1, 0.5), (2, 0.25)]
        );
        // Paired by seed, not by position: a seed one side lacks leaves the rest paired.
        assert_eq!(
            paired_ratios(&[(1, 2.0), (2, 4.0), (3, 8.0)], &[(2, 1.0), (3, 2.0)]),
            [(2, 0.25), (3, 0.25)]
        );
    }
}
