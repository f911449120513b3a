//! `hfsp`: the Hadoop Fair Sojourn Protocol (hfsp.md; Pastorelli's thesis,
//! chapters 4–6), size-based scheduling with aging.
//!
//! What it models:
//! - **Phases** (§1.1, §1.6): each app's MAP asks (MapReduce priority 20, and
//!   any non-MR `Other` ask) and REDUCE asks form two independent entities
//!   with their own size, virtual size, training stage and queue position.
//!   AM asks go first, in submission order (§7.2).
//! - **The virtual cluster** (§1.3, A1–A2, [`virtual_cluster`]): one pool of
//!   virtual slots per phase type, sized from the real cluster (each node's
//!   memory × `map_share` / `map_slot_mb` MAP slots, the rest / `reduce_slot_mb`
//!   REDUCE slots), resized when nodes come and go (A8), shared max-min
//!   fairly; virtual sizes shrink as the virtual cluster serves them (aging).
//!   A phase stays there after it is really done until it is virtually done.
//! - **Order** (§1.7, A5): on a scheduling opportunity, AM asks, then tiny
//!   phases (size 0) in submission order, then training tasks up to T running
//!   per type (the training phase with the smallest initial size first), then
//!   *late* phases (virtually done, really not) in virtual finish order
//!   (FSPE; `late_policy=ps` shares them), then the rest by remaining virtual
//!   size V. Each phase takes every container it can place on the node before
//!   the next one gets any; suspended containers of a phase resume first.
//! - **Estimation** (§2, A3–A4, [`estimate`]): tiny phases (< `tiny_threshold`
//!   tasks) have size 0 and no training; others start at S_i = n·ξ·s̄ (s̄: the
//!   task-weighted mean task time of completed phases of that type, or s0),
//!   their first t tasks are training tasks, and once each has completed (its
//!   size: the container's attained service) or run Δ with progress p > 0
//!   (size: elapsed / p) the final size S_f = s̃·(unstarted + Σ(1 − p)) replaces
//!   the virtual size, once, never refined (anti-flapping, §2.6).
//! - **Preemption** (§3, A6, [`preempt`]): WAIT (default: none); KILL or
//!   SUSPEND the youngest tasks of the lowest-ranked phases until the waiting
//!   higher-ranked demand fits, never training or late phases' tasks, never
//!   AM containers (they are not tasks of a phase).
//! - **Suspended work and idle room** (§3.1, §3.4, A5 step 3a): the thesis
//!   suspends a task so that a higher-priority one runs in its slot, and
//!   resumes it on its node when the slot is free again. In YARN a
//!   suspended container keeps its memory (the RAM + swap bound of §3.4)
//!   and gives back its vcores, so the room it frees can go to someone else
//!   (AM asks are served first) and a node can fill with AMs and suspended
//!   tasks, nothing running. The rule: suspension never leaves a node's
//!   room idle. A suspended container resumes as soon as its node has its
//!   vcores back and no waiting demand ranked above its phase (AM asks
//!   above all; phases held back by delay scheduling do not count) fits in
//!   the node's free room, and after a heartbeat has offered a node to the
//!   phases in rank order, whatever suspended work fits there resumes. So
//!   the preempting phase keeps the room while it can use it, and gives it
//!   back at once when it cannot. A suspension is chosen only where the
//!   node has memory for the waiting container, counting the memory earlier
//!   suspensions of the same pass promised there.
//!
//! Decisions on the spec's open points (hfsp.md §7):
//! - §7.1: the virtual cluster keeps the thesis's two slot pools (faithful
//!   mode); the real side is YARN's single resource pool, with MAP and REDUCE
//!   phases ordered together by V (slot-ms in both pools). `pool_quotas`
//!   enforces the split on the real side in containers (a type starts no
//!   more than its pool's slots while the other type waits, else borrows);
//!   borrowed containers are the first victims of the other type's demand
//!   under KILL or SUSPEND, and come back as they finish under WAIT.
//! - §7.3: n is the largest outstanding + live + finished count seen for the
//!   phase. A phase appears when its first ask does, so REDUCE aging starts
//!   with the reduce asks (YARN's AM asks reduces after slowstart), i.e.
//!   `reduce_aging_start = slowstart` of §7.14, forced by what the RM sees.
//! - §7.4: task size = container attained service (running time; suspended
//!   spells excluded). Exact task sizes are never read; the ask's
//!   `est_task_ms` serves as s̄ only with `use_ask_estimates`.
//! - §7.5: s̄ is the task-weighted mean over completed phases (no decay);
//!   `initial_mean=queued` takes the code's mean over trained queued phases (D2).
//! - §7.6: V := S_f by default; `keep_aging` keeps the aged fraction.
//!   `map_final=completed_mean` is the code's map estimator (D3): the mean
//!   of the first `map_completed_samples` completed maps, V rebuilt over
//!   all n tasks. `reduce_final=sort_finish` is the code's reduce estimator
//!   (D4): reduce times run from the sort finish the driver reports (the
//!   YARN shim reads it from MapReduce AMs; the simulator has no sort phase,
//!   so its times run from launch), running reduces past Δ count at
//!   elapsed/((p − 2/3)·3).
//! - §7.7: tasks started while the phase trains and fewer than t training
//!   tasks were started are training tasks, whichever pass placed them; the
//!   T cap (`T_curr < T`, §7.9) bounds only the priority training pass; no
//!   slots are reserved. Unstarted tasks and Σ(1 − p) over live tasks form
//!   S_f; a live task without reported progress counts as 1 − min(1,
//!   attained/s̃). Without progress reports, training waits for completions.
//! - §7.10: the queue key is V; `order=virtual_finish` orders by projected
//!   virtual finish time under the current max-min allocation (classic FSP).
//! - §7.8, §7.11, §7.12: thesis defaults with the code's behaviour as options
//!   (`training_order`, `late_policy`, `aging_speed`).
//! - §7.15: victims come from the lowest-ranked phase upwards, youngest
//!   first, maps and reduces alike; training and late phases' tasks and
//!   tiny phases are never victims. SUSPEND picks only victims whose node
//!   keeps room in memory for the waiting task (a suspended container keeps
//!   its memory in the mirror, which is the RAM + swap bound of §3.4).
//!   `victims=heartbeat_node` is the code's lazy way (D8): preemption only
//!   on heartbeats, victims only on the heartbeating node, those elsewhere
//!   merely claimed. It needs a driver that heartbeats full nodes too (YARN,
//!   or the simulator with `heartbeat_ms > 0`; the event-driven simulator
//!   offers only nodes with room).
//! - §7.16: SUSPEND takes the hybrid thresholds (`kill_below_progress`,
//!   `wait_below_remaining_ms`) and a per-node cap
//!   (`max_suspended_per_node`), all off by default as the thesis gives
//!   none; the code's reduce-only preemption (D8) is `preempt_maps=false`.
//! - §7.18: delay scheduling is on, as the thesis says HFSP uses it
//!   (§1.7.5), with the code's time rule: a phase whose asks are not
//!   node-local on the offered node is skipped (the next phase is served)
//!   for `locality_delay_ms` D since its first skip, then may go rack-local,
//!   after 2D anywhere; a node-local placement resets its wait. D defaults
//!   to the code's auto value at a 1 s heartbeat (1.5 × heartbeat; Hadoop
//!   1.1.2 and YARN both heartbeat every second below 100 nodes); 0 turns
//!   it off. Asks without preferences are node-local anywhere. Resumes are
//!   pinned to their node anyway. A phase held back this way preempts
//!   nothing until it may go anywhere (it would not use the freed room).
//! - Not implemented: weights (§1.3.6). D7's JobID round robin
//!   is `round_robin_order=submission`, D11's reserved training slots
//!   `reserve_training_slots`.

mod config;
pub mod estimate;
mod order;
mod phases;
mod placement;
pub mod preempt;
pub mod virtual_cluster;

#[cfg(test)]
mod order_props;
#[cfg(test)]
mod pool_props;
#[cfg(test)]
mod tests;

use crate::common::IdMap;
pub use config::{Config, Preemption, PARAMS};
use sojourn_core::{
    AppId, Cluster, ContainerId, ContainerState, Ctx, Decision, Event, NodeId, Outcome, Params, Phase, Policy,
    Resources, Result, Time, TimerTable,
};
use std::collections::{BTreeMap, BTreeSet};
use virtual_cluster::{Pool, Tasks, VPhase};

pub fn build(p: &Params) -> Result<Box<dyn Policy>> {
    Ok(Box::new(Hfsp::new(Config::from_params(p)?)))
}

/// The two phase types, each with its virtual pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Map = 0,
    Reduce = 1,
}

impl Kind {
    pub fn of(phase: Phase) -> Option<Kind> {
        match phase {
            Phase::Map | Phase::Other => Some(Kind::Map),
            Phase::Reduce => Some(Kind::Reduce),
            Phase::Am => None,
        }
    }
}

/// A job phase: an app and a phase type.
pub type Key = (AppId, Kind);

/// HFSP's wake-ups (declared in firing order for equal times).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Timer {
    /// The next virtual completion under aging (§2.1): preemption re-checks
    /// the real order then.
    Aging,
    /// A training task passed Δ (§2.2): its progress now gives a size.
    Delta,
    /// A phase waiting for locality (§1.7 step 5) may relax: offer the nodes.
    Locality,
}

/// What HFSP keeps about one job phase.
#[derive(Clone, Debug)]
pub struct PhaseState {
    pub submit: Time,
    pub seq: u64,
    /// Tasks in the phase (largest count seen).
    pub n: u32,
    pub tiny: bool,
    pub finished: u32,
    pub finished_ms: u64,
    /// Σ over finished tasks of their time from sort finish (D4; attained
    /// service where no sort finish was reported).
    pub finished_since_sort_ms: u64,
    /// In the training stage (S_f not computed yet).
    pub training: bool,
    /// Training tasks started and not killed.
    pub train_started: u32,
    /// Sizes of completed training tasks (ms).
    pub train_samples: Vec<f64>,
    pub s_initial: f64,
    pub s_final: Option<f64>,
    /// The per-task size s̃ that S_f was built from.
    pub task_estimate: Option<f64>,
    pub real_done: bool,
    /// Live (running or suspended) containers.
    pub live: BTreeSet<ContainerId>,
    /// The live training tasks that have reported progress: A4's Δ rule
    /// reads only these (a task without progress gives no sample).
    pub train_reporting: BTreeSet<ContainerId>,
    /// Delay scheduling: since when the phase has been skipped for want of
    /// a node-local ask (reset by a node-local placement).
    pub locality_wait: Option<Time>,
}

/// What HFSP keeps about one of its containers.
#[derive(Clone, Debug)]
pub struct CInfo {
    pub key: Key,
    pub training: bool,
    pub started: Time,
    pub before_ms: u64,
    pub since: Option<Time>,
    /// When the task (a reduce) finished its shuffle and sort, if reported.
    pub sort_finished: Option<Time>,
    pub node: NodeId,
    pub resources: Resources,
    /// A kill was decided and awaits the driver.
    pub preempting: bool,
}

impl CInfo {
    fn attained(&self, now: Time) -> u64 {
        self.before_ms + self.since.map_or(0, |s| now.since(s))
    }

    /// The task's time as the authors' code measures reduces (D4): from its
    /// sort finish when reported, else its attained service.
    fn since_sort(&self, now: Time) -> u64 {
        self.sort_finished.map_or_else(|| self.attained(now), |t| now.since(t))
    }
}

pub struct Hfsp {
    pub(crate) cfg: Config,
    pub(crate) phases: BTreeMap<Key, PhaseState>,
    /// Training phases that have started a task: the only ones A4 can size
    /// (a sample needs a task), so the check skips the queue's untouched
    /// phases. Keys whose phase left training are dropped as met.
    pub(crate) sampling: BTreeSet<Key>,
    /// The phases of `sampling` that may have enough samples for A4 (as
    /// many completed or reporting training tasks as it wants): a phase
    /// comes in as either count grows and leaves when the check finds it
    /// short, so the check, run on every event, skips the rest.
    pub(crate) sample_ready: BTreeSet<Key>,
    /// The phases in the training stage by (initial size bits, seq):
    /// training candidates come from these, in the thesis's training order,
    /// not from the whole queue.
    pub(crate) in_training: BTreeSet<(u64, u64, Key)>,
    /// Per type (MAP, REDUCE), the phases of `in_training` that still want
    /// a training task started (`training_wanted` > 0), keyed the same:
    /// the thesis's training order walks these for candidates (on every
    /// event and heartbeat) rather than every training phase, most of which
    /// have all their training tasks out and await their samples.
    pub(crate) train_wanting: [BTreeSet<(u64, u64, Key)>; 2],
    /// By id, for lookups only (`IdMap`: never walked where order counts).
    pub(crate) containers: IdMap<ContainerId, CInfo>,
    pub(crate) pools: [Pool<Key>; 2],
    /// The containers preemption and resumption look at (preempt.rs).
    pub(crate) index: preempt::Index,
    /// The real order's phases, filed by whether their rank moves (order.rs).
    pub(crate) order_index: order::OrderIndex,
    /// The phases of the order index's fixed ranks that may have something
    /// to place (an outstanding ask or a suspended container), by rank: a
    /// placement walk takes its fixed ranks from these, not from every
    /// phase (on a loaded cluster most have every task out). A phase comes
    /// in when filed and on any change to its asks or containers, and
    /// leaves when a placement walk finds it with nothing to place.
    pub(crate) placeable: BTreeSet<(Rank, Key)>,
    /// The moving ranks in the order they last had, while it provably
    /// holds ([`order::KeptOrder`]).
    pub(crate) kept: Option<order::KeptOrder>,
    /// Times the order index was refiled: a kept order is void after one.
    pub(crate) refilings: u64,
    /// The virtual work (slot-ms per slot, aging speed included) both
    /// pools have been advanced by since the start.
    pub(crate) virtual_work: f64,
    last: Option<Time>,
    /// Running training tasks per type (T_curr).
    pub(crate) train_running: [u32; 2],
    /// Completed phases' (Σ task ms, tasks) per type, for s̄.
    pub(crate) history: [(f64, u64); 2],
    seq: u64,
    nodes_dirty: bool,
    /// The virtual slots (MAP, REDUCE) each node gives the pools, their
    /// sums, and the nodes changed since the pools were last sized: a node
    /// event resizes from the changed nodes, not from every node (a cluster
    /// of N nodes starts with N events). Empty until first sized from the
    /// whole cluster.
    node_slots: BTreeMap<NodeId, [usize; 2]>,
    slot_totals: [usize; 2],
    changed_nodes: Vec<NodeId>,
    sized: bool,
    /// Apps that may have an AM ask outstanding: every app whose asks came
    /// or came back since (an ask only appears with `AsksUpdated` or a
    /// rejected allocation); a heartbeat drops those with none. So AM
    /// placement looks at these, not at every app in the cluster.
    pub(crate) am_apps: BTreeSet<AppId>,
    timers: TimerTable<Timer>,
}

/// Containers each type (MAP, REDUCE) may still start in one pass; `None`
/// where there is no limit. The budgets of `pool_quotas` (§7.1) and of
/// `reserve_training_slots` (D11).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Room(pub(crate) [Option<u32>; 2]);

impl Room {
    const UNLIMITED: Room = Room([None, None]);

    pub(crate) fn allows(&self, k: usize) -> bool {
        self.0[k] != Some(0)
    }

    /// How many of type `k` it still allows.
    pub(crate) fn limit(&self, k: usize) -> u64 {
        self.0[k].map_or(u64::MAX, u64::from)
    }

    pub(crate) fn take(&mut self, k: usize, n: u32) {
        if let Some(r) = self.0[k].as_mut() {
            *r = r.saturating_sub(n);
        }
    }
}

/// Where a phase stands in the real order: (class, V (or projected virtual
/// finish) or late order, seq).
/// Class 0 tiny, 1 late, 2 size-based.
pub(crate) type Rank = (u8, u64, u64);

impl Hfsp {
    pub fn new(cfg: Config) -> Hfsp {
        let mut pools = [Pool::new(0), Pool::new(0)];
        for p in &mut pools {
            p.remainders_by_submission = cfg.remainders_by_submission;
        }
        let index = preempt::Index::new(cfg.preemption != Preemption::Wait);
        Hfsp {
            cfg,
            phases: BTreeMap::new(),
            sampling: BTreeSet::new(),
            sample_ready: BTreeSet::new(),
            in_training: BTreeSet::new(),
            train_wanting: [BTreeSet::new(), BTreeSet::new()],
            containers: IdMap::default(),
            pools,
            index,
            order_index: order::OrderIndex::default(),
            placeable: BTreeSet::new(),
            kept: None,
            refilings: 0,
            virtual_work: 0.0,
            last: None,
            train_running: [0, 0],
            history: [(0.0, 0), (0.0, 0)],
            seq: 0,
            nodes_dirty: true,
            node_slots: BTreeMap::new(),
            slot_totals: [0, 0],
            changed_nodes: Vec::new(),
            sized: false,
            am_apps: BTreeSet::new(),
            timers: TimerTable::new(),
        }
    }

    /// Remaining virtual size of a phase (slot-ms; 0 when tiny or late).
    pub fn virtual_size(&self, key: Key) -> f64 {
        self.pools[key.1 as usize].size_of(key).unwrap_or(0.0)
    }

    pub fn is_late(&self, key: Key) -> bool {
        let late = self.pools[key.1 as usize].phases.get(&key).is_some_and(|p| p.finish_seq.is_some());
        late && self.phases.get(&key).is_some_and(|p| !p.real_done)
    }

    /// `finish`: with `order=virtual_finish`, each pool's projected virtual
    /// finish times, the size-based key instead of V.
    fn rank(&self, key: Key, p: &PhaseState, vp: Option<&VPhase>, finish: Option<&[BTreeMap<Key, f64>; 2]>) -> Rank {
        if p.tiny {
            return (0, 0, p.seq);
        }
        match vp {
            Some(vp) => match vp.finish_seq {
                Some(f) if self.cfg.late_ps => (1, p.live.len() as u64, f),
                Some(f) => (1, f, p.seq),
                // V is non-negative, so its bits order like the number.
                None => {
                    let v = match finish {
                        Some(f) => f[key.1 as usize].get(&key).copied().unwrap_or(f64::INFINITY),
                        None => vp.size(),
                    };
                    (2, v.to_bits(), p.seq)
                }
            },
            None => (1, 0, p.seq),
        }
    }

    /// The virtual slots (MAP, REDUCE) a node of this capacity gives.
    fn slots_of(&self, capacity: Resources) -> [usize; 2] {
        let map_mb = (capacity.memory_mb as f64 * self.cfg.map_share) as u64;
        [
            (map_mb / self.cfg.slot_mb[0]) as usize,
            (capacity.memory_mb.saturating_sub(map_mb) / self.cfg.slot_mb[1]) as usize,
        ]
    }

    fn resize_pools(&mut self, cluster: &Cluster) {
        let changed: Vec<NodeId> = if self.sized {
            std::mem::take(&mut self.changed_nodes)
        } else {
            self.sized = true;
            self.changed_nodes.clear();
            cluster.nodes().map(|n| n.id).collect()
        };
        for id in changed {
            if let Some(old) = self.node_slots.remove(&id) {
                self.slot_totals[0] -= old[0];
                self.slot_totals[1] -= old[1];
            }
            if let Some(n) = cluster.node(id) {
                let s = self.slots_of(n.capacity);
                self.slot_totals[0] += s[0];
                self.slot_totals[1] += s[1];
                self.node_slots.insert(id, s);
            }
        }
        let aged = [Kind::Map, Kind::Reduce].map(|k| self.ages(k));
        for (pool, s) in self.pools.iter_mut().zip(self.slot_totals) {
            pool.resize(s);
        }
        // A pool that gains its first virtual slot or loses its last turns
        // its size-based phases' ranks moving or fixed (order.rs).
        for kind in [Kind::Map, Kind::Reduce] {
            if self.ages(kind) != aged[kind as usize] {
                let keys: Vec<Key> = self.phases.keys().copied().filter(|k| k.1 == kind).collect();
                for key in keys {
                    self.refile(key);
                }
            }
        }
    }

    /// A2 then A4: virtual time to `now`, training checks, wake-ups.
    fn update(&mut self, ctx: &mut Ctx<'_>) {
        if self.nodes_dirty {
            self.nodes_dirty = false;
            self.resize_pools(ctx.cluster());
        }
        let now = ctx.now;
        let dt = self.last.map_or(0, |l| now.since(l)) as f64 * self.cfg.aging_speed;
        self.last = Some(now);
        if dt > 0.0 {
            self.virtual_work += dt;
            for k in 0..2 {
                for key in self.pools[k].advance(dt) {
                    if self.phases.get(&key).is_none_or(|p| p.real_done) {
                        self.pools[k].remove(key);
                        self.phases.remove(&key);
                    }
                    // Virtually done: late now, or gone.
                    self.refile(key);
                }
            }
        }
        estimate::check_training(self, ctx);
        if self.cfg.preemption != Preemption::Wait {
            self.timers.cancel(&Timer::Aging);
            let next = self.pools.iter().filter_map(|p| p.next_completion()).min_by(f64::total_cmp);
            if let Some(work) = next {
                let ms = (work / self.cfg.aging_speed).ceil().max(1.0) as u64;
                self.timers.set(now, Time(now.0 + ms), Timer::Aging);
            }
        }
    }

    /// Outstanding containers of a phase's asks, and the first ask's size.
    pub(crate) fn pending(cluster: &Cluster, key: Key) -> (u32, Resources) {
        let Some(a) = cluster.app(key.0) else { return (0, Resources::default()) };
        let mut n = 0;
        let mut cap = None;
        for s in a.outstanding_asks().filter(|s| Kind::of(s.ask.phase) == Some(key.1)) {
            n = s.outstanding.saturating_add(n);
            cap.get_or_insert(s.ask.capability);
        }
        (n, cap.unwrap_or_default())
    }
}

impl Policy for Hfsp {
    fn name(&self) -> &'static str {
        "hfsp"
    }

    fn on_event(&mut self, ctx: &mut Ctx<'_>, event: &Event) {
        match event {
            Event::AsksUpdated { app, .. } | Event::Rejected { decision: Decision::Allocate { app, .. }, .. } => {
                self.am_apps.insert(*app);
                for kind in [Kind::Map, Kind::Reduce] {
                    self.mark_placeable((*app, kind));
                }
            }
            _ => {}
        }
        if let Event::ContainerProgress { container, .. } = event {
            let key = self.containers.get(container).filter(|ci| ci.training).map(|ci| ci.key);
            if let Some((k, p)) = key.and_then(|k| self.phases.get_mut(&k).map(|p| (k, p))) {
                p.train_reporting.insert(*container);
                self.sample_ready.insert(k);
            }
        }
        match event {
            // Before the update below, which may size training phases from it.
            Event::ContainerProgress { container, sort_finished: Some(t), .. } => {
                if let Some(ci) = self.containers.get_mut(container) {
                    ci.sort_finished = Some(*t);
                }
            }
            Event::NodeAdded(sojourn_core::NodeSpec { node, .. })
            | Event::NodeRemoved { node }
            | Event::NodeResourceUpdated { node, .. } => {
                self.nodes_dirty = true;
                self.changed_nodes.push(*node);
                if let Event::NodeRemoved { node } = event {
                    // Its containers are gone from the mirror: finish them as lost.
                    let mut lost: Vec<ContainerId> = self
                        .containers
                        .keys()
                        .copied()
                        .filter(|c| ctx.cluster().container(*c).is_none_or(|c| c.node == *node))
                        .collect();
                    lost.sort_unstable();
                    for cid in lost {
                        self.on_completed(ctx, cid, Outcome::Lost);
                    }
                }
            }
            _ => {}
        }
        self.update(ctx);
        match event {
            Event::AsksUpdated { app, .. } => {
                self.observe_asks(ctx, *app);
                for kind in [Kind::Map, Kind::Reduce] {
                    self.check_done((*app, kind), ctx.cluster(), false);
                }
            }
            Event::ContainerCompleted { container, outcome } => self.on_completed(ctx, *container, *outcome),
            Event::AppRemoved { app } => self.on_app_removed(ctx, *app),
            Event::Rejected { decision, .. } => match decision {
                Decision::Allocate { container, .. } => {
                    if let Some(ci) = self.drop_container(*container) {
                        let k = ci.key.1 as usize;
                        if let Some(p) = self.phases.get_mut(&ci.key) {
                            p.live.remove(container);
                            if ci.training {
                                p.train_started = p.train_started.saturating_sub(1);
                            }
                        }
                        self.refile_training(ci.key);
                        if ci.training {
                            self.train_running[k] = self.train_running[k].saturating_sub(1);
                        }
                    }
                }
                Decision::Preempt { container, .. } | Decision::Resume { container } => {
                    self.sync(ctx.cluster(), *container)
                }
                _ => {}
            },
            _ => {}
        }
        estimate::check_training(self, ctx);
        preempt::preempt(self, ctx, None);
        preempt::resume_pass(self, ctx, None);
    }

    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        self.update(ctx);
        preempt::preempt(self, ctx, Some(node));
        self.heartbeat(ctx, node);
    }

    fn next_wake(&self) -> Option<Time> {
        self.timers.next()
    }

    fn on_wake(&mut self, ctx: &mut Ctx<'_>) {
        while let Some(timer) = self.timers.pop_due(ctx.now) {
            self.update(ctx);
            if timer == Timer::Locality {
                self.on_schedule(ctx);
            }
            preempt::preempt(self, ctx, None);
            preempt::resume_pass(self, ctx, None);
        }
    }

    fn describe(&self, _cluster: &Cluster, _now: Time) -> serde_json::Value {
        // Phases in the real order, then those really done but still in the
        // virtual cluster.
        let mut keys = self.order();
        keys.extend(self.phases.iter().filter(|(_, p)| p.real_done).map(|(k, _)| *k));
        let phases: Vec<serde_json::Value> = keys
            .into_iter()
            .map(|k| {
                let p = &self.phases[&k];
                serde_json::json!({
                    "app": k.0.0,
                    "phase": if k.1 == Kind::Map { "map" } else { "reduce" },
                    "tasks": p.n,
                    "tiny": p.tiny,
                    "training": p.training,
                    "late": self.is_late(k),
                    "really_done": p.real_done,
                    "virtual_size_ms": self.virtual_size(k),
                    "initial_size_ms": p.s_initial,
                    "final_size_ms": p.s_final,
                })
            })
            .collect();
        serde_json::json!({
            "virtual_slots": { "map": self.pools[0].slots, "reduce": self.pools[1].slots },
            "training_running": { "map": self.train_running[0], "reduce": self.train_running[1] },
            "phases": phases,
        })
    }
}
