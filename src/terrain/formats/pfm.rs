//! Portable Float Map (`.pfm`), read only: the text header "Pf" (one channel), the
//! width and height, and a scale whose sign gives the byte order (negative:
//! little-endian), then float32 rows from the bottom of the image to the top. The
//! scale's magnitude (a brightness for HDR images) is not applied: the samples are the
//! heights.

use std::path::Path;

use super::dem::{Dem, FormatError};

/// Whether `bytes` open like a PFM: "Pf" (one channel) or "PF" (colour), then a space.
pub fn is_pfm(bytes: &[u8]) -> bool {
    (bytes.starts_with(b"Pf") || bytes.starts_with(b"PF"))
        && bytes.get(2).is_some_and(u8::is_ascii_whitespace)
}

/// The longest header read: three numbers and their spacing take far less.
const MAX_HEADER: usize = 256;

pub fn read(path: &Path, bytes: &[u8]) -> Result<Dem, FormatError> {
    if bytes.starts_with(b"PF") {
        return Err(FormatError::new(
            path,
            "is a three-channel colour PFM (\"PF\"); a heightmap needs a one-channel one (\"Pf\")",
        ));
    }
    let bad = |what: String| FormatError::new(path, format!("bad PFM header: {what}"));
    let head = &bytes[..bytes.len().min(MAX_HEADER)];
    let mut at = 2;
    let mut field = |name: &str| -> Result<&str, FormatError> {
        while head.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        let start = at;
        while head.get(at).is_some_and(|b| !b.is_ascii_whitespace()) {
            at += 1;
        }
        // A field must end in whitespace inside the header, before the samples.
        if start == at || at >= head.len() {
            return Err(bad(format!("no {name} in its first {} bytes", head.len())));
        }
        std::str::from_utf8(&head[start..at])
            .map_err(|_| bad(format!("its {name} is not a number")))
    };
    let mut dimension = |name: &str| -> Result<usize, FormatError> {
        let text = field(name)?;
        match text.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(bad(format!(
                "its {name} {text:?} is not a whole number above 0"
            ))),
        }
    };
    let width = dimension("width")?;
    let height = dimension("height")?;
    let scale_text = field("scale")?;
    let scale: f64 = match scale_text.parse() {
        Ok(s) if f64::is_finite(s) && s != 0.0 => s,
        _ => {
            return Err(bad(format!(
                "its scale {scale_text:?} is not a non-zero number (its sign gives the byte order)"
            )))
        }
    };
    // Exactly one whitespace byte ends the header.
    let data = &bytes[at + 1..];
    let expected = width.checked_mul(height).and_then(|n| n.checked_mul(4));
    match expected {
        Some(n) if n == data.len() => {}
        Some(n) if n > data.len() => {
            return Err(FormatError::new(
                path,
                format!(
                    "truncated: its header says {width} x {height} cells ({n} bytes), but {} bytes follow it",
                    data.len()
                ),
            ))
        }
        _ => {
            return Err(FormatError::new(
                path,
                format!(
                    "holds {} bytes after its header, not the {width} x {height} float32 cells it declares",
                    data.len()
                ),
            ))
        }
    }
    let sample = |b: &[u8]| {
        let b = [b[0], b[1], b[2], b[3]];
        if scale < 0.0 {
            f32::from_le_bytes(b)
        } else {
            f32::from_be_bytes(b)
        }
    };
    // Rows are stored bottom to top; heightmaps run top to bottom.
    let values = data
        .chunks_exact(4 * width)
        .rev()
        .flat_map(|row| row.chunks_exact(4).map(sample))
        .collect();
    Dem::bare(path, width, height, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PFM of `rows` (top row first) stored as PFM stores them, bottom row first.
    fn pfm(rows: &[[f32; 4]], little_endian: bool) -> Vec<u8> {
        let scale = if little_endian { "-1.0" } else { "1.0" };
        let mut bytes = format!("Pf\n4 {}\n{scale}\n", rows.len()).into_bytes();
        for row in rows.iter().rev() {
            for v in row {
                let b = if little_endian {
                    v.to_le_bytes()
                } else {
                    v.to_be_bytes()
                };
                bytes.extend_from_slice(&b);
            }
        }
        bytes
    }

    const ROWS: [[f32; 4]; 5] = [
        [1.0, 2.0, 3.0, 4.0],
        [5.0, 6.5, 7.0, 8.0],
        [9.0, 10.0, 11.0, 12.0],
        [13.0, 14.0, 15.0, 16.0],
        [-17.25, 18.0, 19.0, 20.0],
    ];

    #[test]
    fn rows_are_read_top_down_in_either_byte_order() {
        for little_endian in [true, false] {
            let bytes = pfm(&ROWS, little_endian);
            assert!(is_pfm(&bytes));
            let dem = read(Path::new("map.pfm"), &bytes).unwrap();
            assert_eq!((dem.heights.width(), dem.heights.height()), (4, 5));
            assert_eq!(dem.heights.at(0, 0), 1.0, "the top-left cell");
            assert_eq!(dem.heights.at(1, 1), 6.5);
            assert_eq!(dem.heights.at(0, 4), -17.25, "the bottom-left cell");
        }
    }

    fn refusal(bytes: &[u8]) -> String {
        read(Path::new("map.pfm"), bytes).unwrap_err().to_string()
    }

    #[test]
    fn colour_truncated_and_malformed_files_are_refused_naming_the_problem() {
        let mut colour = pfm(&ROWS, true);
        colour[1] = b'F';
        assert!(refusal(&colour).contains("three-channel colour PFM"));
        let whole = pfm(&ROWS, true);
        let cut = refusal(&whole[..whole.len() - 3]);
        assert!(cut.starts_with("map.pfm: truncated"), "{cut}");
        let mut longer = whole.clone();
        longer.push(0);
        assert!(refusal(&longer).contains("not the 4 x 5 float32 cells it declares"));
        assert!(refusal(b"Pf\n4 x\n-1\n").contains("height \"x\" is not a whole number"));
        assert!(refusal(b"Pf\n4 5\n0\n").contains("scale \"0\" is not a non-zero number"));
        assert!(refusal(b"Pf\n4 5").contains("bad PFM header: no height"));
    }
}
