//! Output folders that are never mixed, half written or taken from a live writer. The
//! folder `DIR/NAME` has one lock, the OS file lock on `DIR/.NAME.lock`, held by whoever
//! writes it: a sweep, or a command staging its whole output set in
//! `DIR/.NAME.staging-PID` and moving it into place at the end. A leftover's owner is
//! judged alive by that lock (or, for a `.partial` file, by the file's own lock), never
//! by its process id, so a writer in another PID namespace or on another node of a
//! shared file system keeps its files. Folders vkerode made carry a marker file, and
//! `--force` replaces only those.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::files::{
    check_apart, is_digits, parent_of, remove_dead_partials, sync_folder, WriteError,
};

/// The file that marks a folder vkerode made: the one kind `--force` may replace.
pub const MARKER: &str = ".vkerode-output";

#[derive(Debug, Error)]
pub enum OutputError {
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("{}: is being written by another vkerode ({holder}); wait for it to finish", path.display())]
    Busy { path: PathBuf, holder: String },
    #[error(
        "{}: already holds files (an earlier run's); pass --force to replace it whole, or choose another folder",
        path.display()
    )]
    Occupied { path: PathBuf },
    #[error(
        "{}: holds files vkerode did not make (it has no {MARKER} marker); --force replaces only folders vkerode made: remove it yourself or choose another folder",
        path.display()
    )]
    NotOurs { path: PathBuf },
    #[error("{}: is a file, not a folder; choose a folder to write into", path.display())]
    NotAFolder { path: PathBuf },
    #[error("{}: name the output folder itself (not '.', '..' or a root)", path.display())]
    NoName { path: PathBuf },
}

fn write_error(path: &Path) -> impl FnOnce(io::Error) -> WriteError + '_ {
    move |source| WriteError {
        path: path.to_path_buf(),
        source,
    }
}

/// The folder `target` is in and its own name, or why it has none.
fn parent_and_name(target: &Path) -> Result<(&Path, String), OutputError> {
    let name = target.file_name().ok_or_else(|| OutputError::NoName {
        path: target.to_path_buf(),
    })?;
    Ok((parent_of(target), name.to_string_lossy().into_owned()))
}

/// `target` as the file system names it, its folder made if missing: that folder
/// resolved (links, `.`, `..`) and a link in the target's place followed, so one folder
/// has one lock whatever path names it. A path whose last part is `.` or `..` names no
/// folder (`prev/.` would otherwise pass as `prev` and fail only at the final rename).
pub fn resolved(target: &Path) -> Result<PathBuf, OutputError> {
    let no_name = || OutputError::NoName {
        path: target.to_path_buf(),
    };
    let text = target.as_os_str().as_encoded_bytes();
    let end = text.iter().rposition(|&b| b != b'/').map_or(0, |i| i + 1);
    let last = text[..end]
        .rsplit(|&b| b == b'/')
        .next()
        .unwrap_or_default();
    if last == b"." || last == b".." {
        return Err(no_name());
    }
    let (parent, name) = parent_and_name(target)?;
    fs::create_dir_all(parent).map_err(write_error(parent))?;
    let joined = fs::canonicalize(parent)
        .map_err(write_error(parent))?
        .join(name);
    match fs::symlink_metadata(&joined) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(&joined).map_err(|e| write_error(&joined)(e).into())
        }
        _ => Ok(joined),
    }
}

/// The lock file of the folder `name` in `parent`.
fn lock_path(parent: &Path, name: &str) -> PathBuf {
    parent.join(format!(".{name}.lock"))
}

/// An advisory exclusive lock held while one process writes a folder: a second one is
/// refused, told who holds it. The OS releases it when its holder dies, so a killed run
/// leaves no stale lock.
pub struct FolderLock {
    path: PathBuf,
    file: File,
}

impl FolderLock {
    /// Locks the folder `dir` and makes it if missing, marked as vkerode's.
    pub fn take(dir: &Path) -> Result<Self, OutputError> {
        let real = resolved(dir)?;
        let (parent, name) = parent_and_name(&real)?;
        let lock = Self::at(&lock_path(parent, &name), dir)?;
        if real.exists() && !real.is_dir() {
            return Err(OutputError::NotAFolder {
                path: dir.to_path_buf(),
            });
        }
        fs::create_dir_all(&real).map_err(write_error(&real))?;
        mark(&real)?;
        Ok(lock)
    }

    /// Locks `target` through the lock file `path`, which is named in no message.
    fn at(path: &Path, target: &Path) -> Result<Self, OutputError> {
        Self::try_at(path)?.ok_or_else(|| {
            let holder = crate::read_input_text(path).unwrap_or_default();
            OutputError::Busy {
                path: target.to_path_buf(),
                // Between taking the lock and naming itself, a holder is nameless.
                holder: match holder.trim() {
                    "" => "one that has just started and not yet said who it is".into(),
                    named => named.into(),
                },
            }
        })
    }

    /// The lock at `path`, or `None` while another holds it.
    fn try_at(path: &Path) -> Result<Option<Self>, OutputError> {
        loop {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)
                .map_err(write_error(path))?;
            // A hard link planted in the lock's place is another file's content.
            if file.metadata().map_err(write_error(path))?.nlink() > 1 {
                return Err(write_error(path)(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "is a hard link to another file, not a lock vkerode made; remove it",
                ))
                .into());
            }
            match file.try_lock() {
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => return Ok(None),
                Err(fs::TryLockError::Error(e)) => return Err(write_error(path)(e).into()),
            }
            // A holder that let go removed the file first: a lock on that old file
            // locks nothing, so take the one now at the path.
            let identity = |m: fs::Metadata| (m.dev(), m.ino());
            let held = file.metadata().map(identity).map_err(write_error(path))?;
            if fs::metadata(path).map(identity).ok() != Some(held) {
                continue;
            }
            let holder = format!(
                "process {} on {}: {}",
                std::process::id(),
                crate::host_name(),
                std::env::args().collect::<Vec<_>>().join(" ")
            );
            file.set_len(0).map_err(write_error(path))?;
            io::Write::write_all(&mut file, holder.as_bytes()).map_err(write_error(path))?;
            return Ok(Some(Self {
                path: path.to_path_buf(),
                file,
            }));
        }
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        // Remove the file while holding the lock, then let the lock go with the handle.
        let _ = fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// Marks `dir` as a folder vkerode made.
fn mark(dir: &Path) -> Result<(), OutputError> {
    let marker = dir.join(MARKER);
    if !marker.exists() {
        let text = format!(
            "made by vkerode {}: {}\n",
            env!("CARGO_PKG_VERSION"),
            std::env::args().collect::<Vec<_>>().join(" ")
        );
        fs::write(&marker, text).map_err(write_error(&marker))?;
    }
    Ok(())
}

/// A command's output folder, written whole or not at all. Files go into
/// [`StagedFolder::path`]; [`StagedFolder::publish`] moves the set into place. Dropped
/// unpublished (an error), the staging folder is removed; killed, it is left for the
/// next run to remove.
pub struct StagedFolder {
    /// As the caller named it, for the paths `publish` returns.
    target: PathBuf,
    /// As the file system names it ([`resolved`]).
    resolved: PathBuf,
    staging: PathBuf,
    published: bool,
    /// Declared last: held until the staging folder is gone or published.
    _lock: FolderLock,
}

impl StagedFolder {
    /// Checks `target`, clears leftovers of dead runs beside it, and makes a fresh
    /// staging folder, all before any work: an unwritable place fails here. A folder
    /// another process writes is refused, whatever `replace`; so is a file. A folder
    /// that holds files is refused unless `replace`, and then unless vkerode made it;
    /// and so is a target that is, or holds, one of `reads`, what the command reads.
    pub fn begin(target: &Path, replace: bool, reads: &[PathBuf]) -> Result<Self, OutputError> {
        let real = resolved(target)?;
        let (parent, name) = parent_and_name(&real)?;
        let lock = FolderLock::at(&lock_path(parent, &name), target)?;
        check_apart(target, reads)?;
        remove_dead_leftovers(parent, Some(&name));
        check_replaceable(&real, replace)?;
        let staging = parent.join(format!(".{name}.staging-{}", std::process::id()));
        fs::create_dir(&staging).map_err(write_error(&staging))?;
        let staged = Self {
            target: target.to_path_buf(),
            resolved: real,
            staging,
            published: false,
            _lock: lock,
        };
        mark(&staged.staging)?;
        Ok(staged)
    }

    /// Where the outputs are written until they are published.
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// The folder the outputs will be published as, as the caller named it.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Moves the staged set into place in one rename, once it and its folders are on
    /// disk; an old target (empty, or replaced with `--force`) is moved aside first and
    /// removed after. Returns `written` (paths in the staging folder) as they are named
    /// once published.
    pub fn publish(mut self, written: Vec<PathBuf>) -> Result<Vec<PathBuf>, OutputError> {
        sync_folders(&self.staging).map_err(write_error(&self.staging))?;
        let replaced = self.resolved.exists().then(|| {
            let name = self
                .target
                .file_name()
                .unwrap_or_default()
                .to_string_lossy();
            self.resolved
                .with_file_name(format!(".{name}.replaced-{}", std::process::id()))
        });
        if let Some(aside) = &replaced {
            let _ = fs::remove_dir_all(aside);
            fs::rename(&self.resolved, aside).map_err(write_error(&self.resolved))?;
        }
        if let Err(e) = fs::rename(&self.staging, &self.resolved) {
            if let Some(aside) = &replaced {
                let _ = fs::rename(aside, &self.resolved);
            }
            return Err(write_error(&self.resolved)(e).into());
        }
        self.published = true;
        if let Some(aside) = &replaced {
            let _ = fs::remove_dir_all(aside);
        }
        let parent = parent_of(&self.resolved);
        sync_folder(parent).map_err(write_error(parent))?;
        Ok(written
            .into_iter()
            .map(|path| match path.strip_prefix(&self.staging) {
                Ok(inside) => self.target.join(inside),
                Err(_) => path,
            })
            .collect())
    }
}

impl Drop for StagedFolder {
    fn drop(&mut self) {
        if !self.published {
            let _ = fs::remove_dir_all(&self.staging);
        }
    }
}

/// Syncs `dir` and every folder under it (their entries; files sync as they are
/// written).
fn sync_folders(dir: &Path) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            sync_folders(&entry.path())?;
        }
    }
    sync_folder(dir)
}

/// Whether a command may write the folder `target`: missing or empty, or, with
/// `replace`, a folder vkerode made.
pub fn check_replaceable(target: &Path, replace: bool) -> Result<(), OutputError> {
    let path = target.to_path_buf();
    let Ok(meta) = fs::symlink_metadata(target) else {
        return Ok(());
    };
    if !meta.is_dir() {
        return Err(OutputError::NotAFolder { path });
    }
    let empty = fs::read_dir(target)
        .map_err(write_error(target))?
        .next()
        .is_none();
    match (empty, replace, target.join(MARKER).is_file()) {
        (true, _, _) | (false, true, true) => Ok(()),
        (false, false, _) => Err(OutputError::Occupied { path }),
        (false, true, false) => Err(OutputError::NotOurs { path }),
    }
}

/// The output folder a staging or moved-aside folder belongs to, from its name:
/// `.NAME.staging-PID` and `.NAME.replaced-PID`.
fn leftover_folder_of(file_name: &str) -> Option<&str> {
    let rest = file_name.strip_prefix('.')?;
    [".staging-", ".replaced-"].iter().find_map(|marker| {
        let (name, pid) = rest.rsplit_once(marker)?;
        (is_digits(pid) && !name.is_empty()).then_some(name)
    })
}

/// Removes, from `dir`, the partial files and the staging and moved-aside folders of
/// writers that are gone: a folder's leftovers are dead when no one holds its lock, or
/// when it is `own`, whose lock the caller holds. Best effort: what cannot be removed
/// stays.
pub fn remove_dead_leftovers(dir: &Path, own: Option<&str>) {
    remove_dead_partials(dir, None);
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(name) = file_name.to_str().and_then(leftover_folder_of) else {
            continue;
        };
        // Held through the removal, so no writer starts on that folder meanwhile.
        let _lock = if own == Some(name) {
            None
        } else {
            match FolderLock::try_at(&lock_path(dir, name)) {
                Ok(Some(lock)) => Some(lock),
                _ => continue,
            }
        };
        let _ = fs::remove_dir_all(entry.path());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_outputs_follow_the_one_rule() {
        assert_eq!(
            default_out("reproduce", None, "NVIDIA H200"),
            Path::new("out/reproduce/nvidia-h200")
        );
        assert_eq!(
            default_out(
                "sweep",
                Some("workgroup"),
                "llvmpipe (LLVM 15.0.6, 256 bits)"
            ),
            Path::new("out/sweep/workgroup/llvmpipe-llvm-15-0-6-256-bits")
        );
        // sweep's default is a pattern its --out fills in: the same rule.
        let pattern = crate::experiment::sweep::DEFAULT_OUT;
        let filled = pattern
            .replace("{experiment}", "workgroup")
            .replace("{device}", "llvmpipe-llvm-15-0-6-256-bits");
        assert_eq!(
            Path::new(&filled),
            default_out(
                "sweep",
                Some("workgroup"),
                "llvmpipe (LLVM 15.0.6, 256 bits)"
            )
        );
    }

    #[test]
    fn leftover_folders_name_their_output_folder() {
        assert_eq!(leftover_folder_of(".run.staging-4242"), Some("run"));
        assert_eq!(leftover_folder_of(".my.run.replaced-17"), Some("my.run"));
        assert_eq!(leftover_folder_of(".run.staging-"), None);
        assert_eq!(leftover_folder_of("run"), None);
        assert_eq!(leftover_folder_of(".vkerode.lock"), None);
    }
}

/// The one rule for where a command writes when `--out` is not given.
pub const DEFAULT_OUT_RULE: &str = "Default output folders follow one rule: out/<command>/<device>/, with the config's name between for a command that loads one (out/sweep/<experiment>/<device>/); <device> is the device's name as a folder name (cpu for erode's CPU engines). A default never lands in the committed results/ tree: give --out for that.";

/// The folder a command writes when `--out` is not given ([`DEFAULT_OUT_RULE`]):
/// `out/<command>/[<config>/]<device>`.
pub fn default_out(command: &str, config: Option<&str>, device: &str) -> PathBuf {
    let mut out = Path::new("out").join(command);
    if let Some(config) = config {
        out.push(config);
    }
    out.join(slug(device))
}

/// A name safe for paths: lowercase letters and digits, runs of anything else as '-'.
pub fn slug(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_matches('-').to_string()
}

#[cfg(test)]
mod slug_tests {
    #[test]
    fn device_names_become_path_safe_slugs() {
        assert_eq!(super::slug("NVIDIA H200"), "nvidia-h200");
        assert_eq!(
            super::slug("llvmpipe (LLVM 15.0.6, 256 bits)"),
            "llvmpipe-llvm-15-0-6-256-bits"
        );
    }
}
