//! Option groups that several commands share, and the parsers of their values.

use anyhow::{anyhow, Result};
use clap::Args;

use vkerode::experiment::report::noise::{DEFAULT_THRESHOLD, RERUN_NOISE_FILE};
use vkerode::gpu::{ContextOptions, DEFAULT_MAX_SUBMISSION_MS};
use vkerode::probes::ceilings::vkerode_cache_dir;
use vkerode::terrain::formats::{read_dem, Dem};
use vkerode::terrain::image::CellSize;

/// The device flags, on the commands that open a device (and only those).
#[derive(Args)]
pub struct GpuArgs {
    /// Device to run on: an index from `vkerode devices` or a name substring.
    /// Default: the first discrete GPU, else integrated, else CPU (lavapipe).
    #[arg(long, value_parser = clap::builder::NonEmptyStringValueParser::new())]
    device: Option<String>,
    /// Turn on the Khronos validation layer with synchronization validation
    /// (also VKERODE_VALIDATE=1).
    #[arg(long)]
    validate: bool,
    /// The longest one GPU submission is expected to run, in ms: droplet runs are split
    /// into more submissions (by the measured rate) to stay under desktop OS watchdogs
    /// (Windows kills a submission after about 2 s).
    #[arg(long, default_value_t = DEFAULT_MAX_SUBMISSION_MS,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_submission_ms: u32,
}

impl GpuArgs {
    pub fn options(&self) -> ContextOptions {
        ContextOptions {
            device: self.device.clone(),
            validation: self.validate,
            max_submission_ms: Some(self.max_submission_ms),
            pipeline_cache: Some(vkerode_cache_dir()),
        }
    }
}

/// What a heightmap file may not say of itself.
#[derive(Args, Clone, Copy, Default, PartialEq)]
pub struct InputLayout {
    /// Width in cells of a raw float32 input.
    #[arg(long, requires = "height")]
    pub width: Option<usize>,
    /// Height in cells of a raw float32 input.
    #[arg(long, requires = "width")]
    pub height: Option<usize>,
    /// Grid spacing in metres, "X" or "X,Y". Default: the file's (GeoTIFF tags, in a
    /// linear unit or in degrees on the CRS's ellipsoid; or the sidecar).
    #[arg(long, value_parser = parse_cell_size)]
    pub cell_size: Option<CellSize>,
}

impl InputLayout {
    /// The cells of a headerless raw file, where given.
    pub fn raw_size(&self) -> Option<(usize, usize)> {
        self.width.zip(self.height)
    }

    pub fn read(&self, path: &std::path::Path) -> Result<Dem> {
        let mut dem = read_dem(path, self.raw_size())?;
        if let Some(cell) = self.cell_size {
            dem.cell_size = Some(cell);
        }
        Ok(dem)
    }
}

/// The bound on one run's length, shared by erode and sweep.
#[derive(Args, Clone, Copy, Debug)]
pub struct RunLengthArgs {
    /// Run past the bound on one run's work (droplets x lifetime, or time steps x
    /// cells; the refusal states it), which is otherwise refused before any work.
    #[arg(long)]
    pub allow_long_runs: bool,
}

/// `--threshold`'s help, with the default and the table it comes from.
pub fn threshold_help() -> String {
    format!(
        "The noise threshold in percent: \"faster\" and \"slower\" need the whole interval of new / base beyond 1 ± PERCENT/100, \"same\" needs it within. Default: the spread measured between reruns on the sets' device ({RERUN_NOISE_FILE}), else {}",
        vkerode::readable_number(DEFAULT_THRESHOLD * 100.0)
    )
}

/// `--threshold`: a relative change, given in percent, finite, above 0 and below 100
/// (at 100, nothing could be faster).
pub fn parse_threshold(text: &str) -> Result<f64> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 100.0 => Ok(v / 100.0),
        _ => Err(anyhow!(
            "{text:?} is not a percentage above 0 and below 100 (2 calls changes within 2% the same)"
        )),
    }
}

/// `report --margin`: a percentage above 0 and below 100, as a fraction.
pub fn parse_margin(text: &str) -> Result<f64> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 100.0 => Ok(v / 100.0),
        _ => Err(anyhow!(
            "{text:?} is not a percentage above 0 and below 100 (2 settles a net change within 2% of its reference's)"
        )),
    }
}

/// A cell side in metres, by [`CellSize::check_side`].
pub fn parse_cell_side(text: &str) -> Result<f32> {
    match text.trim().parse::<f32>() {
        Ok(v) => Ok(CellSize::check_side(v).map(|()| v)?),
        Err(_) => Err(anyhow!("{text:?} is not a number of metres")),
    }
}

/// `--cell-size`: "X" or "X,Y" in metres.
fn parse_cell_size(text: &str) -> Result<CellSize> {
    let parse = parse_cell_side;
    match text.split_once(',') {
        Some((x, y)) => Ok(CellSize {
            x: parse(x)?,
            y: parse(y)?,
        }),
        None => parse(text).map(|v| CellSize { x: v, y: v }),
    }
}
