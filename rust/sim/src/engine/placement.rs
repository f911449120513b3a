//! The slowdown of a task placed off its job's preferred nodes
//! (`SimConfig::placement_slowdown`): the ground truth behind TetriSched's
//! soft constraints (tetrisched.md §3.3, A12/A13), which its GS_HET
//! results (Figs. 9–11) rest on. Off by default: a task runs its trace
//! duration wherever it is placed.
//!
//! The rule, per task at its placement:
//! - a job whose name contains `gpu` runs the task σ × longer on a node
//!   with no GPUs in its capacity;
//! - a job whose name contains `mpi` (and not `gpu`) runs the task σ ×
//!   longer when its node's rack is not the rack of the first task of its
//!   group (phase) to be placed. A gang launched together in one rack runs
//!   at d; one split over racks ends at σ × d (its tasks off the first
//!   rack are the slow ones), as "spreading across racks slows the job"
//!   [L332] for a job that waits for all its tasks. The first rack is kept
//!   for the group's later tasks and re-runs.
//!
//! Per task rather than per job: a task already running is not slowed
//! afterwards, so a simulator event never rewrites another's finish time.

use super::{NodeId, Sim, Task};
use sojourn_core::Preference;

/// `ms` × σ, rounded up as the policy rounds its slow runtime ⌈σ·d⌉.
pub fn slowed(ms: u64, sigma: f64) -> u64 {
    // (A float-to-int cast saturates; the cap keeps later sums far from overflow.)
    ((ms as f64 * sigma).ceil() as u64).clamp(1, u64::MAX / 8)
}

impl<'a> Sim<'a> {
    /// `task` of `job` as it runs on `node`: slowed (its remaining work ×
    /// σ) when the node is off the job's preferred placement.
    pub(super) fn placed(&mut self, job: usize, node: NodeId, mut task: Task) -> Task {
        let Some(sigma) = self.cfg.placement_slowdown else { return task };
        let Some(j) = self.jobs.get_mut(job).and_then(|j| j.as_mut()) else { return task };
        let shapes = &self.node_shapes.nodes;
        let Some(here) = shapes.get(node.0 as usize) else { return task };
        let off = match Preference::of_name(&j.spec.name) {
            Preference::Anywhere => false,
            Preference::Gpu => here.capacity.gpus == 0,
            Preference::OneRack => {
                let Some(run) = j.running.get_mut(&task.group) else { return task };
                let first = *run.first_node.get_or_insert(node);
                shapes.get(first.0 as usize).is_some_and(|f| f.rack != here.rack)
            }
        };
        if off {
            task.remaining_ms = slowed(task.remaining_ms, sigma);
            task.slowed = true;
        }
        task
    }

    /// The whole run of `task` where it was placed: its trace duration, × σ
    /// if it was slowed.
    pub(super) fn run_ms(&self, full_ms: u64, task: &Task) -> u64 {
        match self.cfg.placement_slowdown {
            Some(sigma) if task.slowed => slowed(full_ms, sigma),
            _ => full_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_gives_the_preference_as_the_policy_reads_it() {
        assert_eq!(Preference::of_name("GPU-train"), Preference::Gpu);
        assert_eq!(Preference::of_name("mpi7"), Preference::OneRack);
        assert_eq!(Preference::of_name("gpu-mpi"), Preference::Gpu);
        assert_eq!(Preference::of_name("be3"), Preference::Anywhere);
    }

    #[test]
    fn slowed_rounds_up_and_never_reaches_zero() {
        assert_eq!(slowed(10_000, 1.5), 15_000);
        assert_eq!(slowed(3, 1.5), 5);
        assert_eq!(slowed(0, 2.0), 1);
    }
}
