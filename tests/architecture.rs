//! The layering docs/ARCHITECTURE.md states, held to the source: each top-level module
//! uses only the layers below it, the parts of `experiment/` (the core) and of
//! `studies/` likewise, the studies sit above the core and nothing below reaches up to
//! them, no two files depend on each other (directly or round a longer cycle), the
//! statistics live in `src/stats/` alone, `unsafe` appears only in `src/gpu/`, and no
//! match on the strategy is left outside `erosion/`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The library's layers, lowest first: a module may use those before it.
const LAYERS: [&str; 11] = [
    "gpu",
    "hash",
    "stats",
    "table",
    "terrain",
    "erosion",
    "probes",
    "experiment",
    "studies",
    "reference",
    "fuzzing",
];

/// The layers split into parts, each part's list lowest first: a part may use those
/// before it in its layer's list.
const PARTS: [(&str, &[&str]); 2] = [
    ("experiment", &["run", "results", "sweep", "report"]),
    (
        "studies",
        &["equivalence", "strategy_comparison", "reproduce"],
    ),
];

/// The layers below the studies that every study builds on: none of them may name
/// `studies`, not even in its tests.
fn below_the_studies() -> &'static [&'static str] {
    let studies = LAYERS.iter().position(|l| *l == "studies");
    &LAYERS[..studies.expect("LAYERS lists studies")]
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file under src/: `experiment::results::csv_text`; the crate root
/// is empty, and `main.rs`'s tree is under `main`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix("src").unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    if parts.first().is_some_and(|p| p == "cli") {
        parts.insert(0, "main".into());
    }
    if parts == ["main"] {
        return vec!["main".into()];
    }
    parts
}

/// The code of a file without comments or string literals, and without its tests.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if !escaped && c == '"' {
                        break;
                    }
                    escaped = !escaped && c == '\\';
                }
                out.push_str("\"\"");
            }
            _ => out.push(c),
        }
    }
    out
}

/// Every path the code names from the crate root or its parent (`crate::a::b`,
/// `super::c`, `vkerode::d`), as absolute module paths with their last segment, from
/// `use` lines (not `pub use` re-exports) and from the code itself.
fn named_paths(module: &[String], code: &str, modules: &BTreeSet<Vec<String>>) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    // `use x::{a, b::c}` groups expand to one path each.
    let mut expanded = String::new();
    for statement in code.split(';') {
        let trimmed = statement.trim_start();
        if trimmed.starts_with("pub use") || trimmed.starts_with("pub(crate) use") {
            continue;
        }
        if trimmed.starts_with("use ") {
            expanded.push_str(&expand_groups(statement));
        } else {
            expanded.push_str(statement);
        }
        expanded.push(';');
    }
    let tokens: Vec<&str> = expanded
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .filter(|t| t.contains("::"))
        .collect();
    for token in tokens {
        let segments: Vec<&str> = token.split("::").filter(|s| !s.is_empty()).collect();
        let in_binary = module.first().is_some_and(|m| m == "main");
        let child = |name: &str| {
            let mut path = module.to_vec();
            path.push(name.to_string());
            modules.contains(&path)
        };
        let (base, rest): (Vec<String>, &[&str]) = match segments.first() {
            Some(&"crate") if in_binary => (vec!["main".to_string()], &segments[1..]),
            Some(&"crate") => (Vec::new(), &segments[1..]),
            Some(&"self") => (module.to_vec(), &segments[1..]),
            // A path from one of this module's children: `use workers::Pool`.
            Some(first) if child(first) => (module.to_vec(), &segments[..]),
            Some(&"vkerode") if module.first().is_some_and(|m| m == "main") => {
                (Vec::new(), &segments[1..])
            }
            Some(&"super") => {
                let mut base = module.to_vec();
                let mut rest = &segments[..];
                // A mod.rs's `super` is its folder's parent; a file's, its folder.
                while rest.first() == Some(&"super") {
                    base.pop();
                    rest = &rest[1..];
                }
                (base, rest)
            }
            _ => continue,
        };
        let mut path = base;
        path.extend(rest.iter().map(|s| s.to_string()));
        paths.push(path);
    }
    paths
}

/// `a::{b, c::{d, e}}` as `a::b a::c::d a::c::e`.
fn expand_groups(statement: &str) -> String {
    let Some(open) = statement.find('{') else {
        return statement.to_string();
    };
    let Some(close) = statement.rfind('}').filter(|&c| c > open) else {
        return statement.to_string();
    };
    let prefix: String = statement[..open]
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
        .collect::<String>()
        .chars()
        .rev()
        .collect();
    let inner = &statement[open + 1..close];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let head = &statement[..open - prefix.len()];
    let expanded: Vec<String> = parts
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty() && *p != "self")
        .map(|p| expand_groups(&format!("{prefix}{p}")))
        .collect();
    format!("{head}{}", expanded.join(" "))
}

struct Tree {
    /// Module path of every file.
    files: BTreeMap<Vec<String>, PathBuf>,
    /// (module, name) -> the child module it re-exports `name` from.
    reexports: BTreeMap<(Vec<String>, String), Vec<String>>,
}

impl Tree {
    fn read() -> (Self, BTreeMap<Vec<String>, String>) {
        let mut list = Vec::new();
        rust_files(Path::new("src"), &mut list);
        let mut files = BTreeMap::new();
        let mut texts = BTreeMap::new();
        let mut reexports = BTreeMap::new();
        for file in list {
            let module = module_of(&file);
            let text = std::fs::read_to_string(&file).unwrap();
            for statement in code(&text).split(';') {
                let trimmed = statement.trim_start();
                let Some(rest) = trimmed.strip_prefix("pub use ") else {
                    continue;
                };
                for path in expand_groups(rest).split_whitespace() {
                    let segments: Vec<&str> = path.split("::").collect();
                    if segments.len() < 2 || segments[0] == "crate" {
                        continue;
                    }
                    let mut child = module.clone();
                    child.extend(segments[..segments.len() - 1].iter().map(|s| s.to_string()));
                    let name = segments[segments.len() - 1].to_string();
                    reexports.insert((module.clone(), name), child);
                }
            }
            files.insert(module.clone(), file);
            texts.insert(module, text);
        }
        (Self { files, reexports }, texts)
    }

    /// The file a named path leads to: its longest prefix that is a module, and through
    /// re-exports to the module that defines the name.
    fn resolve(&self, path: &[String]) -> Option<Vec<String>> {
        let mut module = (0..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|m| self.files.contains_key(m))?;
        let mut rest = &path[module.len()..];
        while let Some(name) = rest.first() {
            match self.reexports.get(&(module.clone(), name.clone())) {
                Some(child) if self.files.contains_key(child) && child != &module => {
                    module = child.clone();
                    rest = &rest[1..];
                }
                _ => break,
            }
        }
        Some(module)
    }

    /// The files each file depends on.
    fn edges(
        &self,
        texts: &BTreeMap<Vec<String>, String>,
    ) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
        texts
            .iter()
            .map(|(module, text)| {
                let modules: BTreeSet<Vec<String>> = self.files.keys().cloned().collect();
                let targets = named_paths(module, &code(text), &modules)
                    .iter()
                    .filter_map(|p| self.resolve(p))
                    .filter(|t| t != module)
                    .collect();
                (module.clone(), targets)
            })
            .collect()
    }
}

fn layer(module: &[String], order: &[&str]) -> Option<usize> {
    order
        .iter()
        .position(|l| module.first().is_some_and(|m| m == l))
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let (tree, texts) = Tree::read();
    let mut wrong = Vec::new();
    for (module, targets) in tree.edges(&texts) {
        let Some(mine) = layer(&module, &LAYERS) else {
            continue;
        };
        for target in &targets {
            if layer(target, &LAYERS).is_some_and(|theirs| theirs > mine) {
                wrong.push(format!("{} uses {}", module.join("::"), target.join("::")));
            }
            // The part of a split layer a module is in: (layer, its place in the list).
            let part = |m: &[String]| {
                let (name, parts) = PARTS
                    .iter()
                    .find(|(l, _)| m.first() == Some(&l.to_string()))?;
                Some((*name, layer(m.get(1..)?, parts)?))
            };
            if let (Some((la, a)), Some((lb, b))) = (part(&module), part(target)) {
                if la == lb && b > a {
                    wrong.push(format!("{} uses {}", module.join("::"), target.join("::")));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "uses of a higher layer:\n{}",
        wrong.join("\n")
    );
}

/// The names of the studies' module in `text` (the whole file, tests included, without
/// comments and strings): `crate::studies::`, `vkerode::studies::` or `super::studies`.
fn reaches_the_studies(text: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .filter(|token| token.contains("::"))
        .any(|token| token.split("::").any(|segment| segment == "studies"))
}

#[test]
fn the_studies_sit_above_the_core_and_nothing_below_reaches_up() {
    assert!(reaches_the_studies(
        "use crate::studies::equivalence::margin_of;"
    ));
    assert!(reaches_the_studies(
        "let s = crate::studies::strategy_comparison::Strategies::load(p);"
    ));
    assert!(!reaches_the_studies(
        "use crate::experiment::results::Measurement;"
    ));
    assert!(!reaches_the_studies("let studies = 3;"));
    assert!(
        LAYERS.iter().position(|l| *l == "studies")
            > LAYERS.iter().position(|l| *l == "experiment")
    );
    let mut found = Vec::new();
    for below in below_the_studies() {
        let mut list = Vec::new();
        let dir = Path::new("src").join(below);
        match dir.is_dir() {
            true => rust_files(&dir, &mut list),
            false => list.push(dir.with_extension("rs")),
        }
        assert!(!list.is_empty(), "{below} was read");
        for file in list {
            // Tests included: a test of the core that needs a study belongs to the study.
            let text = std::fs::read_to_string(&file).unwrap();
            let whole = code(&text.replace("#[cfg(test)]", ""));
            if reaches_the_studies(&whole) {
                found.push(file.display().to_string());
            }
        }
    }
    assert!(
        found.is_empty(),
        "files below the studies that name them:\n{}",
        found.join("\n")
    );
}

/// The strongly connected components of more than one file (Tarjan): each is a set of
/// files that depend on each other, round some cycle.
fn cycles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct Search<'e> {
        edges: &'e BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'e Vec<String>, usize>,
        low: BTreeMap<&'e Vec<String>, usize>,
        stack: Vec<&'e Vec<String>>,
        found: Vec<Vec<String>>,
    }
    impl<'e> Search<'e> {
        fn visit(&mut self, node: &'e Vec<String>) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            for next in self.edges.get(node).into_iter().flatten() {
                let Some((next, _)) = self.edges.get_key_value(next) else {
                    continue;
                };
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.stack.contains(&next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    component.push(top.join("::"));
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut search = Search {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in edges.keys() {
        if !search.index.contains_key(node) {
            search.visit(node);
        }
    }
    search.found
}

#[test]
fn no_two_files_depend_on_each_other() {
    let (tree, texts) = Tree::read();
    let edges = tree.edges(&texts);
    assert!(edges.len() > 50, "the files were read: {}", edges.len());
    let cycles = cycles(&edges);
    let lines: Vec<String> = cycles.iter().map(|c| c.join(" <-> ")).collect();
    assert!(
        cycles.is_empty(),
        "files that depend on each other:\n{}",
        lines.join("\n")
    );
}

#[test]
fn the_resolver_sees_through_groups_and_reexports() {
    assert_eq!(
        expand_groups("use crate::a::{b, c::{d, e}}"),
        "use crate::a::b crate::a::c::d crate::a::c::e"
    );
    let module = vec![
        "experiment".to_string(),
        "sweep".to_string(),
        "point".to_string(),
    ];
    let paths = named_paths(
        &module,
        "use super::config::Point;\nlet x = crate::hash::fnv1a64(b);",
        &BTreeSet::new(),
    );
    assert_eq!(
        paths,
        [
            vec!["experiment", "sweep", "config", "Point"],
            vec!["hash", "fnv1a64"]
        ]
        .map(|p| p.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    );
    let path = |p: &str| p.split("::").map(String::from).collect::<Vec<_>>();
    let planted: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(from, to)| (path(from), to.into_iter().map(path).collect()))
    .collect();
    assert_eq!(cycles(&planted), [vec!["a", "b", "c"]]);
    let (tree, texts) = Tree::read();
    let edges = tree.edges(&texts);
    assert!(
        edges[&path("experiment::sweep::point")].contains(&path("experiment::results::schema")),
        "a use through a re-export reaches the file that defines it"
    );
    assert!(
        edges[&path("experiment::sweep")].contains(&path("experiment::sweep::workers")),
        "a mod.rs's use of its child by a relative path is an edge"
    );
    assert!(
        edges[&path("main")].contains(&path("main::cli::commands")),
        "the binary's `crate::` paths are its own"
    );
    let table = ["experiment", "results", "CsvText"].map(String::from);
    assert_eq!(
        tree.resolve(&table),
        Some(
            ["experiment", "results", "csv_text"]
                .map(String::from)
                .to_vec()
        )
    );
}

#[test]
fn unsafe_code_lives_in_the_gpu_layer_only() {
    let mut list = Vec::new();
    rust_files(Path::new("src"), &mut list);
    let outside: Vec<String> = list
        .iter()
        .filter(|f| !f.starts_with("src/gpu"))
        .filter(|f| {
            let text = code(&std::fs::read_to_string(f).unwrap());
            text.contains("unsafe ") || text.contains("unsafe{")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(outside.is_empty(), "unsafe outside src/gpu: {outside:?}");
}

/// What only `src/stats/` may define or use: the statistics' own names, the crate that
/// gives the distributions, and the hand-made means and medians it replaces.
const STATISTICS: [&str; 21] = [
    "enum Verdict",
    "struct Summary",
    "fn quantile",
    "fn median(",
    "len() / 2]",
    "fn holm",
    "fn t_cdf",
    "fn t_quantile",
    "fn welch",
    "fn ratio_interval",
    "statrs",
    "SplitMix64",
    "select_nth_unstable",
    ".sum::<f64>() / ",
    "fn percentile",
    "fn bootstrap",
    "fn variance",
    "fn std_dev",
    "fn median_interval",
    "fn mean_interval",
    "fn ratio_of_medians",
];

/// The statistics named in `text` (code without comments, strings and tests).
fn statistics_in(text: &str) -> Vec<&'static str> {
    STATISTICS
        .into_iter()
        .filter(|name| text.contains(name))
        .collect()
}

#[test]
fn the_statistics_live_in_src_stats_alone() {
    assert_eq!(statistics_in("let m = v[v.len() / 2];"), ["len() / 2]"]);
    assert_eq!(
        statistics_in("let m = v.iter().sum::<f64>() / v.len() as f64;"),
        [".sum::<f64>() / "]
    );
    assert!(statistics_in("let m = stats::Moments::of(&v).mean;").is_empty());
    let mut list = Vec::new();
    rust_files(Path::new("src"), &mut list);
    let found: Vec<String> = list
        .iter()
        .filter(|f| !f.starts_with("src/stats"))
        .flat_map(|f| {
            let text = code(&std::fs::read_to_string(f).unwrap());
            statistics_in(&text)
                .into_iter()
                .map(move |name| format!("{}: {name}", f.display()))
        })
        .collect();
    assert!(
        found.is_empty(),
        "statistics outside src/stats/:\n{}",
        found.join("\n")
    );
}

/// The places in `text` (code without comments and strings) that name a strategy,
/// beyond a strategy naming itself and the default settings naming the default one;
/// and in `raw` (the file as written), comparisons with a strategy's name.
fn strategy_choices(text: &str, raw: &str) -> Vec<String> {
    let mut found: Vec<String> = text
        .match_indices("Algorithm::")
        .filter(|(at, _)| {
            let rest = &text[at + "Algorithm::".len()..];
            rest.starts_with(|c: char| c.is_uppercase())
        })
        .filter(|(at, _)| {
            let before = &text[at.saturating_sub(80)..*at];
            !before.contains("fn algorithm(&self) -> Algorithm {")
                && !before.contains("algorithm: Algorithm::")
                && !before.trim_end().ends_with("algorithm:")
        })
        .map(|(at, _)| text[at..].chars().take(30).collect())
        .collect();
    for name in vkerode::erosion::ALL_STRATEGIES
        .iter()
        .map(|s| s.algorithm().as_str())
    {
        for quoted in [format!("== \"{name}\""), format!("!= \"{name}\"")] {
            if raw.contains(&quoted) {
                found.push(quoted);
            }
        }
    }
    found
}

#[test]
fn no_choice_of_the_strategy_is_left_outside_the_registry() {
    assert!(!strategy_choices("match a { Algorithm::Pipes => 1 }", "").is_empty());
    assert!(!strategy_choices("if matches!(a, Algorithm::Pipes) {}", "").is_empty());
    assert!(!strategy_choices("", "if a.as_str() == \"pipes\" {}").is_empty());
    assert!(strategy_choices("algorithm: Algorithm::Droplets,", "").is_empty());
    assert!(strategy_choices(
        "fn algorithm(&self) -> Algorithm {\n        Algorithm::Pipes\n    }",
        ""
    )
    .is_empty());
    let mut list = Vec::new();
    rust_files(Path::new("src"), &mut list);
    let found: Vec<String> = list
        .iter()
        .filter(|f| {
            !f.ends_with("src/erosion/registry.rs") && !f.ends_with("src/erosion/algorithm.rs")
        })
        .flat_map(|f| {
            let raw = std::fs::read_to_string(f).unwrap();
            let raw_code = match raw.find("#[cfg(test)]") {
                Some(at) => &raw[..at],
                None => &raw,
            };
            strategy_choices(&code(&raw), raw_code)
                .into_iter()
                .map(move |c| format!("{}: {c}", f.display()))
        })
        .collect();
    assert!(
        found.is_empty(),
        "the strategy chosen outside the registry:\n{}",
        found.join("\n")
    );
}

/// Calls that open a file to read it.
const READS: [&str; 5] = [
    "fs::read_to_string(",
    "fs::read(",
    "File::open(",
    "Reader::from_path(",
    "BufReader::new(File",
];

/// Files whose reads need no check, each with why.
const UNCHECKED_READS: [(&str, &str); 3] = [
    (
        "src/lib.rs",
        "defines the check, and reads /proc's host name",
    ),
    (
        "src/terrain/files.rs",
        "opens folders to sync them and its own partial files to lock them",
    ),
    (
        "src/terrain/formats/sidecar.rs",
        "reads back the data file it has just written",
    ),
];

/// The lines of `code` that read a file with no regular-file check in the five lines up
/// to it.
fn unchecked_reads(code: &str) -> Vec<String> {
    let lines: Vec<&str> = code.lines().collect();
    (0..lines.len())
        .filter(|&i| READS.iter().any(|read| lines[i].contains(read)))
        .filter(|&i| {
            !lines[i.saturating_sub(5)..=i]
                .iter()
                .any(|l| l.contains("check_regular_file"))
        })
        .map(|i| lines[i].trim().to_string())
        .collect()
}

#[test]
fn every_read_of_a_file_goes_through_the_one_regular_file_check() {
    assert_eq!(
        unchecked_reads("let t = std::fs::read_to_string(path)?;"),
        ["let t = std::fs::read_to_string(path)?;"]
    );
    assert!(unchecked_reads("crate::check_regular_file(p)?;\nlet b = fs::read(p)?;").is_empty());
    let mut list = Vec::new();
    rust_files(Path::new("src"), &mut list);
    let found: Vec<String> = list
        .iter()
        .filter(|f| {
            !UNCHECKED_READS
                .iter()
                .any(|(file, _)| f.as_path() == Path::new(file))
        })
        .flat_map(|f| {
            unchecked_reads(&code(&std::fs::read_to_string(f).unwrap()))
                .into_iter()
                .map(move |line| format!("{}: {line}", f.display()))
        })
        .collect();
    assert!(
        found.is_empty(),
        "reads without crate::check_regular_file (a FIFO would block them):\n{}",
        found.join("\n")
    );
}

/// The calls that look a column of a results table up by its name.
const LOOKUPS: [&str; 13] = [
    "get(",
    "setting(",
    "setting_number(",
    "number(",
    "numbers(",
    "column(",
    "optional(",
    "index(",
    "field(",
    "rows(",
    "has_column(",
    "at(",
    "bound(",
];

/// Where a points.csv column may be named by a string literal: the typed reader
/// itself, and the older-schema mapping it reads earlier files through (by their names).
const TYPED_READER: [&str; 2] = [
    "src/experiment/results/point_row.rs",
    "src/experiment/results/csv_text.rs",
];

/// The readers of results tables: the core and the studies.
const READERS: [&str; 2] = ["src/experiment", "src/studies"];

/// `text` without its `#[cfg(test)] mod tests { ... }` block, wherever in the file it
/// stands (by its braces).
fn without_tests_module(text: &str) -> String {
    let Some(start) = text.find("#[cfg(test)]\nmod tests {") else {
        return text.to_string();
    };
    let mut depth = 0usize;
    for (i, c) in text[start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 1 => {
                return format!("{}{}", &text[..start], &text[start + i + 1..]);
            }
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    text[..start].to_string()
}

/// The lines of `text` (its tests left out) where a string literal names a points.csv
/// column in a lookup call: `table.get(r, "stop_reason")`.
fn literal_column_lookups(text: &str, columns: &BTreeSet<String>) -> Vec<String> {
    let text = without_tests_module(text);
    let mut found = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        // `CsvText::get` takes a row first: `.get("device")` is a map's or JSON's.
        if code.contains(".get(\"") {
            continue;
        }
        let Some(call) = LOOKUPS.iter().filter_map(|l| code.find(l)).min() else {
            continue;
        };
        let mut literals = code[call..].split('"').skip(1).step_by(2);
        if literals.any(|l| columns.contains(l)) {
            found.push(line.trim().to_string());
        }
    }
    found
}

#[test]
fn no_reader_looks_a_column_up_by_a_string_literal() {
    let columns: BTreeSet<String> = vkerode::experiment::results::point_header()
        .into_iter()
        .collect();
    assert_eq!(
        literal_column_lookups("let r = table.get(r, \"stop_reason\");", &columns).len(),
        1
    );
    assert!(literal_column_lookups("parsed.get(\"v\")", &columns).is_empty());
    assert_eq!(
        literal_column_lookups("row.setting(\"workgroup\")", &columns).len(),
        1
    );
    let mut list = Vec::new();
    for dir in READERS {
        rust_files(Path::new(dir), &mut list);
    }
    let found: Vec<String> = list
        .iter()
        .filter(|f| {
            !TYPED_READER
                .iter()
                .any(|file| f.as_path() == Path::new(file))
        })
        .flat_map(|f| {
            literal_column_lookups(&std::fs::read_to_string(f).unwrap(), &columns)
                .into_iter()
                .map(move |line| format!("{}: {line}", f.display()))
        })
        .collect();
    assert!(
        found.is_empty(),
        "columns looked up by a string literal outside the typed reader \
         (experiment::results::point_row); name them through its fields or the column \
         constants:\n{}",
        found.join("\n")
    );
}

/// The files outside the binary that may still return `Result<_, String>`, each for a
/// reason; an entry that no longer holds one fails the test, so the list only shrinks.
const STRING_ERRORS_ALLOWED: [&str; 0] = [];

/// The error types a `Result<...>` in `text` (code without comments, strings and tests)
/// names as `String`: `Result<T, String>` with any `T`, nested generics and all, as
/// written. A one-argument alias such as `io::Result<String>` is not one.
fn string_errors(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("Result<") {
        if text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let args_start = at + "Result<".len();
        let (mut depth, mut args, mut start) = (0usize, Vec::new(), args_start);
        for (i, c) in text[args_start..].char_indices() {
            let i = args_start + i;
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' if depth > 0 => depth -= 1,
                ',' if depth == 0 => {
                    args.push(text[start..i].trim());
                    start = i + 1;
                }
                '>' => {
                    args.push(text[start..i].trim());
                    break;
                }
                _ => {}
            }
        }
        if args.len() == 2 && args[1] == "String" {
            found.push(format!("Result<{}>", args.join(", ")));
        }
    }
    found
}

#[test]
fn errors_outside_the_binary_are_types_not_strings() {
    assert_eq!(
        string_errors("fn f() -> Result<Vec<Option<u8>>, String> {"),
        ["Result<Vec<Option<u8>>, String>"]
    );
    assert_eq!(
        string_errors("x.collect::<Result<(u8, u8), String>>()?; Box<Result<A, String>>"),
        ["Result<(u8, u8), String>", "Result<A, String>"]
    );
    assert!(string_errors("fn f() -> io::Result<String>; Result<String, E>").is_empty());
    assert!(string_errors("fn f() -> MyResult<T, String>").is_empty());
    let mut list = Vec::new();
    rust_files(Path::new("src"), &mut list);
    let binary = |f: &Path| f.starts_with("src/cli") || f == Path::new("src/main.rs");
    let mut found = Vec::new();
    let mut allowed_but_clean = Vec::new();
    for file in list.iter().filter(|f| !binary(f)) {
        let text = code(&without_tests_module(
            &std::fs::read_to_string(file).unwrap(),
        ));
        let errors = string_errors(&text);
        let allowed = STRING_ERRORS_ALLOWED
            .iter()
            .any(|a| file.as_path() == Path::new(a));
        match (allowed, errors.is_empty()) {
            (false, false) => found.extend(
                errors
                    .into_iter()
                    .map(|e| format!("{}: {e}", file.display())),
            ),
            (true, true) => allowed_but_clean.push(file.display().to_string()),
            _ => {}
        }
    }
    assert!(
        found.is_empty(),
        "errors as String outside src/cli and src/main.rs; give each concern its \
         thiserror type (anyhow and String stay in the binary):\n{}",
        found.join("\n")
    );
    assert!(
        allowed_but_clean.is_empty(),
        "no Result<_, String> left here: take it off STRING_ERRORS_ALLOWED:\n{}",
        allowed_but_clean.join("\n")
    );
}
