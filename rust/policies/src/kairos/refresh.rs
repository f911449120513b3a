//! What keeps Kairos's central scheduler from re-reading every node every Δ
//! (`stats_interval_ms`) and looking at every open node for every ask, while
//! it places exactly as if it did (issue 14: a data-center-sized cluster).
//!
//! - A refresh re-reads only the nodes *touched* since they were filed (a
//!   container placed, ended, suspended, resumed or rolled back there, a
//!   protection given, Kairos's tasks there changed): an untouched node
//!   would be filed under the same key, unless its tie-break moves with time
//!   (a task there runs). Those *moving* nodes keep a snapshot of what the
//!   key was read from, so their key as of the last refresh is worked out
//!   from it when it is needed ([`Moving::key_at`]), not at each refresh.
//! - A node can take an ask only if the ask fits in its room (free now plus
//!   what suspending its unprotected running tasks would free), so the open
//!   nodes are also indexed by that room: an ask looks only at nodes it fits
//!   in, the way the dispatch order would have met them (the first in that
//!   order is the one with the least key). The room of a node is read again
//!   after it is touched and when a protection there ends.

use super::dispatch::NodeKey;
use crate::common::IdMap;
use sojourn_core::{NodeId, Resources, Time};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

/// A moving node's key as read: its task count and each task's (attained
/// service before the current spell, running since), in task id order.
#[derive(Clone, Debug)]
pub(crate) struct Moving {
    pub count: u32,
    pub spells: Vec<(u64, Option<Time>)>,
    /// The refresh its filed key belongs to.
    pub filed_epoch: u64,
}

/// A room as indexed: (vcores, memory, gpus).
type Room = (u32, u64, u32);

fn room_of(r: &Resources) -> Room {
    (r.vcores, r.memory_mb, r.gpus)
}

#[derive(Debug, Default)]
pub(crate) struct Refresh {
    /// A change Kairos could not pin to a node: read every node again.
    pub everything: bool,
    /// Nodes changed since they were last filed.
    touched: BTreeSet<NodeId>,
    /// Filed nodes whose key moves with time.
    pub moving: IdMap<NodeId, Moving>,
    /// Refreshes so far, and the time of the last one.
    pub epoch: u64,
    pub epoch_at: Time,
    /// Every moving node's key in the dispatch order is the one of the last
    /// refresh.
    pub materialized: bool,
    /// The task counts whose moving nodes have their key of the last
    /// refresh (a walk of the dispatch order files them level by level).
    pub levels_done: BTreeSet<u32>,
    /// Open nodes by room, and each one's room there.
    by_room: BTreeSet<(Room, NodeId)>,
    room_of: IdMap<NodeId, Room>,
    /// Open nodes whose room must be read again, now or when a protection
    /// there ends.
    room_stale: Vec<NodeId>,
    room_until: BinaryHeap<Reverse<(Time, NodeId)>>,
}

impl Refresh {
    pub fn touch(&mut self, node: NodeId) {
        self.touched.insert(node);
        self.room_stale.push(node);
    }

    /// The nodes to read again at this refresh: the touched ones. They count
    /// as unchanged from here.
    pub fn take_touched(&mut self) -> Vec<NodeId> {
        std::mem::take(&mut self.touched).into_iter().collect()
    }

    /// A refresh happened at `now`: moving nodes' keys are now the ones of
    /// this time.
    pub fn next_epoch(&mut self, now: Time) {
        self.epoch += 1;
        self.epoch_at = now;
        // Every moving node was filed before this refresh.
        self.materialized = self.moving.is_empty();
        self.levels_done.clear();
    }

    /// A full re-read starts: nothing is pending any more.
    pub fn clear(&mut self) {
        let (epoch, epoch_at) = (self.epoch, self.epoch_at);
        *self = Refresh { epoch, epoch_at, ..Refresh::default() };
    }

    /// `node` left the dispatch order, or is filed again (with `moving` if
    /// its key moves with time) and its room must be read.
    pub fn filed(&mut self, node: NodeId, open: bool, moving: Option<Moving>) {
        match moving {
            Some(m) => {
                self.moving.insert(node, m);
            }
            None => {
                self.moving.remove(&node);
            }
        }
        if let Some(r) = self.room_of.remove(&node) {
            self.by_room.remove(&(r, node));
        }
        if open {
            self.room_stale.push(node);
        }
    }

    /// Open nodes whose room needs reading (touched, or a protection ended
    /// by `now`); the caller reads each and calls [`Self::set_room`].
    pub fn rooms_due(&mut self, now: Time) -> Vec<NodeId> {
        let mut due = std::mem::take(&mut self.room_stale);
        while let Some(Reverse((t, n))) = self.room_until.peek().copied() {
            if t > now {
                break;
            }
            self.room_until.pop();
            due.push(n);
        }
        due.sort_unstable();
        due.dedup();
        due
    }

    /// Indexes an open node's room, which holds until `until`.
    pub fn set_room(&mut self, node: NodeId, room: Option<(Resources, Time)>) {
        if let Some(r) = self.room_of.remove(&node) {
            self.by_room.remove(&(r, node));
        }
        if let Some((room, until)) = room {
            let r = room_of(&room);
            self.by_room.insert((r, node));
            self.room_of.insert(node, r);
            if until != Time(u64::MAX) {
                self.room_until.push(Reverse((until, node)));
            }
        }
    }

    /// Up to `limit` open nodes `need` fits in, by their indexed room;
    /// `None` if there are more.
    pub fn fitting(&self, need: &Resources, limit: usize) -> Option<Vec<NodeId>> {
        let mut out = Vec::new();
        let from = ((need.vcores, 0, 0), NodeId(0));
        for &((v, m, g), n) in self.by_room.range(from..) {
            if need.fits_in(&Resources { memory_mb: m, vcores: v, gpus: g }) {
                if out.len() == limit {
                    return None;
                }
                out.push(n);
            }
        }
        Some(out)
    }
}

impl Moving {
    /// The key this node had at the refresh at `at`.
    pub fn key_at(&self, node: NodeId, at: Time, sum: bool) -> NodeKey {
        let services = self.spells.iter().map(move |&(before, since)| before + since.map_or(0, |s| at.since(s)));
        // non-negative floats order like their bits
        let tie = if sum { services.sum() } else { super::node::variance_of(services).to_bits() };
        (self.count, tie, node)
    }
}
