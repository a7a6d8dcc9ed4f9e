//! `vkerode report DIR --html FILE.html`: one sweep as one self-contained page: its
//! provenance and clocks (meta.json), the points table, compare verdicts against a
//! baseline where one is given, a throughput chart against each numeric axis (inline
//! SVG, drawn by `plot`), the pictures the folder holds (base64 data: URIs) and the
//! config. Nothing is fetched: no script, font or style sheet from outside, and a
//! Content-Security-Policy that forbids any. Every text taken from a file is escaped.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::compare::{
    compare, report_rows, Answer, CompareError, CompareReport, WRONG_ANSWER_MARGIN,
};
use super::pairing::Pairing;
use super::plot::{chart_svg, throughput_chart, PlotError};
use crate::experiment::results::{set_file, set_files, Meta, ResultsError, META_JSON, POINTS_CSV};
use crate::stats::Verdict;
use crate::terrain::files::{write_atomically, WriteError};

/// Each chart's size in pixels, as `vkerode plot` draws it.
const PANEL: (u32, u32) = (960, 600);

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
/// The largest picture a page embeds: base64 holds it 4/3 times over, and a page of
/// gigabytes opens nowhere (a 1.5 GB picture once aborted the report for memory).
pub const PICTURE_MAX_BYTES: u64 = 64 << 20;

#[derive(Debug, Error)]
pub enum HtmlError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error(transparent)]
    Compare(#[from] CompareError),
    #[error("drawing the charts: {0}")]
    Plot(#[from] PlotError),
    #[error("{}: {reason}", path.display())]
    Picture { path: PathBuf, reason: String },
    #[error("{}: is a folder; --html names the file to write", path.display())]
    Folder { path: PathBuf },
    #[error(transparent)]
    Write(#[from] WriteError),
}

// Kept (no maud or askama): pages are fixed text with escape()d values, and maud leaves ' bare where this writes &#39;, so committed pages would change.
/// Text made safe for HTML content and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Standard base64 with padding, for data: URIs.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#222}\
h1{font-size:1.6em}h3{font-size:1.05em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}\
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}\
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\
th{background:#f2f2f2;white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums}\
.slower{background:#fdd}.faster{background:#dfd}.holds{background:#dfd}.does-not-hold{background:#fdd}.inconclusive{background:#ffd}.same{background:#eef}.unclear{background:#ffd}\
.none{color:#777}.note{color:#555;font-size:.9em}.wrong{background:#fdd;color:#900}\
figure{margin:1em 0}svg,img{max-width:100%;height:auto;border:1px solid #ddd}\
pre{background:#f6f6f6;padding:.8em;overflow-x:auto;font-size:.85em}";

/// The page for the sweep in `results` (a results folder or its points.csv), with
/// verdicts of it as the new set against `baseline` where one is given (`threshold`
/// relative, as `compare` takes it).
pub fn html_report(
    results: &Path,
    baseline: Option<&Path>,
    threshold: Option<f64>,
) -> Result<String, HtmlError> {
    let points_csv = set_file(results, POINTS_CSV);
    let folder = points_csv
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let rows = report_rows(results)?;
    // A set without meta.json (not made by `vkerode sweep`) still has a table; a
    // meta.json that cannot be read is refused.
    let meta = match folder.join(META_JSON).exists() {
        true => Some(Meta::read(&folder)?),
        false => None,
    };
    let compared = match baseline {
        Some(base) => Some((
            base,
            compare(base, results, threshold, &Pairing::default())?,
        )),
        None => None,
    };
    let pictures = pictures(&folder)?;

    let title = match &meta {
        Some(m) => format!("{} on {}", m.experiment, m.device),
        None => points_csv.display().to_string(),
    };
    let mut page = format!(
        "<p class=\"note\">From <code>{}</code>.</p>\n",
        escape(&folder.display().to_string())
    );
    page += &provenance(meta.as_ref());
    page += &points_table(&rows);
    if let Some((base, report)) = &compared {
        page += &verdicts(base, report);
    }
    page += &charts(&points_csv, meta.as_ref())?;
    if !pictures.is_empty() {
        page += "<h2>Pictures</h2>\n";
        for (path, mime, data) in &pictures {
            let name = escape(&path.file_name().unwrap_or_default().to_string_lossy());
            let _ = writeln!(
                page,
                "<figure><img src=\"data:{mime};base64,{data}\" alt=\"{name}\"><figcaption>{name}</figcaption></figure>"
            );
        }
    }
    if let Some(meta) = &meta {
        let config = serde_json::to_string_pretty(&meta.config).unwrap_or_default();
        let _ = write!(page, "<h2>Config</h2>\n<pre>{}</pre>\n", escape(&config));
    }
    Ok(self_contained_page(
        &format!("vkerode report: {title}"),
        &page,
    ))
}

/// A whole page around `body` (HTML): its heading is `title` (text), and a
/// Content-Security-Policy forbids fetching anything, scripts included.
pub fn self_contained_page(title: &str, body: &str) -> String {
    let title = escape(title);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <link rel=\"icon\" href=\"data:,\">\n<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n{body}</body>\n</html>\n"
    )
}

/// Writes `html` to `path` whole or not at all; a folder is refused.
pub fn write_html(path: &Path, html: &str) -> Result<(), HtmlError> {
    if path.is_dir() {
        return Err(HtmlError::Folder {
            path: path.to_path_buf(),
        });
    }
    write_atomically(path, |out| std::io::Write::write_all(out, html.as_bytes()))?;
    Ok(())
}

/// What `report` reads, the output files it may not replace: the set's files, its
/// folder's pictures and the baseline set's files.
pub fn report_inputs(results: &Path, baseline: Option<&Path>) -> Vec<PathBuf> {
    let folder = crate::terrain::files::parent_of(&set_file(results, POINTS_CSV)).to_path_buf();
    let pictures = std::fs::read_dir(&folder)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|p| p.extension().is_some_and(|e| e == "png" || e == "svg"));
    let mut inputs = set_files(results);
    inputs.extend(pictures);
    inputs.extend(baseline.map(set_files).unwrap_or_default());
    inputs
}

/// The folder's pictures, by name: PNGs, and SVGs without a PNG of the same stem (a
/// chart's two renderings), each with its MIME type and base64 bytes. Only regular
/// files count: a link may point anywhere (into /proc, or out of the folder), and the
/// page is made to be shared. A picture that is not what its name says, or is larger
/// than [`PICTURE_MAX_BYTES`], is refused, naming it.
pub(crate) fn pictures(folder: &Path) -> Result<Vec<(PathBuf, &'static str, String)>, HtmlError> {
    let read_error = |path: &Path, e: std::io::Error| HtmlError::Picture {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(folder)
        .map_err(|e| read_error(folder, e))?
        .filter_map(|entry| entry.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in &paths {
        let mime = match path.extension().and_then(|e| e.to_str()) {
            Some("png") => "image/png",
            Some("svg") if !path.with_extension("png").is_file() => "image/svg+xml",
            _ => continue,
        };
        let refuse = |reason: String| HtmlError::Picture {
            path: path.clone(),
            reason,
        };
        let size = std::fs::metadata(path)
            .map_err(|e| read_error(path, e))?
            .len();
        if size > PICTURE_MAX_BYTES {
            return Err(refuse(format!(
                "is {size} bytes, more than the {PICTURE_MAX_BYTES} a page embeds"
            )));
        }
        let bytes = crate::check_regular_file(path)
            .and_then(|()| std::fs::read(path))
            .map_err(|e| read_error(path, e))?;
        if mime == "image/png" && !bytes.starts_with(PNG_SIGNATURE) {
            return Err(refuse("is not a PNG file".into()));
        }
        if mime == "image/svg+xml" && !is_svg(&bytes) {
            return Err(refuse("is not an SVG file".into()));
        }
        out.push((path.clone(), mime, base64(&bytes)));
    }
    Ok(out)
}

/// An SVG document: text whose first element, past an XML declaration, comments and a
/// doctype, is `<svg`.
fn is_svg(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    loop {
        let skip = [("<?", "?>"), ("<!--", "-->"), ("<!DOCTYPE", ">")]
            .iter()
            .find(|(open, _)| rest.starts_with(open))
            .and_then(|(_, close)| rest.find(close).map(|at| at + close.len()));
        match skip {
            Some(at) => rest = rest[at..].trim_start(),
            None => return rest.starts_with("<svg"),
        }
    }
}

fn provenance(meta: Option<&Meta>) -> String {
    let Some(m) = meta else {
        return "<h2>Provenance</h2>\n<p class=\"none\">No meta.json beside points.csv: no provenance recorded.</p>\n".into();
    };
    let mut rows: Vec<(&str, String)> = vec![
        ("experiment", m.experiment.clone()),
        (
            "description",
            m.config["description"].as_str().unwrap_or_default().into(),
        ),
        ("device", format!("{} ({})", m.device, m.device_type)),
        (
            "vendor / device id",
            format!("{:#06x} / {:#06x}", m.vendor_id, m.device_id),
        ),
        ("driver", format!("{} {}", m.driver, m.driver_version)),
        ("Vulkan API", m.api_version.clone()),
        ("subgroup size", m.subgroup_size.to_string()),
        ("timestamp period", format!("{} ns", m.timestamp_period_ns)),
        ("vkerode", m.vkerode_version.clone()),
        ("git commit", m.git_commit.clone()),
        ("config file", m.config_file.clone()),
        ("config hash", m.config_hash.clone()),
        ("host", m.host.clone()),
        ("started at", m.started_at.clone()),
        ("command line", m.command_line.clone()),
        (
            "validation layer",
            if m.validation {
                "on (slows every dispatch)"
            } else {
                "off"
            }
            .into(),
        ),
        (
            "clocks policy",
            m.clocks_policy
                .clone()
                .unwrap_or_else(|| "not recorded (no NVML)".into()),
        ),
        (
            "GPU at start",
            m.gpu_state_at_start.map_or_else(
                || "not recorded (no NVML)".into(),
                |s| {
                    format!(
                        "SM {} MHz, memory {} MHz, {} °C, {:.1} W, slowing reasons: {}",
                        s.sm_mhz,
                        s.memory_mhz,
                        s.temperature_c,
                        s.power_w,
                        s.slowing_reasons_text()
                    )
                },
            ),
        ),
    ];
    if let Some(shard) = &m.shard {
        rows.push(("shard", shard.clone()));
    }
    if !m.merged_from.is_empty() {
        rows.push(("merged from", m.merged_from.join(", ")));
    }
    if !m.missing_points.is_empty() {
        let missing: Vec<String> = m.missing_points.iter().map(|p| p.to_string()).collect();
        rows.push(("missing points", missing.join(", ")));
    }
    if m.devices.len() > 1 {
        let names: Vec<String> = m
            .devices
            .iter()
            .map(|d| serde_json::to_string(d).unwrap_or_default())
            .collect();
        rows.push(("devices (by worker)", names.join("; ")));
        rows.push(("replicated", m.replicate.to_string()));
    }
    let mut out = String::from("<h2>Provenance</h2>\n<table>\n");
    for (key, value) in rows {
        let value = match value.trim() {
            "" => "<span class=\"none\">not recorded</span>".to_string(),
            text => escape(text),
        };
        let _ = writeln!(out, "<tr><th>{}</th><td>{value}</td></tr>", escape(key));
    }
    out + "</table>\n"
}

fn points_table(rows: &[super::compare::ReportRow]) -> String {
    let mut out = String::from(
        "<h2>Points</h2>\n<table>\n<tr><th>point</th><th>GPU ms (median)</th><th>interval (ms)</th><th>throughput</th><th>net change vs reference</th><th>outliers</th><th>stopped by</th><th>slowed</th></tr>\n",
    );
    let cell = |v: &Option<String>| match v {
        Some(text) => format!("<td>{}</td>", escape(text)),
        None => "<td class=\"none\">-</td>".into(),
    };
    for row in rows {
        let answer = match (row.answer, row.net_change_vs_sequential) {
            (Answer::WrongAnswer, Some(r)) => {
                format!("<td class=\"n wrong\">{r:.3}: <strong>wrong answer</strong></td>")
            }
            (_, Some(r)) => format!("<td class=\"n\">{r:.3}</td>"),
            (_, None) => cell(&None),
        };
        let rate = row
            .rate
            .zip(row.rate_unit.as_ref())
            .map_or("-".into(), |(v, unit)| {
                format!("{} {}", prefixed(v), escape(unit))
            });
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"n\">{:.4}</td><td class=\"n\">{:.4} to {:.4}</td><td class=\"n\">{rate}</td>{answer}{}{}{}</tr>",
            escape(&row.label),
            row.median_ms,
            row.spread_ms.0,
            row.spread_ms.1,
            cell(&row.outliers.map(|count| count.to_string())),
            cell(&row.stop_reason),
            cell(&row.slowed),
        );
    }
    out + &format!("</table>\n<p class=\"note\">The interval is the median's 95% confidence interval (the quartiles for files that have none); throughput is in each strategy's own unit; a net change more than {:.0}% from its CPU reference's marks a wrong answer, whose speed is not a result.</p>\n", 100.0 * WRONG_ANSWER_MARGIN)
}

/// A rate with a power-of-1000 prefix and four significant digits: a CPU device's
/// millions and a GPU's billions both stay readable.
fn prefixed(v: f64) -> String {
    let (unit, prefix) = super::plot::y_unit(v.abs());
    let scaled = v / unit;
    let decimals = match scaled.abs() {
        a if a >= 100.0 => 1,
        a if a >= 10.0 => 2,
        _ => 3,
    };
    match prefix {
        "" => format!("{scaled:.decimals$}"),
        _ => format!("{scaled:.decimals$} {prefix}"),
    }
}

fn verdicts(base: &Path, report: &CompareReport) -> String {
    let mut out = format!(
        "<h2>Against the baseline</h2>\n<p>Base: <code>{}</code>; new: this set.</p>\n<table>\n<tr><th>point</th><th>base ms</th><th>new ms</th><th>new / base</th><th>interval</th><th>verdict</th></tr>\n",
        escape(&base.display().to_string())
    );
    for c in &report.points {
        let class = c.judgement.verdict().map_or("none", Verdict::as_time);
        let interval = c
            .interval
            .map_or("-".into(), |(low, high)| format!("{low:.4} to {high:.4}"));
        let _ = writeln!(
            out,
            "<tr class=\"{class}\"><td>{}</td><td class=\"n\">{:.4}</td><td class=\"n\">{:.4}</td><td class=\"n\">{:.3}</td><td class=\"n\">{interval}</td><td>{}</td></tr>",
            escape(&c.label),
            c.base_ms,
            c.new_ms,
            c.time_ratio,
            escape(&c.judgement.text())
        );
    }
    let _ = write!(
        out,
        "</table>\n<p class=\"note\">{} {} {}</p>\n",
        escape(&report.rules_line()),
        escape(&report.intervals_line()),
        escape(&report.summary())
    );
    out
}

/// The sweep's axes whose every value is a number, from meta.json's config: each can
/// be an x axis.
fn numeric_axes(meta: Option<&Meta>) -> Vec<String> {
    let Some(axes) = meta.and_then(|m| m.config["axes"].as_object()) else {
        return Vec::new();
    };
    axes.iter()
        .filter(|(_, values)| {
            values
                .as_array()
                .is_some_and(|v| v.len() > 1 && v.iter().all(serde_json::Value::is_number))
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// A throughput chart against each numeric axis, inline; a chart `plot` would refuse
/// (three axes vary, say) is named with the reason instead.
pub(crate) fn charts(points_csv: &Path, meta: Option<&Meta>) -> Result<String, HtmlError> {
    let axes = numeric_axes(meta);
    let mut out = String::from("<h2>Charts</h2>\n");
    if axes.is_empty() {
        out += "<p class=\"none\">No numeric axis of the sweep to chart against (meta.json names the axes).</p>\n";
    }
    for axis in axes {
        match throughput_chart(points_csv, &axis) {
            Ok(chart) => {
                let svg = chart_svg(std::slice::from_ref(&chart), 1, PANEL)?;
                let _ = writeln!(
                    out,
                    "<h3>Throughput against {}</h3>\n<figure>{}</figure>",
                    escape(&axis),
                    strip_xml_declaration(&svg)
                );
                if !chart.left_out().is_empty() {
                    let _ = writeln!(
                        out,
                        "<p class=\"note\">Left out, for values no axis can hold: {}</p>",
                        escape(&chart.left_out().join(", "))
                    );
                }
            }
            Err(PlotError::Draw(e)) => return Err(PlotError::Draw(e).into()),
            Err(e) => {
                let _ = writeln!(
                    out,
                    "<p class=\"none\">No chart against {}: {}</p>",
                    escape(&axis),
                    escape(&crate::error_chain(&e))
                );
            }
        }
    }
    Ok(out)
}

/// An SVG document's body for inlining: an XML declaration has no place in HTML.
pub(crate) fn strip_xml_declaration(svg: &str) -> &str {
    match svg.trim_start().strip_prefix("<?xml") {
        Some(rest) => rest
            .split_once("?>")
            .map_or(svg, |(_, body)| body.trim_start()),
        None => svg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_files_cannot_open_a_tag() {
        let hostile = "</pre><script>alert('x')</script><img src=x onerror=\"alert(1)\">&";
        let safe = escape(hostile);
        assert!(!safe.contains('<') && !safe.contains('>') && !safe.contains('"'));
        assert_eq!(
            escape("a<b & \"c\" 'd'"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;"
        );
    }

    #[test]
    fn rates_keep_four_digits_under_their_prefix() {
        assert_eq!(prefixed(8.2e6), "8.200 M");
        assert_eq!(prefixed(9.551e9), "9.551 G");
        assert_eq!(prefixed(123.4e9), "123.4 G");
        assert_eq!(prefixed(12.0), "12.00");
    }

    #[test]
    fn base64_matches_the_standard_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    #[test]
    fn only_regular_files_that_are_the_image_their_name_says_are_embedded() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let secret = dir.join("secret.txt");
        std::fs::write(&secret, "TOKEN=hunter2").unwrap();
        std::fs::write(
            dir.join("chart.svg"),
            "<?xml version=\"1.0\"?>\n<!-- c -->\n<svg/>",
        )
        .unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&secret, dir.join("notes.svg")).unwrap();
        let embedded = pictures(dir).unwrap();
        let names: Vec<_> = embedded
            .iter()
            .map(|(p, _, _)| p.file_name().unwrap())
            .collect();
        assert_eq!(names, ["chart.svg"], "a link is not followed");
        std::fs::write(dir.join("fake.svg"), "TOKEN=hunter2").unwrap();
        let refused = pictures(dir).unwrap_err().to_string();
        assert!(
            refused.contains("fake.svg") && refused.contains("not an SVG"),
            "{refused}"
        );
    }

    #[test]
    fn a_picture_past_the_cap_is_refused_before_it_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        // Sparse: 1.5 GB on paper, nothing on disk. Read whole, the page once took 4x
        // the file in memory and aborted under a memory limit.
        let big = std::fs::File::create(dir.join("huge.png")).unwrap();
        std::io::Write::write_all(&mut &big, PNG_SIGNATURE).unwrap();
        big.set_len(1_500_000_000).unwrap();
        let refused = pictures(dir).unwrap_err().to_string();
        assert!(
            refused.contains("huge.png") && refused.contains("more than the 67108864"),
            "{refused}"
        );
    }

    #[test]
    fn an_xml_declaration_is_dropped_before_inlining() {
        assert_eq!(
            strip_xml_declaration("<?xml version=\"1.0\"?>\n<svg/>"),
            "<svg/>"
        );
        assert_eq!(strip_xml_declaration("<svg/>"), "<svg/>");
    }
}
