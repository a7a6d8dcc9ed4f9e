//! Charts of labelled rows, each an estimate with its interval: the forest plot of
//! `reproduce`'s claims (each against its band of no effect, the reference's estimate
//! at the same scale in the row below, hollow) and the settings of its sweeps, their
//! seeds pooled. Rows keep the order given (numbers in numeric order, by the caller);
//! one SVG, for inlining in a page.

use plotters::coord::ranged1d::{AsRangedCoord, SegmentValue, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::plot::{DrawError, PlotError};
use crate::terrain::pictures::ensure_font;

/// One row: an estimate, its interval, the band of no effect around its null.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalRow {
    pub label: String,
    pub value: f64,
    pub interval: Option<(f64, f64)>,
    pub band: Option<(f64, f64)>,
    /// Drawn hollow and grey: a reference's estimate beside the row above.
    pub reference: bool,
}

/// A chart of rows against one x axis.
#[derive(Clone, Debug)]
pub struct IntervalChart {
    pub title: String,
    /// The quantity and its unit, with the direction where it has one.
    pub x_label: String,
    /// Logarithmic x, for ratios.
    pub log_x: bool,
    pub rows: Vec<IntervalRow>,
}

const MAIN: RGBColor = RGBColor(31, 119, 180);
const REFERENCE: RGBColor = RGBColor(120, 120, 120);
const BAND: RGBColor = RGBColor(255, 220, 120);
const ROW_PX: u32 = 34;
/// The strip under the chart that holds its key.
const KEY_PX: u32 = 30;

impl IntervalChart {
    /// Every x the chart must hold: values, intervals and bands.
    fn extent(&self) -> (f64, f64) {
        let xs = self.rows.iter().flat_map(|r| {
            let (il, ih) = r.interval.unwrap_or((r.value, r.value));
            let (bl, bh) = r.band.unwrap_or((r.value, r.value));
            [r.value, il, ih, bl, bh]
        });
        let xs = xs.filter(|x| x.is_finite() && (!self.log_x || *x > 0.0));
        xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        })
    }

    /// The chart as one SVG document; `None` for a chart without a drawable row.
    pub fn svg(&self, width: u32) -> Result<Option<String>, PlotError> {
        let (lo, hi) = self.extent();
        if self.rows.is_empty() || !(lo.is_finite() && hi.is_finite()) {
            return Ok(None);
        }
        ensure_font();
        let height = 110 + KEY_PX + ROW_PX * self.rows.len() as u32;
        let mut svg = String::new();
        {
            let page = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
            page.fill(&WHITE)
                .map_err(|e| PlotError::Draw(DrawError::of(&e)))?;
            let (root, key) = page.split_vertically(height - KEY_PX);
            self.draw_key(&key).map_err(PlotError::Draw)?;
            let drawn = if self.log_x {
                let (lo, hi) = if lo == hi {
                    (lo / 2.0, hi * 2.0)
                } else {
                    (lo, hi)
                };
                let axis = (lo / 1.15, hi * 1.15);
                self.draw(&root, (axis.0..axis.1).log_scale(), axis)
            } else {
                let pad = ((hi - lo) * 0.08).max(hi.abs() * 0.05).max(1e-9);
                let axis = (lo - pad, hi + pad);
                self.draw(&root, RangedCoordf64::from(axis.0..axis.1), axis)
            };
            drawn.map_err(PlotError::Draw)?;
            page.present()
                .map_err(|e| PlotError::Draw(DrawError::of(&e)))?;
        }
        Ok(Some(svg))
    }

    /// Draws the rows on `x`, which spans `axis`: an interval reaching past it (below 0
    /// on a log axis) is drawn to its end.
    fn draw<DB, X>(
        &self,
        root: &DrawingArea<DB, plotters::coord::Shift>,
        x: X,
        axis: (f64, f64),
    ) -> Result<(), DrawError>
    where
        DB: DrawingBackend,
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
    {
        let err = DrawError::of;
        let n = self.rows.len();
        // Segment 0 is at the bottom: the first row is drawn in the top one.
        let at = |i: usize| n - 1 - i;
        let label_width = self
            .rows
            .iter()
            .map(|r| r.label.chars().count())
            .max()
            .unwrap_or(0) as u32
            * 8
            + 16;
        let mut ctx = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 18))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(label_width.min(520))
            .build_cartesian_2d(x, (0..n).into_segmented())
            .map_err(|e| err(&e))?;
        let labels: Vec<String> = self.rows.iter().map(|r| r.label.clone()).collect();
        ctx.configure_mesh()
            .disable_y_mesh()
            .light_line_style(TRANSPARENT)
            .x_desc(&self.x_label)
            .y_labels(n)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(s) if *s < n => labels[n - 1 - *s].clone(),
                _ => String::new(),
            })
            .x_label_formatter(&|v| crate::readable_number(*v))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .draw()
            .map_err(|e| err(&e))?;
        let clamp = |v: f64| v.clamp(axis.0, axis.1);
        for (i, row) in self.rows.iter().enumerate() {
            let y = at(i);
            if let Some((low, high)) = row.band.map(|(l, h)| (clamp(l), clamp(h))) {
                ctx.draw_series([Rectangle::new(
                    [
                        (low, SegmentValue::Exact(y)),
                        (high, SegmentValue::Exact(y + 1)),
                    ],
                    BAND.mix(0.45).filled(),
                )])
                .map_err(|e| err(&e))?;
            }
            let colour = if row.reference { REFERENCE } else { MAIN };
            let centre = SegmentValue::CenterOf(y);
            if let Some((low, high)) = row.interval.map(|(l, h)| (clamp(l), clamp(h))) {
                ctx.draw_series([PathElement::new(
                    vec![(low, centre.clone()), (high, centre.clone())],
                    colour.stroke_width(3),
                )])
                .map_err(|e| err(&e))?;
            }
            let marker = match row.reference {
                true => Circle::new((row.value, centre), 6, colour.stroke_width(2)),
                false => Circle::new((row.value, centre), 6, colour.filled()),
            };
            ctx.draw_series([marker]).map_err(|e| err(&e))?;
        }
        Ok(())
    }

    /// The key, in a strip of its own so that it hides no row: the marks the rows use,
    /// each in words (the interval's level is the x label's).
    fn draw_key<DB: DrawingBackend>(
        &self,
        key: &DrawingArea<DB, plotters::coord::Shift>,
    ) -> Result<(), DrawError> {
        let err = DrawError::of;
        let text = ("sans-serif", 14).into_font().color(&BLACK);
        let y = (KEY_PX / 2) as i32;
        let mut x = 20;
        let mut entry = |mark: &dyn Fn(i32) -> Result<(), DrawError>, words: &str| {
            mark(x)?;
            key.draw(&Text::new(words.to_string(), (x + 34, y - 8), text.clone()))
                .map_err(|e| err(&e))?;
            let (w, _) = key.estimate_text_size(words, &text).map_err(|e| err(&e))?;
            x += 34 + w as i32 + 28;
            Ok::<(), DrawError>(())
        };
        let estimate = |colour: RGBColor, hollow: bool| {
            move |x: i32| {
                key.draw(&PathElement::new(
                    vec![(x, y), (x + 24, y)],
                    colour.stroke_width(3),
                ))
                .map_err(|e| err(&e))?;
                let style = match hollow {
                    true => colour.stroke_width(2),
                    false => colour.filled(),
                };
                key.draw(&Circle::new((x + 12, y), 6, style))
                    .map_err(|e| err(&e))
            }
        };
        entry(&estimate(MAIN, false), "estimate and its interval")?;
        if self.rows.iter().any(|r| r.reference) {
            entry(
                &estimate(REFERENCE, true),
                "the reference's, at the same scale",
            )?;
        }
        if self.rows.iter().any(|r| r.band.is_some()) {
            let band = |x: i32| {
                key.draw(&Rectangle::new(
                    [(x, y - 8), (x + 24, y + 8)],
                    BAND.mix(0.45).filled(),
                ))
                .map_err(|e| err(&e))
            };
            entry(&band, "band of no effect")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, value: f64, reference: bool) -> IntervalRow {
        IntervalRow {
            label: label.into(),
            value,
            interval: Some((value * 0.9, value * 1.1)),
            band: Some((0.96, 1.04)),
            reference,
        }
    }

    #[test]
    fn every_row_is_drawn_with_its_label_in_order() {
        let chart = IntervalChart {
            title: "claims".into(),
            x_label: "ratio (lower is better)".into(),
            log_x: true,
            rows: vec![
                row("tiles", 0.66, false),
                row("reference", 0.7, true),
                row("stagger", 1.3, false),
            ],
        };
        let svg = chart.svg(800).unwrap().unwrap();
        let key_top = (110 + ROW_PX * 3) as f64;
        let (rows, key): (Vec<Mark>, Vec<Mark>) =
            marks(&svg).into_iter().partition(|m| m.y < key_top);
        // One marker a row, drawn in the rows' order from the top down (the text is
        // drawn as glyph outlines, so the rows are told apart by their markers).
        let heights: Vec<f64> = rows.iter().map(|m| m.y).collect();
        assert_eq!(heights.len(), 3, "{svg}");
        assert!(
            heights[0] < heights[1] && heights[1] < heights[2],
            "{heights:?}"
        );
        // The reference's marker is hollow, the others filled.
        let hollow: Vec<bool> = rows.iter().map(|m| m.hollow).collect();
        assert_eq!(hollow, [false, true, false], "{svg}");
        // The key shows both kinds of estimate, below every row.
        let key_hollow: Vec<bool> = key.iter().map(|m| m.hollow).collect();
        assert_eq!(key_hollow, [false, true], "{svg}");
        // A band a row, and the band's swatch in the key.
        assert!(svg.matches("<rect").count() >= 4, "{svg}");
        let empty = IntervalChart {
            rows: Vec::new(),
            ..chart
        };
        assert_eq!(empty.svg(800).unwrap(), None);
    }

    #[test]
    fn the_key_names_only_the_marks_the_rows_use() {
        let chart = IntervalChart {
            title: "settings".into(),
            x_label: "ms".into(),
            log_x: false,
            rows: vec![IntervalRow {
                band: None,
                ..row("workgroup 64", 2.0, false)
            }],
        };
        let svg = chart.svg(800).unwrap().unwrap();
        let key_top = (110 + ROW_PX) as f64;
        let key: Vec<Mark> = marks(&svg).into_iter().filter(|m| m.y >= key_top).collect();
        assert_eq!(key.len(), 1, "{svg}");
        assert!(!key[0].hollow);
        assert_eq!(
            svg.matches("<rect").count(),
            1,
            "only the background: {svg}"
        );
    }

    struct Mark {
        y: f64,
        hollow: bool,
    }

    /// The circles of an SVG: where each is drawn, and whether it is hollow.
    fn marks(svg: &str) -> Vec<Mark> {
        svg.split("<circle")
            .skip(1)
            .map(|c| {
                let at = c.find("cy=\"").unwrap() + 4;
                Mark {
                    y: c[at..].split('"').next().unwrap().parse().unwrap(),
                    hollow: c.split("/>").next().unwrap().contains("fill=\"none\""),
                }
            })
            .collect()
    }
}
