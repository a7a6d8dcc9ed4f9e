//! Output folders written whole or not at all, and the leftovers of killed runs.

mod common;

use std::fs;
use std::path::Path;

use vkerode::terrain::output::{FolderLock, OutputError, StagedFolder};

/// A process id no running process can have: above Linux's largest `pid_max`.
const DEAD_PID: u32 = 4_294_967;

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

#[test]
fn a_run_killed_after_staging_leaves_the_old_set_whole_and_the_next_run_clears_it() {
    let parent = common::scratch("output-sets", "killed");
    let target = parent.join("out");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("data.tif"), "old data").unwrap();
    fs::write(target.join("data.tif.json"), "old sidecar").unwrap();
    // A run that wrote its whole set into staging and was killed before publishing,
    // and a sweep killed while writing a file inside the folder.
    let staging = parent.join(format!(".out.staging-{DEAD_PID}"));
    fs::create_dir(&staging).unwrap();
    fs::write(staging.join("data.tif"), "new data").unwrap();
    fs::write(staging.join("data.tif.json"), "new sidecar").unwrap();
    let partial = parent.join(format!(".data.csv.{DEAD_PID}.0.partial"));
    fs::write(&partial, "half a row").unwrap();

    // The old set is still whole: never a new sidecar beside old data.
    assert_eq!(read(&target.join("data.tif")), "old data");
    assert_eq!(read(&target.join("data.tif.json")), "old sidecar");

    let staged = StagedFolder::begin(&target, true).unwrap();
    assert!(
        !staging.exists(),
        "the dead run's staging folder is removed"
    );
    assert!(!partial.exists(), "the dead run's partial file is removed");
    fs::write(staged.path().join("data.tif"), "newest data").unwrap();
    fs::write(staged.path().join("data.tif.json"), "newest sidecar").unwrap();
    let written = staged
        .publish(vec![staged_path(&parent, "data.tif")])
        .unwrap();
    assert_eq!(written, [target.join("data.tif")]);
    assert_eq!(read(&target.join("data.tif")), "newest data");
    assert_eq!(read(&target.join("data.tif.json")), "newest sidecar");
    let mut left: Vec<_> = fs::read_dir(&parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["out"]);
}

/// Where this process stages `name` for the target `out` in `parent`.
fn staged_path(parent: &Path, name: &str) -> std::path::PathBuf {
    parent
        .join(format!(".out.staging-{}", std::process::id()))
        .join(name)
}

#[test]
fn an_unpublished_set_vanishes_and_a_failed_write_leaves_the_target_untouched() {
    let parent = common::scratch("output-sets", "failed");
    let target = parent.join("out");
    {
        let staged = StagedFolder::begin(&target, false).unwrap();
        fs::write(staged.path().join("before.tif"), "half a set").unwrap();
        // An error here drops the set unpublished.
    }
    assert!(!target.exists(), "no half set is published");
    assert_eq!(fs::read_dir(&parent).unwrap().count(), 0, "nothing is left");
}

#[test]
fn a_folder_being_written_is_refused_naming_its_holder() {
    let parent = common::scratch("output-sets", "busy");
    let target = parent.join("out");
    let _first = StagedFolder::begin(&target, false).unwrap();
    let Err(error) = StagedFolder::begin(&target, false) else {
        panic!("a second writer was let in");
    };
    assert!(matches!(error, OutputError::Busy { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains(&format!("process {}", std::process::id())),
        "{error}"
    );
    let _sweep = FolderLock::take(&parent.join("sweep")).unwrap();
    assert!(FolderLock::take(&parent.join("sweep")).is_err());
}
