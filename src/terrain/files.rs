//! Writing output files whole or not at all: each is written beside its final name and
//! renamed into place, so an error never leaves a half-written file behind.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;

#[derive(Debug, Error)]
#[error("writing {path}: {source}")]
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
    let partial = path.with_file_name(format!(".{name}.partial"));
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
