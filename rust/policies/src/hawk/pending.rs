//! What the policy's timers stand for, kept in a slab: a timer's slot is
//! reused once it fired, so each of the many probe and get-task timers
//! costs a vector write, not an ordered-map insert and remove; and the
//! timers themselves ([`WakeHeap`]).

use super::{Bits, Entry};
use sojourn_core::{NodeId, Resources, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What a timer stands for.
#[derive(Clone, Debug)]
pub enum Pending {
    /// A probe or a central task on its way to `node` (registration `epoch`).
    Arrive { node: NodeId, epoch: u64, entry: Entry },
    /// `node`'s get-task for `entry` comes back; `hold` is set aside till then;
    /// `index`: where the entry was in the queue (SBP puts it back there).
    Fetched { node: NodeId, epoch: u64, entry: Entry, hold: Resources, am: bool, index: usize },
    /// An SSS rejection reaches the job's scheduler with the rejecting
    /// node's bit vector (`authors_simulator=false`).
    Rejected { entry: Entry, bits: Option<(u64, Bits)> },
}

/// A typed wake-up: the exact time (µs), a sequence number, and the slot
/// of the [`Pending`] it stands for. Timers fire in (ms, µs, sequence)
/// order (sequence numbers are unique: the slot never decides).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Wake {
    pub due_us: u64,
    pub seq: u64,
    pub slot: u32,
}

/// The [`Pending`] of the timers set and not fired yet, by slot.
#[derive(Clone, Debug, Default)]
pub struct PendingSlab {
    slots: Vec<Option<Pending>>,
    /// Slots free for reuse.
    free: Vec<u32>,
    len: usize,
}

impl PendingSlab {
    /// Keeps `p`; returns its slot.
    pub fn insert(&mut self, p: Pending) -> u32 {
        self.len += 1;
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(p);
                slot
            }
            None => {
                self.slots.push(Some(p));
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Takes the pending of `slot` (its timer fired).
    pub fn remove(&mut self, slot: u32) -> Option<Pending> {
        let p = self.slots.get_mut(slot as usize)?.take()?;
        self.free.push(slot);
        self.len -= 1;
        Some(p)
    }

    pub fn len(&self) -> usize {
        self.len
    }
}

/// The policy's wake-ups, earliest first: a binary heap, since the policy
/// never cancels one (the core's `TimerTable` keeps two ordered sets to
/// allow it, which costs two tree inserts per probe).
#[derive(Clone, Debug, Default)]
pub struct WakeHeap {
    heap: BinaryHeap<Reverse<(Time, Wake)>>,
}

impl WakeHeap {
    /// Wakes the policy at `at` with `wake`; a time before `now` is `now`
    /// (as `TimerTable::set`).
    pub fn set(&mut self, now: Time, at: Time, wake: Wake) {
        self.heap.push(Reverse((at.max(now), wake)));
    }

    /// The earliest pending wake-up.
    pub fn next(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// The earliest wake-up due at or before `now`, removed.
    pub fn pop_due(&mut self, now: Time) -> Option<Wake> {
        if self.next()? > now {
            return None;
        }
        self.heap.pop().map(|Reverse((_, w))| w)
    }
}
