//! The sequential CPU reference's runs, cached per job: its settings without the keys
//! only the GPU kernels use (the CPU reference ignores them, so configurations that
//! differ only in those share a job), the droplet seed and the initial terrain. One
//! file per job and seed under the output folder's `reference-cache/`, read back by a
//! later run into the same folder (with `--force`) or from `--reference-cache`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::figures::{Figures, SmoothedMap};
use crate::erosion::RunSettings;
use crate::experiment::Provenance;
use crate::terrain::files::{write_atomically, WriteError};
use crate::terrain::Cells;

/// The folder of the cache in an output folder.
pub const CACHE_FOLDER: &str = "reference-cache";

/// The version of a cache file's fields; files of another are not read.
pub const CACHE_FORMAT: u32 = 1;

/// The job a sequential reference run is of: its key, and the settings it hashes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobKey(pub String);

impl JobKey {
    /// `settings` (with their seed) on `initial`, without the keys the CPU reference
    /// ignores.
    pub fn of(settings: &RunSettings, initial: &Cells) -> (Self, serde_json::Value) {
        let mut job = serde_json::to_value(settings).expect("settings serialize");
        if let serde_json::Value::Object(map) = &mut job {
            for key in settings.strategy().gpu_only_keys() {
                map.remove(*key);
            }
        }
        let text = format!("{job}|{:016x}", initial.checksum());
        let key = format!("{:016x}", crate::hash::fnv1a64(text.as_bytes()));
        (Self(key), job)
    }

    /// The cache file of this job's run at `seed`, under `dir`.
    pub fn file(&self, dir: &Path, seed: u32) -> PathBuf {
        dir.join(format!("{}-seed-{seed}.json", self.0))
    }
}

/// One cached run of the sequential reference.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CachedRun {
    pub format: u32,
    pub job_key: String,
    pub seed: u32,
    /// The settings hashed (the GPU-only keys left out).
    pub job: serde_json::Value,
    /// Hex FNV-1a of the initial terrain's cells.
    pub terrain_checksum: String,
    pub provenance: serde_json::Value,
    pub wall_ms: f64,
    pub figures: Vec<CachedFigure>,
    pub map: SmoothedMap,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CachedFigure {
    pub name: String,
    pub value: Option<f64>,
}

impl CachedRun {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        key: &JobKey,
        job: serde_json::Value,
        seed: u32,
        initial: &Cells,
        provenance: &Provenance,
        wall_ms: f64,
        figures: &Figures,
        map: &SmoothedMap,
    ) -> Self {
        Self {
            format: CACHE_FORMAT,
            job_key: key.0.clone(),
            seed,
            job,
            terrain_checksum: format!("{:016x}", initial.checksum()),
            provenance: serde_json::to_value(provenance).unwrap_or_default(),
            wall_ms,
            figures: figures
                .0
                .iter()
                .map(|(name, value)| CachedFigure {
                    name: name.clone(),
                    value: *value,
                })
                .collect(),
            map: map.clone(),
        }
    }

    pub fn figures(&self) -> Figures {
        Figures(
            self.figures
                .iter()
                .map(|f| (f.name.clone(), f.value))
                .collect(),
        )
    }

    /// The run of `key` at `seed` in `dir`, where a file there holds it with the
    /// figures `names` (a cache from before a figure was added is not used).
    pub fn find(dir: &Path, key: &JobKey, seed: u32, names: &[String]) -> Option<Self> {
        // The one regular-file check: a FIFO in the cache would block the read.
        let text = crate::read_input_text(&key.file(dir, seed)).ok()?;
        let run: Self = serde_json::from_str(&text).ok()?;
        let same_names = run.figures.len() == names.len()
            && run.figures.iter().zip(names).all(|(f, n)| &f.name == n);
        (run.format == CACHE_FORMAT && run.job_key == key.0 && run.seed == seed && same_names)
            .then_some(run)
    }

    /// Writes it under `dir` (made where missing); returns the file.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, WriteError> {
        std::fs::create_dir_all(dir).map_err(|source| WriteError {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = JobKey(self.job_key.clone()).file(dir, self.seed);
        write_atomically(&path, |out| {
            serde_json::to_writer(&mut *out, self).map_err(std::io::Error::other)
        })?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_in_the_cache_is_passed_over_not_waited_on() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let key = JobKey("job".into());
        let made = std::process::Command::new("mkfifo")
            .arg(key.file(dir, 1))
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo");
        let (sent, received) = std::sync::mpsc::channel();
        let looked_in = dir.to_path_buf();
        std::thread::spawn(move || {
            let _ = sent.send(CachedRun::find(&looked_in, &key, 1, &[]).is_none());
        });
        let passed_over = received.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(
            passed_over,
            Ok(true),
            "the cache's read returned, finding nothing"
        );
    }
}
