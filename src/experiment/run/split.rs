//! A run's time split into its parts by the replays of its own addresses
//! ([`crate::erosion::Replay`]): the memory traffic alone is the run's ceiling, what the
//! run takes beyond it is arithmetic and dependency latency, and the atomics' time in
//! order against the same atomics shuffled between the droplets of each step is what
//! same-time collisions cost: the contention surcharge.

use serde::Serialize;

use crate::table::Section;

/// A run's median time against the medians of its replays, in ms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TimeSplit {
    /// All the run's loads and atomics at its addresses, in its order: its ceiling.
    pub replay_ms: f64,
    /// The replay's time over the run's: how near the run is to its ceiling.
    pub replay_percent_of_run: f64,
    pub replay_atomics_ms: f64,
    pub replay_loads_ms: f64,
    pub replay_shuffled_atomics_ms: f64,
    /// Atomics in order minus shuffled: what their same-time collisions cost.
    pub contention_surcharge_ms: f64,
    pub contention_surcharge_percent: f64,
    /// The run minus its replay: arithmetic and the latency of each step waiting on
    /// the last.
    pub arithmetic_and_latency_ms: f64,
}

impl TimeSplit {
    /// Of a run of median `run_ms` and its replays' medians, in
    /// [`crate::erosion::ReplayTraffic::ALL`]'s order.
    pub fn of(run_ms: f64, [in_order, atomics, loads, shuffled_atomics]: [f64; 4]) -> Self {
        let surcharge = atomics - shuffled_atomics;
        Self {
            replay_ms: in_order,
            replay_percent_of_run: 100.0 * in_order / run_ms,
            replay_atomics_ms: atomics,
            replay_loads_ms: loads,
            replay_shuffled_atomics_ms: shuffled_atomics,
            contention_surcharge_ms: surcharge,
            contention_surcharge_percent: 100.0 * surcharge / run_ms,
            arithmetic_and_latency_ms: run_ms - in_order,
        }
    }
}

impl Section for TimeSplit {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("replay_ms", "ms", "median GPU time of the replay of the run's recorded loads and atomics, in its dispatches, with no erosion arithmetic: the run's own ceiling (measure.replay; empty without it, and for the builds that have no replay: the tile-cache kernel and the wide build)"),
        ("replay_percent_of_run", "%", "replay_ms over the run's median GPU time: how near the run is to its ceiling"),
        ("replay_atomics_ms", "ms", "the replay of its atomics alone"),
        ("replay_loads_ms", "ms", "the replay of its loads alone"),
        ("replay_shuffled_atomics_ms", "ms", "its atomics with each step's addresses shuffled between the droplets that took that step in the same dispatch and pass: the same footprint and addresses, no same-time collisions (nor the locality of neighbours)"),
        ("contention_surcharge_ms", "ms", "replay_atomics_ms - replay_shuffled_atomics_ms: what same-time collisions cost (negative where the shuffle's lost locality costs more)"),
        ("contention_surcharge_percent", "%", "the surcharge over the run's median GPU time"),
        ("arithmetic_and_latency_ms", "ms", "the run's median GPU time minus replay_ms: erosion arithmetic and the latency of each step waiting on the last"),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_add_up_to_the_run() {
        let split = TimeSplit::of(20.0, [12.0, 9.0, 5.0, 7.5]);
        assert_eq!(split.arithmetic_and_latency_ms + split.replay_ms, 20.0);
        assert_eq!(split.contention_surcharge_ms, 1.5);
        assert_eq!(split.contention_surcharge_percent, 7.5);
        assert_eq!(split.replay_percent_of_run, 60.0);
        assert_eq!(crate::table::undocumented::<TimeSplit>(), None);
    }
}
