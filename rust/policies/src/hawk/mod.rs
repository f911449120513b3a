//! `hawk`, `sparrow`, `lwl`, `split`, `eagle` and `dlwl_srpt`: distributed
//! and hybrid scheduling with probes, late binding, a short-only partition,
//! randomized task stealing and a central least-work-left scheduler
//! (Delgado's thesis, chapter 2; delgado.md §0, §1, formulas §5 H and B),
//! and Eagle's additions (chapter 3; delgado.md §2, formulas §5 E and D).
//!
//! One module, six registered policies that differ only in their
//! parameters' defaults (delgado.md §1.8, §2.6, §2.7):
//! - `hawk`: short jobs by Sparrow-style batch probing over the whole cluster
//!   (H3), long jobs by the central LWL scheduler over the general partition
//!   (H5), a short partition (2% of the nodes for Yahoo, 17% for Google,
//!   H2), randomized stealing (H6, H7).
//! - `sparrow`: every job probes the whole cluster; no partition, no
//!   stealing, no central scheduler.
//! - `lwl`: the fully centralized baseline (§2.4.5): every job by LWL over
//!   every task's estimate; no partition, no stealing.
//! - `split`: the split cluster (§2.4.6): short jobs probe only the short
//!   partition, long jobs LWL on the rest; no stealing (§6.21).
//! - `eagle` (§2.1): Hawk's hybrid without stealing, plus Succinct State
//!   Sharing ([`sss`], `sss`), Sticky Batch Probing (`sticky`), SRPT node
//!   queues with the starvation bound ([`srpt`], `queue_order=srpt`,
//!   `starvation_factor=5`) and at least K = 20 probes per short job
//!   (`min_probes`).
//! - `dlwl_srpt` (§2.7, §5 D): every task placed by distributed LWL on
//!   heartbeat snapshots of the queues plus noise ([`dlwl`],
//!   `central=distributed`, `heartbeat_s`), SRPT over every queued entry
//!   (`queue_order=srpt_all`), the same short partition; early binding (one
//!   entry per task), no SSS, no SBP.
//!
//! Eagle's ablations (Figs 3.5/3.6) are parameters: `sss=false` (no SSS),
//! `sticky=false queue_order=fifo` (no SBP+SRPT), `min_probes=0` (no
//! minimum probes), `short_partition_pct=0` (no partition; SSS's fallback
//! then draws from every node), `steal_attempts=10` (Hawk's stealing on top).
//!
//! Hawk's ablations (Fig 2.7) are parameters: `central=none`,
//! `short_partition_pct=0`, `steal_attempts=0`.
//!
//! # How the thesis's model maps onto the core
//! - **Classification** (H1): an ask is long iff its `est_task_ms` (the
//!   mean task duration of the job, which the simulator hands over) is above
//!   the cutoff. A job's asks (one per request priority) are the units
//!   ("reqs") that are probed or placed.
//! - **Node queues** ([`queues`]): each node keeps one FIFO queue of
//!   entries, a late-bound *probe* or a task the central scheduler bound to
//!   the node. With `--node-vcores 1` a node is the thesis's one slot; a
//!   node with room for more containers serves its queue's head whenever
//!   the head's container fits (one queue per node, not per slot: §0
//!   models multi-slot nodes as independent slots, which YARN's nodes are
//!   not).
//! - **Late binding** (H4): when a node has room for its head entry, it
//!   pops it and asks the job's scheduler for a task. The slot is held
//!   (the ask's container size is set aside) for the round trip 2d; then, if
//!   the job still has an unlaunched task at that priority, the container is
//!   allocated; otherwise the probe is dropped ("cancel") and the node takes
//!   its next entry. Extra probes are never cancelled early, as in the
//!   authors' simulator.
//! - **Network delay**: the thesis's d = 0.5 ms is below the core's
//!   millisecond clock, so the policy keeps its own times in µs: a probe
//!   reaches its node at send + d, a get-task answers at head + 2d, and these
//!   chain exactly; each is a typed timer ([`Wake`]) due at the next whole
//!   millisecond. A container therefore starts at its exact time rounded up
//!   to the millisecond, and rounding never accumulates. With d = 0 (inside
//!   the RM) everything happens at once, without timers. The host's
//!   `network_delay_ms` (`sojourn --network-delay-ms`, whole milliseconds)
//!   is not used: the delay is this policy's `network_delay_us`.
//! - **Many independent schedulers**: a job's probes go to nodes drawn with
//!   the core's seeded `Rng`, knowing nothing of their load (H3).
//! - **The central scheduler** ([`central`], H5): the waiting time of a
//!   node is the estimates of the central tasks queued there plus the
//!   remaining estimate of the central task it runs (+2d while it runs one,
//!   as the authors' simulator); each task of a long job goes to the node
//!   with the least, ties to the lowest id. It learns of a finish at once.
//! - **Stealing** (H6, H7): when a node's slot frees (a task finished or a
//!   get-task came back empty) and its queue is empty, it contacts up to
//!   `steal_attempts` random general-partition nodes and takes, from the
//!   first that has some, the first consecutive run of short probes queued
//!   behind a long entry. Stealing costs nothing (§1.5).
//! - **No lost probe**: every outstanding task of a req is covered by a live
//!   entry (in flight, queued or in a get-task). When new tasks appear
//!   (a job's first ask, its next phase) or entries are lost (a node left,
//!   a container was refused), the req is topped up: `ceil(d × deficit)` new
//!   probes, or `deficit` central placements.
//!
//! # Decisions where the thesis is silent (delgado.md §6)
//! - §6.3 probe targets: with replacement (the authors' simulator);
//!   `sampling=distinct` draws distinct nodes while there are enough.
//! - §6.4 stealing: any idle node steals; victims uniform over the general
//!   partition, with replacement (the thief may draw itself); 10 attempts;
//!   no cap on the run (`steal_limit`); only on the busy→idle transition.
//!   H7's "running a short task" is read as "not running a long one": a
//!   victim that is idle or in a get-task keeps its leading short probes.
//! - §6.21 the split cluster does not steal.
//! - An ask without an estimate is short (`unknown_estimate=long` makes it
//!   long).
//! - **The short/long bit inside the RM**, where YARN gives no estimate:
//!   as pigeon's (pigeon.md §6.2), the app's queue. With `short_queues`
//!   set (the shipped `hadoop-conf/sojourn-eagle.xml`: `short`), a task
//!   ask without an estimate of an app in a listed queue (leaf name or
//!   path) is short, of any other app long; AM asks take
//!   `unknown_estimate` (short). A task without an estimate weighs
//!   `unknown_task_s` (1 s) in LWL's waiting times, DLWL's and SRPT's
//!   remaining work: with 0, every node's waiting time stays 0 and LWL's
//!   ties would send all of a long job's tasks to the lowest-id general
//!   node; with equal weights LWL is least-tasks-queued and SRPT serves
//!   the job with the fewest unlaunched tasks first. AMs weigh 0. Asks with
//!   an estimate (the simulator's) are unchanged. A short partition of every node leaves long jobs the whole
//!   cluster, and a split cluster without a short partition probes
//!   everywhere. The partition is the lowest node ids, recomputed when nodes
//!   come or go.
//! - Every get-task costs the round trip, for central tasks too (H4 pops
//!   "the head entry", whatever it is).
//! - YARN's AMs (the thesis has none): AM asks are probed like tasks, but
//!   AM containers may hold at most `max_am_share` of the slots; beyond it
//!   an AM entry at a queue's head lets the first non-AM entry behind it go
//!   first. Without the cap, probes admit AMs in arrival order until AMs
//!   fill the cluster and no task can run. Where every task is bound to one
//!   node early (`lwl`, `dlwl_srpt`), each node's AMs are capped too (at
//!   `floor(max_am_share × vcores)`, when that is at least 1): else DLWL's
//!   herding on a stale snapshot and SRPT (an AM's estimate is 0, so it
//!   goes first) fill a node with AMs whose tasks wait in that node's queue.
//!   An AM held at a node at its own cap, while the cluster's share has
//!   room, goes to the lowest-id node below its cap that can start it now
//!   (`ams_rebound`): else it waits for an AM there to end, forever in an
//!   RM whose jobs never end in time (found by the RM benchmark).
//! - Only nodes whose capacity, label and strict locality allow an ask are
//!   probed for it; with the traces' identical nodes that is every node.
//!
//! # Eagle: decisions (delgado.md §6)
//! - §6.5, the `authors_simulator` switch (default `true`). True: as the
//!   authors' simulator, SSS acceptance is decided when a probe is sent,
//!   against the node's true state (a long task assigned: in flight, queued
//!   or running); a rejected probe is redrawn on the freshest vector stored
//!   at any of the job's targets, accepting or not, and arrives after 2d; a
//!   second rejection sends it to the short partition, also after 2d. False:
//!   a probe is rejected when it reaches a node that runs or queues a long
//!   task (what the node knows), the rejection carries the node's vector
//!   back (d), and the scheduler redraws on the freshest vector of the job's
//!   rejections so far; nothing is cached across jobs in either mode. The
//!   switch also picks DLWL's noise (§6.9): whole seconds in [0, HB] (the
//!   simulator's `randint`) or uniform µs in [0, HB).
//! - §6.3 probe targets: `sampling` as for Hawk; SSS's redraws are always
//!   with replacement (the authors' simulator).
//! - §6.6 the bit vector: a node's bit is set when the central scheduler
//!   assigns it a long task and clears when its last long task ends (or a
//!   placed long task is dropped); the "timestamp" is the vector's version.
//!   With `--node-vcores` above 1 the bit is per node, not per slot (§6.24
//!   suggests per slot; our queues are per node).
//! - §6.7 remaining time = est × unlaunched tasks; nodes read the count at
//!   once (the authors' simulator learns it 2d after each hand-out), and
//!   SRPT's scan purges the short probes of jobs with none left
//!   (`probes_purged`).
//! - §6.8 starvation bound: entry P may be bypassed by T while
//!   `bypass(P) + est(T) ≤ starvation_factor × est(P)` (P's own job, `≤`);
//!   a long entry in Eagle's queues is a barrier (Algorithm 1's `break`);
//!   DLWL+SRPT orders every entry with a strict `<` (§2.7). The counter
//!   grows when the bypassing entry is taken for a get-task.
//! - SBP: a probe that got a task goes back to its place in the queue (not
//!   to the head); with FIFO order that is the head, so the node keeps
//!   taking the job's tasks; with SRPT, the job's remaining time only
//!   shrinks, so it usually wins again. Long entries are never sticky.
//! - K applies to a job's first batch (when it has no live probe): `max(K,
//!   ceil(ratio × tasks))`; top-ups after a loss send `ceil(ratio × deficit)`.
//! - DLWL's snapshot is taken at the first call of each heartbeat period,
//!   before that call changes anything: the state at the period's start
//!   (queued estimates + remaining estimates of running tasks, §5 D1).
//!   HB: Yahoo 7 s as the thesis (the README's 8 is `heartbeat_s=8`).
//!
//! # Metrics (Table 3.2's columns)
//! `probes_sent`, `probes_behind_long` (a short probe that reached a node
//! running or holding a long task), `short_after_long` (such a probe that
//! got its task where it waited, i.e. was not stolen), `steals`,
//! `rescheduled_probes` (probes moved by stealing), `probes_dropped` (a
//! get-task that found no task left), `central_placed`, `short_tasks`,
//! `long_tasks`, and the distributions `queue_delay_ms`,
//! `queue_delay_short_ms`, `queue_delay_long_ms` (arrival at the first node
//! queue to the head of a queue, per started task). Eagle adds
//! `sss_rejections` (probes a node with a long task turned away; each is
//! also a `rescheduled_probes`, Table 3.2's "re-scheduled probes: Eagle
//! SSS"), `sticky_tasks` (tasks a probe got after its first),
//! `sticky_probes` (probes that got more than one), `probes_purged`;
//! DLWL counts `dlwl_placed`.

mod blocks;
mod books;
mod central;
mod config;
mod cover;
mod dlwl;
mod events;
mod nodes;
mod pending;
mod queues;
mod reqs;
mod srpt;
mod sss;
mod views;

#[cfg(test)]
mod eagle_tests;
#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;

pub use config::{Central, Config, Order, DLWL_SRPT, EAGLE, HAWK, LWL, SPARROW, SPLIT};
pub use nodes::NodeState;
use nodes::NodeTable;
pub use pending::{Pending, Wake};
use pending::{PendingSlab, WakeHeap};
use sojourn_core::{AppId, ContainerId, NodeId, Params, Policy, Priority, Resources, Result, Time};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use views::{AskViews, NO_VIEW};

pub fn build_hawk(p: &Params) -> Result<Box<dyn Policy>> {
    Ok(Box::new(Hawk::new("hawk", Config::from_params(p)?)))
}
pub fn build_sparrow(p: &Params) -> Result<Box<dyn Policy>> {
    Ok(Box::new(Hawk::new("sparrow", Config::from_params(p)?)))
}
pub fn build_lwl(p: &Params) -> Result<Box<dyn Policy>> {
    Ok(Box::new(Hawk::new("lwl", Config::from_params(p)?)))
}
pub fn build_split(p: &Params) -> Result<Box<dyn Policy>> {
    Ok(Box::new(Hawk::new("split", Config::from_params(p)?)))
}
pub fn build_eagle(p: &Params) -> Result<Box<dyn Policy>> {
    Ok(Box::new(Hawk::new("eagle", Config::from_params(p)?)))
}
pub fn build_dlwl_srpt(p: &Params) -> Result<Box<dyn Policy>> {
    Ok(Box::new(Hawk::new("dlwl_srpt", Config::from_params(p)?)))
}

/// SSS's bit vector (delgado.md §2.3): bit i set iff node i has a long task
/// assigned, by node id; shared by the snapshots nodes keep until it
/// changes.
pub type Bits = Arc<Vec<u64>>;

/// Whether node `n`'s bit is set in `bits`.
pub(crate) fn bit(bits: &[u64], n: NodeId) -> bool {
    bits.get(n.0 as usize / 64).is_some_and(|w| w >> (n.0 % 64) & 1 == 1)
}

/// Node ids in id order, shared.
pub type Pool = Arc<[NodeId]>;

/// One ask of a job: what is probed for or placed.
pub type Req = (AppId, Priority);

/// A node queue's entry.
#[derive(Clone, Debug)]
pub struct Entry {
    pub req: Req,
    pub long: bool,
    /// A late-bound probe; `false`: a task the central scheduler placed here.
    pub probe: bool,
    pub est_us: u64,
    /// When it reached its first node queue (µs).
    pub arrived_us: u64,
    /// A short probe that waited behind a long task (Table 3.2).
    pub behind_long: bool,
    /// SRPT's bypass counter (µs): the estimates of the tasks started from
    /// entries behind this one (delgado.md §2.5).
    pub bypass_us: u64,
    /// Tasks this probe has started (SBP keeps it queued after the first).
    pub served: u32,
    /// SSS's probing round in `authors_simulator=false`: 1 (random), 2
    /// (redrawn on the bit vector), 3 (the short-partition fallback, never
    /// rejected); 0: not subject to SSS.
    pub round: u8,
    /// The req's slot in the policy's ask views ([`views`]).
    pub view: u32,
}

impl Entry {
    /// An entry of estimate `est_us`, cut to [`nodes::EST_MAX_US`] (what a
    /// queue keeps of it).
    pub fn new(req: Req, long: bool, probe: bool, est_us: u64) -> Entry {
        Entry {
            req,
            long,
            probe,
            est_us: est_us.min(nodes::EST_MAX_US),
            arrived_us: 0,
            behind_long: false,
            bypass_us: 0,
            served: 0,
            round: 0,
            view: NO_VIEW,
        }
    }

    /// The entry, reading its req's ask through view slot `view`.
    pub(crate) fn viewed(mut self, view: u32) -> Entry {
        self.view = view;
        self
    }
}

/// One of the policy's containers.
#[derive(Clone, Debug)]
pub struct Run {
    pub app: AppId,
    pub node: NodeId,
    pub long: bool,
    /// Placed by the central scheduler (its waiting times count it).
    pub central: bool,
    /// An AM container.
    pub am: bool,
    pub est_us: u64,
    pub start_us: u64,
}

#[derive(Clone, Debug)]
pub struct ReqState {
    pub long: bool,
    /// Entries in flight, queued or in a get-task.
    pub live: u32,
    /// The freshest bit vector of this job's SSS rejections so far
    /// (`authors_simulator=false`).
    pub fresh: Option<(u64, Bits)>,
    /// Its slot in the ask views.
    pub view: u32,
}

pub struct Hawk {
    name: &'static str,
    pub(crate) cfg: Config,
    pub(crate) nodes: NodeTable,
    /// Live nodes by id, and the two partitions (§1.3).
    /// (shared: a plain ask's hosts are the pool itself, not a copy)
    pub(crate) all: Pool,
    pub(crate) general: Pool,
    pub(crate) short: Pool,
    /// Componentwise smallest node capacity (an ask within it fits anywhere).
    min_capacity: Resources,
    /// Tasks the cluster can run at once (a node's vcores, at least one):
    /// the most tasks of one req covered by entries at a time.
    window: u32,
    layout_stale: bool,
    pub(crate) reqs: reqs::ReqTable,
    /// Reqs with fewer live entries than outstanding tasks that could not be
    /// topped up (no node can hold them, or a get-task was refused): retried
    /// at the next scheduling opportunity.
    starved: BTreeSet<Req>,
    /// Reqs above the window that started a task: topped up before the
    /// call returns (each started task used a slot, so this ends).
    refill: BTreeSet<Req>,
    pub(crate) running: BTreeMap<ContainerId, Run>,
    /// The policy's containers per app: an app that had none needs no sweep
    /// when it goes.
    runs_per_app: BTreeMap<AppId, u32>,
    pub(crate) pending: PendingSlab,
    pub(crate) timers: WakeHeap,
    /// The reqs' asks as SRPT's selection reads them.
    pub(crate) views: AskViews,
    /// AM containers running, and AM get-tasks in flight (`max_am_share`).
    pub(crate) ams: u32,
    /// Nodes whose queue waits for an AM to end (`max_am_share`).
    pub(crate) am_blocked: BTreeSet<NodeId>,
    pub(crate) seq: u64,
    epochs: u64,
    /// SSS: the central scheduler's bit vector and its version.
    pub(crate) bits: Bits,
    pub(crate) bits_version: u64,
    /// DLWL: per node id, the period (+1) a kept snapshot value is of and
    /// the value (µs); the current period ([`dlwl`]: kept lazily).
    pub(crate) snapshot: Vec<(u64, u64)>,
    snapshot_period: Option<u64>,
    /// The period whose snapshot holds every node (taken at its first
    /// DLWL placement).
    snapshot_full: Option<u64>,
}

fn us(t: Time) -> u64 {
    t.ms().saturating_mul(1000)
}

impl Hawk {
    pub fn new(name: &'static str, cfg: Config) -> Hawk {
        Hawk {
            name,
            cfg,
            nodes: NodeTable::default(),
            all: Pool::default(),
            general: Pool::default(),
            short: Pool::default(),
            min_capacity: Resources::ZERO,
            window: 0,
            layout_stale: true,
            reqs: reqs::ReqTable::default(),
            starved: BTreeSet::new(),
            refill: BTreeSet::new(),
            running: BTreeMap::new(),
            runs_per_app: BTreeMap::new(),
            pending: PendingSlab::default(),
            timers: WakeHeap::default(),
            views: AskViews::default(),
            ams: 0,
            am_blocked: BTreeSet::new(),
            seq: 0,
            epochs: 0,
            bits: Arc::new(Vec::new()),
            bits_version: 0,
            snapshot: Vec::new(),
            snapshot_period: None,
            snapshot_full: None,
        }
    }
}
