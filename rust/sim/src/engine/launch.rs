//! Container start-up as a cost that grows with the start-ups in progress
//! beside it ([`LaunchModel`]). On a real NodeManager a container's JVM
//! takes seconds to start, and longer when many start at once on the same
//! cores: on the 2-core host of the GridMix runs, a task JVM took 30–40 s
//! when about 20 started together and a few seconds alone (gridmix.md §2b).
//! Off by default: a container's work starts when its AM launches it.

use sojourn_core::Time;

/// How long a container takes to start: `base_ms`, plus `per_concurrent_ms`
/// for every other container still starting when it does, counted on its
/// node (`per_node`) or across the cluster (NodeManagers sharing one host,
/// as a MiniYARNCluster's do).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchModel {
    pub base_ms: u64,
    pub per_concurrent_ms: u64,
    pub per_node: bool,
}

impl LaunchModel {
    pub fn is_off(&self) -> bool {
        self.base_ms == 0 && self.per_concurrent_ms == 0
    }
}

/// The start-ups in progress, per node or one set for the cluster.
pub(super) struct Launches {
    model: LaunchModel,
    /// `(start, end)` of each start-up not known to be over.
    starting: Vec<Vec<(Time, Time)>>,
}

impl Launches {
    pub(super) fn new(model: LaunchModel, nodes: usize) -> Launches {
        let scopes = if model.is_off() {
            0
        } else if model.per_node {
            nodes
        } else {
            1
        };
        Launches { model, starting: vec![Vec::new(); scopes] }
    }

    /// The start-up time of a container launched at `at` on `node`, counted
    /// in from then on. `now` (never after `at`) lets finished start-ups go.
    pub(super) fn start(&mut self, node: usize, at: Time, now: Time) -> u64 {
        if self.model.is_off() {
            return 0;
        }
        let scope = if self.model.per_node { node } else { 0 };
        let Some(starting) = self.starting.get_mut(scope) else { return self.model.base_ms };
        starting.retain(|&(_, end)| end > now);
        let others = starting.iter().filter(|&&(s, e)| s <= at && at < e).count() as u64;
        let cost = self.model.base_ms.saturating_add(self.model.per_concurrent_ms.saturating_mul(others));
        starting.push((at, at.plus(cost)));
        cost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_start_up_costs_more_for_every_other_still_starting() {
        let model = LaunchModel { base_ms: 1000, per_concurrent_ms: 500, per_node: true };
        let mut l = Launches::new(model, 2);
        assert_eq!(l.start(0, Time(0), Time(0)), 1000);
        assert_eq!(l.start(0, Time(0), Time(0)), 1500);
        // Another node's start-ups do not count.
        assert_eq!(l.start(1, Time(0), Time(0)), 1000);
        // At 1200 ms the first has ended, the second (to 1500 ms) has not.
        assert_eq!(l.start(0, Time(1200), Time(1200)), 1500);
        // Across the cluster every node's start-ups count.
        let mut c = Launches::new(LaunchModel { per_node: false, ..model }, 2);
        assert_eq!(c.start(0, Time(0), Time(0)), 1000);
        assert_eq!(c.start(1, Time(0), Time(0)), 1500);
    }

    #[test]
    fn off_costs_nothing() {
        let mut l = Launches::new(LaunchModel::default(), 3);
        assert_eq!(l.start(2, Time(5), Time(0)), 0);
    }
}
