//! Kairos's quantum-end wake-ups: a heap of (time, container), one entry per
//! quantum started. Every quantum end of every running task passes through
//! here (millions in a day on thousands of nodes), so a heap push and pop
//! replace a timer table's two ordered sets. A forgotten container's entries
//! are dropped when they reach the top, so the next wake-up is always a
//! live one, as a cancelled timer would not be there at all.

use sojourn_core::{ContainerId, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Debug, Default)]
pub(crate) struct QuantumTimers {
    heap: BinaryHeap<Reverse<(Time, ContainerId)>>,
}

impl QuantumTimers {
    /// A wake-up for `container` at `at` (now if `at` has passed). The same
    /// one set twice fires twice; the quantum's own end tells the second
    /// apart.
    pub fn set(&mut self, now: Time, at: Time, container: ContainerId) {
        self.heap.push(Reverse((at.max(now), container)));
    }

    pub fn next(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// The next container whose wake-up is due by `now`, earliest first,
    /// then by container id.
    pub fn pop_due(&mut self, now: Time) -> Option<ContainerId> {
        match self.heap.peek() {
            Some(Reverse((t, _))) if *t <= now => self.heap.pop().map(|Reverse((_, c))| c),
            _ => None,
        }
    }

    /// Drops the entries at the top that are `gone`'s, the container just
    /// forgotten. Outside a wake-up the top is always a live container's
    /// (only wake-ups pop, and they end with [`Self::drop_forgotten`]), so
    /// after one container goes only its own entries can be dead there:
    /// comparing ids spares a look-up of the top's container, once per task.
    pub fn drop_entries_of(&mut self, gone: ContainerId) {
        while self.heap.peek().is_some_and(|Reverse((_, c))| *c == gone) {
            self.heap.pop();
        }
    }

    /// Drops the entries at the top whose container is no longer `live`.
    pub fn drop_forgotten(&mut self, live: impl Fn(ContainerId) -> bool) {
        while let Some(Reverse((_, c))) = self.heap.peek() {
            if live(*c) {
                break;
            }
            self.heap.pop();
        }
    }
}
