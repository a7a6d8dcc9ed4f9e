//! Figures of a run: the erosion/deposition map with its colour bar, and the
//! before/after relief side by side. Text is drawn with an embedded font (DejaVu Sans),
//! so it renders on a machine with no fonts installed.

use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use rayon::prelude::*;

use super::files::WriteError;
use super::formats::Dem;
use super::heightmap::Heightmap;
use super::image::{shaded_relief_rgb, tint_rgb, write_png, CellSize};
use super::units::{dem_height_unit, LengthUnit};

const FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
const FONT_FAMILY: &str = "sans-serif";
const WHITE_RGB: [u8; 3] = [255, 255, 255];
const MISSING_RGB: [u8; 3] = [150, 150, 150];
/// Panels of the side-by-side figure are shrunk to at most this many pixels a side.
const MAX_PANEL: usize = 1024;

/// Registers the embedded font with plotters, once.
pub(crate) fn ensure_font() {
    static REGISTERED: OnceLock<()> = OnceLock::new();
    REGISTERED.get_or_init(|| {
        // The font is compiled in; failing to parse it is a build defect.
        if register_font(FONT_FAMILY, FontStyle::Normal, FONT).is_err() {
            panic!("the embedded DejaVu Sans font does not parse");
        }
    });
}

/// An 8-bit RGB raster.
#[derive(Clone, Debug, PartialEq)]
pub struct RgbImage {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<u8>,
}

impl RgbImage {
    pub fn filled(width: usize, height: usize, colour: [u8; 3]) -> Self {
        Self {
            width,
            height,
            pixels: colour.repeat(width * height),
        }
    }

    pub fn from_pixels(width: usize, height: usize, pixels: Vec<u8>) -> Self {
        assert_eq!(pixels.len(), width * height * 3, "RGB pixels for the size");
        Self {
            width,
            height,
            pixels,
        }
    }

    pub fn put(&mut self, x: usize, y: usize, colour: [u8; 3]) {
        let i = (y * self.width + x) * 3;
        self.pixels[i..i + 3].copy_from_slice(&colour);
    }

    /// Copies `other` with its top-left corner at (x, y), clipped to this image.
    pub fn blit(&mut self, other: &RgbImage, x: usize, y: usize) {
        for row in 0..other.height.min(self.height.saturating_sub(y)) {
            let cols = other.width.min(self.width.saturating_sub(x));
            let src = row * other.width * 3;
            let dst = ((y + row) * self.width + x) * 3;
            self.pixels[dst..dst + cols * 3].copy_from_slice(&other.pixels[src..src + cols * 3]);
        }
    }

    /// Box-filtered by the smallest whole factor that brings both sides to `max_side`.
    pub fn shrunk_to(&self, max_side: usize) -> RgbImage {
        let factor = self.width.max(self.height).div_ceil(max_side);
        self.shrunk_by(factor, factor)
    }

    /// Box-filtered by whole factors across and down (0 counts as 1).
    fn shrunk_by(&self, across: usize, down: usize) -> RgbImage {
        let (fx, fy) = (across.max(1), down.max(1));
        if (fx, fy) == (1, 1) {
            return self.clone();
        }
        let (w, h) = (self.width.div_ceil(fx), self.height.div_ceil(fy));
        // Row by row on every core: a 16384^2 map's picture is 800 MB.
        let pixels: Vec<u8> = (0..h)
            .into_par_iter()
            .flat_map_iter(|y| {
                (0..w).flat_map(move |x| {
                    let mut sum = [0u32; 3];
                    let mut n = 0;
                    for sy in y * fy..((y + 1) * fy).min(self.height) {
                        for sx in x * fx..((x + 1) * fx).min(self.width) {
                            let i = (sy * self.width + sx) * 3;
                            for (total, &p) in sum.iter_mut().zip(&self.pixels[i..i + 3]) {
                                *total += u32::from(p);
                            }
                            n += 1;
                        }
                    }
                    sum.map(|s| (s / n.max(1)) as u8)
                })
            })
            .collect();
        RgbImage::from_pixels(w, h, pixels)
    }

    /// Resampled to `width` x `height` by bilinear interpolation between pixel centres.
    fn resampled(&self, width: usize, height: usize) -> RgbImage {
        if (width, height) == (self.width, self.height) {
            return self.clone();
        }
        if self.width == 0 || self.height == 0 {
            return RgbImage::filled(width, height, WHITE_RGB);
        }
        // Per output column (and row): the two source pixels around it and the weight of
        // the second.
        let taps = |out: usize, source: usize| -> Vec<(usize, usize, f32)> {
            let scale = source as f64 / out as f64;
            (0..out)
                .map(|i| {
                    let at = ((i as f64 + 0.5) * scale - 0.5).clamp(0.0, (source - 1) as f64);
                    let first = at.floor() as usize;
                    (
                        first,
                        (first + 1).min(source - 1),
                        (at - first as f64) as f32,
                    )
                })
                .collect()
        };
        let (columns, rows) = (taps(width, self.width), taps(height, self.height));
        let mut out = RgbImage::filled(width, height, WHITE_RGB);
        let pixel = |x: usize, y: usize| {
            let i = (y * self.width + x) * 3;
            [0, 1, 2].map(|c| f32::from(self.pixels[i + c]))
        };
        for (y, &(top, bottom, ky)) in rows.iter().enumerate() {
            for (x, &(left, right, kx)) in columns.iter().enumerate() {
                let lerp =
                    |a: [f32; 3], b: [f32; 3], k: f32| [0, 1, 2].map(|c| a[c] + (b[c] - a[c]) * k);
                let upper = lerp(pixel(left, top), pixel(right, top), kx);
                let lower = lerp(pixel(left, bottom), pixel(right, bottom), kx);
                out.put(
                    x,
                    y,
                    lerp(upper, lower, ky).map(|c| c.round().clamp(0.0, 255.0) as u8),
                );
            }
        }
        out
    }

    /// Draws `text` with its top-left corner at (x, y), `size` pixels high.
    pub fn text(&mut self, text: &str, x: i32, y: i32, size: f64) {
        ensure_font();
        let (w, h) = (self.width as u32, self.height as u32);
        let area =
            BitMapBackend::<plotters::backend::RGBPixel>::with_buffer(&mut self.pixels, (w, h))
                .into_drawing_area();
        let style = (FONT_FAMILY, size).into_font().color(&BLACK);
        // Drawing into an in-memory buffer cannot fail for want of a device.
        let _ = area.draw(&Text::new(text.to_string(), (x, y), style));
        let _ = area.present();
    }

    pub fn write_png(&self, path: &Path) -> Result<(), WriteError> {
        write_png(
            path,
            self.width,
            self.height,
            png::ColorType::Rgb,
            png::BitDepth::Eight,
            &self.pixels,
        )
    }
}

/// The size in pixels a map of `width` x `height` cells of `cell` is shown at: as much
/// ground across a pixel as down it, one pixel per cell at the finer spacing, the longer
/// side at most MAX_PANEL pixels.
fn display_size(width: usize, height: usize, cell: CellSize) -> (usize, usize) {
    let (dx, dy) = (f64::from(cell.x), f64::from(cell.y));
    let (across, down) = (width as f64 * dx, height as f64 * dy);
    let ground_per_pixel = dx.min(dy).max(across.max(down) / MAX_PANEL as f64);
    let pixels = |length: f64| ((length / ground_per_pixel).round() as usize).max(1);
    (pixels(across), pixels(down))
}

/// A picture of one pixel per cell of `cell`, for display only: resampled so that a
/// pixel covers as much ground across as down (the rows stretched by dy / dx, or the
/// columns by dx / dy), at most MAX_PANEL pixels a side. The heights written as data are
/// never resampled.
pub fn at_true_aspect(cells: &RgbImage, cell: CellSize) -> RgbImage {
    let (width, height) = display_size(cells.width, cells.height, cell);
    // A box filter first, by the whole factors that keep each side at least its display
    // size, so that the bilinear step shrinks by less than 2 and skips no source pixel.
    cells
        .shrunk_by(cells.width / width, cells.height / height)
        .resampled(width, height)
}

/// Diverging colours from erosion (red) through no change (white) to deposition (blue).
const DIVERGING: [[f32; 3]; 5] = [
    [178.0, 24.0, 43.0],
    [239.0, 138.0, 98.0],
    [247.0, 247.0, 247.0],
    [103.0, 169.0, 207.0],
    [33.0, 102.0, 172.0],
];

/// Colour of t in [-1, 1]: -1 is the deepest erosion shown, +1 the highest deposit.
fn diverging(t: f32) -> [u8; 3] {
    let s = (t.clamp(-1.0, 1.0) + 1.0) * 0.5 * (DIVERGING.len() - 1) as f32;
    let i = (s.floor() as usize).min(DIVERGING.len() - 2);
    let k = s - i as f32;
    [0, 1, 2].map(|c| (DIVERGING[i][c] + (DIVERGING[i + 1][c] - DIVERGING[i][c]) * k).round() as u8)
}

/// The change shown at full colour: the 99th percentile of |after - before|, so that a
/// few extreme cells do not wash out the rest.
fn colour_limit(changes: &[f32]) -> f32 {
    let mut magnitudes: Vec<f32> = changes
        .iter()
        .filter(|d| d.is_finite())
        .map(|d| d.abs())
        .collect();
    if magnitudes.is_empty() {
        return 1.0;
    }
    let p99 = crate::stats::order::select_quantile(&mut magnitudes, 0.99);
    if p99 > 0.0 {
        p99
    } else {
        magnitudes
            .iter()
            .copied()
            .fold(0.0, f32::max)
            .max(f32::MIN_POSITIVE)
    }
}

/// Three significant digits, with a sign.
pub fn format_height(v: f32) -> String {
    let a = v.abs();
    match a {
        0.0 => "0".into(),
        _ if !(0.001..100_000.0).contains(&a) => format!("{v:+.2e}"),
        _ if a >= 100.0 => format!("{v:+.0}"),
        _ if a >= 10.0 => format!("{v:+.1}"),
        _ if a >= 1.0 => format!("{v:+.2}"),
        _ => format!("{v:+.3}"),
    }
}

/// How a map is measured, for its legend and its scale bar.
#[derive(Clone, Debug, PartialEq)]
pub struct MapUnits {
    /// The heights' unit as exports name it: "m" (or the unit a DEM's file names), or
    /// "cells" for generated terrain, whose heights are in cell widths.
    pub height: String,
    /// The ground one cell spans: metres on a DEM, one cell on generated terrain.
    pub cell: CellSize,
    pub length: LengthUnit,
}

impl MapUnits {
    /// Generated terrain's: heights and lengths in cells.
    pub fn cells() -> Self {
        Self {
            height: "cells".into(),
            cell: CellSize::UNIT,
            length: LengthUnit::Cells,
        }
    }

    /// A map file's: metres on the ground where it states a cell size and its heights
    /// are not in cells, its heights in its vertical unit (metres where it names none,
    /// as erode takes a DEM's); generated terrain's cells otherwise.
    pub fn of_file(dem: &Dem) -> Self {
        match dem.cell_size_from(None) {
            Some((cell, _)) if dem.units != "cells" => Self {
                height: dem_height_unit(&dem.units).into(),
                cell,
                length: LengthUnit::Metres,
            },
            _ => Self::cells(),
        }
    }

    /// The heights' unit in words: generated terrain's is one cell's width.
    pub fn height_words(&self) -> String {
        match self.height.as_str() {
            "" | "cells" => "height units (one = one cell's width)".into(),
            other => other.into(),
        }
    }

    /// The heights' unit after a number: "m", or "h.u." for generated terrain's.
    pub fn height_short(&self) -> &str {
        match self.height.as_str() {
            "" | "cells" => "h.u.",
            other => other,
        }
    }
}

/// Draws a scale bar of a round length near a quarter of `panel_px` at (x, y), for a
/// panel across which lies `ground` of the map's length unit; returns its length in
/// pixels. Measured across, so it holds for a picture stretched to its true aspect.
fn draw_scale_bar(
    canvas: &mut RgbImage,
    (x, y): (usize, usize),
    panel_px: usize,
    ground: f32,
    length: LengthUnit,
) -> usize {
    let length_per_pixel = ground / panel_px.max(1) as f32;
    let target = 0.25 * ground;
    let magnitude = 10f32.powf(target.log10().floor());
    let round = [5.0, 2.0, 1.0]
        .into_iter()
        .map(|k| k * magnitude)
        .find(|&v| v <= target)
        .unwrap_or(magnitude);
    let bar_px = ((round / length_per_pixel).round() as usize).clamp(1, panel_px.max(1));
    for row in y..(y + 5).min(canvas.height) {
        for col in x..(x + bar_px).min(canvas.width) {
            canvas.put(col, row, [0, 0, 0]);
        }
    }
    // Ticks at both ends, so the bar reads as a length.
    for row in y.saturating_sub(4)..y {
        for col in [x, x + bar_px - 1] {
            if col < canvas.width {
                canvas.put(col, row, [0, 0, 0]);
            }
        }
    }
    let label = match length {
        LengthUnit::Metres if round >= 1000.0 => format!("{} km", round / 1000.0),
        LengthUnit::Metres => format!("{round} m"),
        LengthUnit::Cells if round == 1.0 => "1 cell".into(),
        LengthUnit::Cells => format!("{round} cells"),
    };
    canvas.text(&label, (x + bar_px + 8) as i32, y as i32 - 6, 13.0);
    bar_px
}

/// The strip under a map that holds its scale bar.
const SCALE_STRIP: usize = 40;
/// The strip over a map that holds its legend's heading.
const HEADING_STRIP: usize = 44;

/// After minus before of a map: the change of every cell, and how the map is measured.
#[derive(Clone, Debug)]
pub struct ErosionChange {
    changes: Vec<f32>,
    width: usize,
    height: usize,
    units: MapUnits,
}

impl ErosionChange {
    pub fn of(before: &Heightmap, after: &Heightmap, units: MapUnits) -> Self {
        Self {
            changes: before
                .data()
                .iter()
                .zip(after.data())
                .map(|(b, a)| a - b)
                .collect(),
            width: before.width(),
            height: before.height(),
            units,
        }
    }

    /// A change map as erode writes it (`erosion.tif`: after minus before), measured as
    /// its file says.
    pub fn of_map(map: &Dem) -> Self {
        Self {
            changes: map.heights.data().to_vec(),
            width: map.heights.width(),
            height: map.heights.height(),
            units: MapUnits::of_file(map),
        }
    }

    pub fn units(&self) -> &MapUnits {
        &self.units
    }

    /// The lowest and highest change, missing cells left out.
    pub fn extremes(&self) -> (f32, f32) {
        self.changes
            .iter()
            .filter(|d| d.is_finite())
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &d| {
                (lo.min(d), hi.max(d))
            })
    }

    /// The change shown at full colour when the map stands alone.
    pub fn limit(&self) -> f32 {
        colour_limit(&self.changes)
    }

    /// The map at the true aspect, with its colour bar (full colour at `limit`, which
    /// spans the map's height), a scale bar, and the colour scale's unit.
    pub fn picture(&self, limit: f32) -> RgbImage {
        let (w, h) = (self.width, self.height);
        let pixels: Vec<u8> = (self.changes.par_iter())
            .flat_map_iter(|&d| match d.is_finite() {
                true => diverging(d / limit),
                false => MISSING_RGB,
            })
            .collect();
        let cells = RgbImage::from_pixels(w, h, pixels);
        let cell = self.units.cell;
        let map = at_true_aspect(&cells, cell);
        let legend_width = 250;
        let top = HEADING_STRIP;
        let note_height = 56;
        let height = top + map.height + SCALE_STRIP.max(note_height) + 6;
        let mut canvas = RgbImage::filled(map.width + 20 + legend_width, height, WHITE_RGB);
        canvas.blit(&map, 10, top);
        draw_scale_bar(
            &mut canvas,
            (10, top + map.height + 20),
            map.width,
            cell.x * w as f32,
            self.units.length,
        );
        let (bar_x, bar_y, bar_w) = (map.width + 24, top, 24);
        let bar_height = map.height.max(2);
        for row in 0..bar_height {
            let t = 1.0 - 2.0 * row as f32 / (bar_height - 1) as f32;
            for col in 0..bar_w {
                canvas.put(bar_x + col, bar_y + row, diverging(t));
            }
        }
        canvas.text("change, after - before", bar_x as i32, 6, 14.0);
        canvas.text(
            &format!("in {}", self.units.height_words()),
            bar_x as i32,
            24,
            12.0,
        );
        let label_x = (bar_x + bar_w + 6) as i32;
        let unit = self.units.height_short().to_string();
        let (bar_top, bar_bottom) = (bar_y as i32, (bar_y + bar_height) as i32);
        canvas.text(
            &format!("{} {unit}", format_height(limit)),
            label_x,
            bar_top,
            13.0,
        );
        canvas.text("deposition", label_x, bar_top + 16, 12.0);
        canvas.text(
            &format!("0 {unit}"),
            label_x,
            (bar_top + bar_bottom) / 2 - 6,
            13.0,
        );
        canvas.text("erosion", label_x, bar_bottom - 30, 12.0);
        canvas.text(
            &format!("{} {unit}", format_height(-limit)),
            label_x,
            bar_bottom - 14,
            13.0,
        );
        // The colour scale stops at its limit; say so, with the true extremes.
        let (lowest, highest) = self.extremes();
        let note_y = bar_bottom + 6;
        canvas.text("colours stop at the limit;", bar_x as i32, note_y, 12.0);
        canvas.text(
            &format!(
                "extremes {} to {} {unit}",
                format_height(lowest),
                format_height(highest)
            ),
            bar_x as i32,
            note_y + 15,
            12.0,
        );
        canvas.text("grey: no data", bar_x as i32, note_y + 30, 12.0);
        canvas
    }
}

/// After minus before, in the maps' own units, with a colour bar clipped at the 99th
/// percentile of the change, drawn at the true aspect; missing cells are grey.
pub fn erosion_map(before: &Heightmap, after: &Heightmap, units: MapUnits) -> RgbImage {
    let change = ErosionChange::of(before, after, units);
    change.picture(change.limit())
}

/// The erosion map of `change` (after minus before) at its own scale, as
/// [`erosion_map`] draws it.
pub fn erosion_map_of_change(change: &Heightmap, units: MapUnits) -> RgbImage {
    let change = ErosionChange {
        changes: change.data().to_vec(),
        width: change.width(),
        height: change.height(),
        units,
    };
    change.picture(change.limit())
}

/// Erosion maps side by side, under a line that says whether they share a colour
/// scale: they do where their own limits are within `SHARED_SCALE_RATIO` of each
/// other; otherwise each keeps its own (one scale would leave the gentler maps white),
/// and the line says so plainly.
pub fn erosion_maps_side_by_side(maps: &[(&ErosionChange, &str)]) -> RgbImage {
    let limits: Vec<f32> = maps.iter().map(|(m, _)| m.limit()).collect();
    let (low, high) = limits.iter().fold((f32::INFINITY, 0.0f32), |(lo, hi), &l| {
        (lo.min(l), hi.max(l))
    });
    let shared = shares_a_scale(&limits);
    let pictures: Vec<RgbImage> = maps
        .iter()
        .zip(&limits)
        .map(|((m, _), &own)| m.picture(if shared { high } else { own }))
        .collect();
    let unit = maps
        .first()
        .map(|(m, _)| m.units.height_short().to_string())
        .unwrap_or_default();
    let heading = if shared {
        format!(
            "One colour scale for every map: full colour at {} {unit}",
            format_height(high).trim_start_matches('+')
        )
    } else {
        format!(
            "Each map has its OWN colour scale (full colour at {} to {} {unit}): \
             compare colours within a map, not across maps",
            format_height(low).trim_start_matches('+'),
            format_height(high).trim_start_matches('+')
        )
    };
    let panels: Vec<(&RgbImage, &str)> = pictures
        .iter()
        .zip(maps)
        .map(|(p, (_, t))| (p, *t))
        .collect();
    // Each picture is at its display size already (its map at most MAX_PANEL pixels).
    let row = side_by_side(&panels, usize::MAX);
    let strip = 30;
    let mut canvas = RgbImage::filled(row.width, row.height + strip, WHITE_RGB);
    canvas.blit(&row, 0, strip);
    canvas.text(&heading, 12, 8, 16.0);
    canvas
}

/// Maps whose own colour limits are within this factor share the largest.
const SHARED_SCALE_RATIO: f32 = 3.0;

/// Whether maps of these own colour limits share one scale.
pub fn shares_a_scale(limits: &[f32]) -> bool {
    let (low, high) = limits.iter().fold((f32::INFINITY, 0.0f32), |(lo, hi), &l| {
        (lo.min(l), hi.max(l))
    });
    high <= low * SHARED_SCALE_RATIO
}

/// The colour bar of an elevation tint from `range.0` to `range.1`, `height` pixels
/// high at (x, y), with its ends labelled.
fn draw_elevation_bar(
    canvas: &mut RgbImage,
    (x, y): (usize, usize),
    height: usize,
    range: (f32, f32),
) {
    let (bar_w, height) = (24, height.max(2));
    for row in 0..height {
        let t = 1.0 - row as f32 / (height - 1) as f32;
        for col in 0..bar_w {
            canvas.put(x + col, y + row, tint_rgb(t));
        }
    }
    let label_x = (x + bar_w + 6) as i32;
    let elevation = |v: f32| format_height(v).trim_start_matches('+').to_string();
    canvas.text(&elevation(range.1), label_x, y as i32, 13.0);
    canvas.text(&elevation(range.0), label_x, (y + height) as i32 - 14, 13.0);
}

/// The heading of an elevation legend.
fn elevation_heading(canvas: &mut RgbImage, x: usize, units: &MapUnits) {
    canvas.text("elevation, in", x as i32, 6, 14.0);
    canvas.text(&units.height_words(), x as i32, 24, 12.0);
}

/// A relief picture with its elevation legend (the tint from `range.0` to `range.1`,
/// spanning the picture) and a scale bar: the map is `map_width` cells across.
pub fn relief_with_legend(
    relief: &RgbImage,
    range: (f32, f32),
    units: &MapUnits,
    map_width: usize,
) -> RgbImage {
    let panel = relief.shrunk_to(MAX_PANEL);
    let legend_width = 250;
    let top = HEADING_STRIP;
    let height = top + panel.height + SCALE_STRIP;
    let mut canvas = RgbImage::filled(panel.width + 20 + legend_width, height, WHITE_RGB);
    canvas.blit(&panel, 10, top);
    let bar_x = panel.width + 24;
    elevation_heading(&mut canvas, bar_x, units);
    draw_elevation_bar(&mut canvas, (bar_x, top), panel.height, range);
    draw_scale_bar(
        &mut canvas,
        (10, top + panel.height + 20),
        panel.width,
        units.cell.x * map_width as f32,
        units.length,
    );
    canvas
}

/// The relief before and after side by side under their titles, with the elevation
/// legend they share (one tint over `range`) and a scale bar.
pub fn before_after(
    before: &RgbImage,
    after: &RgbImage,
    range: (f32, f32),
    units: &MapUnits,
    map_width: usize,
) -> RgbImage {
    let row = side_by_side(&[(before, "before"), (after, "after erosion")], MAX_PANEL);
    let panel = before.shrunk_to(MAX_PANEL);
    let legend_width = 250;
    let top = HEADING_STRIP;
    let height = top + row.height + SCALE_STRIP;
    let mut canvas = RgbImage::filled(row.width + legend_width, height, WHITE_RGB);
    canvas.blit(&row, 0, top);
    let bar_x = row.width + 4;
    elevation_heading(&mut canvas, bar_x, units);
    // side_by_side puts its panels under a 30-pixel title strip.
    draw_elevation_bar(&mut canvas, (bar_x, top + 30), panel.height, range);
    canvas.text(
        "one tint for both; shading shows slope",
        10,
        top as i32 - 18,
        13.0,
    );
    draw_scale_bar(
        &mut canvas,
        (12, top + row.height + 20),
        panel.width,
        units.cell.x * map_width as f32,
        units.length,
    );
    canvas
}

/// Shaded relief as a picture at the true aspect of cells of `cell` (at most MAX_PANEL
/// pixels a side); cells with no data are grey. A map of several cells a pixel is
/// shaded from its heights averaged over the cells each pixel shows (a 16384² map's
/// 268M cells would take seconds of trigonometry to show in a million pixels).
pub fn shaded_relief(map: &Heightmap, cell: CellSize, range: (f32, f32)) -> RgbImage {
    let (width, height) = display_size(map.width(), map.height(), cell);
    let (fx, fy) = ((map.width() / width).max(1), (map.height() / height).max(1));
    let averaged;
    let (map, cell) = match (fx, fy) {
        (1, 1) => (map, cell),
        _ => {
            averaged = block_mean(map, fx, fy);
            let spacing = CellSize {
                x: cell.x * fx as f32,
                y: cell.y * fy as f32,
            };
            (&averaged, spacing)
        }
    };
    let cells = RgbImage::from_pixels(
        map.width(),
        map.height(),
        shaded_relief_rgb(map, cell, range),
    );
    at_true_aspect(&cells, cell)
}

/// `map` averaged over blocks of `fx` x `fy` cells (the last ones cut by its edges),
/// missing cells left out; a block of missing cells is missing.
fn block_mean(map: &Heightmap, fx: usize, fy: usize) -> Heightmap {
    let (w, h) = (map.width().div_ceil(fx), map.height().div_ceil(fy));
    let data: Vec<f32> = (0..h)
        .into_par_iter()
        .flat_map_iter(|y| {
            (0..w).map(move |x| {
                let (mut sum, mut n) = (0.0f64, 0u32);
                for sy in y * fy..((y + 1) * fy).min(map.height()) {
                    for sx in x * fx..((x + 1) * fx).min(map.width()) {
                        let v = map.at(sx, sy);
                        if v.is_finite() {
                            sum += f64::from(v);
                            n += 1;
                        }
                    }
                }
                match n {
                    0 => f32::NAN,
                    n => (sum / f64::from(n)) as f32,
                }
            })
        })
        .collect();
    Heightmap::new(w, h, data).expect("a block mean's data fills its shape")
}

/// Pictures side by side, left to right, each under its title, each shrunk to at most
/// `max_side` pixels a side: raw maps to MAX_PANEL; finished figures, whose legends
/// would shrink with them, not at all (`usize::MAX`).
pub fn side_by_side(panels: &[(&RgbImage, &str)], max_side: usize) -> RgbImage {
    let title_strip = 30;
    let gap = 12;
    let shrunk: Vec<RgbImage> = panels.iter().map(|(p, _)| p.shrunk_to(max_side)).collect();
    let width = shrunk.iter().map(|p| p.width + gap).sum::<usize>() + gap;
    let height = shrunk.iter().map(|p| p.height).max().unwrap_or(0) + title_strip + gap;
    let mut canvas = RgbImage::filled(width, height, WHITE_RGB);
    let mut x = gap;
    for (panel, (_, title)) in shrunk.iter().zip(panels) {
        canvas.blit(panel, x, title_strip);
        canvas.text(title, x as i32, 6, 18.0);
        x += panel.width + gap;
    }
    canvas
}

/// What `draw` made, or why it made nothing: its error, or the panic of the drawing
/// library (plotters asserts on ranges it cannot scale, such as a single dose), so that
/// a picture fails alone, after the data it shows is written.
pub fn drawn<T, E: std::fmt::Display>(draw: impl FnOnce() -> Result<T, E>) -> Result<T, NotDrawn> {
    // The panic is told by the caller's warning: the default hook's report is held back.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(draw));
    std::panic::set_hook(hook);
    match outcome {
        Ok(result) => result.map_err(|e| NotDrawn::Failed(e.to_string())),
        Err(panic) => Err(NotDrawn::Panicked(
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "the drawing library gave up".into()),
        )),
    }
}

/// Why [`drawn`] has no picture: each variant is its message.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum NotDrawn {
    /// The drawing returned this error.
    #[error("{0}")]
    Failed(String),
    /// The drawing library panicked with this message.
    #[error("{0}")]
    Panicked(String),
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_picture_that_panics_or_fails_is_its_reason_not_a_crash() {
        assert_eq!(super::drawn(|| Ok::<_, String>(7)), Ok(7));
        assert_eq!(
            super::drawn(|| Err::<(), _>("disk full")),
            Err(super::NotDrawn::Failed("disk full".into()))
        );
        let panicked = super::drawn(|| -> Result<(), &str> { panic!("range {} is empty", 1) });
        assert_eq!(
            panicked.map_err(|e| e.to_string()),
            Err("range 1 is empty".into())
        );
    }

    use super::*;

    #[test]
    fn the_colour_map_is_white_at_zero_and_red_for_erosion_blue_for_deposition() {
        assert_eq!(diverging(0.0), [247, 247, 247]);
        let erosion = diverging(-1.0);
        let deposition = diverging(1.0);
        assert!(erosion[0] > erosion[2] && deposition[2] > deposition[0]);
    }

    #[test]
    fn the_colour_limit_ignores_the_top_percent() {
        let mut changes = vec![0.5f32; 1000];
        changes[3] = -400.0;
        assert_eq!(colour_limit(&changes), 0.5);
        assert_eq!(colour_limit(&[0.0, 0.0, -2.0]), 2.0);
    }

    #[test]
    fn legend_numbers_keep_three_significant_digits() {
        assert_eq!(format_height(77.703), "+77.7");
        assert_eq!(format_height(-0.0123), "-0.012");
        assert_eq!(format_height(1234.5), "+1234");
        assert_eq!(format_height(2.0e6), "+2.00e6");
    }

    #[test]
    fn a_relief_picture_gets_an_elevation_legend_and_a_round_scale_bar() {
        let relief = RgbImage::filled(400, 300, [120, 160, 90]);
        let figure = relief_with_legend(&relief, (236.0, 1076.0), &dem_units(), 403);
        assert!(figure.width > 400 && figure.height > 300);
        // 403 cells of 74.5 m over 400 pixels: a quarter is 7.5 km, so a 5 km bar.
        let row = scale_bar_row(300);
        let dark = (0..figure.width)
            .filter(|&x| figure.pixels[(row * figure.width + x) * 3] == 0)
            .count();
        let expected = (5000.0 / (74.5 * 403.0 / 400.0)) as usize;
        assert!(
            dark.abs_diff(expected) <= 2,
            "{dark} dark pixels for {expected}"
        );
    }

    /// The test DEM's grid: 403 x 344 cells of 74.5 m x 92.6 m.
    const JACKSBORO_CELL: CellSize = CellSize { x: 74.5, y: 92.6 };

    fn dem_units() -> MapUnits {
        MapUnits {
            height: "m".into(),
            cell: JACKSBORO_CELL,
            length: LengthUnit::Metres,
        }
    }

    /// The middle row of the scale bar under a map `map_height` pixels high.
    fn scale_bar_row(map_height: usize) -> usize {
        HEADING_STRIP + map_height + 20 + 2
    }

    /// Dark pixels of `row` left of `until`.
    fn dark_in_row(image: &RgbImage, row: usize, until: usize) -> usize {
        (0..until.min(image.width))
            .filter(|&x| image.pixels[(row * image.width + x) * 3] == 0)
            .count()
    }

    #[test]
    fn an_erosion_map_has_a_colour_bar_spanning_it_and_a_scale_bar_in_cells() {
        let before = Heightmap::new(200, 150, vec![0.0; 200 * 150]).unwrap();
        let after = before.map(|h| h - 0.5);
        let figure = erosion_map(&before, &after, MapUnits::cells());
        // The bar, beside the map, is coloured from the map's top row to its last.
        let bar_column = 200 + 24 + 12;
        let coloured: Vec<usize> = (0..figure.height)
            .filter(|&y| {
                let p = &figure.pixels[(y * figure.width + bar_column) * 3..][..3];
                p != WHITE_RGB && p[0] != p[2]
            })
            .collect();
        assert_eq!(coloured.len(), 150, "the bar spans the map's 150 rows");
        assert_eq!(coloured[0], HEADING_STRIP);
        // Under the map, a scale bar: a quarter of 200 cells rounds to 50.
        assert!(figure.height >= HEADING_STRIP + 150 + SCALE_STRIP);
        let dark = dark_in_row(&figure, scale_bar_row(150), 200);
        assert_eq!(dark, 50, "a 50-cell bar");
    }

    #[test]
    fn generated_terrains_heights_are_in_cell_widths_a_dems_in_its_unit() {
        assert_eq!(
            MapUnits::cells().height_words(),
            "height units (one = one cell's width)"
        );
        assert_eq!(dem_units().height_words(), "m");
    }

    #[test]
    fn before_after_has_an_elevation_legend_and_a_scale_bar() {
        let relief = RgbImage::filled(403, 428, [120, 160, 90]);
        let figure = before_after(&relief, &relief, (236.0, 1076.0), &dem_units(), 403);
        let row = side_by_side(
            &[(&relief, "before"), (&relief, "after erosion")],
            MAX_PANEL,
        );
        assert!(figure.width > row.width + 100, "room for the legend");
        // The tint's bar beside the pictures: its top is the tint's top.
        let bar = (HEADING_STRIP + 30, row.width + 10);
        let p = &figure.pixels[(bar.0 * figure.width + bar.1) * 3..][..3];
        assert_eq!(p, tint_rgb(1.0), "the legend's bar at its top");
        // Under the pictures, a 5 km bar at 74.5 m a pixel.
        let dark = dark_in_row(&figure, HEADING_STRIP + row.height + 20 + 2, 403);
        let expected = (5000.0f32 / 74.5).round() as usize;
        assert!(dark.abs_diff(expected) <= 1, "{dark} for {expected}");
    }

    #[test]
    fn side_by_side_maps_share_a_scale_only_when_their_limits_are_close() {
        assert!(shares_a_scale(&[1.0, 2.5]));
        // Droplets' 3.67 beside pipes' 86.8: each its own, and the picture says so.
        assert!(!shares_a_scale(&[3.67, 86.8]));
        let map = |depth: f32| {
            let before = Heightmap::new(20, 20, vec![0.0; 400]).unwrap();
            ErosionChange::of(&before, &before.map(|h| h - depth), MapUnits::cells())
        };
        let (gentle, deep) = (map(3.67), map(86.8));
        let apart = erosion_maps_side_by_side(&[(&gentle, "droplets"), (&deep, "pipes")]);
        // Each at full colour: the gentle map is as red as the deep one.
        let first_cell = |image: &RgbImage, x: usize| {
            image.pixels[((30 + 30 + HEADING_STRIP + 5) * image.width + x) * 3..][..3].to_vec()
        };
        let second_x = 12 + gentle.picture(1.0).width + 12 + 15;
        assert_eq!(first_cell(&apart, 27), first_cell(&apart, second_x));
        // Close limits share the larger: the gentler map is paler.
        let near = map(40.0);
        let together = erosion_maps_side_by_side(&[(&near, "droplets"), (&deep, "pipes")]);
        assert_ne!(first_cell(&together, 27), first_cell(&together, second_x));
    }

    #[test]
    fn maps_side_by_side_keep_their_legends_full_size() {
        // A 1024-cell map is a panel wider than MAX_PANEL with its legend; shrunk, its
        // legend's text would be half size.
        let before = Heightmap::new(1024, 1024, vec![0.0; 1024 * 1024]).unwrap();
        let map = ErosionChange::of(&before, &before.map(|h| h - 1.0), MapUnits::cells());
        let panel = map.picture(map.limit());
        assert!(panel.width > MAX_PANEL);
        let row = erosion_maps_side_by_side(&[(&map, "a"), (&map, "b")]);
        assert!(
            row.width >= 2 * panel.width,
            "{} for panels of {}",
            row.width,
            panel.width
        );
        assert!(row.height >= panel.height);
    }

    /// Panel height over width against the ground's, in pixels of the panel's height.
    fn aspect_error(panel: &RgbImage, cells: (usize, usize), cell: CellSize) -> f64 {
        let across = cells.0 as f64 * f64::from(cell.x);
        let down = cells.1 as f64 * f64::from(cell.y);
        (panel.height as f64 - panel.width as f64 * down / across).abs()
    }

    #[test]
    fn pictures_of_oblong_cells_are_stretched_to_the_grounds_aspect() {
        let flat = |w: usize, h: usize| Heightmap::new(w, h, vec![1.0; w * h]).unwrap();
        let wide = CellSize { x: 92.6, y: 74.5 };
        for (cells, cell) in [
            ((403, 344), JACKSBORO_CELL),
            ((403, 344), wide),
            ((1500, 1200), CellSize { x: 1.0, y: 2.0 }),
            ((64, 48), CellSize::UNIT),
        ] {
            let panel = shaded_relief(&flat(cells.0, cells.1), cell, (0.0, 2.0));
            assert!(
                aspect_error(&panel, cells, cell) <= 1.0,
                "{cells:?} cells of {cell:?} shown {} x {}",
                panel.width,
                panel.height
            );
            assert!(panel.width.max(panel.height) <= MAX_PANEL, "{panel:?}");
        }
        // Stretched, not shrunk: rows by dy / dx, or columns by dx / dy.
        let tall = shaded_relief(&flat(403, 344), JACKSBORO_CELL, (0.0, 2.0));
        assert_eq!((tall.width, tall.height), (403, 428));
        let wide = shaded_relief(&flat(403, 344), wide, (0.0, 2.0));
        assert_eq!((wide.width, wide.height), (501, 344));
        // Square cells are left alone.
        let square = RgbImage::filled(64, 48, [1, 2, 3]);
        assert_eq!(at_true_aspect(&square, CellSize::UNIT), square);
    }

    #[test]
    fn stretching_interpolates_between_the_rows_it_spreads() {
        // Two rows, black over white, three times as far apart as the columns.
        let mut cells = RgbImage::filled(2, 2, WHITE_RGB);
        cells.put(0, 0, [0, 0, 0]);
        cells.put(1, 0, [0, 0, 0]);
        let shown = at_true_aspect(&cells, CellSize { x: 1.0, y: 3.0 });
        assert_eq!((shown.width, shown.height), (2, 6));
        let column: Vec<u8> = (0..6).map(|y| shown.pixels[y * 2 * 3]).collect();
        assert_eq!(column, [0, 0, 85, 170, 255, 255]);
    }

    #[test]
    fn the_scale_bar_of_a_stretched_relief_measures_the_ground() {
        let map = Heightmap::new(403, 344, vec![500.0; 403 * 344]).unwrap();
        let relief = shaded_relief(&map, JACKSBORO_CELL, (236.0, 1076.0));
        let figure = relief_with_legend(&relief, (236.0, 1076.0), &dem_units(), 403);
        // One pixel is 74.5 m across and down: a quarter of 30 km rounds to 5 km.
        let row = scale_bar_row(relief.height);
        let dark = (0..figure.width)
            .filter(|&x| figure.pixels[(row * figure.width + x) * 3] == 0)
            .count();
        let expected = (5000.0f32 / 74.5).round() as usize;
        assert!(
            dark.abs_diff(expected) <= 1,
            "{dark} dark pixels for {expected}"
        );
    }

    #[test]
    fn text_draws_dark_pixels() {
        let mut image = RgbImage::filled(80, 30, WHITE_RGB);
        image.text("0.5 m", 2, 2, 16.0);
        let dark = image.pixels.chunks(3).filter(|p| p[0] < 128).count();
        assert!(dark > 20, "only {dark} dark pixels");
    }
}
