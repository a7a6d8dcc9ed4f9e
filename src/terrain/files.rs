//! Writing output files whole or not at all: each is written beside its final name and
//! renamed into place, so an error never leaves a half-written file behind. The partial
//! name is unique to the process and call, so concurrent writers of one file (tests
//! sharing a peak cache) never rename each other's partial file away.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use thiserror::Error;

#[derive(Debug, Error)]
#[error("writing {}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

pub fn write_atomically<F>(path: &Path, write: F) -> Result<(), WriteError>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    let partial = path.with_file_name(format!(".{name}.{pid}.{call}.partial"));
    let result = (|| {
        let mut out = BufWriter::new(File::create(&partial)?);
        write(&mut out)?;
        out.flush()?;
        drop(out);
        fs::rename(&partial, path)
    })();
    result.map_err(|source| {
        let _ = fs::remove_file(&partial);
        WriteError {
            path: path.to_path_buf(),
            source,
        }
    })
}
