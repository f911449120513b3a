//! The policy's messages in flight (batches, task starts, idle notices):
//! each task costs two or three of them, so this replaced a `TimerTable`
//! (two ordered sets) plus a map from sequence number to message, four
//! tree operations per message. Every message takes the same delay d and
//! is sent at a time that never goes back, so they almost always come due
//! in sending order: a FIFO queue holds them, and a min-heap the few that
//! would come due before the queue's last (merged by due time on the way
//! out). Messages to and from workers
//! carry the worker's index, so that most need no lookup by node.

use super::{Pigeon, Req, Task, WorkerKey};
use sojourn_core::{AppId, Ctx, Time};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

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
    /// In due order.
    fifo: VecDeque<Entry>,
    /// Those due before `fifo`'s last when sent.
    heap: BinaryHeap<Entry>,
    /// Messages sent so far: ties at the same µs fire in sending order.
    seq: u64,
}

impl Wakes {
    /// `pending` arrives at `due_us`; sent at `now`.
    pub(super) fn send(&mut self, now: Time, due_us: u64, pending: Pending) {
        self.seq += 1;
        let at = Time(due_us.div_ceil(1000)).max(now);
        let e = Entry { at, due_us, seq: self.seq, pending };
        if self.fifo.back().is_none_or(|last| last.key() < e.key()) {
            self.fifo.push_back(e);
        } else {
            self.heap.push(e);
        }
    }

    /// Whether the earliest message is the heap's (else the queue's).
    fn heap_first(&self) -> bool {
        match (self.fifo.front(), self.heap.peek()) {
            (Some(f), Some(h)) => h.key() < f.key(),
            (None, h) => h.is_some(),
            (Some(_), None) => false,
        }
    }

    /// When the engine must next wake the policy.
    pub(super) fn next(&self) -> Option<Time> {
        if self.heap_first() {
            self.heap.peek().map(|e| e.at)
        } else {
            self.fifo.front().map(|e| e.at)
        }
    }

    /// The earliest message due by `now` and its exact time (µs), removed.
    pub(super) fn pop_due(&mut self, now: Time) -> Option<(u64, Pending)> {
        if self.next()? > now {
            return None;
        }
        let e = if self.heap_first() { self.heap.pop() } else { self.fifo.pop_front() };
        e.map(|e| (e.due_us, e.pending))
    }

    pub(super) fn len(&self) -> usize {
        self.fifo.len() + self.heap.len()
    }
}

/// Where a message to or from a worker goes: its key and node epoch, and
/// its index in `workers` under layout `layout_gen` (valid while no layout
/// was made since: no node came, went or changed, so neither its epoch nor
/// its index did; saves two lookups by node per message).
#[derive(Clone, Copy, Debug)]
pub(super) struct Addr {
    pub(super) key: WorkerKey,
    epoch: u64,
    w: usize,
    layout_gen: u64,
}

/// A container the policy started: its worker, app, and whether it is an
/// AM.
#[derive(Clone, Copy, Debug)]
pub(super) struct Held {
    pub(super) on: Addr,
    pub(super) app: AppId,
    pub(super) am: bool,
}

/// What a timer stands for.
#[derive(Clone, Debug)]
pub(super) enum Pending {
    /// `n` tasks of `req` reach master `group` (D5).
    Batch { group: usize, req: Req, long: bool, n: u32 },
    /// `task` reaches its worker (M21, K1).
    Start { to: Addr, task: Task },
    /// The worker's idle notice reaches its master (K4, M10).
    Idle { to: Addr },
}

impl Pigeon {
    /// Worker `w`'s address for a message sent now.
    pub(super) fn addr(&self, w: usize) -> Addr {
        let key = self.workers[w].key;
        // a stale layout may predate a node's return (a new epoch)
        let epoch = if self.layout_stale { self.epoch_of(key.node) } else { self.workers[w].epoch };
        Addr { key, epoch, w, layout_gen: self.layout_gen }
    }

    /// The index of the worker a message was sent to or from, if its node
    /// is still the one it was sent under; lays out first.
    pub(super) fn reach(&mut self, ctx: &mut Ctx<'_>, to: Addr, at_us: u64) -> Option<usize> {
        self.layout(ctx, at_us);
        if to.layout_gen == self.layout_gen {
            return Some(to.w);
        }
        if self.epoch_of(to.key.node) != to.epoch {
            return None;
        }
        self.index(to.key)
    }

    /// The worker's index now (`index` of its key), without a lookup while
    /// the layout it was taken under stands.
    pub(super) fn index_of(&self, on: Addr) -> Option<usize> {
        if on.layout_gen == self.layout_gen {
            Some(on.w)
        } else {
            self.index(on.key)
        }
    }

    pub(super) fn after(&mut self, ctx: &Ctx<'_>, due_us: u64, p: Pending) {
        self.wakes.send(ctx.now, due_us, p);
    }
}

#[cfg(test)]
mod tests {
    use super::{Pending, Wakes};
    use sojourn_core::{AppId, Priority, Time};

    fn batch(group: usize) -> Pending {
        Pending::Batch { group, req: (AppId(1), Priority::MAP), long: false, n: 1 }
    }

    fn group(p: Option<(u64, Pending)>) -> Option<(u64, usize)> {
        match p {
            Some((due, Pending::Batch { group, .. })) => Some((due, group)),
            _ => None,
        }
    }

    /// Messages come due by their exact time whatever order they were sent
    /// in, ties in sending order, none before the millisecond it is due
    /// in (a µs time rounds up).
    #[test]
    fn messages_come_due_in_time_order_then_sending_order() {
        let mut q = Wakes::default();
        let now = Time(1);
        q.send(now, 5_000, batch(0));
        q.send(now, 2_500, batch(1)); // before the last: out of order
        q.send(now, 5_000, batch(2));
        q.send(now, 2_001, batch(3));
        q.send(now, 7_000, batch(4));
        assert_eq!(q.next(), Some(Time(3)));
        assert_eq!(group(q.pop_due(Time(2))), None);
        assert_eq!(group(q.pop_due(Time(3))), Some((2_001, 3)));
        assert_eq!(group(q.pop_due(Time(3))), Some((2_500, 1)));
        assert_eq!(group(q.pop_due(Time(3))), None);
        q.send(Time(3), 4_000, batch(5));
        assert_eq!(group(q.pop_due(Time(5))), Some((4_000, 5)));
        assert_eq!(group(q.pop_due(Time(5))), Some((5_000, 0)));
        assert_eq!(group(q.pop_due(Time(5))), Some((5_000, 2)));
        assert_eq!(q.len(), 1);
        assert_eq!(q.next(), Some(Time(7)));
    }
}
