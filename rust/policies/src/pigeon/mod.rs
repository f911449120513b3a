//! `pigeon`: distributed, hierarchical scheduling (Wang et al., SoCC'19;
//! pigeon.md §0, §1, pseudo-code §5).
//!
//! Workers are split into groups of N_w, one **master** each. A job's
//! **distributor** splits its F tasks over the masters: ⌊F/N_g⌋ to every
//! master and the remaining F mod N_g to that many distinct, randomly chosen
//! masters (§1.2, L90; D3–D5). A master keeps a high-priority queue (HTQ,
//! short tasks) and a low-priority one (LTQ, long tasks) served by weighted
//! fair queuing with one integer weight W (W = ∞: strict priority), and idle
//! lists of unreserved (LIW) and reserved (HIW) workers; reserved workers
//! run only short tasks (§1.3, §1.4, [`master`]). Tasks wait at the master,
//! never at a worker (L67, L267).
//!
//! # How the paper's model maps onto the core (pigeon.md §6.2)
//! - **Worker**: one vcore of a node (`--node-vcores 1`: a node is a
//!   worker). Workers are numbered by (node id, slot); a container that
//!   completes frees the worker it was given to.
//! - **Groups**: partitions of NodeManagers, rack-aligned (§6.2). Nodes are
//!   taken in (rack, node id) order and their workers cut into N_g =
//!   round(N/N_w) runs whose sizes differ by at most one (A5); a node joins
//!   the group that holds its first worker, so a node is never split and a
//!   group spans as few racks as its size allows (one rack, e.g.
//!   `/default-rack`: node order; one-slot nodes: exactly the equal cuts).
//!   A cut that no node starts in (nodes wider than N_w) is dropped, so
//!   every master has workers. R = round(pct · group size) workers of each
//!   group are reserved (A3, fixed as in the authors' simulator): slot 0 of
//!   the group's first nodes, then slot 1, ..., spread over its nodes (the
//!   group's first R workers when nodes have one slot). When nodes come or
//!   go the layout is recomputed: idle workers join their new group's lists,
//!   queued tasks are dealt round-robin to the new masters, a batch in
//!   flight to master g goes to g mod N_g.
//! - **Masters** are per-group state in the policy (HTQ, LTQ, LIW, HIW, the
//!   WFQ counter): no process, no slot (A6).
//! - **Tasks**: an ask (app, priority) of `count` containers is `count`
//!   tasks of the job; the class is the ask's `est_task_ms` (the trace's
//!   mean task duration) against the cutoff, short iff ≤ (§1.6, A7). When an
//!   ask grows (a job arrives, its next phase) the deficit of tasks is split
//!   over the masters like a new job. Tasks of one ask are
//!   interchangeable: which duration a container gets is the host's.
//! - **Network delay** d (`network_delay_us`, µs, thesis 0.5 ms): a batch
//!   reaches its master after d, a dispatched task starts on its worker d
//!   later, and a worker's idle notice reaches its master after d (§5.3,
//!   §5.4): an idle cluster starts a task 2d after its job arrives, a queued
//!   task 2d after the previous one on that worker ended. Each delay is a
//!   typed message ([`Pending`], in [`wakes`]) due at the next whole
//!   millisecond, as in `hawk`; times chain in µs so rounding never accumulates. With d = 0
//!   everything happens at once. The worker's result message to the
//!   distributor (K3) is the container's completion: the host ends the job
//!   then, not d later.
//! - **Distributors** have no processing cost, so their number N_s has no
//!   effect and is not modelled (A11). The master's overhead is 0 (L205) and
//!   masters take no worker slot (A6).
//! - A task whose ask has no container left when it reaches its worker
//!   (the ask shrank, the app left) is dropped and the worker sends an idle
//!   notice, as after a finish. A task the node cannot hold (memory, label,
//!   strict locality: outside Pigeon, A13) goes back to the head of its
//!   queue and the worker waits, off the idle lists, for a change on its
//!   node (a container ends, a heartbeat, a capacity update).
//!
//! - **The short/long bit inside the RM** (§6.2): YARN gives no task
//!   estimate, so the bit is the app's queue: with `short_queues` set (the
//!   shipped `hadoop-conf/sojourn-pigeon.xml`: `short`), a task ask of an
//!   app in a listed queue (leaf name or path) is short and one of any
//!   other queue long; AM asks take `unknown_estimate` (short). The queue
//!   was chosen over application tags (the shim does not pass them to the
//!   core) and the app priority (capped at 0 unless the cluster raises
//!   `yarn.cluster.max-application-priority`, and meant for ordering): a
//!   queue is set per job (`mapreduce.job.queuename`), ACL-controlled, and
//!   shown in the RM UI. An ask with an estimate keeps the cutoff rule.
//! - YARN's AMs (the paper has none): an AM ask is a short task (no
//!   estimate) placed like any other, but AM tasks live or running may be
//!   at most `max_am_share` of the workers; beyond it a job's AM waits at
//!   its distributor until an AM ends. Without the cap, AMs fill every
//!   worker and their own tasks can never run.
//!
//! # Decisions on the ambiguities (pigeon.md §6.1)
//! - A1 WFQ: the paper's rule by default (M19, `c < W − 1`: W − 1 short
//!   tasks then a long one), every HTQ dispatch counted, reserved workers'
//!   too; c keeps growing while LTQ is empty; direct dispatches on arrival
//!   do not count. `wfq_mode=pigeon_sim` is the authors' `c ≤ W`.
//! - A2 split: a fresh choice per ask growth with the core's seeded `Rng`:
//!   every master gets ⌊k/N_g⌋, then k mod N_g distinct masters drawn
//!   uniformly get one more.
//! - A3 reserved workers: fixed identities (spread over the group's nodes, see Groups); the
//!   floating variant is not implemented.
//! - A4 idle workers are taken FIFO (least recently idle).
//! - A5 N not a multiple of N_w: groups of ⌊N/N_g⌋ or ⌈N/N_g⌉ workers (one-slot nodes; whole nodes otherwise), the
//!   split uniform over masters (not weighted by size).
//! - A7 class from the trace's mean task duration, ≤ cutoff is short (both
//!   simulators); the report's `--classes cutoff:…` uses the same rule.
//! - A8 the report's percentile slowdown is `sojourn-sim`'s (§3.4).
//! - A9 no warm-up: every job counts.
//!
//! # Metrics
//! `short_tasks`, `long_tasks` (tasks started), `reserved_starts` (short
//! tasks started on reserved workers), `queued_short`, `queued_long`
//! (tasks that had to wait at their master), `wfq_long_turns` (long tasks
//! WFQ chose while short ones waited), `tasks_dropped`, `batches_sent`, and
//! the distributions `queue_delay_ms`, `queue_delay_short_ms`,
//! `queue_delay_long_ms` (arrival at the master to dispatch, per started
//! task).

pub mod analysis;
mod config;
mod distributor;
mod layout;
pub mod master;
mod tally;
mod wakes;
pub use distributor::{split, split_by_size, split_with};

#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;

use crate::common::IdMap;
pub use config::{parse_weight, Config, Weight, WfqMode, PARAMS};
use master::{Master, Served, Task};
use sojourn_core::{
    AppId, Ask, Cluster, ContainerId, Ctx, Decision, Event, NodeId, Params, Policy, Priority, Result, Time,
};
// The per-task lookups (by node, ask, container, app) are `IdMap`s:
// looked up, never walked in their order where it could reach a decision
// (what is collected from them is sorted first).
use std::collections::BTreeSet;
use tally::{Count, Tally};
use wakes::{Addr, Held, Pending, Wakes};

pub fn build(p: &Params) -> Result<Box<dyn Policy>> {
    Ok(Box::new(Pigeon::new(Config::from_params(p)?)))
}

/// One ask of a job: its tasks are interchangeable.
pub type Req = (AppId, Priority);

/// The most tasks of one ask in the masters' queues and in flight at once:
/// an ask of 2^31 containers costs entries for this many, the rest follow
/// as tasks start.
const MAX_TASKS_PER_ASK: u32 = 1 << 16;

/// A worker: one vcore of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorkerKey {
    pub node: NodeId,
    pub slot: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WState {
    /// On its master's LIW or HIW.
    Idle,
    /// A task is on its way to it.
    Sent,
    Running,
    /// Its idle notice is on its way to the master.
    Notifying,
    /// Its node could not hold the task it was given: waits for a change
    /// on the node.
    Blocked,
}

#[derive(Clone, Copy, Debug)]
pub struct Worker {
    pub key: WorkerKey,
    /// Its node's epoch when the layout was made.
    pub epoch: u64,
    pub group: usize,
    pub reserved: bool,
    pub state: WState,
}

#[derive(Clone, Copy, Debug)]
struct NodeInfo {
    epoch: u64,
    /// Index of its first worker in `workers`.
    first: usize,
    slots: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct ReqState {
    pub long: bool,
    /// An AM ask (YARN's; `max_am_share`).
    pub am: bool,
    /// Tasks queued at masters or in flight.
    pub live: u32,
}

pub struct Pigeon {
    pub(crate) cfg: Config,
    nodes: IdMap<NodeId, NodeInfo>,
    pub(crate) workers: Vec<Worker>,
    pub(crate) masters: Vec<Master>,
    /// Workers per group, by master (the distributors' split weighs by it).
    group_sizes: Vec<u32>,
    layout_stale: bool,
    /// Layouts made so far.
    layout_gen: u64,
    pub(crate) reqs: IdMap<Req, ReqState>,
    /// The priorities of each app's reqs (to drop them when it leaves).
    app_reqs: IdMap<AppId, Vec<Priority>>,
    running: IdMap<ContainerId, Held>,
    /// Containers in `running` per app.
    app_running: IdMap<AppId, u32>,
    /// Nodes with blocked workers.
    blocked: BTreeSet<NodeId>,
    /// Reqs short of tasks that could not be sent (no worker yet).
    starved: BTreeSet<Req>,
    /// Reqs above [`MAX_TASKS_PER_ASK`] that started tasks.
    refill: BTreeSet<Req>,
    /// AM tasks live (queued or in flight) and AM containers running, and
    /// AM reqs held at their distributor by `max_am_share`.
    am_live: u32,
    am_running: u32,
    am_waiting: BTreeSet<Req>,
    /// Batches, task starts and idle notices in flight.
    wakes: Wakes,
    /// Metrics of the current call, handed to the core at its end.
    tally: Tally,
    epochs: u64,
}

fn us(t: Time) -> u64 {
    t.ms().saturating_mul(1000)
}

impl Pigeon {
    pub fn new(cfg: Config) -> Pigeon {
        Pigeon {
            cfg,
            nodes: IdMap::default(),
            workers: Vec::new(),
            masters: Vec::new(),
            group_sizes: Vec::new(),
            layout_stale: true,
            layout_gen: 0,
            reqs: IdMap::default(),
            app_reqs: IdMap::default(),
            running: IdMap::default(),
            app_running: IdMap::default(),
            blocked: BTreeSet::new(),
            starved: BTreeSet::new(),
            refill: BTreeSet::new(),
            am_live: 0,
            am_running: 0,
            am_waiting: BTreeSet::new(),
            wakes: Wakes::default(),
            tally: Tally::default(),
            epochs: 0,
        }
    }

    /// §1.6: short iff the estimate is at most the cutoff. Without an
    /// estimate (inside the RM), §6.2's short/long bit is the app's queue
    /// when `short_queues` is set: a task ask of an app in one of them is
    /// short, of any other app long; AMs keep `unknown_estimate`.
    fn is_long(&self, cluster: &Cluster, app: AppId, ask: &Ask) -> bool {
        match ask.est_task_ms {
            Some(ms) => ms.saturating_mul(1000) > self.cfg.cutoff_us,
            None if ask.phase != sojourn_core::Phase::Am && !self.cfg.short_queues.is_empty() => {
                !cluster.app(app).is_some_and(|a| self.cfg.is_short_queue(a.queue()))
            }
            None => self.cfg.unknown_is_long,
        }
    }

    fn index(&self, key: WorkerKey) -> Option<usize> {
        let n = self.nodes.get(&key.node)?;
        (key.slot < n.slots).then_some(n.first + key.slot as usize)
    }

    fn epoch_of(&self, node: NodeId) -> u64 {
        self.nodes.get(&node).map_or(0, |n| n.epoch)
    }

    /// The tasks of an ask kept at masters and in flight.
    fn to_cover(outstanding: u32) -> u32 {
        outstanding.min(MAX_TASKS_PER_ASK)
    }

    fn outstanding(cluster: &Cluster, req: Req) -> Option<u32> {
        cluster.app(req.0).and_then(|a| a.asks.get(&req.1)).map(|a| a.outstanding)
    }

    /// Reqs with fewer live tasks than outstanding containers to cover
    /// (AM reqs held by `max_am_share` aside): what the property tests
    /// check is empty.
    pub fn uncovered(&self, cluster: &Cluster) -> Vec<Req> {
        let mut out: Vec<Req> = self
            .reqs
            .iter()
            .filter(|(r, _)| !self.am_waiting.contains(r))
            .filter(|(r, st)| Self::outstanding(cluster, **r).is_some_and(|o| Self::to_cover(o) > st.live))
            .map(|(r, _)| *r)
            .collect();
        out.sort_unstable();
        out
    }

    /// Tasks queued at masters or in flight, and idle notices in flight.
    pub fn entries(&self) -> usize {
        self.masters.iter().map(|m| m.queued()).sum::<usize>() + self.wakes.len()
    }

    /// D1–D6: the distributor sends the req's missing tasks to the masters.
    fn top_up(&mut self, ctx: &mut Ctx<'_>, req: Req, at_us: u64) {
        let Some(st) = self.reqs.get(&req).copied() else { return };
        let Some(outstanding) = Self::outstanding(ctx.cluster(), req) else {
            self.starved.remove(&req);
            return;
        };
        let cover = Self::to_cover(outstanding);
        if st.live >= cover {
            self.starved.remove(&req);
            return;
        }
        self.layout(ctx, at_us);
        if self.masters.is_empty() {
            self.starved.insert(req);
            return;
        }
        self.starved.remove(&req);
        let mut k = cover - st.live;
        if st.am {
            // YARN's AMs: held at the distributor beyond `max_am_share`
            let room = self.am_room();
            if room < k {
                self.am_waiting.insert(req);
                k = room;
            }
            if k == 0 {
                return;
            }
            self.am_live += k;
        }
        if let Some(s) = self.reqs.get_mut(&req) {
            s.live += k;
        }
        for (group, n) in split(ctx, k, &self.group_sizes) {
            self.tally.count(Count::BatchesSent);
            if self.cfg.delay_us == 0 {
                self.batch(ctx, group, req, st.long, n, at_us);
            } else {
                self.after(ctx, at_us + self.cfg.delay_us, Pending::Batch { group, req, long: st.long, n });
            }
        }
    }

    /// A batch reaches master `group` (M1–M2: its tasks one after another).
    fn batch(&mut self, ctx: &mut Ctx<'_>, group: usize, req: Req, long: bool, n: u32, at_us: u64) {
        self.layout(ctx, at_us);
        if !self.reqs.contains_key(&req) {
            return; // the app left
        }
        if self.masters.is_empty() {
            for _ in 0..n {
                self.lose(req);
            }
            self.starved.insert(req);
            return;
        }
        let g = group % self.masters.len();
        for _ in 0..n {
            self.arrive(ctx, g, Task { req, long, arrived_us: at_us }, at_us);
        }
    }

    /// M3–M9 at master `g`, at `at_us` (the task's arrival, or a layout
    /// change that deals it to a new master).
    fn arrive(&mut self, ctx: &mut Ctx<'_>, g: usize, task: Task, at_us: u64) {
        match self.masters[g].arrive(task) {
            Some(w) => self.dispatch(ctx, w, task, at_us),
            None => self.tally.count(if task.long { Count::QueuedLong } else { Count::QueuedShort }),
        }
    }

    /// M21: `task` leaves for worker `w`.
    fn dispatch(&mut self, ctx: &mut Ctx<'_>, w: usize, task: Task, at_us: u64) {
        let wait_ms = at_us.saturating_sub(task.arrived_us) as f64 / 1000.0;
        self.tally.delay(wait_ms, task.long);
        self.workers[w].state = WState::Sent;
        if self.cfg.delay_us == 0 {
            self.start(ctx, self.workers[w].key, task, at_us);
        } else {
            let to = self.addr(w);
            self.after(ctx, at_us + self.cfg.delay_us, Pending::Start { to, task });
        }
    }

    /// K1: the task reaches its worker, which starts it.
    fn start(&mut self, ctx: &mut Ctx<'_>, key: WorkerKey, task: Task, at_us: u64) {
        match self.index(key) {
            Some(w) => self.start_on(ctx, w, task, at_us),
            None => {
                // the node left
                self.lose(task.req);
                self.top_up(ctx, task.req, at_us);
            }
        }
    }

    /// K1 on worker `w`.
    fn start_on(&mut self, ctx: &mut Ctx<'_>, w: usize, task: Task, at_us: u64) {
        let key = self.workers[w].key;
        let (app, prio) = task.req;
        match ctx.cluster().can_allocate(app, prio, key.node) {
            Ok(()) => {
                let Ok(container) = ctx.allocate(app, prio, key.node) else {
                    self.requeue(w, task);
                    return;
                };
                self.lose(task.req);
                let am = self.reqs.get(&task.req).is_some_and(|s| s.am);
                if am {
                    self.am_running += 1;
                }
                let on = self.addr(w);
                self.running.insert(container, Held { on, app, am });
                *self.app_running.entry(app).or_insert(0) += 1;
                let worker = &mut self.workers[w];
                worker.state = WState::Running;
                if task.long {
                    self.tally.count(Count::LongTasks);
                } else {
                    self.tally.count(Count::ShortTasks);
                    if worker.reserved {
                        self.tally.count(Count::ReservedStarts);
                    }
                }
                if Self::outstanding(ctx.cluster(), task.req)
                    .is_some_and(|o| o > self.reqs.get(&task.req).map_or(u32::MAX, |s| s.live))
                {
                    self.refill.insert(task.req);
                }
            }
            Err(sojourn_core::Refusal::NoAsk | sojourn_core::Refusal::UnknownApp) => {
                self.lose(task.req);
                self.tally.count(Count::TasksDropped);
                self.notify(ctx, w, at_us);
            }
            Err(_) => self.requeue(w, task),
        }
    }

    /// The worker's node cannot hold `task` now: the task goes back to the
    /// head of its queue, the worker waits for a change on its node.
    fn requeue(&mut self, w: usize, task: Task) {
        let worker = &mut self.workers[w];
        worker.state = WState::Blocked;
        self.blocked.insert(worker.key.node);
        let m = &mut self.masters[worker.group];
        if task.long {
            m.ltq.push_front(task);
        } else {
            m.htq.push_front(task);
        }
    }

    /// K4: worker `w` tells its master it is idle.
    fn notify(&mut self, ctx: &mut Ctx<'_>, w: usize, at_us: u64) {
        self.workers[w].state = WState::Notifying;
        if self.cfg.delay_us == 0 {
            self.idle(ctx, w, at_us);
        } else {
            let to = self.addr(w);
            self.after(ctx, at_us + self.cfg.delay_us, Pending::Idle { to });
        }
    }

    /// M10–M20 for worker `w`.
    fn idle(&mut self, ctx: &mut Ctx<'_>, w: usize, at_us: u64) {
        let (group, reserved) = (self.workers[w].group, self.workers[w].reserved);
        self.workers[w].state = WState::Idle;
        match self.masters[group].idle(w, reserved, self.cfg.weight, self.cfg.mode) {
            Served::Task { task, wfq_turn } => {
                if wfq_turn {
                    self.tally.count(Count::WfqLongTurns);
                }
                self.dispatch(ctx, w, task, at_us);
            }
            Served::Idle => {}
        }
    }

    /// Blocked workers of `node` look at their queues again.
    fn unblock(&mut self, ctx: &mut Ctx<'_>, node: NodeId, at_us: u64) {
        if !self.blocked.remove(&node) {
            return;
        }
        let Some(info) = self.nodes.get(&node).copied() else { return };
        for w in info.first..info.first + info.slots as usize {
            if self.workers.get(w).is_some_and(|x| x.state == WState::Blocked) {
                self.idle(ctx, w, at_us);
            }
        }
    }

    /// A task that will not start (it started, was dropped or lost).
    fn lose(&mut self, req: Req) {
        if let Some(st) = self.reqs.get_mut(&req) {
            st.live = st.live.saturating_sub(1);
            if st.am {
                self.am_live = self.am_live.saturating_sub(1);
            }
        }
    }

    /// AM tasks the distributors may still send: `max_am_share` of the
    /// workers (at least one) less the AMs live or running.
    fn am_room(&self) -> u32 {
        let cap = ((self.cfg.max_am_share * self.workers.len() as f64).floor() as u32).max(1);
        cap.saturating_sub(self.am_live + self.am_running)
    }

    /// Removes the tasks of `app` from every queue (the app left).
    fn purge(&mut self, app: AppId) {
        for m in &mut self.masters {
            m.htq.retain(|t| t.req.0 != app);
            m.ltq.retain(|t| t.req.0 != app);
        }
    }

    /// Removes queued tasks of `req` beyond its outstanding containers
    /// (the ask shrank), newest first.
    fn trim(&mut self, cluster: &Cluster, req: Req) {
        let Some(st) = self.reqs.get(&req).copied() else { return };
        let cover = Self::outstanding(cluster, req).map_or(0, Self::to_cover);
        let mut excess = st.live.saturating_sub(cover);
        if excess == 0 {
            return;
        }
        let mut removed = 0;
        for m in self.masters.iter_mut().rev() {
            for q in [&mut m.htq, &mut m.ltq] {
                let mut i = q.len();
                while excess > 0 && i > 0 {
                    i -= 1;
                    if q[i].req == req {
                        q.remove(i);
                        excess -= 1;
                        removed += 1;
                    }
                }
            }
        }
        if let Some(s) = self.reqs.get_mut(&req) {
            s.live -= removed;
            if s.am {
                self.am_live = self.am_live.saturating_sub(removed);
            }
        }
    }

    /// Forgets containers the mirror no longer has; their workers are gone
    /// or idle again.
    fn sweep(&mut self, ctx: &mut Ctx<'_>, at_us: u64) {
        let mut gone: Vec<ContainerId> =
            self.running.keys().copied().filter(|c| ctx.cluster().container(*c).is_none()).collect();
        // container order, as the ordered map gave them: workers' notices
        // go out in this order
        gone.sort_unstable();
        for c in gone {
            if let Some(on) = self.forget(c) {
                if let Some(w) = self.index_of(on) {
                    self.notify(ctx, w, at_us);
                }
            }
        }
    }

    /// At the end of every call: retries starved reqs, refills reqs above
    /// [`MAX_TASKS_PER_ASK`]; hands the call's metrics to the core.
    fn settle(&mut self, ctx: &mut Ctx<'_>) {
        let now = us(ctx.now);
        for req in std::mem::take(&mut self.starved) {
            self.top_up(ctx, req, now);
        }
        while !self.refill.is_empty() {
            for req in std::mem::take(&mut self.refill) {
                self.top_up(ctx, req, now);
            }
        }
        if !self.am_waiting.is_empty() && self.am_room() > 0 {
            for req in std::mem::take(&mut self.am_waiting) {
                self.top_up(ctx, req, now);
            }
        }
        self.tally.flush(ctx.metrics);
    }

    /// Removes a container from the books; returns its worker.
    fn forget(&mut self, c: ContainerId) -> Option<Addr> {
        let Held { on, app, am } = self.running.remove(&c)?;
        if am {
            self.am_running = self.am_running.saturating_sub(1);
        }
        if let Some(n) = self.app_running.get_mut(&app) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.app_running.remove(&app);
            }
        }
        Some(on)
    }
}

impl Policy for Pigeon {
    fn name(&self) -> &'static str {
        "pigeon"
    }

    fn on_event(&mut self, ctx: &mut Ctx<'_>, event: &Event) {
        let now = us(ctx.now);
        match event {
            Event::NodeAdded(spec) => {
                self.epochs += 1;
                self.nodes.insert(spec.node, NodeInfo { epoch: self.epochs, first: 0, slots: 0 });
                self.layout_stale = true;
            }
            Event::NodeResourceUpdated { .. } => {
                self.layout_stale = true;
            }
            Event::NodeRemoved { node } => {
                self.nodes.remove(node);
                let mut lost: Vec<ContainerId> =
                    self.running.iter().filter(|(_, h)| h.on.key.node == *node).map(|(c, _)| *c).collect();
                lost.sort_unstable();
                for c in lost {
                    self.forget(c);
                }
                self.layout_stale = true;
                self.layout(ctx, now);
                self.sweep(ctx, now);
            }
            Event::AsksUpdated { app, asks } => {
                for ask in asks {
                    let req = (*app, ask.priority);
                    let long = self.is_long(ctx.cluster(), *app, ask);
                    let am = ask.phase == sojourn_core::Phase::Am;
                    if let std::collections::hash_map::Entry::Vacant(e) = self.reqs.entry(req) {
                        e.insert(ReqState { long, am, live: 0 });
                        self.app_reqs.entry(*app).or_default().push(ask.priority);
                    }
                    self.trim(ctx.cluster(), req);
                    self.top_up(ctx, req, now);
                }
            }
            Event::AppRemoved { app } => {
                let reqs: Vec<Req> =
                    self.app_reqs.remove(app).unwrap_or_default().into_iter().map(|p| (*app, p)).collect();
                // (a job that finished has no task left at the masters and
                // no container running: nothing to scan for)
                let mut queued = false;
                for r in reqs {
                    if let Some(st) = self.reqs.remove(&r) {
                        queued |= st.live > 0;
                        if st.am {
                            self.am_live = self.am_live.saturating_sub(st.live);
                        }
                    }
                    self.starved.remove(&r);
                    self.refill.remove(&r);
                    self.am_waiting.remove(&r);
                }
                if queued {
                    self.purge(*app);
                }
                if self.app_running.contains_key(app) {
                    self.sweep(ctx, now);
                }
            }
            Event::ContainerCompleted { container, .. } => {
                if let Some(on) = self.forget(*container) {
                    if let Some(w) = self.index_of(on) {
                        self.notify(ctx, w, now);
                    }
                    self.unblock(ctx, on.key.node, now);
                }
            }
            Event::Rejected { decision: Decision::Allocate { container, app, priority, node, .. }, .. } => {
                if let Some(on) = self.forget(*container) {
                    if let Some(w) = self.index_of(on) {
                        self.idle(ctx, w, now);
                    }
                }
                self.unblock(ctx, *node, now);
                self.top_up(ctx, (*app, *priority), now);
            }
            _ => {}
        }
        self.relayout_if_queued(ctx, now);
        self.settle(ctx);
    }

    /// Masters act as things happen (arrivals, idle notices); a heartbeat
    /// only lets the node's blocked workers look at their queues again.
    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        let now = us(ctx.now);
        self.relayout_if_queued(ctx, now);
        self.unblock(ctx, node, now);
        self.settle(ctx);
    }

    fn on_schedule(&mut self, ctx: &mut Ctx<'_>) {
        let now = us(ctx.now);
        self.relayout_if_queued(ctx, now);
        for node in self.blocked.clone() {
            self.unblock(ctx, node, now);
        }
        self.settle(ctx);
    }

    fn next_wake(&self) -> Option<Time> {
        self.wakes.next()
    }

    fn on_wake(&mut self, ctx: &mut Ctx<'_>) {
        while let Some((at, pending)) = self.wakes.pop_due(ctx.now) {
            match pending {
                Pending::Batch { group, req, long, n } => self.batch(ctx, group, req, long, n, at),
                Pending::Start { to, task } => match self.reach(ctx, to, at) {
                    Some(w) => self.start_on(ctx, w, task, at),
                    None => {
                        // the node left (or left and came back)
                        self.lose(task.req);
                        self.top_up(ctx, task.req, at);
                    }
                },
                Pending::Idle { to } => {
                    if let Some(w) = self.reach(ctx, to, at).filter(|w| self.workers[*w].state == WState::Notifying) {
                        self.idle(ctx, w, at);
                    }
                }
            }
        }
        self.settle(ctx);
    }

    fn describe(&self, _cluster: &Cluster, _now: Time) -> serde_json::Value {
        let idle = |f: fn(&Master) -> usize| self.masters.iter().map(f).sum::<usize>();
        serde_json::json!({
            "policy": "pigeon",
            "groups": self.masters.len(),
            "workers": self.workers.len(),
            "reserved": self.workers.iter().filter(|w| w.reserved).count(),
            "htq": idle(|m| m.htq.len()),
            "ltq": idle(|m| m.ltq.len()),
            "liw": idle(|m| m.liw.len()),
            "hiw": idle(|m| m.hiw.len()),
            "in_flight": self.wakes.len(),
            "running": self.running.len(),
        })
    }
}
