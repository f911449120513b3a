//! The discrete-event simulator. It plays YARN's part around the same
//! `sojourn_core::Core` the shim drives: NodeManagers that heartbeat, an
//! ApplicationMaster per job that asks for its tasks phase by phase, tasks
//! that run for their trace duration (σ × that off their job's preferred
//! nodes, if `SimConfig::placement_slowdown` is set), and the decisions' effects (a killed
//! task re-runs from scratch; a suspended one keeps its remaining work and
//! resumes on the same node).
//!
//! Events are totally ordered by (time, class, sequence): at one instant,
//! task completions are delivered before arrivals and before heartbeats, as
//! a NodeManager heartbeat reports finished containers before the scheduler
//! places new ones. With `heartbeat_ms > 0` a node's completions reach the
//! scheduler at its next heartbeat (YARN's NODE_UPDATE); with 0 the run is
//! event-driven, as in the papers' simulators: every change offers all free
//! nodes to the policy at once (`Event::ScheduleAll`).
//!
//! The core is driven by its one cycle (`Core::step`): an event from the
//! simulated world is a step of its own; the decisions it returns are
//! carried out (`decisions.rs`), and what that brings back (confirmations,
//! rejections, completions of killed containers, re-asks) is the next step,
//! at the same instant, until nothing is left.
//!
//! Files: `config.rs` (settings, errors), this file (the event queue, the
//! loop, the cycle, sampling), `nodes.rs` (NodeManagers), `jobs.rs` (the
//! ApplicationMasters and their tasks), `dags.rs` (jobs that wait for their
//! parents, queries' response times), `decisions.rs` (carrying out
//! decisions), `group_run.rs` (a phase's tasks yet to place), `launch.rs` (container start-up),
//! `placement.rs` (the slowdown off a job's preferred nodes). The fairness
//! books are in `crate::metrics::fairness`.

mod config;
mod dags;
mod decisions;
mod group_run;
mod jobs;
mod launch;
mod nodes;
mod offload;
mod placement;
mod queue;

pub use config::{NodeFailure, OffloadChild, SimConfig, SimError};
pub use launch::LaunchModel;

use crate::metrics::{FairnessBooks, QueueSlot};
use crate::run::{RunResult, UtilSample};
use crate::workload::{ClusterSpec, JobSpec, JobStream};
use group_run::GroupRun;
use sojourn_core::{AppId, ContainerId, Core, CoreConfig, Decision, Event, NodeId, Resources, Time};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

/// Same-time events run in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A task's container finished (or its completion reached the RM).
    TaskDone {
        container: ContainerId,
        generation: u32,
    },
    NodeFail {
        node: u32,
    },
    NodeRecover {
        node: u32,
    },
    /// The next job of the stream arrives.
    Arrival,
    /// An AM has started and asks for its first phase.
    AmReady {
        job: u32,
    },
    /// An AM asks for group `group` of its tasks (the next phase, at one of
    /// its heartbeats), or ends when no group is left.
    StartGroup {
        job: u32,
        group: u32,
    },
    Heartbeat {
        node: u32,
    },
    Sample,
    /// A running task reports its progress (as a TaskTracker's heartbeat
    /// carried it to HFSP's scheduler).
    Progress {
        container: ContainerId,
        generation: u32,
    },
}

// Jobs, groups and nodes are numbered in u32 (a job's index is its AppId,
// a node's its NodeId), so an entry of the event queue is 32 bytes: two to
// a cache line, which the queue's sifts feel at 30,000 pending events.
const _: () = assert!(std::mem::size_of::<(Time, Ev, u64)>() == 32);

impl Ev {
    /// Whether the event is work that keeps a run going (not the periodic
    /// heartbeats, samples and progress reports, which go on regardless).
    fn is_work(&self) -> bool {
        !matches!(self, Ev::Heartbeat { .. } | Ev::Sample | Ev::Progress { .. })
    }
}

/// A map keyed by container id. The ids come from a counter, so a
/// multiplicative hash spreads them well and costs far less than SipHash.
type IdMap<V> = HashMap<ContainerId, V, BuildHasherDefault<IdHasher>>;

#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A task waiting to run or re-run: its group, its index in the group and
/// the duration left; once placed, whether it runs slowed off its job's
/// preferred nodes (`SimConfig::placement_slowdown`; its `remaining_ms`
/// is then the slowed run).
#[derive(Clone, Copy, Debug)]
struct Task {
    group: usize,
    index: u32,
    // (In the padding after `index`: a task takes no more room.)
    slowed: bool,
    remaining_ms: u64,
}

impl Task {
    /// Its whole run time in the trace (ms), if the job has it.
    fn full_ms(&self, spec: &JobSpec) -> Option<u64> {
        spec.groups.get(self.group)?.durations_ms.get(self.index as usize).copied()
    }
}

struct Job {
    spec: JobSpec,
    app: AppId,
    /// Groups asked for and not finished, by index (two at once while
    /// reduces start before the last map, see `SimConfig::slowstart`).
    running: Groups,
    /// The first group not yet asked for.
    next_group: usize,
    am: Option<ContainerId>,
    needs_am: bool,
    /// What its containers hold (for the fairness index).
    alloc: Resources,
    /// Its queue in the fairness books.
    queue_slot: QueueSlot,
}

/// Policy wake-ups in a row that start nothing on an idle cluster with
/// demand waiting, after which the run is stalled (`Sim::stalled`): far
/// more than a plan defers a start (TetriSched plans 25 cycles ahead).
const QUIET_WAKES: u32 = 100;

/// A job's groups asked for and not finished, in index order: a sorted
/// vector, as a job runs one or two at once. Every task's placement and
/// completion reads it, for jobs scattered over a long backlog; a
/// `BTreeMap`'s node kept the keys, the values and the length on three
/// cache lines, where this is one.
#[derive(Default)]
struct Groups(Vec<(usize, GroupRun)>);

impl Groups {
    fn position(&self, g: usize) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.cmp(&g))
    }
    fn get(&self, g: &usize) -> Option<&GroupRun> {
        self.position(*g).ok().map(|i| &self.0[i].1)
    }
    fn get_mut(&mut self, g: &usize) -> Option<&mut GroupRun> {
        self.position(*g).ok().map(move |i| &mut self.0[i].1)
    }
    /// Puts `run` at `g` (replacing what was there).
    fn insert(&mut self, g: usize, run: GroupRun) {
        match self.position(g) {
            Ok(i) => self.0[i].1 = run,
            Err(i) => self.0.insert(i, (g, run)),
        }
    }
    fn remove(&mut self, g: &usize) -> Option<GroupRun> {
        let i = self.position(*g).ok()?;
        Some(self.0.remove(i).1)
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn keys(&self) -> impl Iterator<Item = &usize> {
        self.0.iter().map(|(g, _)| g)
    }
    fn iter_mut(&mut self) -> impl Iterator<Item = (&usize, &mut GroupRun)> {
        self.0.iter_mut().map(|(g, r)| (&*g, r))
    }
}

/// What a container is doing.
/// The finish time of a reduce that waits for its job's last map
/// (`SimConfig::reduces_wait_for_maps`): never, until the maps are done.
const HELD: Time = Time(u64::MAX / 4);

#[derive(Clone, Copy, Debug)]
enum Work {
    Am {
        job: usize,
    },
    /// `suspended_since` is when the task was last suspended (meaningful
    /// while `suspended`; `SimConfig::suspended_speed` reads it at resume).
    Task {
        job: usize,
        task: Task,
        finish_at: Time,
        generation: u32,
        suspended: bool,
        suspended_since: Time,
    },
}

/// A container the simulator runs: where, what, and what it holds.
#[derive(Clone, Copy, Debug)]
struct Live {
    node: NodeId,
    work: Work,
    resources: Resources,
}

struct Sim<'a> {
    cfg: &'a SimConfig,
    core: Core,
    queue: queue::EventQueue<(Time, Ev, u64)>,
    seq: u64,
    now: Time,
    stream: JobStream,
    lookahead: Option<JobSpec>,
    /// Jobs of queries that wait for their parents, and the queries' books.
    dags: dags::DagBook,
    jobs: Vec<Option<Job>>,
    /// Each live container: its node, its work and its resources (booked to
    /// its job for the fairness index). Looked up, never iterated in an
    /// order that matters.
    containers: IdMap<Live>,
    /// Allocations per job and queue behind the fairness index.
    fairness: FairnessBooks,
    node_ids: Vec<NodeId>,
    node_shapes: ClusterSpec,
    node_by_name: BTreeMap<String, NodeId>,
    node_up: Vec<bool>,
    /// Heartbeat mode: the nodes with no heartbeat in the queue, to arm
    /// when demand waits (kept as a list: scanning every node at every
    /// instant of a 15,000-node run was a good part of the engine's time).
    hb_idle: Vec<u32>,
    hb_offset: Vec<u64>,
    next_generation: u32,
    launches: launch::Launches,
    /// Event-driven mode: new demand or capacity anywhere; offer all nodes.
    dirty_all: bool,
    /// Event-driven mode: nodes whose resources were freed; offer them
    /// (`Sim::freed`).
    dirty_nodes: BTreeSet<usize>,
    result: RunResult,
    open_jobs: usize,
    last_submit: Time,
    /// Time inside `Core::step`, in raw ticks of `clock`.
    core_ticks: u64,
    /// Reads the CPU's time-stamp counter where it ticks at a constant rate
    /// (else the monotonic clock), calibrated against the monotonic clock:
    /// two reads per step, and `Instant::now` was 3-4 % of a 500,000-job run.
    clock: quanta::Clock,
    /// True while a step's decisions are carried out: the events they bring
    /// back (a rejection, a killed container's completion, a re-ask) wait
    /// in `follow_ups` for the next step.
    carrying_out: bool,
    follow_ups: Vec<Event>,
    stepping: Vec<Event>,
    /// ContainerStarted for the containers started since the last step.
    confirmations: Vec<Event>,
    /// Events in the queue other than heartbeats and samples.
    work_events: u64,
    idle_since: Option<Time>,
    /// Since when, and through how many policy wake-ups, no task has run,
    /// nothing was due and the containers stayed the same (their number)
    /// while a policy timer was set (`stalled`).
    quiet: Option<(Time, u32, usize)>,
    progress: Option<&'a mut dyn FnMut(usize)>,
    /// With `SimConfig::isolate_solves`: the child that answers offloaded work.
    solves: Option<offload::Solves>,
}

/// Runs `jobs` on `cluster` under `cfg`. `progress` is told the number of
/// finished jobs now and then.
pub fn simulate<'a>(
    cluster: &ClusterSpec,
    jobs: JobStream,
    workload_name: &str,
    cfg: &'a SimConfig,
    progress: Option<&'a mut dyn FnMut(usize)>,
) -> Result<RunResult, SimError> {
    if cluster.nodes.is_empty() {
        return Err(SimError::Config("the cluster has no nodes".into()));
    }
    for f in &cfg.failures {
        if f.node >= cluster.nodes.len() {
            return Err(SimError::Config(format!(
                "node failure names node {} but the cluster has {} nodes",
                f.node,
                cluster.nodes.len()
            )));
        }
    }
    if let Some(sigma) = cfg.placement_slowdown {
        // (A σ below 1 would be a speed-up; the policy's `slowdown` has the same range.)
        if !(1.0..=1000.0).contains(&sigma) {
            return Err(SimError::Config(format!("placement slowdown {sigma}: expected a factor in [1, 1000]")));
        }
    }
    match cfg.max_assignments {
        Some(0) => return Err(SimError::Config("max assignments per heartbeat 0: expected at least 1".into())),
        Some(n) if cfg.heartbeat_ms == 0 => {
            return Err(SimError::Config(format!(
                "max assignments per heartbeat {n}: needs node heartbeats (heartbeat_ms > 0); \
                 event-driven runs offer new demand to all nodes at once"
            )))
        }
        _ => {}
    }
    let policy = sojourn_policies::build(&cfg.policy, &cfg.params)?;
    let core = Core::new(
        policy,
        CoreConfig {
            seed: cfg.seed,
            network_delay_ms: cfg.network_delay_ms,
            offload: cfg.isolate_solves.is_some(),
            max_assignments: cfg.max_assignments,
            ..CoreConfig::default()
        },
    );
    let n = cluster.nodes.len();
    let mut sim = Sim {
        cfg,
        core,
        queue: queue::EventQueue::new(),
        seq: 0,
        now: Time::ZERO,
        stream: jobs,
        lookahead: None,
        dags: dags::DagBook::default(),
        jobs: Vec::new(),
        containers: IdMap::default(),
        fairness: FairnessBooks::new(cluster.total()),
        node_ids: (0..n as u32).map(NodeId).collect(),
        node_shapes: cluster.clone(),
        node_by_name: cluster.nodes.iter().enumerate().map(|(i, s)| (s.name.clone(), NodeId(i as u32))).collect(),
        node_up: vec![true; n],
        hb_idle: (0..n as u32).collect(),
        hb_offset: (0..n as u64)
            .map(|i| if cfg.heartbeat_ms == 0 { 0 } else { i * cfg.heartbeat_ms / n as u64 })
            .collect(),
        next_generation: 0,
        launches: launch::Launches::new(cfg.launch, n),
        dirty_all: false,
        dirty_nodes: BTreeSet::new(),
        result: RunResult {
            policy: cfg.policy.clone(),
            workload: workload_name.to_string(),
            seed: cfg.seed,
            nodes: n,
            ..RunResult::default()
        },
        open_jobs: 0,
        last_submit: Time::ZERO,
        core_ticks: 0,
        clock: quanta::Clock::new(),
        carrying_out: false,
        follow_ups: Vec::new(),
        stepping: Vec::new(),
        confirmations: Vec::new(),
        work_events: 0,
        idle_since: None,
        quiet: None,
        progress,
        solves: cfg.isolate_solves.as_ref().map(offload::Solves::new),
    };
    let started = std::time::Instant::now();
    sim.run()?;
    sim.result.wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    sim.result.core_ms = sim.clock.delta_as_nanos(0, sim.core_ticks) as f64 / 1e6;
    sim.result.core_events = sim.core.stats().events;
    sim.result.policy_metrics = sim.core.metrics().clone();
    if let Some(s) = &sim.solves {
        // The answers' events and the policy's count of solves it handed
        // over are the isolation's plumbing: without them a run whose
        // solves all succeed reports exactly what the inline run does.
        sim.result.core_events -= s.pieces.min(sim.result.core_events);
        sim.result.policy_metrics.counters.remove("tetrisched.offloaded_solves");
        sim.result.lost_offloads = s.lost();
    }
    Ok(sim.result)
}

impl<'a> Sim<'a> {
    fn push(&mut self, at: Time, ev: Ev) {
        if ev.is_work() {
            self.work_events += 1;
        }
        self.seq += 1;
        self.queue.push((at, ev, self.seq));
    }

    /// Sends `event` to the core: at once, in a step of its own, or, while a
    /// step's decisions are being carried out, with the follow-ups in the
    /// next step.
    fn core(&mut self, event: Event) -> Result<(), SimError> {
        if self.carrying_out {
            self.follow_ups.push(event);
            return Ok(());
        }
        self.cycle(Some(event))
    }

    /// Steps the core at `now` with `first` (none: only the timers due fire),
    /// carries out its decisions,
    /// and steps again with what they brought back, until nothing is left
    /// (the core's cycle, `sojourn_core::engine`). A refused event is a bug
    /// in the simulator, which makes its own events: the run stops.
    fn cycle(&mut self, first: Option<Event>) -> Result<(), SimError> {
        self.follow_ups.extend(first);
        loop {
            // Confirmations ride with the next step, as they do in the RM
            // (they change nothing a policy sees), and go first: a follow-up
            // may complete the container. The buffers keep their capacity.
            self.stepping.append(&mut self.confirmations);
            self.stepping.append(&mut self.follow_ups);
            let t = self.clock.raw();
            let step = self.core.step(self.now, self.stepping.drain(..));
            self.core_ticks += self.clock.raw().saturating_sub(t);
            let step = step?;
            // Checked in place (`Step::check` would move the step twice).
            if let Some(r) = step.refused.first() {
                return Err(r.error.clone().into());
            }
            if self.cfg.check_invariants {
                self.core.cluster().check_invariants()?;
            }
            let mut decisions = step.decisions;
            self.answer_offloads(&mut decisions)?;
            self.carrying_out = true;
            let carried = self.carry_out(&mut decisions);
            self.core.recycle(decisions);
            self.carrying_out = false;
            carried?;
            if self.follow_ups.is_empty() {
                return Ok(());
            }
        }
    }

    /// With isolated solves: answers the work the step offloaded in the
    /// child and steps again at once with the answers, before any decision
    /// is carried out, so that the plan's decisions join the step's as the
    /// inline solve's would.
    fn answer_offloads(&mut self, decisions: &mut Vec<Decision>) -> Result<(), SimError> {
        let Some(solves) = self.solves.as_mut() else { return Ok(()) };
        loop {
            let work = self.core.take_offloads();
            if work.is_empty() {
                return Ok(());
            }
            // The solve is the policy's work: it counts as time in the core,
            // as it does inline.
            let t = self.clock.raw();
            let answers = solves.answer(work);
            let step = self.core.step(self.now, answers);
            self.core_ticks += self.clock.raw().saturating_sub(t);
            let step = step?;
            if let Some(r) = step.refused.first() {
                return Err(r.error.clone().into());
            }
            decisions.extend(step.decisions);
        }
    }

    fn run(&mut self) -> Result<(), SimError> {
        for (i, shape) in self.node_shapes.nodes.clone().into_iter().enumerate() {
            self.add_node(i, shape)?;
        }
        for f in self.cfg.failures.clone() {
            // (`simulate` checked the node is in the cluster: it fits a NodeId.)
            let node = f.node as u32;
            self.push(f.at, Ev::NodeFail { node });
            if let Some(after) = f.recover_after_ms {
                self.push(f.at.plus(after), Ev::NodeRecover { node });
            }
        }
        self.pull_next_job()?;
        self.push(Time::ZERO, Ev::Sample);
        loop {
            let next_event = self.queue.peek().map(|(t, _, _)| *t);
            let next_timer = self.core.next_wake();
            let next = match (next_event, next_timer) {
                (None, None) => break,
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) => a,
                (None, Some(b)) => b,
            };
            if self.open_jobs == 0 && self.lookahead.is_none() {
                break; // every job is done: only periodic wake-ups are left
            }
            if self.cfg.until.is_some_and(|u| next > u) {
                break;
            }
            self.now = next;
            let woke = next_timer == Some(next);
            if woke {
                self.cycle(None)?;
            }
            while let Some((t, ev, _)) = self.queue.peek().copied() {
                if t != self.now {
                    break;
                }
                self.queue.pop();
                if ev.is_work() {
                    self.work_events -= 1;
                }
                self.handle(ev)?;
            }
            if self.cfg.heartbeat_ms == 0 {
                self.offer_dirty()?;
            }
            self.wake_heartbeats();
            if self.stalled(woke) {
                log::warn!(
                    "{}: {} containers can never be placed; stopping at {}",
                    self.cfg.policy,
                    self.core.cluster().pending_containers(),
                    self.now
                );
                break;
            }
        }
        self.result.unfinished =
            self.open_jobs as u64 + self.dags.held() as u64 + self.lookahead.take().map_or(0, |_| 1);
        (self.result.queries, self.result.unfinished_queries) = self.dags.records();
        for j in self.stream.by_ref() {
            j?;
            self.result.unfinished += 1;
        }
        Ok(())
    }

    fn handle(&mut self, ev: Ev) -> Result<(), SimError> {
        match ev {
            Ev::Arrival => self.arrive()?,
            Ev::AmReady { job } => self.start_next_group(job as usize)?,
            Ev::StartGroup { job, group } => self.start_group(job as usize, group as usize)?,
            Ev::TaskDone { container, generation } => self.task_done(container, generation)?,
            Ev::Heartbeat { node } => {
                self.hb_idle.push(node);
                let node = node as usize;
                if self.node_up[node] && self.core.cluster().pending_containers() > 0 {
                    self.core(Event::NodeHeartbeat { node: self.node_ids[node] })?;
                }
            }
            Ev::Sample => self.sample(),
            Ev::Progress { container, generation } => self.report_progress(container, generation)?,
            Ev::NodeFail { node } => self.fail_node(node as usize)?,
            Ev::NodeRecover { node } => {
                let node = node as usize;
                if !self.node_up[node] {
                    self.node_up[node] = true;
                    let shape = self.node_shapes.nodes[node].clone();
                    self.add_node(node, shape)?;
                    self.dirty_all = true;
                }
            }
        }
        Ok(())
    }

    /// A container on `node` ended: in event-driven mode the node is offered
    /// (`offer_dirty`); a heartbeat offers it otherwise.
    fn freed(&mut self, node: NodeId) {
        if self.cfg.heartbeat_ms == 0 {
            self.dirty_nodes.insert(node.0 as usize);
        }
    }

    /// Event-driven scheduling: after new demand every free node is offered
    /// (`ScheduleAll`); after a completion only the node it freed, which is
    /// all that changed (and keeps a long backlog from being rescanned for
    /// every finished task).
    fn offer_dirty(&mut self) -> Result<(), SimError> {
        if std::mem::take(&mut self.dirty_all) {
            self.dirty_nodes.clear();
            return self.core(Event::ScheduleAll);
        }
        while let Some(node) = self.dirty_nodes.pop_first() {
            if self.node_up[node] && self.core.cluster().pending_containers() > 0 {
                self.core(Event::NodeHeartbeat { node: self.node_ids[node] })?;
            }
        }
        Ok(())
    }

    /// Nothing can change any more: no task runs (AMs may; suspended tasks
    /// wait for a resume that only a policy decision brings), no job or failure is due,
    /// no policy timer is set, and the heartbeats of two full intervals
    /// have placed nothing. Waiting demand would never be met.
    ///
    /// Or the same with a policy timer set, when [`QUIET_WAKES`] of its
    /// wake-ups in a row, over at least those two intervals, started
    /// nothing either: a policy can plan a start it never makes (TetriSched
    /// deferring a task gang that does not fit beside the AMs waiting for
    /// it, to when it expects them to end), and its wake-ups alone would
    /// keep the run going forever.
    fn stalled(&mut self, woke: bool) -> bool {
        // (`any` over the map is order-independent, so determinism holds.)
        let quiet = self.work_events == 0
            && !self.containers.values().any(|l| matches!(l.work, Work::Task { suspended: false, .. }));
        let wait = 2 * self.cfg.heartbeat_ms.max(self.cfg.sample_ms);
        let held = self.containers.len();
        if !quiet || self.quiet.is_some_and(|(_, _, n)| n != held) {
            self.quiet = None;
        }
        if quiet && self.core.next_wake().is_some() {
            let (since, wakes, _) = self.quiet.get_or_insert((self.now, 0, held));
            *wakes += u32::from(woke);
            if *wakes >= QUIET_WAKES && self.now.since(*since) > wait {
                return true;
            }
        }
        if !quiet || self.core.next_wake().is_some() {
            self.idle_since = None;
            return false;
        }
        let since = *self.idle_since.get_or_insert(self.now);
        self.now.since(since) > wait
    }

    fn sample(&mut self) {
        let cl = self.core.cluster();
        let total = cl.total();
        let used = cl.allocated();
        let frac = |u: f64, t: f64| if t > 0.0 { u / t } else { 0.0 };
        self.result.utilization.push(UtilSample {
            t: self.now,
            memory: frac(used.memory_mb as f64, total.memory_mb as f64),
            vcores: frac(used.vcores as f64, total.vcores as f64),
            running_jobs: self.open_jobs as u32,
            pending_containers: cl.pending_containers(),
        });
        if let Some(i) = self.fairness.index(&total, self.open_jobs) {
            self.result.fairness.push(i);
        }
        if self.open_jobs > 0 || self.lookahead.is_some() {
            self.push(self.now.plus(self.cfg.sample_ms.max(1)), Ev::Sample);
        }
    }
}
