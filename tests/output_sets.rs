//! Output folders written whole or not at all, and the leftovers of killed runs.

mod common;

use std::fs::{self, File};
use std::path::Path;
use std::time::{Duration, SystemTime};

use vkerode::terrain::files::write_atomically;
use vkerode::terrain::output::{FolderLock, OutputError, StagedFolder, MARKER};

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
    age(&partial);
    fs::write(target.join(MARKER), "").unwrap();

    // The old set is still whole: never a new sidecar beside old data.
    assert_eq!(read(&target.join("data.tif")), "old data");
    assert_eq!(read(&target.join("data.tif.json")), "old sidecar");

    let staged = StagedFolder::begin(&target, true, &[]).unwrap();
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

/// Makes `path` older than a writer that is about to lock it can be.
fn age(path: &Path) {
    let long_ago = SystemTime::now() - Duration::from_secs(3600);
    File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(long_ago)
        .unwrap();
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
        let staged = StagedFolder::begin(&target, false, &[]).unwrap();
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
    let _first = StagedFolder::begin(&target, false, &[]).unwrap();
    let Err(error) = StagedFolder::begin(&target, false, &[]) else {
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

#[test]
fn leftovers_whose_writer_holds_its_lock_stay_whatever_its_process_id() {
    // Writers in another PID namespace or on another node: their process ids are not
    // in this machine's /proc, yet they hold their locks.
    let parent = common::scratch("output-sets", "alive");
    let other = FolderLock::take(&parent.join("other")).unwrap();
    let staging = parent.join(format!(".other.staging-{DEAD_PID}"));
    fs::create_dir(&staging).unwrap();
    let partial = parent.join(format!(".big.tif.{DEAD_PID}.0.partial"));
    fs::write(&partial, "being written").unwrap();
    age(&partial);
    let writer = File::open(&partial).unwrap();
    writer.lock().unwrap();

    drop(StagedFolder::begin(&parent.join("mine"), false, &[]).unwrap());
    assert!(staging.exists(), "a live writer's staging folder stays");
    assert!(partial.exists(), "a live writer's partial file stays");

    drop((other, writer));
    drop(StagedFolder::begin(&parent.join("mine"), false, &[]).unwrap());
    assert!(!staging.exists(), "once its writer is gone, it is removed");
    assert!(!partial.exists(), "once its writer is gone, it is removed");
}

#[test]
fn a_partial_file_of_a_killed_writer_goes_with_the_next_write_of_its_name() {
    let parent = common::scratch("output-sets", "partial");
    let target = parent.join("out.tif");
    let dead = parent.join(format!(".out.tif.{DEAD_PID}.0.partial"));
    fs::write(&dead, "24 MB of half a tif").unwrap();
    let young = parent.join(format!(".out.tif.{DEAD_PID}.1.partial"));
    fs::write(&young, "just created, about to be locked").unwrap();
    age(&dead);
    write_atomically(&target, |out| std::io::Write::write_all(out, b"whole")).unwrap();
    assert_eq!(read(&target), "whole");
    assert!(
        !dead.exists(),
        "the killed writer's partial file is removed"
    );
    assert!(
        young.exists(),
        "a partial file in its writer's first seconds stays"
    );
}

#[test]
fn force_replaces_only_a_folder_vkerode_made_and_never_a_live_one() {
    let parent = common::scratch("output-sets", "force");
    // A sweep writing its folder.
    let sweep = parent.join("sweep");
    let live = FolderLock::take(&sweep).unwrap();
    fs::write(sweep.join("points.csv"), "point\n0\n").unwrap();
    let Err(error) = StagedFolder::begin(&sweep, true, &[]) else {
        panic!("--force took a live sweep's folder");
    };
    assert!(matches!(error, OutputError::Busy { .. }), "{error}");
    drop(live);
    assert!(sweep.join(MARKER).exists(), "a sweep's folder is marked");
    StagedFolder::begin(&sweep, true, &[])
        .unwrap()
        .publish(Vec::new())
        .unwrap();
    assert!(
        !sweep.join("points.csv").exists(),
        "a finished one is replaced"
    );

    let file = parent.join("notes.txt");
    fs::write(&file, "mine").unwrap();
    let Err(error) = StagedFolder::begin(&file, true, &[]) else {
        panic!("--force took a file");
    };
    assert!(matches!(error, OutputError::NotAFolder { .. }), "{error}");
    assert_eq!(read(&file), "mine");

    let theirs = parent.join("theirs");
    fs::create_dir(&theirs).unwrap();
    fs::write(theirs.join("thesis.tex"), "years").unwrap();
    let Err(error) = StagedFolder::begin(&theirs, true, &[]) else {
        panic!("--force took a folder vkerode did not make");
    };
    assert!(matches!(error, OutputError::NotOurs { .. }), "{error}");
    assert_eq!(read(&theirs.join("thesis.tex")), "years");

    for nameless in [Path::new("."), Path::new(".."), &parent.join("sub/..")] {
        let Err(error) = StagedFolder::begin(nameless, true, &[]) else {
            panic!("{} was taken as a folder name", nameless.display());
        };
        assert!(matches!(error, OutputError::NoName { .. }), "{error}");
    }
    let mut left: Vec<_> = fs::read_dir(&parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["notes.txt", "sweep", "theirs"],
        "nothing else is left"
    );
}

#[test]
fn names_that_become_paths_are_plain_and_used_once() {
    let dir = common::scratch("output-sets", "names");
    let config = |name: &str, terrains: &[&str]| {
        let mut text =
            format!("name = {name:?}\ndescription = \"d\"\nwater_per_cell = [0.1]\nseeds = [1]\n");
        for terrain in terrains {
            text += &format!("[[terrain]]\nname = {terrain:?}\nsize = 64\n");
        }
        text += "[droplets]\n";
        let path = dir.join("config.toml");
        fs::write(&path, text).unwrap();
        vkerode::studies::strategy_comparison::Strategies::load(&path)
    };
    assert!(config("fine_name-2", &["a", "b-2"]).is_ok());
    let escapes = ["/some/dir", "../../../x", "", "a/b", ".", "..", "x y"];
    for bad in escapes {
        let Err(error) = config(bad, &["a"]) else {
            panic!("config name {bad:?} accepted");
        };
        assert!(error.to_string().contains("name: "), "{error}");
        let Err(error) = config("ok", &[bad]) else {
            panic!("terrain name {bad:?} accepted");
        };
        assert!(error.to_string().contains("terrain.name"), "{error}");
    }
    let Err(error) = config("ok", &["same", "same"]) else {
        panic!("a terrain name used twice was accepted");
    };
    assert!(error.to_string().contains("named twice"), "{error}");
}

#[test]
fn one_folder_has_one_lock_whatever_path_names_it() {
    let parent = common::scratch("output-sets", "resolved");
    let real = parent.join("real");
    fs::create_dir(&real).unwrap();
    let link = parent.join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let dotted = parent.join("sub/../real");
    fs::create_dir(parent.join("sub")).unwrap();
    // Sweeps started together into `real` and into `link` once both ran.
    let sweep = FolderLock::take(&real).unwrap();
    for other in [&link, &dotted] {
        let Err(error) = FolderLock::take(other) else {
            panic!("{} was locked beside {}", other.display(), real.display());
        };
        assert!(matches!(error, OutputError::Busy { .. }), "{error}");
        let Err(error) = StagedFolder::begin(other, true, &[]) else {
            panic!("{} was staged beside a live sweep", other.display());
        };
        assert!(matches!(error, OutputError::Busy { .. }), "{error}");
    }
    drop(sweep);
    // A link to a folder is that folder, not "a file".
    let staged = StagedFolder::begin(&link, true, &[]).unwrap();
    fs::write(staged.path().join("run.json"), "{}").unwrap();
    let file = staged.path().join("run.json");
    let written = staged.publish(vec![file]).unwrap();
    assert_eq!(
        written,
        [link.join("run.json")],
        "named as the caller named it"
    );
    assert!(
        fs::symlink_metadata(&link).unwrap().is_symlink(),
        "the link stays"
    );
    assert_eq!(read(&real.join("run.json")), "{}");
}

#[test]
fn a_path_ending_in_a_dot_names_no_folder_and_is_refused_before_any_work() {
    let parent = common::scratch("output-sets", "dot");
    let prev = parent.join("prev");
    fs::create_dir(&prev).unwrap();
    fs::write(prev.join(MARKER), "").unwrap();
    fs::write(prev.join("summary.md"), "an earlier suite").unwrap();
    for given in ["prev/.", "prev/./", "prev/..", "prev//.//"] {
        let Err(error) = StagedFolder::begin(&parent.join(given), true, &[]) else {
            panic!("{given} was taken as a folder name");
        };
        assert!(
            matches!(error, OutputError::NoName { .. }),
            "{given}: {error}"
        );
    }
    assert_eq!(read(&prev.join("summary.md")), "an earlier suite");
}

#[test]
fn an_output_folder_that_holds_an_input_is_refused() {
    let parent = common::scratch("output-sets", "apart");
    let out = parent.join("out");
    fs::create_dir(&out).unwrap();
    fs::write(out.join(MARKER), "").unwrap();
    let input = out.join("after.tif");
    fs::write(&input, "eroded once").unwrap();
    let Err(error) = StagedFolder::begin(&out, true, std::slice::from_ref(&input)) else {
        panic!("--force would replace the folder its input is in");
    };
    assert!(
        vkerode::error_chain(&error).contains("which this command reads"),
        "{error}"
    );
    assert_eq!(read(&input), "eroded once");
    StagedFolder::begin(&out, true, &[parent.join("elsewhere.tif")]).unwrap();
}

#[test]
fn a_holder_that_has_not_yet_named_itself_is_said_to_have_just_started() {
    let parent = common::scratch("output-sets", "nameless");
    // The instant between a writer's lock and the line naming it.
    let lock = File::create(parent.join(".out.lock")).unwrap();
    lock.lock().unwrap();
    let Err(error) = StagedFolder::begin(&parent.join("out"), false, &[]) else {
        panic!("a locked folder was staged");
    };
    let message = error.to_string();
    assert!(message.contains("just started"), "{message}");
    assert!(!message.contains("()"), "{message}");
}

#[test]
fn an_output_replaces_only_a_regular_file_and_a_planted_lock_link_is_not_followed() {
    let parent = common::scratch("output-sets", "not-regular");
    let decoy = parent.join("decoy.txt");
    fs::write(&decoy, "the user's").unwrap();
    let link = parent.join("report.md");
    std::os::unix::fs::symlink(&decoy, &link).unwrap();
    let fifo = parent.join("pipe.md");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for (target, said) in [(&link, "is a link"), (&fifo, "is a FIFO")] {
        let error =
            write_atomically(target, |out| std::io::Write::write_all(out, b"table")).unwrap_err();
        let message = vkerode::error_chain(&error);
        assert!(message.contains(said), "{message}");
        // Even where replacing is allowed (--force): a link or FIFO is never replaced.
        let allow = vkerode::terrain::files::Overwrite::Allow;
        let early = vkerode::terrain::files::check_output_file(target, &[], allow).unwrap_err();
        assert!(vkerode::error_chain(&early).contains(said));
    }
    assert!(
        fs::symlink_metadata(&link).unwrap().is_symlink(),
        "the link stays"
    );
    assert_eq!(read(&decoy), "the user's");

    // A link planted where a folder's lock goes: the lock is not taken through it.
    std::os::unix::fs::symlink(&decoy, parent.join(".out.lock")).unwrap();
    assert!(StagedFolder::begin(&parent.join("out"), false, &[]).is_err());
    assert!(FolderLock::take(&parent.join("out")).is_err());
    assert_eq!(
        read(&decoy),
        "the user's",
        "nothing written through the link"
    );
    // Nor through a hard link.
    fs::hard_link(&decoy, parent.join(".other.lock")).unwrap();
    let Err(error) = StagedFolder::begin(&parent.join("other"), false, &[]) else {
        panic!("a lock was taken through a hard link");
    };
    assert!(
        vkerode::error_chain(&error).contains("hard link"),
        "{error}"
    );
    assert_eq!(
        read(&decoy),
        "the user's",
        "nothing written through the hard link"
    );
}
