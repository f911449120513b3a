//! `tetrisched`: TetriSched (Tumanov et al., EuroSys '16), global
//! rescheduling with adaptive plan-ahead, per `shared/research/tetrisched.md`.
//!
//! Every cycle (4 s, [L342]) the pending gangs are turned into STRL (§3,
//! `jobs.rs`), aggregated with `sum` [L96], compiled by Algorithm 1 into a
//! MILP (`compile.rs`) over dynamically partitioned nodes (§1.3, `strl.rs`)
//! and slices of a plan-ahead window, and solved with good_lp (CBC by
//! default, §8.3). Only leaves starting now are launched (committed); the
//! rest of the plan is tentative, discarded and re-planned next cycle, and
//! kept to warm-start the next solve (§2.4, §2.6). If the solver fails or
//! stops without a valid plan, the greedy plan (TetriSched-NG, §6.2) is
//! launched instead, so a cycle never launches nothing because of the
//! solver (§2.7, §8.3 (5)).
//!
//! # Mapping onto the core's protocol
//!
//! - **Units.** The paper's unit is a whole node (A11). YARN nodes hold
//!   several containers, so here a unit is a container and supply is
//!   counted in slots of `slot_mb`/`slot_vcores`: a node supplies the slots
//!   its free resources hold, a container takes `width` slots. With nodes of
//!   one slot this is the paper's model exactly.
//! - **Gangs.** A gang is one app's outstanding ask at one priority; it is
//!   all-or-nothing: binding checks every unit fits, then the core places
//!   it as one atomic group (`Ctx::allocate_gang`), which the hosts apply
//!   or refuse whole (and which the core kills if a host ran it in part).
//!   A gang larger than its eligible nodes could ever hold can never be
//!   whole, so it becomes linear (LnCk, any part of it is worth its share).
//!   With `elastic_asks` every ask is linear: MapReduce's tasks are
//!   independent, and in YARN a gang can wait for ever behind AMs that hold
//!   slots, so the RM's shipped configuration turns it on.
//! - **Accepted or not** (§4.4): an app with a deadline is submitted to the
//!   same Rayon admission the `rayon` baseline uses (`rayon::admission`,
//!   `rayon_admission`): accepted SLO if it got a reservation, else an SLO
//!   job without reservation. The reservation only classifies the job;
//!   TetriSched does not follow the plan [L90].
//! - **Deadlines and values** come from `AppSpec::deadline`/`value` when
//!   the driver sets them (in the RM, from the job's application tags
//!   `sojourn.deadline=` and `sojourn.value=`, `AppTags.java`). Otherwise the queue says the class
//!   (`slo_queues`, `slo_norez_queues`, else best effort) and an SLO job's
//!   deadline is submit + `deadline_slack` × its estimated runtime (A13).
//! - **Job types** come from the app's name: one containing `gpu` prefers
//!   GPU nodes (GPUs in the node's capacity, or a rack in `gpu_racks`), one
//!   containing `mpi` prefers one rack; σ = `slowdown` elsewhere (§3.3).
//! - **Binding** (§1.4.6) picks each leaf's nodes when the plan launches;
//!   with `bind_on_heartbeat` the containers wait in an allocation map and
//!   start when their node heartbeats, as the paper's proxy scheduler did
//!   (`allocation_map.rs`).
//! - **Runtimes** come from the ask's `est_task_ms` (else
//!   `default_runtime_ms`); a gang still running at its estimated end is
//!   extended by max(q, 10% of the estimate) per cycle (A9). Nothing is
//!   preempted [L392].
//!
//! What the protocol would still need for a faithful YARN deployment:
//! alternatives per job (the AM's job type and slowdown as data, not a name
//! convention), the reservation's accepted flag and RDL window (Rayon) next
//! to the deadline, and per-job value functions [L159].
//!
//! Solver time is not measured here: the pure core reads no clock. The
//! budget is the backend's own time limit (`time_limit_s`), which makes a
//! run that hits it depend on the machine's speed; CBC runs single-threaded
//! so runs that do not hit it are deterministic. In the ResourceManager the
//! solve runs on the bridge's offload thread, off the scheduler's lock, and
//! its answer enters the core as a recorded event (`cycle.rs`). The
//! simulator's CLI solves in a child process too (a CBC abort then costs one
//! solve, not the run; `--solves inline` keeps it in process), waiting for
//! the answer at the cycle's own simulated time: while every solve succeeds,
//! the decisions are the in-process ones.

mod allocation_map;
pub mod compile;
pub mod config;
mod cycle;
pub mod jobs;
pub mod offloaded;
pub mod strl;
#[cfg(test)]
mod tests;

use allocation_map::{AllocationMap, Bound, BoundGang};
use compile::{Plan, Supply, Window};
use config::Config;
pub use config::PARAMS;
use jobs::{Class, Gang, JobType, OptionTag};
use serde_json::json;
use sojourn_core::{Cluster, ContainerId, Ctx, Event, NodeId, Params, Policy, Resources, Result, Time};
use std::collections::{BTreeMap, BTreeSet};
use strl::{JobKey, LeafId, Partitioning, Slice, Strl};

pub fn build(p: &Params) -> Result<Box<dyn Policy>> {
    Ok(Box::new(TetriSched::new(Config::from_params(p)?)))
}

/// A container this policy launched, as its availability view holds it
/// until its estimated end (§2.5).
#[derive(Clone, Debug)]
struct Run {
    node: NodeId,
    est_end: Time,
    est_ms: u64,
    width: u32,
}

/// What the last cycle did, for `describe` and tests.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CycleStats {
    pub at_ms: u64,
    pub gangs: usize,
    pub hopeless: usize,
    pub leaves: usize,
    pub partitions: usize,
    pub int_vars: usize,
    pub bin_vars: usize,
    pub constraints: usize,
    /// `milp`, `milp+greedy`, `greedy` (NG), `fallback` (the MILP failed: NG
    /// instead), `idle` (nothing pending) or `full` (no free slot: not planned).
    pub planner: String,
    pub solver_error: Option<String>,
    pub objective: f64,
    pub launched_gangs: usize,
    pub launched_containers: usize,
}

pub struct TetriSched {
    cfg: Config,
    running: BTreeMap<ContainerId, Run>,
    /// Something changed since the last cycle (asks, freed resources).
    dirty: bool,
    next_cycle: Option<Time>,
    /// The previous plan's units per (job, option, absolute start): the
    /// warm start of the next solve (§2.6).
    warm: BTreeMap<(JobKey, OptionTag, Slice), u32>,
    last: CycleStats,
    cycles: u64,
    /// The cycle whose solve the host is running (RM only, see `cycle.rs`).
    in_flight: Option<cycle::InFlight>,
    /// Containers the last plan bound to nodes that have not heartbeated
    /// since (`bind_on_heartbeat`).
    map: AllocationMap,
    /// Rayon's admission, which says whether an SLO job is accepted (§4.4).
    admission: crate::rayon::admission::Admission,
}

impl TetriSched {
    pub fn new(cfg: Config) -> TetriSched {
        let admission = crate::rayon::admission::Admission::new(crate::rayon::admission::AdmissionConfig {
            slot_mb: cfg.slot_mb,
            slot_vcores: cfg.slot_vcores,
            default_runtime_ms: cfg.default_runtime_ms,
            ..Default::default()
        });
        TetriSched {
            admission,
            cfg,
            running: BTreeMap::new(),
            dirty: true,
            next_cycle: None,
            warm: BTreeMap::new(),
            last: CycleStats::default(),
            cycles: 0,
            in_flight: None,
            map: AllocationMap::default(),
        }
    }

    /// The Rayon admission this policy classifies SLO jobs by.
    pub fn admission(&self) -> &crate::rayon::admission::Admission {
        &self.admission
    }

    /// Slots of supply in `r` (A11 generalised, see the module doc).
    /// (the admission's, built from this policy's slot size)
    fn slots(&self, r: &Resources) -> u32 {
        crate::rayon::admission::slots(&self.admission.cfg, r)
    }

    /// Slots one container of `c` takes (at least 1).
    fn width(&self, c: &Resources) -> u32 {
        crate::rayon::admission::width(&self.admission.cfg, c)
    }

    fn schedule_next(&mut self, now: Time) {
        let c = self.cfg.cycle_ms;
        self.next_cycle = Some(Time((now.ms() / c).saturating_add(1).saturating_mul(c)));
    }

    /// The pending gangs, in NG's queue order (§6.2): class, then submit
    /// time, app and priority (FIFO within each queue).
    fn gangs(&self, cluster: &Cluster) -> Vec<Gang> {
        let gpu_node = |n: &sojourn_core::Node| {
            n.capacity.gpus > 0 || self.cfg.gpu_racks.iter().any(|r| r == cluster.rack_name(n.rack))
        };
        let mut out = Vec::new();
        type Eligible = (Vec<u32>, Vec<u32>, Vec<Vec<u32>>, u64);
        let mut cache: BTreeMap<(u32, u64, u32, u32), Eligible> = BTreeMap::new();
        for app in cluster.apps() {
            let spec = &app.spec;
            // Queue names as the hosts give them: a leaf or a path (`root.slo`).
            let class = if crate::common::in_queues(&self.cfg.slo_queues, app.queue()) {
                Class::SloAccepted
            } else if crate::common::in_queues(&self.cfg.slo_norez_queues, app.queue()) {
                Class::SloNoRez
            } else if spec.deadline.is_some() {
                match self.admission.decision(app.id()) {
                    Some(crate::rayon::admission::Decision::Rejected) if self.cfg.rayon_admission => Class::SloNoRez,
                    _ => Class::SloAccepted,
                }
            } else {
                Class::BestEffort
            };
            let kind = match sojourn_core::Preference::of_name(&spec.name) {
                sojourn_core::Preference::Gpu => JobType::Gpu,
                sojourn_core::Preference::OneRack => JobType::Mpi,
                sojourn_core::Preference::Anywhere => JobType::Unconstrained,
            };
            for a in app.outstanding_asks() {
                let ask = &a.ask;
                let width = self.width(&ask.capability);
                // Asks without a label or strict locality (nearly all) share
                // one eligible set per width: computed once per cycle.
                let plain =
                    ask.label.as_deref().is_none_or(str::is_empty) && (ask.relax_locality || ask.locality.is_empty());
                let cached = if plain {
                    cache.get(&(width, ask.capability.memory_mb, ask.capability.vcores, ask.capability.gpus)).cloned()
                } else {
                    None
                };
                let (all, gpu, racks, reach) = match cached {
                    Some(c) => c,
                    None => {
                        let mut all = Vec::new();
                        let mut gpu = Vec::new();
                        let mut racks: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
                        let mut reach: u64 = 0;
                        for n in cluster.nodes() {
                            let allowed = n.has_label(ask.label.as_deref())
                                && (ask.relax_locality
                                    || ask.locality.is_empty()
                                    || cluster.locality_level(ask, n) < 2)
                                && ask.capability.fits_in(&n.capacity);
                            if !allowed {
                                continue;
                            }
                            all.push(n.id.0);
                            if gpu_node(n) {
                                gpu.push(n.id.0);
                            }
                            racks.entry(n.rack).or_default().push(n.id.0);
                            reach += u64::from(self.slots(&n.capacity) / width);
                        }
                        let c = (all, gpu, racks.into_values().collect::<Vec<_>>(), reach);
                        if plain {
                            cache.insert(
                                (width, ask.capability.memory_mb, ask.capability.vcores, ask.capability.gpus),
                                c.clone(),
                            );
                        }
                        c
                    }
                };
                if all.is_empty() || reach == 0 {
                    continue; // no node can ever take it
                }
                let est_ms = ask.est_task_ms.unwrap_or(self.cfg.default_runtime_ms).max(1);
                let deadline = spec.deadline.or_else(|| {
                    (class != Class::BestEffort)
                        .then(|| app.submit.plus((est_ms as f64 * self.cfg.deadline_slack).ceil() as u64))
                });
                let value = spec.value.unwrap_or(match class {
                    Class::SloAccepted => 1000.0,
                    Class::SloNoRez => 25.0,
                    Class::BestEffort => 1.0,
                });
                let k = u64::from(a.outstanding).min(reach) as u32;
                out.push(Gang {
                    app: app.id(),
                    priority: ask.priority,
                    key: jobs::job_key(app.id(), ask.priority),
                    class,
                    kind,
                    submit: app.submit,
                    deadline,
                    value,
                    k,
                    gang: !self.cfg.elastic_asks && u64::from(a.outstanding) <= reach,
                    width,
                    est_ms,
                    all,
                    gpu,
                    racks,
                });
            }
        }
        out.sort_by_key(|g| (g.class, g.submit, g.app, g.priority));
        // §2.8 (6): a cycle plans at most `max_plan_jobs` gangs, the first
        // in queue order; the rest wait for a later cycle. It bounds a
        // cycle's work when a backlog builds up (a trace replay).
        out.truncate(self.cfg.max_plan_jobs);
        out
    }

    /// `avail(x, t)` for the window (§2.5, §6.1 step 6): a node's free slots
    /// now, plus the slots of this policy's containers from the slice of
    /// their estimated end.
    fn supply(&self, cluster: &Cluster, parts: &Partitioning, window: Window) -> Supply {
        let q = self.cfg.quantum_ms;
        let len = window.len as usize;
        let mut per_node: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for n in cluster.nodes() {
            per_node.insert(n.id.0, vec![self.slots(&n.available()); len]);
        }
        for r in self.running.values() {
            let Some(row) = per_node.get_mut(&r.node.0) else { continue };
            let rel = r.est_end.ms().div_ceil(q).saturating_sub(window.now) as usize;
            for v in row.iter_mut().skip(rel) {
                *v = v.saturating_add(r.width);
            }
        }
        // Never more than the node holds.
        for n in cluster.nodes() {
            let cap = self.slots(&n.capacity);
            if let Some(row) = per_node.get_mut(&n.id.0) {
                row.iter_mut().for_each(|v| *v = (*v).min(cap));
            }
        }
        let avail = parts
            .parts
            .iter()
            .map(|nodes| {
                let mut row = vec![0u32; len];
                for n in nodes {
                    if let Some(r) = per_node.get(n) {
                        row.iter_mut().zip(r).for_each(|(a, b)| *a = a.saturating_add(*b));
                    }
                }
                row
            })
            .collect();
        Supply { avail }
    }

    /// Node binding (§1.4.6): the leaf's units on concrete nodes, each
    /// partition's lowest node ids first, then any node of the leaf's set;
    /// a gang is placed whole or not at all. Returns the containers placed.
    #[allow(clippy::too_many_arguments)]
    fn bind(
        &mut self,
        ctx: &mut Ctx<'_>,
        g: &Gang,
        parts: &Partitioning,
        plan: &Plan,
        leaf: LeafId,
        set: &[u32],
        est_ms: u64,
    ) -> u32 {
        let want = plan.units(leaf);
        let Some(cap) = ctx.cluster().app(g.app).and_then(|a| a.asks.get(&g.priority)).map(|a| a.ask.capability) else {
            return 0;
        };
        let mut order: Vec<u32> = Vec::new();
        for (x, _) in plan.grants.get(&leaf).map_or(&[][..], |v| v.as_slice()) {
            order.extend(parts.parts.get(*x).map_or(&[][..], |v| v.as_slice()));
        }
        let seen: BTreeSet<u32> = order.iter().copied().collect();
        order.extend(set.iter().filter(|n| !seen.contains(n)));
        let mut picks: Vec<(NodeId, u32)> = Vec::new();
        let mut got = 0u32;
        for n in order {
            if got >= want {
                break;
            }
            let node = NodeId(n);
            if ctx.cluster().can_allocate(g.app, g.priority, node).is_err() {
                continue;
            }
            // Less what this plan already bound to the node (`bind_on_heartbeat`).
            let Some(free) = ctx.cluster().node(node).map(|x| x.available().saturating_sub(&self.map.held(node)))
            else {
                continue;
            };
            let fit = fits(&free, &cap).min(want - got);
            if fit > 0 {
                picks.push((node, fit));
                got += fit;
            }
        }
        if got == 0 || (g.gang && got < want) {
            return 0; // all-or-nothing
        }
        if g.gang {
            let bg = BoundGang { app: g.app, priority: g.priority, picks, est_ms, width: g.width, capability: cap };
            if self.cfg.bind_on_heartbeat {
                self.map.add_gang(bg);
                return got;
            }
            return self.start_gang(ctx, bg);
        }
        let mut placed = 0;
        for (node, n) in picks {
            let b = Bound { app: g.app, priority: g.priority, n, est_ms, width: g.width };
            if self.cfg.bind_on_heartbeat {
                self.map.add(node, b, cap);
                placed += n;
            } else {
                placed += self.start(ctx, node, b);
            }
        }
        placed
    }

    /// Allocates `b`'s containers on `node`, as many as the node and the
    /// ask still allow; returns how many.
    fn start(&mut self, ctx: &mut Ctx<'_>, node: NodeId, b: Bound) -> u32 {
        let mut placed = 0;
        for _ in 0..b.n {
            match ctx.allocate(b.app, b.priority, node) {
                Ok(c) => {
                    placed += 1;
                    self.running
                        .insert(c, Run { node, est_end: ctx.now.plus(b.est_ms), est_ms: b.est_ms, width: b.width });
                }
                Err(_) => break,
            }
        }
        placed
    }

    /// Allocates a gang on all its nodes as one atomic group; returns how
    /// many containers that was (0 when the core refused it: nothing runs).
    fn start_gang(&mut self, ctx: &mut Ctx<'_>, g: BoundGang) -> u32 {
        let Ok(members) = ctx.allocate_gang(g.app, g.priority, &g.picks) else { return 0 };
        for (c, node) in &members {
            let run = Run { node: *node, est_end: ctx.now.plus(g.est_ms), est_ms: g.est_ms, width: g.width };
            self.running.insert(*c, run);
        }
        members.len() as u32
    }

    /// Runs a cycle that is due, or (`event_cycles`) one that something
    /// changed since the last, except while a plan's bindings wait for
    /// their nodes: only a due cycle replaces them.
    fn plan_if_due(&mut self, ctx: &mut Ctx<'_>) {
        let due = self.next_cycle.is_some_and(|t| t <= ctx.now);
        let changed = self.cfg.event_cycles && self.dirty && ctx.cluster().pending_containers() > 0;
        if due || (changed && self.map.is_empty()) {
            self.cycle(ctx);
        }
    }

    /// `node` heartbeats: it starts what the plan bound to it.
    fn start_bound(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        let (lone, gangs) = self.map.take(node);
        for b in lone {
            self.start(ctx, node, b);
        }
        for g in gangs {
            self.start_gang(ctx, g);
        }
    }
}

/// How many containers of `c` fit in `free` (a zero request counts once).
fn fits(free: &Resources, c: &Resources) -> u32 {
    let mut n = u64::from(u32::MAX);
    if let Some(m) = free.memory_mb.checked_div(c.memory_mb) {
        n = n.min(m);
    }
    if let Some(v) = free.vcores.checked_div(c.vcores) {
        n = n.min(u64::from(v));
    }
    if let Some(g) = free.gpus.checked_div(c.gpus) {
        n = n.min(u64::from(g));
    }
    if c.is_zero() {
        n = 1;
    }
    n.min(1 << 16) as u32
}

/// TetriSched-NG (§6.2), also the MILP's fallback: the jobs of the `sum`
/// one at a time in its order (the NG queue order), each given its best
/// leaf against what the jobs before it left, that leaf's plan (future
/// starts included) subtracted from the supply. Every job expression this
/// policy generates is a `max` of leaves, for which picking the best
/// feasible leaf is exactly the per-job MILP of §2.9; it needs no solver,
/// so the fallback cannot fail.
pub fn greedy(root: &Strl, parts: &Partitioning, supply: &Supply, window: Window, penalty: f64) -> Plan {
    let mut avail = supply.clone();
    let mut plan = Plan::default();
    let jobs: Vec<&Strl> = match root {
        Strl::Sum(c) => c.iter().collect(),
        e => vec![e],
    };
    let mut next: LeafId = 0;
    for job in jobs {
        let leaves = job.leaves();
        if let Strl::Sum(_) = job {
            // A linear job (a sum of LnCk over starts): its leaves in order,
            // earliest first, each taking what is free, k units in all.
            let mut left = leaves.first().map_or(0, |(l, _)| l.k);
            for (i, (l, _)) in leaves.iter().enumerate() {
                if left == 0 {
                    break;
                }
                if !window.contains(l.start) || l.width == 0 || l.value <= 0.0 {
                    continue;
                }
                let take = take_units(&avail, parts, l, left.min(l.k), window);
                let units: u32 = take.iter().map(|(_, n)| n).sum();
                if units > 0 {
                    subtract(&mut avail, l, &take, window);
                    left -= units;
                    plan.grants.insert(next + i, take);
                }
            }
            next += leaves.len();
            continue;
        }
        let mut best: Option<(f64, LeafId, Grants)> = None;
        for (i, (l, linear)) in leaves.iter().enumerate() {
            if !window.contains(l.start) || l.k == 0 || l.width == 0 {
                continue;
            }
            let take = take_units(&avail, parts, l, l.k, window);
            let units: u32 = take.iter().map(|(_, n)| n).sum();
            let worth = compile::leaf_worth(l, window.now, penalty);
            let value = if *linear {
                worth / f64::from(l.k) * f64::from(units)
            } else if units == l.k {
                worth
            } else {
                continue;
            };
            if units > 0 && value > 0.0 && best.as_ref().is_none_or(|b| value > b.0 + 1e-12) {
                best = Some((value, i, take));
            }
        }
        if let Some((_, i, take)) = best {
            subtract(&mut avail, leaves[i].0, &take, window);
            plan.grants.insert(next + i, take);
        }
        next += leaves.len();
    }
    plan
}

/// Units per partition.
type Grants = Vec<(usize, u32)>;

/// Up to `want` units for `l` from its partitions in order, each at most
/// what the partition has free over the whole of the leaf's span.
fn take_units(avail: &Supply, parts: &Partitioning, l: &strl::Leaf, want: u32, window: Window) -> Vec<(usize, u32)> {
    let span = l.slices_within(window.now, window.end());
    let mut take = Vec::new();
    let mut left = want;
    for &x in parts.parts_of(l.set) {
        if left == 0 {
            break;
        }
        let free = span.clone().map(|t| avail.at(x, t, window)).min().unwrap_or(0) / l.width.max(1);
        let n = free.min(left);
        if n > 0 {
            take.push((x, n));
            left -= n;
        }
    }
    take
}

fn subtract(avail: &mut Supply, l: &strl::Leaf, take: &[(usize, u32)], window: Window) {
    for &(x, n) in take {
        for t in l.slices_within(window.now, window.end()) {
            if let Some(v) = avail.avail.get_mut(x).and_then(|r| r.get_mut((t - window.now) as usize)) {
                *v = v.saturating_sub(n.saturating_mul(l.width));
            }
        }
    }
}

impl Policy for TetriSched {
    fn name(&self) -> &'static str {
        "tetrisched"
    }

    fn on_event(&mut self, ctx: &mut Ctx<'_>, event: &Event) {
        if matches!(event, Event::AppAdded(_) | Event::AsksUpdated { .. }) {
            self.admission.decide_new(ctx.cluster());
        }
        match event {
            Event::AppAdded(_)
            | Event::AsksUpdated { .. }
            | Event::ContainerCompleted { .. }
            | Event::NodeAdded(_)
            | Event::NodeRemoved { .. }
            | Event::NodeResourceUpdated { .. }
            | Event::AppRemoved { .. }
            | Event::Rejected { .. }
            | Event::ContainerRecovered { .. } => {
                self.dirty = true;
                if self.next_cycle.is_none() && ctx.cluster().pending_containers() > 0 {
                    self.schedule_next(ctx.now);
                }
            }
            Event::OffloadDone { tag, result } => self.on_offload_done(ctx, *tag, result),
            _ => {}
        }
    }

    /// YARN's heartbeat: the policy allocates on any node through the core,
    /// so a heartbeat only runs a cycle that is due (or, with
    /// `event_cycles`, one that something changed since the last).
    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        self.plan_if_due(ctx);
        self.start_bound(ctx, node);
    }

    /// An event-driven pass offers every node at once: all of the map starts.
    fn on_schedule(&mut self, ctx: &mut Ctx<'_>) {
        self.plan_if_due(ctx);
        let (lone, gangs) = self.map.take_all();
        for (node, bound) in lone {
            for b in bound {
                self.start(ctx, node, b);
            }
        }
        for g in gangs {
            self.start_gang(ctx, g);
        }
    }

    fn next_wake(&self) -> Option<Time> {
        self.next_cycle
    }

    fn on_wake(&mut self, ctx: &mut Ctx<'_>) {
        if self.next_cycle.is_some_and(|t| t <= ctx.now) {
            self.cycle(ctx);
        }
    }

    fn describe(&self, _cluster: &Cluster, now: Time) -> serde_json::Value {
        json!({
            "now_ms": now.ms(),
            "cycles": self.cycles,
            "variant": {
                "global": !self.cfg.no_global,
                "heterogeneity": !self.cfg.no_heterogeneity,
                "plan_ahead_slices": self.cfg.window_slices,
            },
            "solver": format!("{:?}", self.cfg.solver.backend).to_lowercase(),
            "running_containers": self.running.len(),
            "bound_containers": self.map.containers(),
            "tentative_leaves": self.warm.len(),
            "next_cycle_ms": self.next_cycle.map(|t| t.ms()),
            "solving": self.in_flight.is_some(),
            "last_cycle": serde_json::to_value(&self.last).unwrap_or(serde_json::Value::Null),
        })
    }
}
