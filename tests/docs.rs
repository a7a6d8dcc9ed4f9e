//! The docs a newcomer reads are complete and true: the generated references
//! (docs/cli.md, config.md, results.md, experiments.md, man/, schemas/) are those the code
//! generates now, every field of the JSON files vkerode writes is in the results
//! reference, every relative link of README.md and docs/ resolves, README.md stays
//! short, and the completion script and man page print.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_clean_success, scratch, vkerode};
use vkerode::reference::{is_listed, json_schemas, leaf_paths};

#[test]
fn the_committed_references_are_what_the_code_generates() {
    let dir = scratch("docs", "generated");
    let out = dir.join("docs");
    assert_clean_success(&vkerode(&["docs", "--out", out.to_str().unwrap()]));
    let schemas = json_schemas()
        .iter()
        .map(|s| format!("schemas/{}.schema.json", s.name))
        .collect::<Vec<_>>();
    assert!(schemas.len() >= 8, "{schemas:?}");
    let man_pages = files_in(&out.join("man/man1"));
    assert!(man_pages.len() > 15, "a page per command: {man_pages:?}");
    let man_pages = man_pages.iter().map(|page| format!("man/man1/{page}"));
    let files = ["cli.md", "config.md", "results.md", "experiments.md"].map(String::from);
    for file in files.iter().cloned().chain(schemas).chain(man_pages) {
        let generated = std::fs::read_to_string(out.join(&file)).unwrap();
        let committed = std::fs::read_to_string(Path::new("docs").join(&file))
            .unwrap_or_else(|e| panic!("docs/{file}: {e}; run `make docs`"));
        assert!(
            generated == committed,
            "docs/{file} is not what the code generates: run `make docs` and commit it"
        );
    }
    let generated = |file: &str| std::fs::read_to_string(out.join(file)).unwrap();
    // A flag, a key, a column and a config of each kind are in their references.
    assert!(generated("cli.md").contains("`--pipes-check-every`"));
    assert!(generated("cli.md").contains("## vkerode completions"));
    assert!(generated("config.md").contains("| `tile_order` |"));
    assert!(generated("config.md").contains("| `target_rel_iqr` |"));
    assert!(generated("results.md").contains("| `cell_steps_per_s` | cell-steps/s |"));
    assert!(generated("results.md").contains("| `balance_checks[].water_error` |"));
    let experiments = generated("experiments.md");
    for entry in std::fs::read_dir("experiments").unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".toml") {
            assert!(experiments.contains(&format!("## [{name}]")), "{name}");
        }
    }
}

/// The leaf paths of the JSON file at `path`.
fn json_paths(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    leaf_paths(&serde_json::from_str(&text).unwrap())
}

fn assert_listed(file: &str, path: &Path) {
    let paths = json_paths(path);
    assert!(paths.len() > 10, "{}: {paths:?}", path.display());
    let missing: Vec<&String> = paths.iter().filter(|p| !is_listed(file, p)).collect();
    assert!(
        missing.is_empty(),
        "{} has fields docs/results.md does not list: {missing:?}",
        path.display()
    );
}

#[test]
fn every_json_field_vkerode_writes_is_in_the_results_reference() {
    let dir = scratch("docs", "json");
    let out = |name: &str| dir.join(name);
    let erode = |name: &str, extra: &[&str]| {
        let target = out(name);
        let mut args = vec!["erode", "--no-images", "--force"];
        args.extend_from_slice(extra);
        args.extend(["--out", target.to_str().unwrap()]);
        assert_clean_success(&vkerode(&args));
        target.join("run.json")
    };
    // Each strategy's own fields, then the CPU reference's and a DEM run's.
    let strategies = vkerode::erosion::ALL_STRATEGIES.iter().map(|s| {
        let mut args = vec!["--size", "32"];
        args.extend_from_slice(s.smoke_args());
        erode(s.algorithm().as_str(), &args)
    });
    let others = [
        erode(
            "cpu",
            &[
                "--size",
                "32",
                "--droplets",
                "300",
                "--engine",
                "cpu-sequential",
            ],
        ),
        erode(
            "dem",
            &[
                "--input",
                "tests/data/jacksboro_fault_dem.tif",
                "--cell-size",
                "74.5,92.6",
                "--droplets",
                "300",
            ],
        ),
    ];
    for run in strategies.chain(others) {
        assert_listed("run.json", &run);
    }
    let config = out("tiny.toml");
    std::fs::write(
        &config,
        "name = \"tiny\"\ndescription = \"t\"\n[fixed]\nsize = 32\ndroplets = 200\n[axes]\nworkgroup = [32]\n[measure]\nwarmup = 0\nmin_reps = 3\nmax_reps = 3\n",
    )
    .unwrap();
    let results = out("results");
    assert_clean_success(&vkerode(&[
        "sweep",
        config.to_str().unwrap(),
        "--out",
        &common::sweep_out(&results),
        "--quiet",
    ]));
    assert_listed(
        "meta.json",
        &common::results_dir(&results, "tiny").join("meta.json"),
    );
    let peak = out("peak");
    assert_clean_success(&vkerode(&[
        "peak",
        "--out",
        peak.to_str().unwrap(),
        "--force",
    ]));
    assert_listed("peak.json", &peak.join("peak.json"));
}

/// The relative link targets of a markdown file: `](target)` and `](target#anchor)`.
fn links(text: &str) -> Vec<String> {
    text.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            let end = rest.find(')')?;
            let target = rest[..end].split('#').next()?.trim();
            let external = target.contains("://") || target.starts_with("mailto:");
            (!target.is_empty() && !external).then(|| target.to_string())
        })
        .collect()
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            markdown_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

#[test]
fn readme_is_short_and_every_relative_link_of_the_docs_resolves() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 200, "README.md has {lines} lines");
    for command in [
        "make demo",
        "make test",
        "vkerode erode",
        "vkerode sweep",
        "vkerode plot",
        "vkerode compare",
    ] {
        assert!(readme.contains(command), "README.md shows `{command}`");
    }
    let mut files = vec![
        PathBuf::from("README.md"),
        PathBuf::from("results/README.md"),
    ];
    markdown_files(Path::new("docs"), &mut files);
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let dir = file.parent().unwrap();
        for target in links(&text) {
            if !dir.join(&target).exists() {
                broken.push(format!("{}: {target}", file.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn completions_and_the_man_page_print() {
    let bash = vkerode(&["completions", "bash"]);
    assert_clean_success(&bash);
    let script = String::from_utf8_lossy(&bash.stdout);
    assert!(
        script.contains("complete") && script.contains("pipes-workgroup"),
        "a bash completion script"
    );
    let man = vkerode(&["man"]);
    assert_clean_success(&man);
    assert!(
        String::from_utf8_lossy(&man.stdout).starts_with(".ie"),
        "roff"
    );
    // A command's page is the one docs/man holds, and lists its flags.
    let erode = vkerode(&["man", "erode"]);
    assert_clean_success(&erode);
    let erode = String::from_utf8_lossy(&erode.stdout);
    let committed = std::fs::read_to_string("docs/man/man1/vkerode-erode.1").unwrap();
    assert_eq!(erode, committed);
    assert!(
        erode.contains("pipes\\-check\\-every"),
        "erode's flags are listed"
    );
    let unknown = vkerode(&["man", "erod"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("the commands are"));
}

/// The names of the files in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every page a man page refers to, `vkerode-erode(1)` and the like, is in docs/man,
/// and man(1) finds a command's page there as the README says.
#[test]
fn every_man_page_referred_to_exists_and_man_finds_it() {
    let pages = files_in(Path::new("docs/man/man1"));
    let mut referred = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(Path::new("docs/man/man1").join(page)).unwrap();
        let text = text.replace("\\-", "-");
        for (i, _) in text.match_indices("(1)") {
            let name: String = text[..i]
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if name.starts_with("vkerode") {
                referred.push(format!("{name}.1"));
            }
        }
    }
    assert!(
        referred.len() > 15,
        "vkerode(1) lists the commands' pages: {referred:?}"
    );
    let missing: Vec<&String> = referred.iter().filter(|r| !pages.contains(r)).collect();
    assert!(
        missing.is_empty(),
        "pages referred to but missing: {missing:?}"
    );
    let has_man = std::process::Command::new("man")
        .arg("--version")
        .output()
        .is_ok();
    if has_man {
        let shown = std::process::Command::new("man")
            .args(["-P", "cat", "vkerode-erode"])
            .env("MANPATH", "docs/man")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&shown.stdout);
        assert!(
            shown.contains("--pipes-check-every"),
            "man vkerode-erode: {shown}"
        );
    }
}

#[test]
fn the_reliability_page_states_the_bounds_the_code_enforces() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reliability.md"))
            .unwrap();
    let points = vkerode::experiment::sweep::config::DEFAULT_MAX_POINTS;
    let work = vkerode::erosion::MAX_RUN_WORK;
    assert_eq!(
        10u64.pow(work.ilog10()),
        work,
        "the bound is a power of ten"
    );
    for stated in [
        format!("more than {points} points"),
        format!("more than 10^{} units of work", work.ilog10()),
    ] {
        assert!(
            text.contains(&stated),
            "docs/reliability.md says {stated:?}"
        );
    }
}

#[test]
fn the_experiments_guide_states_the_wrong_answer_margin_the_code_marks_by() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/experiments-guide.md"),
    )
    .unwrap();
    let margin = vkerode::experiment::report::compare::WRONG_ANSWER_MARGIN;
    let stated = format!("more than {:.0}% (`WRONG_ANSWER_MARGIN`)", 100.0 * margin);
    assert!(
        text.contains(&stated),
        "docs/experiments-guide.md says {stated:?}"
    );
}
