//! What the policy keeps per node, and the table it keeps it in: a vector
//! indexed by node id for the ids hosts hand out from a counter, so the
//! queues' hot paths (arrive, serve, fetched, forget) index instead of
//! walking an ordered map; ids past [`DENSE_IDS`] (a hostile recording, a
//! long-lived RM) go to an ordered map instead of growing the vector.

use super::blocks::{Blocks, Summaries};
use super::{Bits, Entry, Req};
use sojourn_core::{ContainerId, NodeId, Resources};
use std::collections::{BTreeMap, VecDeque};

/// What the policy keeps about a node.
#[derive(Clone, Debug, Default)]
pub struct NodeState {
    pub queue: EntryQueue,
    /// Long entries in `queue`.
    pub queued_long: u32,
    /// Get-tasks in flight, and what they hold of the node.
    pub fetching: u32,
    /// AM containers running here or being fetched.
    pub ams: u32,
    pub held: Resources,
    pub running_long: u32,
    pub running_short: u32,
    /// Estimates of the central tasks placed here and not yet started (µs);
    /// changed only through [`NodeTable`], which mirrors it for LWL.
    central_work_us: u64,
    /// Long tasks the central scheduler assigned here (in flight, queued
    /// or running): the node's SSS bit is set while this is above 0.
    pub assigned_long: u32,
    /// The bit vector (and its version, the "timestamp") that came with
    /// the last long task that reached the node (SSS, §2.3 step 2).
    pub sss: Option<(u64, Bits)>,
    /// The central tasks running here: container, estimate and start (µs),
    /// for the waiting time (H5) without a walk over the node's containers;
    /// changed only through [`NodeTable`], which mirrors it for LWL.
    central_runs: CentralRuns,
    /// In the short partition.
    pub short: bool,
    /// Which of the queue's short probes may be dead (their req has no
    /// task left), by ask slot ([`super::views`]).
    pub dead: DeadProbes,
    /// Which registration of the node this is: what was sent to an earlier
    /// one (before the node left and came back) is lost.
    pub epoch: u64,
}

impl NodeState {
    /// A node's state at its registration number `epoch`.
    pub fn new(epoch: u64) -> NodeState {
        NodeState { epoch, ..NodeState::default() }
    }
}

/// A set of ask slots as a 1,024-bit filter (a slot's bit is its number
/// mod 1,024): a clear bit means the slot is not in the set; a set bit, that
/// it may be. (At 64 bits the filter of a node with a long queue filled up
/// between two selections, and every probe's ask was read again.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotBits([u64; 16]);

impl SlotBits {
    pub const NONE: SlotBits = SlotBits([0; 16]);
    pub const ALL: SlotBits = SlotBits([u64::MAX; 16]);

    #[inline]
    fn at(slot: u32) -> (usize, u64) {
        (((slot / 64) % 16) as usize, 1 << (slot % 64))
    }

    pub fn insert(&mut self, slot: u32) {
        let (w, b) = Self::at(slot);
        self.0[w] |= b;
    }

    #[inline]
    pub fn contains(&self, slot: u32) -> bool {
        let (w, b) = Self::at(slot);
        self.0[w] & b != 0
    }

    /// The set folded to 256 bits (a slot's bit is its number mod 256),
    /// as [`super::blocks::ProbeSlots`] keeps slots.
    pub fn folded(&self) -> [u64; 4] {
        let w = &self.0;
        std::array::from_fn(|i| w[i] | w[i + 4] | w[i + 8] | w[i + 12])
    }

    pub fn union(&mut self, other: &SlotBits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
}

/// The ask slots of the short probes in a node's queue that may be dead
/// (their req has no task left, so SRPT's selection purges them, §5 E3): a
/// slot enters when one of its probes at the node may have died, so a probe
/// whose slot is not in it is alive and the selection need not read its
/// ask. `scanned` covers the part of the queue SRPT scans (before the first
/// long entry), `queue` all of it. Trusted only while the views track every
/// req's end (`AskViews::busy_skip`); a new node starts with every slot.
#[derive(Clone, Copy, Debug)]
pub struct DeadProbes {
    scanned: SlotBits,
    queue: SlotBits,
}

impl Default for DeadProbes {
    fn default() -> DeadProbes {
        DeadProbes { scanned: SlotBits::ALL, queue: SlotBits::ALL }
    }
}

impl DeadProbes {
    /// A probe of slot `slot` in the queue may have died.
    pub fn died(&mut self, slot: u32) {
        self.scanned.insert(slot);
        self.queue.insert(slot);
    }

    /// A long entry left the queue: the entries behind it are scanned now.
    pub fn exposed(&mut self) {
        let queue = self.queue;
        self.scanned.union(&queue);
    }

    /// A selection purged every dead probe it scanned, which was the whole
    /// queue when `whole`.
    pub fn purged(&mut self, whole: bool) {
        self.scanned = SlotBits::NONE;
        if whole {
            self.queue = SlotBits::NONE;
        }
    }

    /// No probe in the scanned part may be dead.
    pub fn none_scanned(&self) -> bool {
        self.scanned.is_empty()
    }

    /// The slots a selection must check: of the scanned part (SRPT over
    /// short entries) or of the whole queue (`whole`, over every entry).
    pub fn filter(&self, whole: bool) -> &SlotBits {
        if whole {
            &self.queue
        } else {
            &self.scanned
        }
    }
}

/// A central task running on a node: container, estimate and start (µs).
pub type CentralRun = (ContainerId, u64, u64);

/// A node's running central tasks, in start order. The first is kept
/// inline: LWL reads every node's runs for each placement, and a
/// one-slot node has at most one, so the read stays within the node's
/// state instead of following a pointer per node.
#[derive(Clone, Debug, Default)]
pub struct CentralRuns {
    first: Option<CentralRun>,
    rest: Vec<CentralRun>,
}

impl CentralRuns {
    pub fn push(&mut self, run: CentralRun) {
        if self.first.is_none() {
            self.first = Some(run);
        } else {
            self.rest.push(run);
        }
    }

    /// Removes container `c`'s run, keeping the others in order.
    pub fn remove(&mut self, c: ContainerId) {
        self.rest.retain(|r| r.0 != c);
        if self.first.is_some_and(|r| r.0 == c) {
            self.first = if self.rest.is_empty() { None } else { Some(self.rest.remove(0)) };
        }
    }

    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    pub fn iter(&self) -> impl Iterator<Item = &CentralRun> {
        self.first.iter().chain(self.rest.iter())
    }

    fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest.len()
    }
}

/// What LWL reads of a node (H5), apart from the node's state: a long
/// job's placement reads it for every node of the general partition, and
/// at data-center scale those reads, one or two cache lines of a
/// `NodeState` each, were a quarter of `lwl`'s time. Here they stream
/// 32 bytes a node.
#[derive(Clone, Copy, Debug)]
struct LwlCell {
    work_us: u64,
    /// The first central run's estimate and start, when `runs` is 1.
    est_us: u64,
    start_us: u64,
    /// Central runs on the node ([`ABSENT`]: no node; above 1: read the
    /// node's state).
    runs: u32,
}

/// [`LwlCell::runs`] of an id without a node.
const ABSENT: u32 = u32::MAX;

impl LwlCell {
    const NONE: LwlCell = LwlCell { work_us: 0, est_us: 0, start_us: 0, runs: ABSENT };

    fn of(ns: &NodeState) -> LwlCell {
        let runs = ns.central_runs.len();
        let (est_us, start_us) = ns.central_runs.first.map_or((0, 0), |(_, est, start)| (est, start));
        LwlCell { work_us: ns.central_work_us, est_us, start_us, runs: runs.min(ABSENT as usize - 1) as u32 }
    }
}

/// H5 step 1 from a node's state: the estimates of its queued central tasks,
/// plus the remaining estimates of the central tasks it runs, plus `two_d`
/// while it runs one (the authors' simulator).
pub(crate) fn waiting_us(ns: &NodeState, at_us: u64, two_d: u64) -> u64 {
    let mut w = ns.central_work_us;
    for (_, est_us, start_us) in ns.central_runs.iter() {
        w = w.saturating_add(est_us.saturating_sub(at_us.saturating_sub(*start_us)));
    }
    if !ns.central_runs.is_empty() {
        w = w.saturating_add(two_d);
    }
    w
}

/// Ids below this index the dense vector (an absent node's slot costs a
/// `NodeState`'s size, so at most ~10 MiB however large the ids).
const DENSE_IDS: u32 = 1 << 16;

/// The live nodes' states by id, iterated in id order (dense ids first,
/// then the sparse ones, which are all larger).
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeTable {
    dense: Vec<Option<NodeState>>,
    /// By dense id (as long as `dense`; sparse ids fall outside it): the
    /// node's LWL figures, kept equal to its state's.
    lwl: Vec<LwlCell>,
    sparse: BTreeMap<NodeId, NodeState>,
    len: usize,
}

impl NodeTable {
    pub fn get(&self, id: &NodeId) -> Option<&NodeState> {
        if id.0 < DENSE_IDS {
            self.dense.get(id.0 as usize)?.as_ref()
        } else {
            self.sparse.get(id)
        }
    }

    pub fn get_mut(&mut self, id: &NodeId) -> Option<&mut NodeState> {
        if id.0 < DENSE_IDS {
            self.dense.get_mut(id.0 as usize)?.as_mut()
        } else {
            self.sparse.get_mut(id)
        }
    }

    /// Puts `state` at `id`, returning what was there.
    pub fn insert(&mut self, id: NodeId, state: NodeState) -> Option<NodeState> {
        let old = if id.0 < DENSE_IDS {
            let i = id.0 as usize;
            if i >= self.dense.len() {
                self.dense.resize_with(i + 1, || None);
                self.lwl.resize(i + 1, LwlCell::NONE);
            }
            self.lwl[i] = LwlCell::of(&state);
            self.dense[i].replace(state)
        } else {
            self.sparse.insert(id, state)
        };
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    pub fn remove(&mut self, id: &NodeId) -> Option<NodeState> {
        let old = if id.0 < DENSE_IDS {
            if let Some(cell) = self.lwl.get_mut(id.0 as usize) {
                *cell = LwlCell::NONE;
            }
            self.dense.get_mut(id.0 as usize).and_then(Option::take)
        } else {
            self.sparse.remove(id)
        };
        if old.is_some() {
            self.len -= 1;
        }
        old
    }

    /// The state at `id`, a default one if the node is not there (tests
    /// set queues up by hand).
    #[cfg(test)]
    pub fn get_or_default(&mut self, id: NodeId) -> &mut NodeState {
        if self.get(&id).is_none() {
            self.insert(id, NodeState::default());
        }
        self.get_mut(&id).expect("just inserted")
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// H5's waiting time of node `id` at `at_us` ([`waiting_us`]), from the
    /// mirror when it holds it; `u64::MAX` without a node.
    #[inline]
    pub fn waiting_us(&self, id: NodeId, at_us: u64, two_d: u64) -> u64 {
        let cell = self.lwl.get(id.0 as usize);
        let w = match cell {
            Some(c) if c.runs == 0 => c.work_us,
            Some(c) if c.runs == 1 => c
                .work_us
                .saturating_add(c.est_us.saturating_sub(at_us.saturating_sub(c.start_us)))
                .saturating_add(two_d),
            Some(c) if c.runs == ABSENT => u64::MAX,
            _ => return self.get(&id).map_or(u64::MAX, |ns| waiting_us(ns, at_us, two_d)),
        };
        debug_assert_eq!(
            w,
            self.get(&id).map_or(u64::MAX, |ns| waiting_us(ns, at_us, two_d)),
            "stale LWL mirror of {id}"
        );
        w
    }

    /// Changes node `id`'s central state through `f`, then its mirror.
    fn central(&mut self, id: NodeId, f: impl FnOnce(&mut NodeState)) {
        let Some(ns) = self.get_mut(&id) else { return };
        f(ns);
        let cell = LwlCell::of(ns);
        if let Some(c) = self.lwl.get_mut(id.0 as usize) {
            *c = cell;
        }
    }

    /// A central task of `est_us` was placed at node `id`.
    pub fn add_central_work(&mut self, id: NodeId, est_us: u64) {
        self.central(id, |ns| ns.central_work_us = ns.central_work_us.saturating_add(est_us));
    }

    /// A central task of `est_us` placed at node `id` left its queue.
    pub fn sub_central_work(&mut self, id: NodeId, est_us: u64) {
        self.central(id, |ns| ns.central_work_us = ns.central_work_us.saturating_sub(est_us));
    }

    /// A central task started at node `id`.
    pub fn push_central_run(&mut self, id: NodeId, run: CentralRun) {
        self.central(id, |ns| ns.central_runs.push(run));
    }

    /// Container `c`, a central task, ended at node `id`.
    pub fn remove_central_run(&mut self, id: NodeId, c: ContainerId) {
        self.central(id, |ns| ns.central_runs.remove(c));
    }

    /// Every node and its state, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, &NodeState)> {
        let dense = self.dense.iter().enumerate().filter_map(|(i, s)| Some((NodeId(i as u32), s.as_ref()?)));
        dense.chain(self.sparse.iter().map(|(id, s)| (*id, s)))
    }

    /// Every node and its state, mutably, in id order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (NodeId, &mut NodeState)> {
        let dense = self.dense.iter_mut().enumerate().filter_map(|(i, s)| Some((NodeId(i as u32), s.as_mut()?)));
        dense.chain(self.sparse.iter_mut().map(|(id, s)| (*id, s)))
    }

    /// Every node id, in order.
    pub fn keys(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.iter().map(|(id, _)| id)
    }

    /// Every state, in id order.
    pub fn values(&self) -> impl Iterator<Item = &NodeState> {
        self.iter().map(|(_, s)| s)
    }

    /// The largest id present.
    pub fn last_id(&self) -> Option<NodeId> {
        if let Some(id) = self.sparse.keys().next_back() {
            return Some(*id);
        }
        let i = self.dense.iter().rposition(Option::is_some)?;
        Some(NodeId(i as u32))
    }
}

impl std::ops::Index<&NodeId> for NodeTable {
    type Output = NodeState;
    fn index(&self, id: &NodeId) -> &NodeState {
        self.get(id).expect("no such node")
    }
}

/// What selection's scan ([`super::srpt`]) reads of a queued entry, kept
/// apart from the rest: at data-center scale a node's queue holds thousands
/// of entries, a scan streams them from memory, and half an entry's bytes
/// are what it never reads. Packed in 16 bytes, not 24: eagle's queues at
/// 500k jobs peak 10% lower (2.25 → 2.02 GB), though not measurably faster:
/// - `lo`: the estimate (µs, [`EST_MAX_US`] at most) above the view slot's
///   low 16 bits;
/// - `hi`: the bypass counter (µs, [`BYPASS_MAX_US`] at most, saturating)
///   above the slot's high 16 bits, `long` and `probe`.
#[derive(Clone, Copy, Debug)]
pub struct Hot {
    lo: u64,
    hi: u64,
}

/// The largest estimate an entry keeps (µs): 2^48 - 1, nearly 9 years;
/// longer estimates are cut to it when the entry is made ([`Entry::new`]).
pub const EST_MAX_US: u64 = (1 << 48) - 1;
/// The largest bypass counter (µs): 2^46 - 1, about 814 days. SRPT's bound
/// keeps a counter within the starvation factor times its estimate, so only
/// a factor in the thousands on estimates of months reaches it.
pub const BYPASS_MAX_US: u64 = (1 << 46) - 1;

impl Hot {
    fn new(est_us: u64, bypass_us: u64, view: u32, long: bool, probe: bool) -> Hot {
        let est_us = est_us.min(EST_MAX_US);
        let bypass_us = bypass_us.min(BYPASS_MAX_US);
        Hot {
            lo: est_us << 16 | (view & 0xffff) as u64,
            hi: bypass_us << 18 | ((view >> 16) as u64) << 2 | (long as u64) << 1 | probe as u64,
        }
    }

    #[inline]
    pub fn est_us(&self) -> u64 {
        self.lo >> 16
    }

    #[inline]
    pub fn bypass_us(&self) -> u64 {
        self.hi >> 18
    }

    /// The req's slot in the ask views.
    #[inline]
    pub fn view(&self) -> u32 {
        ((self.hi >> 2) as u32 & 0xffff) << 16 | (self.lo & 0xffff) as u32
    }

    #[inline]
    pub fn long(&self) -> bool {
        self.hi & 2 != 0
    }

    #[inline]
    pub fn probe(&self) -> bool {
        self.hi & 1 != 0
    }

    /// SRPT's slack (§6.8): how much more may bypass the entry with the
    /// starvation factor `factor`.
    #[inline]
    pub fn slack(&self, factor: f64) -> f64 {
        factor * self.est_us() as f64 - self.bypass_us() as f64
    }

    pub(super) fn add_bypass(&mut self, us: u64) {
        let bypass_us = self.bypass_us().saturating_add(us).min(BYPASS_MAX_US);
        self.hi = bypass_us << 18 | (self.hi & ((1 << 18) - 1));
    }
}

/// The rest of a queued entry.
#[derive(Clone, Copy, Debug)]
struct Cold {
    req: Req,
    arrived_us: u64,
    served: u32,
    round: u8,
    behind_long: bool,
}

fn split(e: Entry) -> (Hot, Cold) {
    (
        Hot::new(e.est_us, e.bypass_us, e.view, e.long, e.probe),
        Cold { req: e.req, arrived_us: e.arrived_us, served: e.served, round: e.round, behind_long: e.behind_long },
    )
}

fn join(h: Hot, c: Cold) -> Entry {
    Entry {
        req: c.req,
        long: h.long(),
        probe: h.probe(),
        est_us: h.est_us(),
        arrived_us: c.arrived_us,
        behind_long: c.behind_long,
        bypass_us: h.bypass_us(),
        served: c.served,
        round: c.round,
        view: h.view(),
    }
}

/// A node's queue of entries: two deques of the same length, the scanned
/// part ([`Hot`]) and the rest, in queue order; and over the scanned part,
/// a summary per block of consecutive entries ([`BlockSummary`]), which
/// lets SRPT's scan pass a block none of whose entries it could choose.
#[derive(Clone, Debug, Default)]
pub struct EntryQueue {
    hot: VecDeque<Hot>,
    cold: VecDeque<Cold>,
    /// The scanned part cut into blocks, with their summaries.
    blocks: Blocks,
}

impl EntryQueue {
    pub fn len(&self) -> usize {
        self.hot.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hot.is_empty()
    }

    /// The scanned part of every entry, in order.
    pub fn hot(&self) -> &VecDeque<Hot> {
        &self.hot
    }

    /// The scanned part with its block summaries.
    pub fn summaries(&mut self) -> (&VecDeque<Hot>, Summaries<'_>) {
        let EntryQueue { hot, blocks, .. } = self;
        (&*hot, Summaries::new(hot, blocks))
    }

    /// The req of the entry at `at`.
    pub fn req(&self, at: usize) -> Option<Req> {
        self.cold.get(at).map(|c| c.req)
    }

    pub fn get(&self, at: usize) -> Option<Entry> {
        Some(join(*self.hot.get(at)?, *self.cold.get(at)?))
    }

    pub fn push_back(&mut self, e: Entry) {
        let (h, c) = split(e);
        self.hot.push_back(h);
        self.cold.push_back(c);
        self.blocks.pushed(&h);
    }

    pub fn insert(&mut self, at: usize, e: Entry) {
        if at >= self.len() {
            return self.push_back(e);
        }
        let (h, c) = split(e);
        let Some((b, _)) = self.blocks.locate(at) else { return };
        self.hot.insert(at, h);
        self.cold.insert(at, c);
        self.blocks.inserted(b, &h);
    }

    pub fn remove(&mut self, at: usize) -> Option<Entry> {
        let (b, _) = self.blocks.locate(at)?;
        let h = self.hot.remove(at)?;
        let c = self.cold.remove(at)?;
        self.blocks.removed(b, &h);
        Some(join(h, c))
    }

    /// Removes the entries in `range`, returning them in order.
    pub fn drain(&mut self, range: std::ops::Range<usize>) -> Vec<Entry> {
        let cold: Vec<Cold> = self.cold.drain(range.clone()).collect();
        let gone: Vec<Entry> = self.hot.drain(range.clone()).zip(cold).map(|(h, c)| join(h, c)).collect();
        self.blocks.drained(range);
        gone
    }

    /// Adds `us` to the bypass counter of the first `n` entries.
    pub fn add_bypass(&mut self, n: usize, us: u64) {
        self.blocks.bypass(&mut self.hot, n, us);
    }

    /// Every entry, in order (copies).
    pub fn iter(&self) -> impl Iterator<Item = Entry> + '_ {
        self.hot.iter().zip(self.cold.iter()).map(|(h, c)| join(*h, *c))
    }

    /// Whether the blocks cover the queue, none empty, and every summary
    /// kept (with `factor`) is one a scan may use.
    #[cfg(test)]
    pub fn blocks_hold(&self, factor: f64) -> bool {
        self.blocks.hold(&self.hot, factor)
    }
}

impl Extend<Entry> for EntryQueue {
    fn extend<I: IntoIterator<Item = Entry>>(&mut self, iter: I) {
        for e in iter {
            self.push_back(e);
        }
    }
}

impl FromIterator<Entry> for EntryQueue {
    fn from_iter<I: IntoIterator<Item = Entry>>(iter: I) -> EntryQueue {
        let mut q = EntryQueue::default();
        q.extend(iter);
        q
    }
}

#[cfg(test)]
mod tests {
    use super::{DeadProbes, EntryQueue, Hot, SlotBits, BYPASS_MAX_US, EST_MAX_US};
    use crate::hawk::Entry;
    use proptest::prelude::*;
    use sojourn_core::{AppId, Priority};

    /// A change to a queue: push, insert at, remove at, drain a range,
    /// bypass the first n, or summarize every block (as a scan would).
    #[derive(Clone, Debug)]
    enum QueueOp {
        Push(u64, bool, bool, u32),
        Insert(usize, u64, bool, bool, u32),
        Remove(usize),
        Drain(usize, usize),
        Bypass(usize, u64),
        Summarize,
    }

    fn queue_op() -> impl Strategy<Value = QueueOp> {
        let entry = (0u64..50, any::<bool>(), any::<bool>(), 0u32..2048);
        prop_oneof![
            4 => entry.clone().prop_map(|(est, long, probe, view)| QueueOp::Push(est, long, probe, view)),
            2 => (0usize..40, entry).prop_map(|(at, (est, long, probe, view))| QueueOp::Insert(at, est, long, probe, view)),
            3 => (0usize..40).prop_map(QueueOp::Remove),
            1 => (0usize..40, 0usize..6).prop_map(|(at, n)| QueueOp::Drain(at, n)),
            2 => (0usize..40, 0u64..30).prop_map(|(n, us)| QueueOp::Bypass(n, us)),
            3 => Just(QueueOp::Summarize),
        ]
    }

    proptest! {
        /// Through pushes, inserts, removals, drains and bypasses, the
        /// blocks cover the queue and every summary kept is one a scan may
        /// use: the least slack exact, estimates no higher, slots no fewer.
        #[test]
        fn a_queues_block_summaries_hold_through_its_changes(ops in prop::collection::vec(queue_op(), 1..120)) {
            let factor = 1.5;
            let mut q = EntryQueue::default();
            let mut model: Vec<(u64, bool, bool)> = Vec::new();
            let entry = |est: u64, long: bool, probe: bool, view: u32| {
                Entry::new((AppId(view), Priority(0)), long, probe, est).viewed(view)
            };
            for op in ops {
                match op {
                    QueueOp::Push(est, long, probe, view) => {
                        q.push_back(entry(est, long, probe, view));
                        model.push((est, long, probe));
                    }
                    QueueOp::Insert(at, est, long, probe, view) => {
                        q.insert(at, entry(est, long, probe, view));
                        model.insert(at.min(model.len()), (est, long, probe));
                    }
                    QueueOp::Remove(at) => {
                        let gone = q.remove(at).map(|e| (e.est_us, e.long, e.probe));
                        prop_assert_eq!(gone, (at < model.len()).then(|| model.remove(at)));
                    }
                    QueueOp::Drain(at, n) => {
                        let (at, end) = (at.min(model.len()), (at + n).min(model.len()));
                        let gone: Vec<_> = q.drain(at..end).into_iter().map(|e| (e.est_us, e.long, e.probe)).collect();
                        prop_assert_eq!(gone, model.drain(at..end).collect::<Vec<_>>());
                    }
                    QueueOp::Bypass(n, us) => q.add_bypass(n, us),
                    QueueOp::Summarize => {
                        let (_, mut sums) = q.summaries();
                        let mut b = 0;
                        let mut start = 0;
                        while let Some(len) = sums.len(b) {
                            prop_assert!(sums.summary(b, start, factor).is_some());
                            (b, start) = (b + 1, start + len);
                        }
                    }
                }
                prop_assert_eq!(q.len(), model.len());
                prop_assert!(q.blocks_hold(factor), "{:?}", q);
            }
            prop_assert_eq!(q.iter().map(|e| (e.est_us, e.long, e.probe)).collect::<Vec<_>>(), model);
        }
    }

    /// A slot that died is in both parts; a selection clears the scanned
    /// part (and the queue's when it scanned all of it); a long entry
    /// leaving brings back only the queue's slots; slots 1,024 apart share
    /// a bit, others do not.
    #[test]
    fn a_packed_entry_reads_back_what_it_was_given() {
        for (est, bypass, view, long, probe) in [
            (0, 0, 0, false, false),
            (1_234_567, 89, 0x1234_5678, true, false),
            (EST_MAX_US, BYPASS_MAX_US, u32::MAX, true, true),
            (u64::MAX, u64::MAX, 0xffff, false, true),
        ] {
            let h = Hot::new(est, bypass, view, long, probe);
            assert_eq!(
                (h.est_us(), h.bypass_us(), h.view(), h.long(), h.probe()),
                (est.min(EST_MAX_US), bypass.min(BYPASS_MAX_US), view, long, probe)
            );
        }
        let mut h = Hot::new(7, BYPASS_MAX_US - 1, 0xabcd_ef01, true, false);
        h.add_bypass(5);
        assert_eq!(
            (h.bypass_us(), h.est_us(), h.view(), h.long(), h.probe()),
            (BYPASS_MAX_US, 7, 0xabcd_ef01, true, false)
        );
        assert_eq!(std::mem::size_of::<Hot>(), 16);
    }

    #[test]
    fn dead_probes_follow_deaths_selections_and_exposure() {
        let mut d = DeadProbes::default();
        assert!(!d.none_scanned(), "a new node may hold anything");
        d.purged(true);
        assert!(d.none_scanned() && d.filter(true).is_empty());
        d.died(7);
        assert!(d.filter(false).contains(7) && d.filter(true).contains(7));
        assert!(!d.filter(false).contains(8) && d.filter(false).contains(7 + 1024));
        d.purged(false);
        assert!(d.none_scanned() && d.filter(true).contains(7), "a dead probe may remain behind a long entry");
        d.exposed();
        assert!(d.filter(false).contains(7) && !d.filter(false).contains(9));
        d.purged(true);
        d.exposed();
        assert!(d.none_scanned() && *d.filter(true) == SlotBits::NONE);
    }
}
