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
    /// Probes or central tasks on their way, each to its `node`
    /// (registration `epoch`), in the order they were sent: the entries
    /// one call sends with the same arrival time share one timer (they
    /// would have fired one after the other anyway).
    Arrive(Vec<Arrival>),
    /// `node`'s get-task for `entry` comes back; `hold` is set aside till then;
    /// `index`: where the entry was in the queue (SBP puts it back there).
    Fetched { node: NodeId, epoch: u64, entry: Entry, hold: Resources, am: bool, index: usize },
    /// An SSS rejection reaches the job's scheduler with the rejecting
    /// node's bit vector (`authors_simulator=false`).
    Rejected { entry: Entry, bits: Option<(u64, Bits)> },
}

impl Pending {
    /// The entries it carries.
    fn entries(&self) -> usize {
        match self {
            Pending::Arrive(batch) => batch.len(),
            _ => 1,
        }
    }
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

/// An entry on its way to `node` (registration `epoch`).
pub(crate) type Arrival = (NodeId, u64, Entry);

/// The [`Pending`] of the timers set and not fired yet, by slot.
#[derive(Clone, Debug, Default)]
pub(crate) struct PendingSlab {
    slots: Vec<Option<Pending>>,
    /// Slots free for reuse.
    free: Vec<u32>,
    /// Entries in flight.
    len: usize,
    /// The last [`Pending::Arrive`] set, while it has not fired: its
    /// sequence number, slot and due time (µs).
    open: Option<(u64, u32, u64)>,
}

impl PendingSlab {
    /// Adds `arrival` to the last arrivals' timer if that is the last timer
    /// set (`last_seq`), due at `due_us` and not fired: it then fires in
    /// the same place as a timer of its own would. Else gives it back.
    pub fn join(&mut self, last_seq: u64, due_us: u64, arrival: Arrival) -> Option<Arrival> {
        let Some((seq, slot, due)) = self.open else { return Some(arrival) };
        if seq != last_seq || due != due_us {
            return Some(arrival);
        }
        match self.slots.get_mut(slot as usize) {
            Some(Some(Pending::Arrive(batch))) => {
                batch.push(arrival);
                self.len += 1;
                None
            }
            _ => Some(arrival),
        }
    }

    /// Keeps `p`, the pending of timer `seq` due at `due_us`; returns its
    /// slot.
    pub fn insert(&mut self, p: Pending, seq: u64, due_us: u64) -> u32 {
        let arrivals = matches!(p, Pending::Arrive(_));
        let slot = self.put(p);
        if arrivals {
            self.open = Some((seq, slot, due_us));
        }
        slot
    }

    fn put(&mut self, p: Pending) -> u32 {
        self.len += p.entries();
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
        if self.open.is_some_and(|(_, open, _)| open == slot) {
            self.open = None;
        }
        self.free.push(slot);
        self.len -= p.entries();
        Some(p)
    }

    /// Entries in flight (a batch of arrivals counts each).
    pub fn len(&self) -> usize {
        self.len
    }
}

/// The policy's wake-ups, earliest first: a binary heap, since the policy
/// never cancels one (the core's `TimerTable` keeps two ordered sets to
/// allow it, which costs two tree inserts per probe).
#[derive(Clone, Debug, Default)]
pub(crate) struct WakeHeap {
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
