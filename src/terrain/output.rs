//! Output folders that are never mixed or half written: a lock names the one process
//! writing a folder, and a command's whole output set is written into a staging folder
//! beside its target and moved into place at the end. Leftovers of killed processes
//! (staging folders, `.partial` files) are removed by the next run.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::files::WriteError;

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
}

fn write_error(path: &Path) -> impl FnOnce(io::Error) -> WriteError + '_ {
    move |source| WriteError {
        path: path.to_path_buf(),
        source,
    }
}

/// An advisory exclusive lock held while one process writes a folder: a second one is
/// refused, told who holds it. The OS releases it when its holder dies, so a killed run
/// leaves no stale lock.
pub struct FolderLock {
    path: PathBuf,
    file: File,
}

impl FolderLock {
    /// Locks `dir` (made if missing) through a lock file inside it.
    pub fn take(dir: &Path) -> Result<Self, OutputError> {
        fs::create_dir_all(dir).map_err(write_error(dir))?;
        Self::at(&dir.join(".vkerode.lock"), dir)
    }

    /// Locks `target` through the lock file `path`, which is named in no message.
    fn at(path: &Path, target: &Path) -> Result<Self, OutputError> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(write_error(path))?;
        match file.try_lock() {
            Ok(()) => {
                let holder = format!(
                    "process {}: {}",
                    std::process::id(),
                    std::env::args().collect::<Vec<_>>().join(" ")
                );
                file.set_len(0).map_err(write_error(path))?;
                io::Write::write_all(&mut file, holder.as_bytes()).map_err(write_error(path))?;
                Ok(Self {
                    path: path.to_path_buf(),
                    file,
                })
            }
            Err(fs::TryLockError::WouldBlock) => Err(OutputError::Busy {
                path: target.to_path_buf(),
                holder: fs::read_to_string(path).unwrap_or_default().trim().into(),
            }),
            Err(fs::TryLockError::Error(e)) => Err(write_error(path)(e).into()),
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

/// A command's output folder, written whole or not at all. Files go into
/// [`StagedFolder::path`]; [`StagedFolder::publish`] moves the set into place. Dropped
/// unpublished (an error), the staging folder is removed; killed, it is left for the
/// next run to remove.
pub struct StagedFolder {
    target: PathBuf,
    staging: PathBuf,
    published: bool,
    /// Declared last: held until the staging folder is gone or published.
    _lock: FolderLock,
}

impl StagedFolder {
    /// Checks `target`, clears leftovers of dead runs beside it, and makes a fresh
    /// staging folder, all before any work: an unwritable place fails here. A target
    /// that holds files is refused unless `replace`.
    pub fn begin(target: &Path, replace: bool) -> Result<Self, OutputError> {
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| OutputError::Occupied {
                path: target.to_path_buf(),
            })?;
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(write_error(&parent))?;
        let lock = FolderLock::at(&parent.join(format!(".{name}.lock")), target)?;
        remove_dead_leftovers(&parent);
        if holds_files(target) && !replace {
            return Err(OutputError::Occupied {
                path: target.to_path_buf(),
            });
        }
        let staging = parent.join(format!(".{name}.staging-{}", std::process::id()));
        // Our own pid's leftover can only be from an earlier, dead process.
        let _ = fs::remove_dir_all(&staging);
        fs::create_dir(&staging).map_err(write_error(&staging))?;
        Ok(Self {
            target: target.to_path_buf(),
            staging,
            published: false,
            _lock: lock,
        })
    }

    /// Where the outputs are written until they are published.
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// The folder the outputs will be published as.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Moves the staged set into place in one rename; an old target (empty, or replaced
    /// with `--force`) is moved aside first and removed after. Returns `written` (paths
    /// in the staging folder) as they are named once published.
    pub fn publish(mut self, written: Vec<PathBuf>) -> Result<Vec<PathBuf>, OutputError> {
        let replaced = self.target.exists().then(|| {
            let name = self
                .target
                .file_name()
                .unwrap_or_default()
                .to_string_lossy();
            self.target
                .with_file_name(format!(".{name}.replaced-{}", std::process::id()))
        });
        if let Some(aside) = &replaced {
            let _ = fs::remove_dir_all(aside);
            fs::rename(&self.target, aside).map_err(write_error(&self.target))?;
        }
        if let Err(e) = fs::rename(&self.staging, &self.target) {
            if let Some(aside) = &replaced {
                let _ = fs::rename(aside, &self.target);
            }
            return Err(write_error(&self.target)(e).into());
        }
        self.published = true;
        if let Some(aside) = &replaced {
            let _ = fs::remove_dir_all(aside);
        }
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

fn holds_files(dir: &Path) -> bool {
    match fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_some(),
        // A file in the folder's place counts as occupied.
        Err(_) => dir.exists(),
    }
}

/// The process that made a leftover, from its name: `.NAME.PID.CALL.partial` (a file
/// being written), `.NAME.staging-PID` and `.NAME.replaced-PID` (output folders).
fn leftover_owner(file_name: &str) -> Option<u32> {
    let rest = file_name.strip_prefix('.')?;
    if let Some(stem) = rest.strip_suffix(".partial") {
        let mut parts = stem.rsplit('.');
        let _call = parts.next()?;
        return parts.next()?.parse().ok();
    }
    ["staging-", "replaced-"].iter().find_map(|marker| {
        let (_, pid) = rest.rsplit_once(marker)?;
        pid.parse().ok()
    })
}

/// Whether process `pid` is running; where that cannot be known, it is assumed to be.
fn is_running(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

/// Removes, from `dir`, the partial files and staging folders of processes that died
/// before finishing them. Best effort: what cannot be removed stays.
pub fn remove_dead_leftovers(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(leftover_owner) else {
            continue;
        };
        if pid == std::process::id() || is_running(pid) {
            continue;
        }
        let path = entry.path();
        let _ = if path.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_name_their_process() {
        assert_eq!(leftover_owner(".before.tif.4242.7.partial"), Some(4242));
        assert_eq!(leftover_owner(".run.staging-4242"), Some(4242));
        assert_eq!(leftover_owner(".my.run.replaced-17"), Some(17));
        assert_eq!(leftover_owner("before.tif"), None);
        assert_eq!(leftover_owner(".vkerode.lock"), None);
        assert_eq!(leftover_owner(".x.partial"), None);
    }
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
