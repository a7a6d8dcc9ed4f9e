//! Faults planted on purpose, so that tests on lavapipe can see what a real GPU's
//! failures do to a run: `VKERODE_FAULT=allocation:N` makes the Nth buffer allocation
//! (from 1) fail as out of memory, `allocation:NAME:N` the Nth of the buffers named
//! NAME, and `fence-timeout:N` the Nth submission's wait time out. A suffix `@K` plants
//! it in the K-th context the process makes (from 0) only: one worker of a multi-device
//! sweep. The plan is read once, when a context is made.

use std::sync::atomic::{AtomicU64, Ordering};

use super::error::GpuError;

const VARIABLE: &str = "VKERODE_FAULT";

/// Contexts made by this process so far, for the `@K` suffix.
static CONTEXTS_MADE: AtomicU64 = AtomicU64::new(0);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Allocation,
    FenceTimeout,
}

/// The planted fault of one context, if any, and the calls counted towards it.
#[derive(Debug, Default)]
pub(crate) struct FaultPlan {
    fault: Option<(Kind, u64)>,
    /// Only buffers of this name count towards an allocation fault.
    buffer: Option<String>,
    allocations: AtomicU64,
    submissions: AtomicU64,
}

impl FaultPlan {
    /// The plan of the context being made now.
    pub(crate) fn from_env() -> Result<Self, GpuError> {
        let context = CONTEXTS_MADE.fetch_add(1, Ordering::Relaxed);
        match std::env::var(VARIABLE) {
            Ok(text) => Self::parse(&text, context),
            Err(_) => Ok(Self::default()),
        }
    }

    fn parse(text: &str, context: u64) -> Result<Self, GpuError> {
        let bad = || {
            GpuError::Fault(format!(
                "{VARIABLE}={text:?}: expected allocation:N, allocation:NAME:N or fence-timeout:N with N >= 1, optionally @K"
            ))
        };
        let (text, only) = match text.rsplit_once('@') {
            Some((plan, k)) => (plan, Some(k.parse::<u64>().map_err(|_| bad())?)),
            None => (text, None),
        };
        let (kind, nth) = text.rsplit_once(':').ok_or_else(bad)?;
        let (kind, buffer) = match kind.split_once(':') {
            Some(("allocation", name)) => (Kind::Allocation, Some(name.to_string())),
            None if kind == "allocation" => (Kind::Allocation, None),
            None if kind == "fence-timeout" => (Kind::FenceTimeout, None),
            _ => return Err(bad()),
        };
        let nth: u64 = nth.parse().ok().filter(|&n| n >= 1).ok_or_else(bad)?;
        if only.is_some_and(|k| k != context) {
            return Ok(Self::default());
        }
        Ok(Self {
            fault: Some((kind, nth)),
            buffer,
            ..Self::default()
        })
    }

    fn strikes(&self, kind: Kind, counter: &AtomicU64) -> bool {
        match self.fault {
            Some((planted, nth)) if planted == kind => {
                counter.fetch_add(1, Ordering::Relaxed) + 1 == nth
            }
            _ => false,
        }
    }

    /// Whether this allocation of a buffer named `name` is to fail.
    pub(crate) fn fails_allocation(&self, name: &str) -> bool {
        self.buffer.as_ref().is_none_or(|b| b == name)
            && self.strikes(Kind::Allocation, &self.allocations)
    }

    /// Whether this submission's wait is to time out.
    pub(crate) fn times_out(&self) -> bool {
        self.strikes(Kind::FenceTimeout, &self.submissions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nth_call_fails_once() {
        let plan = FaultPlan::parse("allocation:2", 0).unwrap();
        let failed: Vec<bool> = (0..4).map(|_| plan.fails_allocation("any")).collect();
        assert_eq!(failed, [false, true, false, false]);
        let named = FaultPlan::parse("allocation:cellHits:2", 0).unwrap();
        let failed: Vec<bool> = ["cellHits", "other", "cellHits", "cellHits"]
            .iter()
            .map(|name| named.fails_allocation(name))
            .collect();
        assert_eq!(failed, [false, false, true, false]);
        assert!(!plan.times_out());
        assert!(FaultPlan::parse("fence-timeout:1", 3).unwrap().times_out());
        for bad in [
            "allocation",
            "allocation:0",
            "disk:1",
            "fence-timeout:x",
            "disk:a:1",
            "fence-timeout:1@x",
        ] {
            assert!(FaultPlan::parse(bad, 0).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_fault_at_k_is_planted_in_the_kth_context_only() {
        let at = |context| {
            FaultPlan::parse("fence-timeout:1@1", context)
                .unwrap()
                .times_out()
        };
        assert_eq!([at(0), at(1), at(2)], [false, true, false]);
    }
}
