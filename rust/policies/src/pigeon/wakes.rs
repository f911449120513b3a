//! The policy's messages in flight (batches, task starts, idle notices) as
//! one min-heap: each task costs two of them, so this replaced a
//! `TimerTable` (two ordered sets) plus a map from sequence number to
//! message, four tree operations and one allocation-prone insert per
//! message, with one heap push and one pop.

use super::Pending;
use sojourn_core::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A message due at `due_us`; the engine is woken at `at` (the next whole
/// millisecond, never before the time it was sent). Ordered by (`at`,
/// `due_us`, `seq`): the order in which `TimerTable<Wake>` fired them.
struct Entry {
    at: Time,
    due_us: u64,
    seq: u64,
    pending: Pending,
}

impl Entry {
    fn key(&self) -> (Time, u64, u64) {
        (self.at, self.due_us, self.seq)
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    /// Reversed: `BinaryHeap` is a max-heap, the earliest must come first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

#[derive(Default)]
pub(super) struct Wakes {
    heap: BinaryHeap<Entry>,
    /// Messages sent so far: ties at the same µs fire in sending order.
    seq: u64,
}

impl Wakes {
    /// `pending` arrives at `due_us`; sent at `now`.
    pub(super) fn send(&mut self, now: Time, due_us: u64, pending: Pending) {
        self.seq += 1;
        let at = Time(due_us.div_ceil(1000)).max(now);
        self.heap.push(Entry { at, due_us, seq: self.seq, pending });
    }

    /// When the engine must next wake the policy.
    pub(super) fn next(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.at)
    }

    /// The earliest message due by `now` and its exact time (µs), removed.
    pub(super) fn pop_due(&mut self, now: Time) -> Option<(u64, Pending)> {
        if self.heap.peek()?.at > now {
            return None;
        }
        self.heap.pop().map(|e| (e.due_us, e.pending))
    }

    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }
}
