//! Named baselines, as criterion.rs keeps them: `compare NEW --save-baseline NAME`
//! copies a results set into `BASELINES/NAME/` (by default `results/baselines/NAME/`),
//! and `compare NEW --baseline NAME` compares against it. A baseline is a copy, not a
//! link, so the set it came from may be rerun or deleted. It is written whole or not at
//! all (a staged folder), a name is one plain file name so nothing is written outside
//! the baselines folder, and an existing baseline is replaced only with `--force`.

use std::path::{Path, PathBuf};

use thiserror::Error;

use super::points::check_set;
use crate::experiment::results::{
    set_file, ResultsError, FAILED_CSV, META_JSON, POINTS_CSV, SAMPLES_CSV,
};
use crate::terrain::files::write_atomically;
use crate::terrain::output::{OutputError, StagedFolder};
use crate::PathIoError;

/// Where named baselines live unless `--baselines` says otherwise: beside the sweeps'
/// default `results/`.
pub const BASELINES_DIR: &str = "results/baselines";

/// The files of a set a baseline keeps, where the set has them; points.csv it must.
const KEPT: [&str; 4] = [POINTS_CSV, SAMPLES_CSV, META_JSON, FAILED_CSV];

/// The longest baseline name.
const MAX_NAME: usize = 64;

#[derive(Debug, Error)]
pub enum BaselineError {
    #[error("{name:?} is not a baseline name: {reason}")]
    Name { name: String, reason: String },
    #[error("no baseline {name:?} in {}: {known}", dir.display())]
    Missing {
        name: String,
        dir: PathBuf,
        known: String,
    },
    #[error(transparent)]
    Read(#[from] PathIoError),
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// Whether `name` can name a baseline: 1 to 64 letters, digits, `.`, `_` or `-`, not
/// starting with `.` or `-` (no path, no hidden folder, no flag).
pub fn check_name(name: &str) -> Result<(), BaselineError> {
    let refuse = |reason: &str| {
        Err(BaselineError::Name {
            name: name.into(),
            reason: reason.into(),
        })
    };
    if name.is_empty() || name.len() > MAX_NAME {
        return refuse("use 1 to 64 characters");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return refuse("use letters, digits, '.', '_' and '-' only (a name, not a path)");
    }
    if name.starts_with(['.', '-']) {
        return refuse("start it with a letter, digit or '_'");
    }
    Ok(())
}

/// The baselines saved in `dir`: its folders that hold a points.csv, by name.
fn saved(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(POINTS_CSV).is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| check_name(n).is_ok())
        .collect();
    names.sort();
    names
}

/// The folder of the baseline `name` in `dir`, which must hold its points.csv.
pub fn find(dir: &Path, name: &str) -> Result<PathBuf, BaselineError> {
    check_name(name)?;
    let path = dir.join(name);
    if path.join(POINTS_CSV).is_file() {
        return Ok(path);
    }
    let names = saved(dir);
    let known = if names.is_empty() {
        "there are none; save one with --save-baseline NAME".to_string()
    } else {
        format!("saved there: {}", names.join(", "))
    };
    Err(BaselineError::Missing {
        name: name.into(),
        dir: dir.to_path_buf(),
        known,
    })
}

/// A baseline being saved: its folder checked and staged, to be filled and published
/// by [`PendingBaseline::save`]. Dropped unsaved, it leaves nothing.
pub struct PendingBaseline {
    staged: StagedFolder,
}

impl PendingBaseline {
    /// Stages the baseline `name` in `dir`, before any work: an existing one is refused
    /// unless `replace`, and then unless vkerode made it.
    pub fn begin(dir: &Path, name: &str, replace: bool) -> Result<Self, BaselineError> {
        check_name(name)?;
        Ok(Self {
            staged: StagedFolder::begin(&dir.join(name), replace, &[])?,
        })
    }

    /// Where the baseline will be.
    pub fn target(&self) -> &Path {
        self.staged.target()
    }

    /// Copies the set `set` (a results folder, or a points.csv with its files beside
    /// it) into the baseline and publishes it; returns the files it holds. A set that
    /// `compare` would refuse is refused here too.
    pub fn save(self, set: &Path) -> Result<Vec<PathBuf>, BaselineError> {
        check_set(set)?;
        let mut written = Vec::new();
        for name in KEPT {
            let from = set_file(set, name);
            if name != POINTS_CSV && !from.is_file() {
                continue;
            }
            crate::check_regular_file(&from).map_err(PathIoError::at(&from))?;
            let bytes = std::fs::read(&from).map_err(PathIoError::at(&from))?;
            let to = self.staged.path().join(name);
            write_atomically(&to, |out| std::io::Write::write_all(out, &bytes))
                .map_err(OutputError::from)?;
            written.push(to);
        }
        Ok(self.staged.publish(written)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_baseline_name_is_one_plain_file_name() {
        for good in ["main", "v1.2", "before_issue-26", "2026"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "../up",
            "a/b",
            ".hidden",
            "-f",
            "with space",
            &"x".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
