//! Writing output files whole or not at all, and durably: each is written beside its
//! final name, synced, renamed into place and its folder synced, so an error or a crash
//! never leaves a half-written file behind. The partial name is unique to the process
//! and call, so concurrent writers of one file (tests sharing a peak cache) never
//! rename each other's partial file away; its writer holds an OS lock on it, so the
//! next writer of the same name removes it only once that writer is gone, whatever PID
//! namespace or node it ran in.

use std::fs::{self, File};
use std::io::{self, BufWriter};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use thiserror::Error;

#[derive(Debug, Error)]
#[error("writing {}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

const PARTIAL: &str = ".partial";

/// Numbers each partial file this process makes, so no two share a name.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// A partial file younger than this is left alone even unlocked: its writer may be
/// between creating and locking it.
const PARTIAL_GRACE: Duration = Duration::from_secs(10);

// Kept (no tempfile): NamedTempFile::persist is the rename alone; the lock on the
// partial, removal of dead writers' partials, refusal of non-regular targets and the
// folder fsync stay hand-written around it either way.
pub fn write_atomically<F>(path: &Path, write: F) -> Result<(), WriteError>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let folder = parent_of(path);
    check_replaceable_file(path).map_err(|source| WriteError {
        path: path.to_path_buf(),
        source,
    })?;
    remove_dead_partials(folder, Some(&name));
    let partial = partial_path(path);
    let result = (|| {
        let file = File::create(&partial)?;
        file.lock()?;
        let mut out = BufWriter::new(file);
        write(&mut out)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        fs::rename(&partial, path)?;
        sync_folder(folder)
    })();
    result.map_err(|source| {
        let _ = fs::remove_file(&partial);
        WriteError {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Refuses to replace what is at `path` unless it is a regular file or nothing: the
/// rename that publishes a file would put it in the place of a device (/dev/null), a
/// FIFO or a link (/dev/stdout), not write through them.
fn check_replaceable_file(path: &Path) -> io::Result<()> {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return Ok(());
    };
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(());
    }
    let what = if kind.is_symlink() {
        "a link; name the file it points to".to_string()
    } else {
        crate::check_regular_file(path)
            .err()
            .map_or("not a regular file".into(), |e| e.to_string())
    };
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "is {what}; an output replaces only a regular file",
            what = what.trim_start_matches("it is ")
        ),
    ))
}

/// Whether an output may replace a file already at its path: every output, file or
/// folder, is refused when it exists unless `--force` says replace it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overwrite {
    Refuse,
    Allow,
}

impl Overwrite {
    /// `Allow` when `--force` was given.
    pub fn forced(force: bool) -> Self {
        if force {
            Self::Allow
        } else {
            Self::Refuse
        }
    }
}

/// Refuses the output file `path` when something is there and `overwrite` says refuse.
pub fn check_overwrite(path: &Path, overwrite: Overwrite) -> Result<(), WriteError> {
    if overwrite == Overwrite::Refuse && fs::symlink_metadata(path).is_ok() {
        return Err(WriteError {
            path: path.to_path_buf(),
            source: io::Error::new(
                io::ErrorKind::AlreadyExists,
                "already exists; pass --force to replace it, or choose another name",
            ),
        });
    }
    Ok(())
}

/// Checks, before any work, that a file can be written at `path`: its folder exists and
/// takes a new file, and no folder stands in its place. Writes nothing that stays.
fn check_writable(path: &Path) -> Result<(), WriteError> {
    let error = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    if path.is_dir() {
        return Err(error(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a folder; name a file",
        )));
    }
    check_replaceable_file(path).map_err(error)?;
    let probe = partial_path(path);
    File::create_new(&probe).map_err(error)?;
    fs::remove_file(&probe).map_err(error)
}

/// `path` as the file system would name it: its longest existing head resolved (links,
/// `.`, `..`), the rest as given. Creates nothing.
pub fn real_path(path: &Path) -> PathBuf {
    if let Ok(real) = fs::canonicalize(path) {
        return real;
    }
    match path.file_name() {
        Some(name) if path.parent().is_some() => real_path(parent_of(path)).join(name),
        _ => path.to_path_buf(),
    }
}

/// Checks, before any work, that the output file `path` can be written
/// ([`check_writable`]), is none of `inputs` ([`check_apart`]), and replaces a file
/// only as `overwrite` says ([`check_overwrite`]).
pub fn check_output_file(
    path: &Path,
    inputs: &[PathBuf],
    overwrite: Overwrite,
) -> Result<(), WriteError> {
    check_writable(path)?;
    check_apart(path, inputs)?;
    check_overwrite(path, overwrite)
}

/// Refuses the output `path` (a file, or a folder written whole) when one of `inputs`,
/// the files and folders the command reads or the set it writes, is it or lies in it,
/// by any name (a link, `.`, a hard link): writing it would replace what is read.
pub fn check_apart(path: &Path, inputs: &[PathBuf]) -> Result<(), WriteError> {
    let out = real_path(path);
    let identity = |p: &Path| fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let clashes = |input: &&PathBuf| {
        real_path(input).starts_with(&out)
            || identity(input).is_some_and(|id| identity(path) == Some(id))
    };
    match inputs.iter().find(clashes) {
        None => Ok(()),
        Some(input) => Err(WriteError {
            path: path.to_path_buf(),
            source: io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "would replace {}, which this command reads or writes; write the output elsewhere",
                    input.display()
                ),
            ),
        }),
    }
}

/// A fresh partial file's path for `path`: `.NAME.PID.CALL.partial` beside it, unique
/// to this process and call ([`partial_of`] reads it back).
fn partial_path(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.{}.{call}{PARTIAL}", std::process::id()))
}

/// Whether `text` is a number of decimal digits, as the process ids and call counts
/// in leftovers' names are.
pub(crate) fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// The folder `path` is in, `.` for a bare name.
pub(crate) fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Syncs a folder's entries (a rename or a new file in it) to disk. File systems that
/// cannot sync a folder say so with `InvalidInput`; that is no error.
pub fn sync_folder(dir: &Path) -> io::Result<()> {
    match File::open(dir)?.sync_all() {
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => Ok(()),
        other => other,
    }
}

/// The file a partial file was being written as, from its name
/// `.NAME.PID.CALL.partial`.
pub(crate) fn partial_of(file_name: &str) -> Option<&str> {
    let stem = file_name.strip_prefix('.')?.strip_suffix(PARTIAL)?;
    let (rest, call) = stem.rsplit_once('.')?;
    let (name, pid) = rest.rsplit_once('.')?;
    (is_digits(call) && is_digits(pid) && !name.is_empty()).then_some(name)
}

/// Whether the partial file at `path` was left by a writer that is gone: no one holds
/// its lock, and it is past the grace of a writer about to lock it.
pub(crate) fn is_dead_partial(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let young = file
        .metadata()
        .and_then(|m| m.modified())
        .map(|at| SystemTime::now().duration_since(at).unwrap_or_default() < PARTIAL_GRACE)
        .unwrap_or(true);
    !young && file.try_lock().is_ok()
}

/// Removes, from `dir`, the partial files of writers that are gone; with `of`, only
/// those of that file. Best effort: what cannot be removed stays.
pub(crate) fn remove_dead_partials(dir: &Path, of: Option<&str>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(target) = name.to_str().and_then(partial_of) else {
            continue;
        };
        if of.is_none_or(|of| of == target) && is_dead_partial(&entry.path()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_files_name_their_target() {
        assert_eq!(partial_of(".before.tif.4242.7.partial"), Some("before.tif"));
        assert_eq!(partial_of(".x.partial"), None);
        assert_eq!(partial_of(".a.b.partial"), None);
        assert_eq!(partial_of("before.tif"), None);
    }
}
