//! Kairos's quantum-end wake-ups: one entry (time, container) per quantum
//! started. Every quantum end of every running task passes through here
//! (millions in a day on thousands of nodes). Nearly every quantum is W
//! long and starts now, so entries of one length arrive in time order: each
//! length gets a *lane*, a FIFO queue already sorted, and only what would
//! break a lane's order (or a length past the few lanes) goes to a heap.
//! Wake-ups come out as from one heap: earliest first, then by container
//! id. A forgotten container's entries are dropped when they reach the
//! front, so the next wake-up is always a live one, as a cancelled timer
//! would not be there at all.

use sojourn_core::{ContainerId, Time};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Lanes kept (lengths W and M·W, and a few others; the rest is rare).
const LANES: usize = 4;

#[derive(Debug, Default)]
pub(crate) struct QuantumTimers {
    /// (quantum length, its entries in time order).
    lanes: Vec<(u64, VecDeque<(Time, ContainerId)>)>,
    /// Entries that fit no lane.
    spill: BinaryHeap<Reverse<(Time, ContainerId)>>,
    /// The earliest entries, taken out of the lanes and the heap, latest
    /// first (the next one last). Every entry left in the lanes and the heap
    /// is later than all of these.
    ready: Vec<(Time, ContainerId)>,
}

impl QuantumTimers {
    /// A wake-up for `container` at `at` (now if `at` has passed). The same
    /// one set twice fires twice; the quantum's own end tells the second
    /// apart.
    pub fn set(&mut self, now: Time, at: Time, container: ContainerId) {
        let at = at.max(now);
        let entry = (at, container);
        if self.ready.first().is_some_and(|latest| at <= latest.0) {
            // among the ready ones, in order
            let i = self.ready.partition_point(|e| *e > entry);
            self.ready.insert(i, entry);
            return;
        }
        let len = at.since(now);
        let lane = match self.lanes.iter().position(|(l, _)| *l == len) {
            Some(i) => Some(i),
            None if self.lanes.len() < LANES => {
                self.lanes.push((len, VecDeque::new()));
                Some(self.lanes.len() - 1)
            }
            None => None,
        };
        // Only an entry no earlier than the lane's last keeps it in order.
        match lane {
            Some(i) if self.lanes[i].1.back().is_none_or(|b| b.0 <= at) => self.lanes[i].1.push_back(entry),
            _ => self.spill.push(Reverse(entry)),
        }
    }

    /// The earliest time among the lanes' fronts and the heap's top.
    fn earliest(&self) -> Option<Time> {
        let lanes = self.lanes.iter().filter_map(|(_, q)| q.front().map(|e| e.0));
        lanes.chain(self.spill.peek().map(|Reverse(e)| e.0)).min()
    }

    /// If none is ready, makes every entry of the earliest time ready.
    fn fill_ready(&mut self) {
        if !self.ready.is_empty() {
            return;
        }
        let Some(t) = self.earliest() else { return };
        for (_, q) in &mut self.lanes {
            while q.front().is_some_and(|e| e.0 == t) {
                self.ready.extend(q.pop_front());
            }
        }
        while self.spill.peek().is_some_and(|Reverse(e)| e.0 == t) {
            self.ready.extend(self.spill.pop().map(|Reverse(e)| e));
        }
        self.ready.sort_unstable_by(|a, b| b.cmp(a));
    }

    pub fn next(&self) -> Option<Time> {
        match self.ready.last() {
            Some(e) => Some(e.0),
            None => self.earliest(),
        }
    }

    /// The next container whose wake-up is due by `now`, earliest first,
    /// then by container id.
    pub fn pop_due(&mut self, now: Time) -> Option<ContainerId> {
        self.fill_ready();
        match self.ready.last() {
            Some(e) if e.0 <= now => self.ready.pop().map(|e| e.1),
            _ => None,
        }
    }

    /// Drops the entries at the front whose container is no longer `live`.
    pub fn drop_forgotten(&mut self, live: impl Fn(ContainerId) -> bool) {
        loop {
            self.fill_ready();
            match self.ready.last() {
                Some(e) if !live(e.1) => {
                    self.ready.pop();
                }
                _ => return,
            }
        }
    }
}
