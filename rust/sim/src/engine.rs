//! The discrete-event simulator. It plays YARN's part around the same
//! `sojourn_core::Core` the shim drives: NodeManagers that heartbeat, an
//! ApplicationMaster per job that asks for its tasks phase by phase, tasks
//! that run for their trace duration, and the decisions' effects (a killed
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

use crate::run::{JobRecord, RunResult, UtilSample};
use crate::workload::{ClusterSpec, JobSpec, JobStream, WorkloadError};
use sojourn_core::{
    AppId, AppSpec, Ask, ContainerId, Core, CoreConfig, CoreError, Decision, Event, Locality, NodeId, NodeSpec,
    Outcome, PreemptMode, Priority, Resources, Time,
};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

/// How a run is set up, beside the policy.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub policy: String,
    /// Policy parameters, without the `yarn.scheduler.sojourn.<policy>.` prefix.
    pub params: BTreeMap<String, String>,
    pub seed: u64,
    /// NodeManager heartbeat interval (YARN: 1000 ms); 0 = event-driven.
    pub heartbeat_ms: u64,
    /// Ask for an ApplicationMaster container of this size before a job's
    /// tasks, as YARN does; `None` runs tasks without an AM (the papers).
    pub am_container: Option<Resources>,
    /// Time from AM container start to its first task request (ms).
    pub am_startup_ms: u64,
    /// AMs talk to the RM every this many ms, from their job's submission
    /// (YARN and SLS: 1000). A container the RM allocates is launched, and a
    /// completion it reports is acted on, only at one of the AM's heartbeats.
    /// 0: AMs act the instant the RM decides (the papers' simulators).
    pub am_heartbeat_ms: u64,
    /// AM heartbeats between the allocate call that carries a response and
    /// the AM acting on it: 0 for MapReduce's AM (it launches containers as
    /// the response arrives); 1 for SLS's AM simulator, which queues each
    /// response and processes it on its next step (yarn.md §3.1).
    pub am_response_lag: u32,
    /// Hand each ask its mean task duration as an estimate.
    pub estimates: bool,
    /// Network delay handed to distributed-scheduler emulations (ms).
    pub network_delay_ms: u64,
    /// Node failures: (at, node index, recover after ms or never).
    pub failures: Vec<NodeFailure>,
    /// Utilization and fairness sampling period (ms).
    pub sample_ms: u64,
    /// Stop at this simulated time (jobs not finished are counted unfinished).
    pub until: Option<Time>,
    /// Check the mirror's invariants after every event (slow; for tests).
    pub check_invariants: bool,
    /// MapReduce's reduce slowstart: a job asks for its reduces once this
    /// share of its maps has finished (`mapreduce.job.reduce.slowstart.
    /// completedmaps`). 1 (the default): after the last map, as SLS's AM
    /// simulator does; YARN's default is 0.05; the HFSP thesis used 0.8.
    pub slowstart: f64,
    /// Every running task reports its progress this often (ms; 0 = never).
    /// YARN's RM does not see task progress (only the AM does), so it is off
    /// by default; HFSP's Δ rule (hfsp.md §2) needs it, as Hadoop 1's
    /// JobTracker had it.
    pub progress_ms: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            policy: "fifo".into(),
            params: BTreeMap::new(),
            seed: 1,
            heartbeat_ms: 1000,
            am_container: None,
            am_startup_ms: 0,
            am_heartbeat_ms: 0,
            am_response_lag: 0,
            slowstart: 1.0,
            estimates: true,
            network_delay_ms: 0,
            failures: Vec::new(),
            sample_ms: 60_000,
            until: None,
            check_invariants: false,
            progress_ms: 0,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeFailure {
    pub at: Time,
    pub node: usize,
    pub recover_after_ms: Option<u64>,
}

#[derive(Debug)]
pub enum SimError {
    Workload(WorkloadError),
    Core(CoreError),
    Config(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Workload(e) => write!(f, "{e}"),
            SimError::Core(e) => write!(f, "{e}"),
            SimError::Config(m) => write!(f, "{m}"),
        }
    }
}
impl std::error::Error for SimError {}
impl From<WorkloadError> for SimError {
    fn from(e: WorkloadError) -> Self {
        SimError::Workload(e)
    }
}
impl From<CoreError> for SimError {
    fn from(e: CoreError) -> Self {
        SimError::Core(e)
    }
}

/// Same-time events run in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A task's container finished (or its completion reached the RM).
    TaskDone {
        container: ContainerId,
        generation: u32,
    },
    NodeFail {
        node: usize,
    },
    NodeRecover {
        node: usize,
    },
    /// The next job of the stream arrives.
    Arrival,
    /// An AM has started and asks for its first phase.
    AmReady {
        job: usize,
    },
    /// An AM asks for group `group` of its tasks (the next phase, at one of
    /// its heartbeats), or ends when no group is left.
    StartGroup {
        job: usize,
        group: usize,
    },
    Heartbeat {
        node: usize,
    },
    Sample,
    /// A running task reports its progress (as a TaskTracker's heartbeat
    /// carried it to HFSP's scheduler).
    Progress {
        container: ContainerId,
        generation: u32,
    },
}

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
/// the duration left.
#[derive(Clone, Copy, Debug)]
struct Task {
    group: usize,
    index: u32,
    remaining_ms: u64,
}

impl Task {
    /// Its whole run time in the trace (ms), if the job has it.
    fn full_ms(&self, spec: &JobSpec) -> Option<u64> {
        spec.groups.get(self.group)?.durations_ms.get(self.index as usize).copied()
    }
}

/// A group of a job's tasks (a MapReduce phase) that has been asked for.
struct GroupRun {
    /// Tasks not yet placed (re-runs at the front).
    waiting: VecDeque<Task>,
    /// Tasks not yet finished.
    unfinished: u32,
}

struct Job {
    spec: JobSpec,
    app: AppId,
    /// Groups asked for and not finished, by index (two at once while
    /// reduces start before the last map, see `SimConfig::slowstart`).
    running: BTreeMap<usize, GroupRun>,
    /// The first group not yet asked for.
    next_group: usize,
    am: Option<ContainerId>,
    needs_am: bool,
    /// What its containers hold (for the fairness index).
    alloc: Resources,
}

/// What a container is doing.
#[derive(Clone, Copy, Debug)]
enum Work {
    Am { job: usize },
    Task { job: usize, task: Task, finish_at: Time, generation: u32, suspended: bool },
}

struct Sim<'a> {
    cfg: &'a SimConfig,
    core: Core,
    queue: BinaryHeap<Reverse<(Time, Ev, u64)>>,
    seq: u64,
    now: Time,
    stream: JobStream,
    lookahead: Option<JobSpec>,
    jobs: Vec<Option<Job>>,
    containers: IdMap<(NodeId, Work)>, // looked up, never iterated in an order that matters
    /// Resources of each live container (for the fairness index).
    sizes: IdMap<Resources>,
    /// Σ and Σ² of open jobs' dominant shares, kept as allocations change.
    share_sum: f64,
    share_sq: f64,
    /// Allocation and open jobs per queue.
    queue_alloc: BTreeMap<String, (Resources, u32)>,
    total0: Resources,
    node_ids: Vec<NodeId>,
    node_shapes: ClusterSpec,
    node_by_name: BTreeMap<String, NodeId>,
    node_up: Vec<bool>,
    hb_active: Vec<bool>,
    hb_offset: Vec<u64>,
    next_generation: u32,
    /// Event-driven mode: new demand or capacity anywhere; offer all nodes.
    dirty_all: bool,
    /// Event-driven mode: nodes whose resources were freed; offer them.
    dirty_nodes: BTreeSet<usize>,
    result: RunResult,
    open_jobs: usize,
    last_submit: Time,
    core_ns: u128,
    /// True while a step's decisions are carried out: the events they bring
    /// back (a rejection, a killed container's completion, a re-ask) wait
    /// in `follow_ups` for the next step.
    carrying_out: bool,
    follow_ups: Vec<Event>,
    /// Events in the queue other than heartbeats and samples.
    work_events: u64,
    idle_since: Option<Time>,
    progress: Option<&'a mut dyn FnMut(usize)>,
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
    let policy = sojourn_policies::build(&cfg.policy, &cfg.params)?;
    let core =
        Core::new(policy, CoreConfig { seed: cfg.seed, max_allocation: None, network_delay_ms: cfg.network_delay_ms });
    let n = cluster.nodes.len();
    let mut sim = Sim {
        cfg,
        core,
        queue: BinaryHeap::new(),
        seq: 0,
        now: Time::ZERO,
        stream: jobs,
        lookahead: None,
        jobs: Vec::new(),
        containers: IdMap::default(),
        sizes: IdMap::default(),
        share_sum: 0.0,
        share_sq: 0.0,
        queue_alloc: BTreeMap::new(),
        total0: cluster.total(),
        node_ids: (0..n as u32).map(NodeId).collect(),
        node_shapes: cluster.clone(),
        node_by_name: cluster.nodes.iter().enumerate().map(|(i, s)| (s.name.clone(), NodeId(i as u32))).collect(),
        node_up: vec![true; n],
        hb_active: vec![false; n],
        hb_offset: (0..n as u64)
            .map(|i| if cfg.heartbeat_ms == 0 { 0 } else { i * cfg.heartbeat_ms / n as u64 })
            .collect(),
        next_generation: 0,
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
        core_ns: 0,
        carrying_out: false,
        follow_ups: Vec::new(),
        work_events: 0,
        idle_since: None,
        progress,
    };
    let started = std::time::Instant::now();
    sim.run()?;
    sim.result.wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    sim.result.core_ms = sim.core_ns as f64 / 1e6;
    sim.result.core_events = sim.core.stats().events;
    sim.result.policy_metrics = sim.core.metrics().clone();
    Ok(sim.result)
}

impl<'a> Sim<'a> {
    fn push(&mut self, at: Time, ev: Ev) {
        if ev.is_work() {
            self.work_events += 1;
        }
        self.seq += 1;
        self.queue.push(Reverse((at, ev, self.seq)));
    }

    /// Sends `event` to the core: at once, in a step of its own, or, while a
    /// step's decisions are being carried out, with the follow-ups in the
    /// next step.
    fn core(&mut self, event: Event) -> Result<(), SimError> {
        if self.carrying_out {
            self.follow_ups.push(event);
            return Ok(());
        }
        self.cycle(vec![event])
    }

    /// Steps the core at `now` with `events`, carries out its decisions,
    /// and steps again with what they brought back, until nothing is left
    /// (the core's cycle, `sojourn_core::engine`). A refused event is a bug
    /// in the simulator, which makes its own events: the run stops.
    fn cycle(&mut self, mut events: Vec<Event>) -> Result<(), SimError> {
        loop {
            let t = std::time::Instant::now();
            let step = self.core.step(self.now, std::mem::take(&mut events));
            self.core_ns += t.elapsed().as_nanos();
            let step = step?.check()?;
            if self.cfg.check_invariants {
                self.core.cluster().check_invariants()?;
            }
            self.carrying_out = true;
            let carried = self.carry_out(step.decisions);
            self.carrying_out = false;
            events = std::mem::take(&mut self.follow_ups);
            carried?;
            if events.is_empty() {
                return Ok(());
            }
        }
    }

    fn run(&mut self) -> Result<(), SimError> {
        for (i, shape) in self.node_shapes.nodes.clone().into_iter().enumerate() {
            self.add_node(i, shape)?;
        }
        for f in self.cfg.failures.clone() {
            self.push(f.at, Ev::NodeFail { node: f.node });
            if let Some(after) = f.recover_after_ms {
                self.push(f.at.plus(after), Ev::NodeRecover { node: f.node });
            }
        }
        self.pull_next_job()?;
        self.push(Time::ZERO, Ev::Sample);
        loop {
            let next_event = self.queue.peek().map(|Reverse((t, _, _))| *t);
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
            if next_timer == Some(next) {
                self.cycle(Vec::new())?;
            }
            while let Some(Reverse((t, ev, _))) = self.queue.peek().copied() {
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
            if self.stalled() {
                log::warn!(
                    "{}: {} containers can never be placed; stopping at {}",
                    self.cfg.policy,
                    self.core.cluster().pending_containers(),
                    self.now
                );
                break;
            }
        }
        self.result.unfinished = self.open_jobs as u64 + self.lookahead.take().map_or(0, |_| 1);
        for j in self.stream.by_ref() {
            j?;
            self.result.unfinished += 1;
        }
        Ok(())
    }

    fn add_node(&mut self, i: usize, shape: crate::workload::NodeShape) -> Result<(), SimError> {
        self.core(Event::NodeAdded(NodeSpec {
            node: self.node_ids[i],
            name: shape.name,
            rack: shape.rack,
            labels: shape.labels,
            capacity: shape.capacity,
        }))
    }

    fn handle(&mut self, ev: Ev) -> Result<(), SimError> {
        match ev {
            Ev::Arrival => self.arrive()?,
            Ev::AmReady { job } => self.start_next_group(job)?,
            Ev::StartGroup { job, group } => self.start_group(job, group)?,
            Ev::TaskDone { container, generation } => self.task_done(container, generation)?,
            Ev::Heartbeat { node } => {
                self.hb_active[node] = false;
                if self.node_up[node] && self.core.cluster().pending_containers() > 0 {
                    self.core(Event::NodeHeartbeat { node: self.node_ids[node] })?;
                }
            }
            Ev::Sample => self.sample(),
            Ev::Progress { container, generation } => self.report_progress(container, generation)?,
            Ev::NodeFail { node } => self.fail_node(node)?,
            Ev::NodeRecover { node } => {
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
    fn stalled(&mut self) -> bool {
        // (`any` over the map is order-independent, so determinism holds.)
        let idle = self.work_events == 0
            && self.core.next_wake().is_none()
            && !self.containers.values().any(|(_, w)| matches!(w, Work::Task { suspended: false, .. }));
        if !idle {
            self.idle_since = None;
            return false;
        }
        let since = *self.idle_since.get_or_insert(self.now);
        self.now.since(since) > 2 * self.cfg.heartbeat_ms.max(self.cfg.sample_ms)
    }

    /// In heartbeat mode, nodes heartbeat on their grid while any demand waits.
    fn wake_heartbeats(&mut self) {
        if self.cfg.heartbeat_ms == 0 || self.core.cluster().pending_containers() == 0 {
            return;
        }
        for i in 0..self.hb_active.len() {
            if !self.hb_active[i] && self.node_up[i] {
                self.hb_active[i] = true;
                let at = self.next_grid(i, self.now.plus(1));
                self.push(at, Ev::Heartbeat { node: i });
            }
        }
    }

    /// The first heartbeat of node `i` at or after `t`.
    fn next_grid(&self, i: usize, t: Time) -> Time {
        let hb = self.cfg.heartbeat_ms;
        if hb == 0 {
            return t;
        }
        let off = self.hb_offset[i];
        if t.0 <= off {
            return Time(off);
        }
        let k = (t.0 - off).div_ceil(hb);
        Time(off + k * hb)
    }

    fn pull_next_job(&mut self) -> Result<(), SimError> {
        match self.stream.next() {
            Some(j) => {
                let j = j?;
                if j.submit < self.last_submit {
                    return Err(SimError::Workload(WorkloadError::new(
                        &self.result.workload,
                        0,
                        format!(
                            "job {} is submitted at {} before the previous job ({})",
                            j.id, j.submit, self.last_submit
                        ),
                    )));
                }
                self.last_submit = j.submit;
                self.push(j.submit, Ev::Arrival);
                self.lookahead = Some(j);
            }
            None => self.lookahead = None,
        }
        Ok(())
    }

    fn arrive(&mut self) -> Result<(), SimError> {
        let Some(spec) = self.lookahead.take() else { return Ok(()) };
        self.pull_next_job()?;
        let idx = self.jobs.len();
        let app = AppId(idx as u32);
        self.queue_alloc.entry(spec.queue.clone()).or_insert((Resources::ZERO, 0)).1 += 1;
        self.core(Event::AppAdded(AppSpec {
            app,
            name: spec.name.clone(),
            queue: spec.queue.clone(),
            user: spec.user.clone(),
            priority: spec.priority,
            deadline: spec.deadline,
            value: spec.value,
        }))?;
        self.open_jobs += 1;
        let needs_am = self.cfg.am_container.is_some();
        self.jobs.push(Some(Job {
            spec,
            app,
            running: BTreeMap::new(),
            next_group: 0,
            am: None,
            needs_am,
            alloc: Resources::ZERO,
        }));
        self.dirty_all = true;
        match self.cfg.am_container {
            Some(am) => self
                .core(Event::AsksUpdated { app, asks: vec![Ask::new(Priority::AM, am, 1, sojourn_core::Phase::Am)] }),
            None => self.start_group(idx, 0),
        }
    }

    fn start_next_group(&mut self, job: usize) -> Result<(), SimError> {
        let g = self.jobs[job].as_ref().map_or(0, |j| j.next_group);
        self.start_group(job, g)
    }

    /// Asks for every task of group `g` of `job` (unless asked already), or
    /// finishes the job when no group is left and none runs.
    fn start_group(&mut self, job: usize, g: usize) -> Result<(), SimError> {
        let Some(j) = self.jobs[job].as_mut() else { return Ok(()) };
        if g < j.next_group {
            return Ok(()); // started early (slowstart)
        }
        // Skip empty groups.
        let mut g = g;
        while g < j.spec.groups.len() && j.spec.groups[g].durations_ms.is_empty() {
            g += 1;
        }
        j.next_group = (g + 1).min(j.spec.groups.len());
        if g >= j.spec.groups.len() {
            if j.running.is_empty() {
                return self.finish_job(job);
            }
            return Ok(());
        }
        let grp = &j.spec.groups[g];
        let waiting = grp
            .durations_ms
            .iter()
            .enumerate()
            .map(|(i, d)| Task { group: g, index: i as u32, remaining_ms: (*d).max(1) })
            .collect();
        j.running.insert(g, GroupRun { waiting, unfinished: grp.durations_ms.len() as u32 });
        self.send_ask(job, g)
    }

    /// Tells the core how many tasks of group `g` of the job wait.
    fn send_ask(&mut self, job: usize, g: usize) -> Result<(), SimError> {
        let Some(j) = self.jobs[job].as_ref() else { return Ok(()) };
        let Some(run) = j.running.get(&g) else { return Ok(()) };
        let grp = &j.spec.groups[g];
        let mut ask = Ask::new(grp.priority, grp.resources, run.waiting.len() as u32, grp.phase);
        if self.cfg.estimates {
            let n = grp.durations_ms.len().max(1) as u64;
            ask.est_task_ms = Some(grp.durations_ms.iter().sum::<u64>() / n);
        }
        if !grp.hosts.is_empty() {
            let mut per_node: BTreeMap<NodeId, u32> = BTreeMap::new();
            for t in &run.waiting {
                if let Some(Some(h)) = grp.hosts.get(t.index as usize) {
                    if let Some(n) = self.node_by_name.get(h) {
                        *per_node.entry(*n).or_insert(0) += 1;
                    }
                }
            }
            ask.locality = per_node.into_iter().map(|(n, c)| Locality::Node(n, c)).collect();
        }
        let app = j.app;
        self.dirty_all = true;
        self.core(Event::AsksUpdated { app, asks: vec![ask] })
    }

    fn finish_job(&mut self, job: usize) -> Result<(), SimError> {
        if let Some(am) = self.jobs[job].as_ref().and_then(|j| j.am) {
            self.account(job, am, None);
        }
        let Some(j) = self.jobs[job].take() else { return Ok(()) };
        let share = j.alloc.dominant_share(&self.total0);
        self.share_sum -= share;
        self.share_sq -= share * share;
        if let Some(q) = self.queue_alloc.get_mut(&j.spec.queue) {
            q.0 = q.0.saturating_sub(&j.alloc);
            q.1 = q.1.saturating_sub(1);
        }
        if let Some(am) = j.am {
            if let Some((node, _)) = self.containers.remove(&am) {
                self.dirty_nodes.insert(node.0 as usize);
            }
            self.core(Event::ContainerCompleted { container: am, outcome: Outcome::Released })?;
        }
        self.core(Event::AppRemoved { app: j.app })?;
        self.open_jobs -= 1;
        let s = &j.spec;
        self.result.jobs.push(JobRecord {
            id: s.id,
            name: s.name.clone(),
            queue: s.queue.clone(),
            user: s.user.clone(),
            submit: s.submit,
            finish: self.now,
            tasks: s.task_count() as u32,
            work_ms: s.work_ms(),
            ideal_ms: s.ideal_ms(),
            mean_task_ms: s.mean_task_ms(),
        });
        self.result.makespan = self.now;
        let done = self.result.jobs.len();
        if done.is_multiple_of(256) {
            if let Some(p) = self.progress.as_mut() {
                p(done);
            }
        }
        Ok(())
    }

    fn carry_out(&mut self, decisions: Vec<Decision>) -> Result<(), SimError> {
        for d in decisions {
            match d {
                Decision::Allocate { container, app, priority, node, resources } => {
                    self.account(app.0 as usize, container, Some(resources));
                    self.start(container, app, priority, node)?
                }
                Decision::Preempt { container, mode: PreemptMode::Kill } => self.kill(container)?,
                Decision::Preempt { container, mode: PreemptMode::Suspend } => self.suspend(container),
                Decision::Resume { container } => self.resume(container),
                Decision::Reserve { .. } | Decision::Unreserve { .. } => {}
            }
        }
        Ok(())
    }

    fn start(&mut self, container: ContainerId, app: AppId, priority: Priority, node: NodeId) -> Result<(), SimError> {
        let job = app.0 as usize;
        let Some(j) = self.jobs.get_mut(job).and_then(|j| j.as_mut()) else {
            self.sizes.remove(&container);
            return self.core(Event::Rejected {
                decision: Decision::Allocate { container, app, priority, node, resources: Resources::ZERO },
                reason: "application finished".into(),
                kind: sojourn_core::RefusalKind::Never,
            });
        };
        if priority == Priority::AM && j.needs_am {
            j.needs_am = false;
            j.am = Some(container);
            self.containers.insert(container, (node, Work::Am { job }));
            let ready = self.am_tick_after(job, self.now.plus(self.cfg.am_startup_ms));
            self.push(ready, Ev::AmReady { job });
            return Ok(());
        }
        // The container goes to the group asking at its priority.
        let spec = &j.spec;
        let task = j
            .running
            .iter_mut()
            .find(|(g, r)| spec.groups[**g].priority == priority && !r.waiting.is_empty())
            .and_then(|(_, r)| r.waiting.pop_front());
        let Some(task) = task else {
            // More containers than waiting tasks: give it back, as an AM does.
            self.account(job, container, None);
            return self.core(Event::ContainerCompleted { container, outcome: Outcome::Released });
        };
        let generation = self.bump_generation();
        // The RM holds the container from now; the task runs once the AM has
        // heard of it and launched it.
        let launch = self.am_acts(job, self.now);
        let finish_at = launch.plus(task.remaining_ms);
        self.containers.insert(container, (node, Work::Task { job, task, finish_at, generation, suspended: false }));
        let report = self.next_grid(node.0 as usize, finish_at);
        self.push(report, Ev::TaskDone { container, generation });
        self.schedule_progress(container, generation);
        self.result.task_events += 1;
        Ok(())
    }

    fn schedule_progress(&mut self, container: ContainerId, generation: u32) {
        if self.cfg.progress_ms > 0 {
            self.push(self.now.plus(self.cfg.progress_ms), Ev::Progress { container, generation });
        }
    }

    /// A running task's progress: the share of its run time done.
    fn report_progress(&mut self, container: ContainerId, generation: u32) -> Result<(), SimError> {
        let Some((_, Work::Task { job, task, finish_at, generation: g, suspended: false, .. })) =
            self.containers.get(&container)
        else {
            return Ok(());
        };
        if *g != generation || *finish_at <= self.now {
            return Ok(());
        }
        let Some(j) = self.jobs.get(*job).and_then(|j| j.as_ref()) else { return Ok(()) };
        let Some(total) = task.full_ms(&j.spec).filter(|t| *t > 0) else { return Ok(()) };
        let left = finish_at.since(self.now);
        let progress = (1.0 - left as f64 / total as f64).clamp(0.0, 1.0);
        self.schedule_progress(container, generation);
        self.core(Event::ContainerProgress { container, progress, sort_finished: None })
    }

    /// Books a container's resources to its job and queue (`Some`) or takes
    /// them off (`None`), keeping the fairness sums current.
    fn account(&mut self, job: usize, container: ContainerId, add: Option<Resources>) {
        let res = match add {
            Some(r) => {
                self.sizes.insert(container, r);
                r
            }
            None => match self.sizes.remove(&container) {
                Some(r) => r,
                None => return,
            },
        };
        let total = self.total0;
        let Some(j) = self.jobs.get_mut(job).and_then(|j| j.as_mut()) else { return };
        let before = j.alloc.dominant_share(&total);
        j.alloc = if add.is_some() { j.alloc + res } else { j.alloc.saturating_sub(&res) };
        let after = j.alloc.dominant_share(&total);
        self.share_sum += after - before;
        self.share_sq += after * after - before * before;
        if let Some(q) = self.queue_alloc.get_mut(&j.spec.queue) {
            q.0 = if add.is_some() { q.0 + res } else { q.0.saturating_sub(&res) };
        }
    }

    fn bump_generation(&mut self) -> u32 {
        self.next_generation = self.next_generation.wrapping_add(1);
        self.next_generation
    }

    fn task_done(&mut self, container: ContainerId, generation: u32) -> Result<(), SimError> {
        let (job, node, group) = match self.containers.get(&container) {
            Some((node, Work::Task { job, task, generation: g, suspended: false, .. })) if *g == generation => {
                (*job, *node, task.group)
            }
            _ => return Ok(()), // killed, suspended or lost since
        };
        self.containers.remove(&container);
        self.account(job, container, None);
        self.result.task_events += 1;
        self.dirty_nodes.insert(node.0 as usize);
        self.core(Event::ContainerCompleted { container, outcome: Outcome::Finished })?;
        let Some(j) = self.jobs[job].as_mut() else { return Ok(()) };
        let Some(run) = j.running.get_mut(&group) else { return Ok(()) };
        run.unfinished -= 1;
        let (left, total) = (run.unfinished, j.spec.groups[group].durations_ms.len());
        if left == 0 {
            j.running.remove(&group);
        }
        // The next group starts when this one is done, or (reduces after
        // maps) once the slowstart share of this one has finished.
        let next = j.next_group;
        let early = next == group + 1
            && left > 0
            && j.spec.groups.get(next).is_some_and(|g| g.phase == sojourn_core::Phase::Reduce)
            && (total - left as usize) as f64 >= self.cfg.slowstart * total as f64;
        if !(early || (left == 0 && j.running.is_empty())) {
            return Ok(());
        }
        if self.cfg.am_heartbeat_ms == 0 {
            return self.start_group(job, next);
        }
        let at = self.am_acts(job, self.now);
        self.push(at, Ev::StartGroup { job, group: next });
        Ok(())
    }

    /// The first heartbeat of `job`'s AM strictly after `t` (`t` itself when
    /// AMs act at once). AM heartbeats fall at submission + k × interval, as
    /// SLS schedules its AM simulators.
    fn am_tick_after(&self, job: usize, t: Time) -> Time {
        let hb = self.cfg.am_heartbeat_ms;
        let Some(j) = self.jobs.get(job).and_then(|j| j.as_ref()) else { return t };
        if hb == 0 {
            return t;
        }
        let base = j.spec.submit.0.min(t.0);
        Time(base + ((t.0 - base) / hb + 1) * hb)
    }

    /// When `job`'s AM acts on something the RM did at `t`: the allocate call
    /// at its next heartbeat carries it, and it acts `am_response_lag`
    /// heartbeats later.
    fn am_acts(&self, job: usize, t: Time) -> Time {
        self.am_tick_after(job, t).plus(self.cfg.am_heartbeat_ms * u64::from(self.cfg.am_response_lag))
    }

    /// A killed task loses its work and waits to run again from scratch.
    fn kill(&mut self, container: ContainerId) -> Result<(), SimError> {
        self.result.preemptions_kill += 1;
        let work = self.containers.remove(&container);
        if let Some((_, Work::Task { job, .. } | Work::Am { job })) = work {
            self.account(job, container, None);
        }
        self.core(Event::ContainerCompleted { container, outcome: Outcome::Preempted })?;
        if let Some((node, w)) = work {
            self.dirty_nodes.insert(node.0 as usize);
            self.requeue(w)?;
        }
        Ok(())
    }

    /// Puts the work of a killed or lost container back in its job's queue.
    fn requeue(&mut self, work: Work) -> Result<(), SimError> {
        match work {
            Work::Task { job, task, finish_at, suspended, .. } => {
                let Some(j) = self.jobs[job].as_mut() else { return Ok(()) };
                let full = task.full_ms(&j.spec).unwrap_or(1).max(1);
                let done_ms = if suspended {
                    full.saturating_sub(task.remaining_ms)
                } else {
                    full.saturating_sub(finish_at.since(self.now))
                };
                self.result.lost_work_ms += done_ms;
                let Some(run) = j.running.get_mut(&task.group) else { return Ok(()) };
                run.waiting.push_front(Task { remaining_ms: full, ..task });
                self.send_ask(job, task.group)
            }
            Work::Am { job } => {
                // The AM is asked for again; finished tasks are kept (MapReduce
                // AM recovery), running ones keep running.
                let Some(j) = self.jobs[job].as_mut() else { return Ok(()) };
                j.am = None;
                j.needs_am = true;
                let (app, am) = (j.app, self.cfg.am_container.unwrap_or(Resources::new(1024, 1)));
                self.core(Event::AsksUpdated {
                    app,
                    asks: vec![Ask::new(Priority::AM, am, 1, sojourn_core::Phase::Am)],
                })
            }
        }
    }

    fn suspend(&mut self, container: ContainerId) {
        self.result.preemptions_suspend += 1;
        if let Some((_, Work::Task { task, finish_at, suspended, .. })) = self.containers.get_mut(&container) {
            if !*suspended {
                // Not launched yet: all of its work is left.
                task.remaining_ms = finish_at.since(self.now).clamp(1, task.remaining_ms.max(1));
                *suspended = true;
            }
        }
    }

    fn resume(&mut self, container: ContainerId) {
        let generation = self.bump_generation();
        let now = self.now;
        let Some((node, Work::Task { task, finish_at, generation: g, suspended, .. })) =
            self.containers.get_mut(&container)
        else {
            return;
        };
        if !*suspended {
            return;
        }
        *suspended = false;
        *finish_at = now.plus(task.remaining_ms);
        *g = generation;
        let (node, at) = (node.0 as usize, *finish_at);
        let report = self.next_grid(node, at);
        self.push(report, Ev::TaskDone { container, generation });
        self.schedule_progress(container, generation);
    }

    fn fail_node(&mut self, node: usize) -> Result<(), SimError> {
        if !self.node_up[node] {
            return Ok(());
        }
        self.node_up[node] = false;
        let id = self.node_ids[node];
        let lost: Vec<ContainerId> =
            self.core.cluster().node(id).map(|n| n.containers.iter().copied().collect()).unwrap_or_default();
        self.core(Event::NodeRemoved { node: id })?;
        for c in lost {
            if let Some((_, w)) = self.containers.remove(&c) {
                let (Work::Task { job, .. } | Work::Am { job }) = w;
                self.account(job, c, None);
                self.requeue(w)?;
            }
        }
        self.dirty_all = true;
        Ok(())
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
        // Fairness: Jain's index over the dominant shares of the queues with
        // open jobs, or of the open jobs when only one queue has any.
        let queues: Vec<f64> =
            self.queue_alloc.values().filter(|(_, open)| *open > 0).map(|(r, _)| r.dominant_share(&total)).collect();
        let index = if queues.len() > 1 {
            Some(jain(&queues))
        } else if self.open_jobs > 1 {
            let (n, s, s2) = (self.open_jobs as f64, self.share_sum.max(0.0), self.share_sq);
            Some(if s2 <= 1e-15 { 1.0 } else { (s * s / (n * s2)).min(1.0) })
        } else {
            None
        };
        if let Some(i) = index {
            self.result.fairness.push(i);
        }
        if self.open_jobs > 0 || self.lookahead.is_some() {
            self.push(self.now.plus(self.cfg.sample_ms.max(1)), Ev::Sample);
        }
    }
}

/// Jain's fairness index: (Σx)² / (n Σx²); 1 when all are equal.
pub fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        1.0
    } else {
        s * s / (xs.len() as f64 * s2)
    }
}
