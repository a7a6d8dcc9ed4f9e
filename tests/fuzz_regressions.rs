//! The fuzz targets' corpora and every input a fuzzer found to crash or hang
//! (fuzz/regressions/TARGET/, named for what it found), run through the same ways in as
//! `cargo fuzz` (vkerode::fuzzing): each must return, within a bound.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use vkerode::fuzzing::TARGETS;

/// Far above any input's time here; a fuzzer calls slower inputs hangs.
const BOUND: Duration = Duration::from_secs(20);

fn inputs(target: &str) -> Vec<std::path::PathBuf> {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files: Vec<_> = ["corpus", "regressions"]
        .iter()
        .filter_map(|kind| std::fs::read_dir(fuzz.join(kind).join(target)).ok())
        .flatten()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn every_corpus_and_regression_input_returns_within_the_bound() {
    for (target, run) in TARGETS {
        let files = inputs(target);
        assert!(!files.is_empty(), "{target}: no corpus");
        for file in files {
            let data = std::fs::read(&file).unwrap();
            let (done, finished) = mpsc::channel();
            let worker = std::thread::spawn(move || {
                run(&data);
                let _ = done.send(());
            });
            match finished.recv_timeout(BOUND) {
                Ok(()) => worker.join().unwrap(),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    panic!("{target}: {} panicked", file.display())
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("{target}: {} ran past {BOUND:?}", file.display())
                }
            }
        }
    }
}

#[test]
fn every_target_has_its_cargo_fuzz_binary() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let manifest = std::fs::read_to_string(fuzz.join("Cargo.toml")).unwrap();
    for (target, _) in TARGETS {
        let source = std::fs::read_to_string(fuzz.join(format!("fuzz_targets/{target}.rs")))
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(
            source.contains(&format!("vkerode::fuzzing::{target}(data)")),
            "{target}.rs calls its way in"
        );
        assert!(
            manifest.contains(&format!("name = \"{target}\"")),
            "{target} is a [[bin]] of fuzz/Cargo.toml"
        );
    }
}
