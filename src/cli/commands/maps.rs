//! `vkerode maps`: the erosion maps of erode runs side by side, as one picture.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use clap::Args;

use crate::cli::print::say_wrote;
use vkerode::terrain::files::{check_output_file, Overwrite};
use vkerode::terrain::formats::read_dem;
use vkerode::terrain::pictures::{
    erosion_maps_side_by_side, format_height, shares_a_scale, ErosionChange,
};

/// The change map erode writes into its output folder.
const CHANGE_MAP: &str = "erosion.tif";

/// `vkerode maps`' flags.
#[derive(Args)]
pub struct MapsArgs {
    /// Each an erode run's output folder (its erosion.tif) or a change map file
    /// (after minus before), in the order they are set side by side.
    #[arg(value_name = "INPUT", num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// The picture to write (.png).
    pub output: PathBuf,
    /// Each map's title, once per INPUT in their order. Default: the name of the
    /// folder the change map is in (or of the file, where it is not erosion.tif).
    #[arg(long = "label", value_name = "LABEL")]
    pub labels: Vec<String>,
    /// Replace OUTPUT if it exists (by default it is refused).
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: &MapsArgs) -> Result<()> {
    let out = &args.output;
    if !out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"))
    {
        bail!(
            "OUTPUT {}: the picture is a PNG; name it .png",
            out.display()
        );
    }
    if !args.labels.is_empty() && args.labels.len() != args.inputs.len() {
        bail!(
            "--label given {} times for {} INPUTs: give one per INPUT, or none",
            args.labels.len(),
            args.inputs.len()
        );
    }
    let files: Vec<PathBuf> = args.inputs.iter().map(|i| change_map(i)).collect();
    check_output_file(out, &files, Overwrite::forced(args.force)).context("OUTPUT")?;
    let maps = files
        .iter()
        .map(|file| Ok(ErosionChange::of_map(&read_dem(file, None)?)))
        .collect::<Result<Vec<_>>>()?;
    let first = maps[0].units();
    for (map, file) in maps.iter().zip(&files).skip(1) {
        if (&map.units().height, map.units().length) != (&first.height, first.length) {
            bail!(
                "{}: its heights are in {:?} on a grid of {:?}, {}'s in {:?} on {:?}: \
                 maps side by side are measured alike",
                file.display(),
                map.units().height,
                map.units().length,
                files[0].display(),
                first.height,
                first.length
            );
        }
    }
    let labels: Vec<String> = match args.labels.as_slice() {
        [] => args.inputs.iter().map(|i| default_label(i)).collect(),
        given => given.to_vec(),
    };
    let panels: Vec<(&ErosionChange, &str)> = maps
        .iter()
        .zip(&labels)
        .map(|(m, l)| (m, l.as_str()))
        .collect();
    erosion_maps_side_by_side(&panels)
        .write_png(out)
        .with_context(|| format!("OUTPUT {}", out.display()))?;
    let limits: Vec<f32> = maps.iter().map(ErosionChange::limit).collect();
    let unit = first.height_short();
    for ((map, label), limit) in maps.iter().zip(&labels).zip(&limits) {
        let (lowest, highest) = map.extremes();
        say!(
            "{label}: change {} to {} {unit}, 99% of cells within ±{} {unit}",
            format_height(lowest),
            format_height(highest),
            format_height(*limit).trim_start_matches('+')
        );
    }
    if unit != first.height_words() {
        say!("{unit}: {}", first.height_words());
    }
    say!(
        "{}",
        if shares_a_scale(&limits) {
            "one colour scale for every map"
        } else {
            "each map on its own colour scale (their ranges are too far apart for one)"
        }
    );
    say_wrote([out.clone()]);
    Ok(())
}

/// The change map an INPUT names: a folder's erosion.tif, or the file itself.
fn change_map(input: &Path) -> PathBuf {
    if input.is_dir() {
        input.join(CHANGE_MAP)
    } else {
        input.to_path_buf()
    }
}

/// The name of an erode run's folder, or of a change map file not named erosion.tif.
fn default_label(input: &Path) -> String {
    let folder = if input.is_dir() {
        Some(input)
    } else if input.file_name().is_some_and(|n| n == CHANGE_MAP) {
        input.parent().map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
    } else {
        None
    };
    // Canonical, so that "." or "out/.." is named by the folder it is.
    let name = match folder {
        Some(folder) => folder
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(Into::into)),
        None => input.file_stem().map(Into::into),
    };
    name.map_or_else(
        || input.display().to_string(),
        |n: std::ffi::OsString| n.to_string_lossy().into_owned(),
    )
}
