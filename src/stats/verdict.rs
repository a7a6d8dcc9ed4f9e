//! The one verdict of every study: what an interval of an effect says against a band of
//! no effect around its null (a ratio's 1 ± the noise threshold, a difference's
//! ± its margin). Each study reads it in its own words ("faster" for a ratio of times,
//! "equivalent" for a figure), never by string.

use serde::{Deserialize, Serialize};

/// The band within which an effect counts as none: [low, high].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Band {
    pub low: f64,
    pub high: f64,
}

impl Band {
    /// 1 ± `relative`: a ratio's band.
    pub fn around_one(relative: f64) -> Self {
        Self::around(1.0, relative)
    }

    /// `null` ± `margin`.
    pub fn around(null: f64, margin: f64) -> Self {
        Self {
            low: null - margin,
            high: null + margin,
        }
    }
}

/// What an interval of an effect says against its band.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The whole interval lies below the band.
    Lower,
    /// The whole interval lies above the band.
    Higher,
    /// The whole interval lies within the band.
    Same,
    /// A test rejects sameness without one direction (a map, a family of figures).
    Different,
    /// The interval reaches both within and beyond the band.
    Unclear,
}

impl Verdict {
    /// The rule: an interval (low, high) against `band`.
    pub fn of(interval: (f64, f64), band: Band) -> Self {
        let (low, high) = interval;
        if low > band.high {
            Verdict::Higher
        } else if high < band.low {
            Verdict::Lower
        } else if low >= band.low && high <= band.high {
            Verdict::Same
        } else {
            Verdict::Unclear
        }
    }

    /// Whether it says the effect is not none: lower, higher or different.
    pub fn differs(self) -> bool {
        matches!(self, Verdict::Lower | Verdict::Higher | Verdict::Different)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Lower => "lower",
            Verdict::Higher => "higher",
            Verdict::Same => "same",
            Verdict::Different => "different",
            Verdict::Unclear => "unclear",
        }
    }

    /// Read as a ratio of times, new over base: lower is faster.
    pub fn as_time(self) -> &'static str {
        match self {
            Verdict::Lower => "faster",
            Verdict::Higher => "slower",
            other => other.as_str(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_needs_the_whole_interval_past_or_within_the_band() {
        let band = Band::around_one(0.02);
        assert_eq!(Verdict::of((1.021, 1.3), band), Verdict::Higher);
        assert_eq!(Verdict::of((1.019, 1.3), band), Verdict::Unclear);
        assert_eq!(Verdict::of((0.7, 0.979), band), Verdict::Lower);
        assert_eq!(Verdict::of((0.981, 1.1), band), Verdict::Unclear);
        assert_eq!(Verdict::of((0.98, 1.02), band), Verdict::Same);
        assert_eq!(
            Verdict::of((0.97, 1.03), band),
            Verdict::Unclear,
            "past both ends"
        );
        assert_eq!(Verdict::Lower.as_time(), "faster");
        assert!(Verdict::Different.differs() && !Verdict::Same.differs());
    }
}
