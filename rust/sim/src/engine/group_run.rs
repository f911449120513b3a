//! The tasks of a job's phase that wait to be placed, without a list entry
//! per task.

use super::Task;
use sojourn_core::NodeId;
use std::collections::VecDeque;

/// A group of a job's tasks (a MapReduce phase) that has been asked for.
/// Its tasks not yet placed are the re-runs, then the tasks never placed in
/// index order: those are not listed (a backlog of jobs held a list entry
/// per task, and filling it was much of the memory a long run touched).
pub(super) struct GroupRun {
    /// Tasks to run again (killed or lost), placed first, the latest first.
    reruns: VecDeque<Task>,
    /// The first task never placed; those from here to `size` wait.
    next_new: u32,
    /// The group's number of tasks.
    size: u32,
    /// Tasks not yet finished.
    pub(super) unfinished: u32,
    /// The node of the group's first task to be placed, whose rack a job
    /// that prefers one rack should keep to (`placement.rs`); set only
    /// while the slowdown is modelled.
    pub(super) first_node: Option<NodeId>,
}

impl GroupRun {
    pub(super) fn new(size: u32) -> GroupRun {
        GroupRun { reruns: VecDeque::new(), next_new: 0, size, unfinished: size, first_node: None }
    }

    /// The number of tasks not yet placed.
    pub(super) fn waiting(&self) -> usize {
        self.reruns.len() + (self.size - self.next_new) as usize
    }

    /// The indices of the tasks not yet placed, in the order they will be.
    pub(super) fn waiting_indices(&self) -> impl Iterator<Item = u32> + '_ {
        self.reruns.iter().map(|t| t.index).chain(self.next_new..self.size)
    }

    /// The next task to place, of group `group` whose tasks run `durations_ms`.
    pub(super) fn pop_front(&mut self, group: usize, durations_ms: &[u64]) -> Option<Task> {
        if let Some(t) = self.reruns.pop_front() {
            return Some(t);
        }
        if self.next_new >= self.size {
            return None;
        }
        let index = self.next_new;
        self.next_new += 1;
        let remaining_ms = durations_ms.get(index as usize).map_or(1, |d| (*d).max(1));
        Some(Task { group, index, slowed: false, remaining_ms })
    }

    /// Puts a task back to be placed next.
    pub(super) fn push_front(&mut self, task: Task) {
        self.reruns.push_front(task);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Placing tasks and putting killed ones back gives the tasks, and
        /// their run times, a list of every task (re-runs pushed to its front) gives.
        #[test]
        fn places_as_a_full_list(durations in proptest::collection::vec(0u64..5, 0..12), ops in proptest::collection::vec(any::<bool>(), 0..40)) {
            let mut run = GroupRun::new(durations.len() as u32);
            let mut list: VecDeque<Task> = durations
                .iter()
                .enumerate()
                .map(|(i, d)| Task { group: 3, index: i as u32, slowed: false, remaining_ms: (*d).max(1) })
                .collect();
            let mut placed: Vec<Task> = Vec::new();
            for pop in ops {
                if pop || placed.is_empty() {
                    let got = run.pop_front(3, &durations);
                    let want = list.pop_front();
                    prop_assert_eq!(got.map(|t| (t.index, t.remaining_ms)), want.map(|t| (t.index, t.remaining_ms)));
                    placed.extend(got);
                } else if let Some(t) = placed.pop() {
                    let t = Task { remaining_ms: t.remaining_ms + 7, ..t };
                    run.push_front(t);
                    list.push_front(t);
                }
                prop_assert_eq!(run.waiting(), list.len());
                prop_assert!(run.waiting_indices().eq(list.iter().map(|t| t.index)));
            }
        }
    }
}
