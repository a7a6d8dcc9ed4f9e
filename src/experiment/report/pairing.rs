//! Which points of two sets `compare` pairs: the settings keys it matches on (every
//! key, or as `--pair-by` and `--ignore` say), the pairs, what differs across each, and
//! why no point matches (the settings whose values differ) or a point matches two.

use std::path::{Path, PathBuf};

use super::points::{key_names, labels, point_keys, values, varying_in_either, PointTimes};

/// Why two sets' points cannot be paired.
#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    #[error("{flag} {key}: not a key of a point; the keys are {}", point_keys().join(", "))]
    UnknownKey { flag: &'static str, key: String },
    #[error("--pair-by and --ignore both name {key}: a key is matched on or left out of the match, not both")]
    PairedAndIgnored { key: String },
    #[error("{}", no_match_message(base, new, differing, ignore, pair_by))]
    NoMatch {
        base: PathBuf,
        new: PathBuf,
        /// The keys matched on whose values differ between the sets.
        differing: Vec<DifferingKey>,
        /// The advice: leave out these keys (those of `differing` each set fixes)...
        ignore: Vec<String>,
        /// ...or match on these (the keys that vary within a set, with `--pair-by`'s).
        pair_by: Vec<String>,
    },
    #[error("{}", ambiguous_message(*side, point, *matches, apart, ignored))]
    Ambiguous {
        /// The set of the point with several matches.
        side: Side,
        /// Its label in its set.
        point: String,
        /// How many points of the other set it matches.
        matches: usize,
        /// The keys those points differ in, each with their values.
        apart: Vec<(String, Vec<String>)>,
        /// Those of `apart` that `--ignore` left out of the match.
        ignored: Vec<String>,
    },
}

/// One of the two sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Side {
    Base,
    New,
}

impl Side {
    /// "base" or "new", as a pair's reasons name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::New => "new",
        }
    }

    /// "the base" or "the new set", as a sentence names it.
    pub(super) fn set(self) -> &'static str {
        match self {
            Side::Base => "the base",
            Side::New => "the new set",
        }
    }

    fn other(self) -> Side {
        match self {
            Side::Base => Side::New,
            Side::New => Side::Base,
        }
    }
}

/// A settings key whose values differ between two sets, with each set's values.
#[derive(Clone, Debug, PartialEq)]
pub struct DifferingKey {
    pub key: String,
    pub base: Vec<String>,
    pub new: Vec<String>,
}

/// One value as it is, several as "{8, 16, 32}".
fn values_text(values: &[String]) -> String {
    match values {
        [one] => one.clone(),
        many => format!("{{{}}}", many.join(", ")),
    }
}

/// `--flag a,b`, or nothing where there are no keys.
fn flag_with(flag: &str, keys: &[String]) -> Option<String> {
    (!keys.is_empty()).then(|| format!("{flag} {}", keys.join(",")))
}

fn no_match_message(
    base: &Path,
    new: &Path,
    differing: &[DifferingKey],
    ignore: &[String],
    pair_by: &[String],
) -> String {
    let head = format!(
        "no point of {} matches one of {} on their settings",
        new.display(),
        base.display()
    );
    if differing.is_empty() {
        return format!(
            "{head}, though each setting takes the same values in both: no combination of them is in both sets; name the keys to match on (--pair-by KEY) or to leave out (--ignore KEY)"
        );
    }
    let settings: Vec<String> = differing
        .iter()
        .map(|d| {
            format!(
                "{}: {} in base, {} in new",
                d.key,
                values_text(&d.base),
                values_text(&d.new)
            )
        })
        .collect();
    let advice = match (flag_with("--ignore", ignore), flag_with("--pair-by", pair_by)) {
        (Some(ignore), Some(pair_by)) => format!(
            "To compare across the settings each set fixes, leave them out of the match ({ignore}) or match on those that vary alone ({pair_by})"
        ),
        (Some(ignore), None) => format!(
            "To compare across the settings each set fixes, leave them out of the match ({ignore})"
        ),
        _ => "Match on fewer settings (--pair-by KEY) or leave some out (--ignore KEY)".into(),
    };
    format!(
        "{head}; these differ between the sets: {}. {advice}",
        settings.join("; ")
    )
}

fn ambiguous_message(
    side: Side,
    point: &str,
    matches: usize,
    apart: &[(String, Vec<String>)],
    ignored: &[String],
) -> String {
    let differ: Vec<String> = apart
        .iter()
        .map(|(key, values)| format!("{key} ({})", values.join(", ")))
        .collect();
    let unrecorded: Vec<String> = apart
        .iter()
        .map(|(key, _)| key.clone())
        .filter(|key| !ignored.contains(key))
        .collect();
    let mut advice = Vec::new();
    if let Some(flag) = flag_with("--ignore", ignored) {
        advice.push(format!("take them off {flag}"));
    }
    if !unrecorded.is_empty() {
        advice.push(format!(
            "{} records no {} for this point (an older file, or another strategy's key), so any value matches",
            side.set(),
            unrecorded.join(", ")
        ));
    }
    format!(
        "ambiguous match: the point {point} of {} matches {matches} points of {}, which differ in {}; a point needs one match: {}",
        side.set(),
        side.other().set(),
        differ.join(", "),
        advice.join("; ")
    )
}

/// Which settings keys pair two sets' points. By default, every key. With `by`
/// (`--pair-by`), its keys and every key that takes two values within either set: a
/// point then matches at most one (but for replicates), and the keys each set fixes to
/// one value, differently, are compared across. `ignore` (`--ignore`) leaves keys out
/// of the match either way. A point that matches two points of the other set that
/// differ in any setting is refused: which is its pair would be a guess.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Pairing {
    /// `--pair-by`'s keys; none matches on every key.
    pub by: Vec<String>,
    /// `--ignore`'s keys.
    pub ignore: Vec<String>,
}

impl Pairing {
    /// Refuses a key that is not a key of a point, naming its flag, and a key both
    /// matched on and left out.
    pub fn check(&self) -> Result<(), PairingError> {
        let known = point_keys();
        for (flag, keys) in [("--pair-by", &self.by), ("--ignore", &self.ignore)] {
            if let Some(key) = keys.iter().find(|k| !known.contains(k)) {
                return Err(PairingError::UnknownKey {
                    flag,
                    key: key.clone(),
                });
            }
        }
        match self.by.iter().find(|k| self.ignore.contains(k)) {
            Some(key) => Err(PairingError::PairedAndIgnored { key: key.clone() }),
            None => Ok(()),
        }
    }

    /// The keys the match is on, as indices into the points' settings.
    pub(super) fn keys_of(&self, base: &[&PointTimes], new: &[&PointTimes]) -> Vec<usize> {
        let varying = varying_in_either(base, new);
        let names = key_names(base.iter().chain(new).next().copied());
        names
            .iter()
            .enumerate()
            .filter(|(k, name)| {
                !self.ignore.contains(name)
                    && (self.by.is_empty() || self.by.contains(name) || varying.contains(k))
            })
            .map(|(k, _)| k)
            .collect()
    }
}

/// A setting that differs across a matched pair (a key left out of the match).
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct SettingChange {
    /// The settings key.
    pub key: String,
    /// The base point's value.
    pub base: String,
    /// The new point's value.
    pub new: String,
}

/// Whether two points agree on `keys` wherever both record one (a key empty on one side
/// is another strategy's, or one an older file did not record).
fn agree(a: &PointTimes, b: &PointTimes, keys: &[usize]) -> bool {
    keys.iter().all(|&k| {
        let (x, y) = (&a.settings[k].1, &b.settings[k].1);
        x.is_empty() || y.is_empty() || x == y
    })
}

/// Refuses a point of `points` (of `side`) that matches on `keys` several points of
/// `others` that differ in a setting. Points alike in every setting (one point measured
/// by several workers, or replicated) are no ambiguity: they pair in order.
fn check_unique(
    points: &[PointTimes],
    others: &[PointTimes],
    keys: &[usize],
    side: Side,
    pairing: &Pairing,
) -> Result<(), PairingError> {
    for (i, p) in points.iter().enumerate() {
        let candidates: Vec<&PointTimes> = others.iter().filter(|o| agree(p, o, keys)).collect();
        let Some((first, rest)) = candidates.split_first() else {
            continue;
        };
        let apart: Vec<usize> = (0..first.settings.len())
            .filter(|&k| rest.iter().any(|o| o.settings[k].1 != first.settings[k].1))
            .collect();
        if apart.is_empty() {
            continue;
        }
        let apart: Vec<(String, Vec<String>)> = apart
            .into_iter()
            .map(|k| {
                let shown = values(&candidates, k);
                let unrecorded = candidates.iter().any(|o| o.settings[k].1.is_empty());
                let shown = match unrecorded {
                    true => [shown, vec!["none".into()]].concat(),
                    false => shown,
                };
                (first.settings[k].0.clone(), shown)
            })
            .collect();
        let ignored = apart
            .iter()
            .map(|(key, _)| key.clone())
            .filter(|key| pairing.ignore.contains(key))
            .collect();
        let refs: Vec<&PointTimes> = points.iter().collect();
        return Err(PairingError::Ambiguous {
            side,
            point: labels(&refs).swap_remove(i),
            matches: candidates.len(),
            apart,
            ignored,
        });
    }
    Ok(())
}

/// The pairs of two sets' points, matched on `keys`: each base point with the first new
/// one not yet matched, once no point has two different matches.
pub(super) fn pairs<'a>(
    base: &'a [PointTimes],
    new: &'a [PointTimes],
    keys: &[usize],
    pairing: &Pairing,
) -> Result<Vec<(&'a PointTimes, &'a PointTimes)>, PairingError> {
    check_unique(base, new, keys, Side::Base, pairing)?;
    check_unique(new, base, keys, Side::New, pairing)?;
    let mut taken = vec![false; new.len()];
    let mut pairs = Vec::new();
    for b in base {
        let found = (0..new.len()).find(|&i| !taken[i] && agree(b, &new[i], keys));
        if let Some(i) = found {
            taken[i] = true;
            pairs.push((b, &new[i]));
        }
    }
    Ok(pairs)
}

/// Why no point matched: the keys matched on whose values differ between the sets, and
/// what to leave out or match on instead.
pub(super) fn no_match(
    paths: (&Path, &Path),
    base: &[&PointTimes],
    new: &[&PointTimes],
    keys: &[usize],
    pairing: &Pairing,
) -> PairingError {
    let names = key_names(base.first().copied());
    let differing: Vec<DifferingKey> = keys
        .iter()
        .filter_map(|&k| {
            let (in_base, in_new) = (values(base, k), values(new, k));
            // A key one set does not record matches any value: it parts no pair.
            let parts = !in_base.is_empty() && !in_new.is_empty() && in_base != in_new;
            parts.then(|| DifferingKey {
                key: names[k].clone(),
                base: in_base,
                new: in_new,
            })
        })
        .collect();
    // Keys each set fixes to one value can be compared across; keys that vary within a
    // set cannot be left out without two matches.
    let ignore: Vec<String> = differing
        .iter()
        .filter(|d| d.base.len() == 1 && d.new.len() == 1 && !pairing.by.contains(&d.key))
        .map(|d| d.key.clone())
        .collect();
    let varying = varying_in_either(base, new);
    let pair_by: Vec<String> = keys
        .iter()
        .filter(|&&k| pairing.by.contains(&names[k]) || varying.contains(&k))
        .map(|&k| names[k].clone())
        .filter(|name| !ignore.contains(name))
        .collect();
    PairingError::NoMatch {
        base: paths.0.to_path_buf(),
        new: paths.1.to_path_buf(),
        differing,
        pair_by: match ignore.is_empty() {
            true => Vec::new(),
            false => pair_by,
        },
        ignore,
    }
}

/// The settings that differ across a pair, where both record one.
pub(super) fn changes(b: &PointTimes, n: &PointTimes) -> Vec<SettingChange> {
    b.settings
        .iter()
        .zip(&n.settings)
        .filter(|((_, x), (_, y))| !x.is_empty() && !y.is_empty() && x != y)
        .map(|((key, x), (_, y))| SettingChange {
            key: key.clone(),
            base: x.clone(),
            new: y.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::points::point;
    use super::*;

    fn every_key(p: &PointTimes) -> Vec<usize> {
        (0..p.settings.len()).collect()
    }

    #[test]
    fn a_key_another_strategy_leaves_empty_neither_varies_nor_parts_a_match() {
        let droplets = point(&[
            ("algorithm", "droplets"),
            ("pipes_steps", ""),
            ("workgroup", "64"),
        ]);
        let pipes = point(&[
            ("algorithm", "pipes"),
            ("pipes_steps", "50"),
            ("workgroup", ""),
        ]);
        let labels = labels(&[&droplets, &pipes]);
        assert_eq!(labels, ["algorithm=droplets", "algorithm=pipes"]);
        // An older file that did not record a key matches on the others.
        let older = point(&[
            ("algorithm", "pipes"),
            ("pipes_steps", ""),
            ("workgroup", ""),
        ]);
        let keys = every_key(&older);
        assert!(agree(&older, &pipes, &keys));
        assert!(!agree(&older, &droplets, &keys));
    }

    #[test]
    fn replicates_pair_in_order_and_two_different_matches_are_refused() {
        let at = |size: &str| point(&[("size", size), ("workgroup", "64")]);
        let keys = every_key(&at("1"));
        // One point measured twice: paired in order, the second left over.
        let (replicated, once) = ([at("256"), at("256")], [at("256")]);
        let paired = pairs(&replicated, &once, &keys, &Pairing::default()).unwrap();
        assert_eq!(paired.len(), 1);
        // With size left out, workgroup 64 matches two points that differ in it.
        let pairing = Pairing {
            by: Vec::new(),
            ignore: vec!["size".into()],
        };
        let workgroup_only = vec![1];
        let error = pairs(
            &[at("256")],
            &[at("256"), at("512")],
            &workgroup_only,
            &pairing,
        )
        .unwrap_err();
        let said = error.to_string();
        assert!(
            said.contains("matches 2 points of the new set, which differ in size (256, 512)")
                && said.contains("take them off --ignore size"),
            "{said}"
        );
    }

    #[test]
    fn pair_by_matches_its_keys_and_those_that_vary_within_a_set() {
        let at = |variant: &str, workgroup: &str| {
            point(&[
                ("size", "256"),
                ("variant", variant),
                ("workgroup", workgroup),
            ])
        };
        let base = [at("paper", "32"), at("paper", "64")];
        let new = [at("fast", "32"), at("fast", "64")];
        let base_refs: Vec<&PointTimes> = base.iter().collect();
        let new_refs: Vec<&PointTimes> = new.iter().collect();
        let by = |keys: &[&str]| Pairing {
            by: keys.iter().map(|k| k.to_string()).collect(),
            ignore: Vec::new(),
        };
        // Workgroup varies within a set: matched on even when not named.
        let keys_of = |pairing: Pairing| -> Vec<String> {
            let names = ["size", "variant", "workgroup"];
            pairing
                .keys_of(&base_refs, &new_refs)
                .into_iter()
                .filter(|&k| k < names.len())
                .map(|k| names[k].to_string())
                .collect()
        };
        assert_eq!(keys_of(by(&["size"])), ["size", "workgroup"]);
        assert_eq!(
            keys_of(Pairing::default()),
            ["size", "variant", "workgroup"]
        );
        assert_eq!(
            changes(&base[1], &new[1]),
            [SettingChange {
                key: "variant".into(),
                base: "paper".into(),
                new: "fast".into()
            }]
        );
    }

    #[test]
    fn unknown_keys_and_a_key_both_matched_and_left_out_are_refused() {
        let unknown = Pairing {
            by: vec!["workgroup".into(), "wrokgroup".into()],
            ignore: Vec::new(),
        };
        let said = unknown.check().unwrap_err().to_string();
        assert!(
            said.starts_with("--pair-by wrokgroup: not a key of a point")
                && said.contains("workgroup"),
            "{said}"
        );
        let both = Pairing {
            by: vec!["size".into()],
            ignore: vec!["size".into()],
        };
        assert!(matches!(
            both.check(),
            Err(PairingError::PairedAndIgnored { key }) if key == "size"
        ));
    }
}
