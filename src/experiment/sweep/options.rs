//! How a sweep runs and what it reports back: where results go, resuming, shards,
//! clocks, what a failed point does, replication.

use std::path::PathBuf;
use std::str::FromStr;

use super::super::results::{Existing, FailedRow};

/// Every n-th point, starting at the i-th: one of n parts of a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub fn includes(&self, point: usize) -> bool {
        point % self.count == self.index
    }
}

/// A `--shard` or `--out` that says no shard or folder; the text as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    #[error("{0:?} is not a shard \"i/n\" with 0 <= i < n")]
    Shard(String),
    #[error("{} is no placeholder; --out fills in {}", .0, OUT_PLACEHOLDERS.join(" and "))]
    Placeholder(String),
}

impl FromStr for Shard {
    type Err = OptionError;
    fn from_str(text: &str) -> Result<Self, OptionError> {
        let parsed = text
            .split_once('/')
            .and_then(|(i, n)| Some((i.trim().parse().ok()?, n.trim().parse().ok()?)));
        match parsed {
            Some((index, count)) if count > 0 && index < count => Ok(Shard { index, count }),
            _ => Err(OptionError::Shard(text.to_string())),
        }
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The results folder of `sweep --out` unless given: `{experiment}` and `{device}` are
/// replaced by the config's name and the device's slug (the rule of
/// [`crate::terrain::output::default_out`], which a test holds it to).
pub const DEFAULT_OUT: &str = "out/sweep/{experiment}/{device}";

/// The placeholders `sweep --out` fills in.
pub const OUT_PLACEHOLDERS: [&str; 2] = ["{experiment}", "{device}"];

/// `sweep --out` as given, once every `{word}` in it is a placeholder it fills in: any
/// other would become a literal folder named, say, `{exp}`.
pub fn parse_out(text: &str) -> Result<std::path::PathBuf, OptionError> {
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open..];
        let Some(close) = after.find('}') else { break };
        let word = &after[..=close];
        let is_word = word[1..close]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if is_word && !OUT_PLACEHOLDERS.contains(&word) {
            return Err(OptionError::Placeholder(word.to_string()));
        }
        rest = &after[close + 1..];
    }
    Ok(text.into())
}

/// How much a sweep tells as it goes: progress bars and notes, or nothing but warnings,
/// or also each point's measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verbosity {
    Quiet,
    Normal,
    Verbose,
}

pub struct SweepOptions {
    /// The results folder, `{experiment}` and `{device}` replaced (see [`DEFAULT_OUT`]);
    /// a shard's go to its `shard-i-of-n` folder in it.
    pub out: PathBuf,
    /// What to do with a results set already there.
    pub existing: Existing,
    pub shard: Option<Shard>,
    pub verbosity: Verbosity,
    /// Lock the SM clock at this many MHz for the sweep (NVIDIA, through NVML).
    pub lock_sm_mhz: Option<u32>,
    pub on_point_error: OnPointError,
    /// Every point on every device (`--replicate`), not each on the next free one.
    pub replicate: bool,
}

/// What a sweep does when the GPU fails a point; a lost device stops it either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OnPointError {
    /// Record the failure in failed.csv and go on with the next point.
    Skip,
    /// Record the failure and stop.
    Stop,
}

#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct SweepSummary {
    /// The results folder: points.csv, samples.csv, meta.json (and failed.csv).
    pub dir: PathBuf,
    /// Points measured and recorded by this run, a count.
    pub measured: usize,
    /// Points recorded by an earlier run (`--resume`), a count.
    pub skipped: usize,
    /// Points the GPU failed in this run, as recorded in failed.csv.
    pub failed: Vec<FailedRow>,
    /// Points no worker reached (a count): the sweep stopped, or every worker was lost,
    /// first.
    pub never_ran: usize,
    /// Why the sweep stopped before its last point, if it did.
    pub stopped: Option<String>,
    /// GPU-timestamp seconds of the runs the recorded points' statistics rest on
    /// (warm-ups and timed repetitions).
    pub gpu_s: f64,
    /// Wall seconds of each stage of a point, added over the recorded points, in the
    /// order they run (`record`: writing the row); the CPU's share overlaps the GPU's.
    pub stages_s: Vec<(&'static str, f64)>,
    /// Wall seconds of the sweep, from opening its results folder to its last row.
    pub wall_s: f64,
}

impl SweepSummary {
    /// The share of the sweep's wall time the GPU spent on the runs its statistics rest
    /// on; `None` before any time has passed.
    pub fn gpu_busy_share(&self) -> Option<f64> {
        (self.wall_s > 0.0).then(|| self.gpu_s / self.wall_s)
    }
}

#[cfg(test)]
mod tests {
    use super::parse_out;

    #[test]
    fn an_out_with_a_word_in_braces_that_is_no_placeholder_is_refused() {
        for fine in [
            super::DEFAULT_OUT,
            "out/{device}",
            "plain",
            "odd{",
            "a{b c}",
        ] {
            assert_eq!(parse_out(fine).unwrap().to_str(), Some(fine));
        }
        let error = parse_out("out/{bogus}/{device}").unwrap_err().to_string();
        assert!(error.starts_with("{bogus} is no placeholder"), "{error}");
        assert!(parse_out("results/{Device}").is_err());
    }
}
