//! `kairos`: preemptive least-attained-service scheduling without runtime
//! estimates (Delgado's thesis, chapter 4; delgado.md §3).
//!
//! Two levels, as in the thesis (§3.1):
//! - **The node scheduler** ([`node`], Algorithm 2, delgado.md §3.3 and K2–K4):
//!   each node runs at most N tasks (one per vcore by default) and keeps the
//!   tasks it preempted *suspended*: memory kept, CPU given up. A new task
//!   always starts at once: if every core is busy, the running task with the
//!   most attained service is suspended for it. When a task finishes, the
//!   suspended task with the least attained service resumes. At the end of a
//!   quantum W the running task yields to the least-served suspended task if
//!   that one has attained no more service (minus `hysteresis_ms`).
//! - **The central scheduler** ([`dispatch`], Algorithm 3, §3.4 and K6):
//!   tasks wait in one FIFO queue (jobs by submission, then request
//!   priority); each goes to the node with the fewest tasks, capped at N + Q,
//!   ties to the lowest variance of attained service (Random and Sum as
//!   options, §4.5.3).
//!
//! Attained service is the core's own per-container figure (the time the
//! container has run; suspended spells excluded), so nothing here needs a
//! runtime estimate.
//!
//! Decisions on the thesis's open points (delgado.md §6):
//! - §6.10: swap at quantum end when `suspended ≤ running − h`, h = 0 (the
//!   pseudo-code's `≤`); the authors' code's W/2 is `hysteresis_ms`.
//! - §6.11: the arrival victim is chosen by live service (attained so far,
//!   including the current spell). A protected task (below) is never a
//!   victim; if every running task is protected the newcomer goes to another
//!   node or waits in the central queue (the thesis's "always starts at once"
//!   cannot hold then).
//! - §6.12: the starvation guard counts *time*: a task suspended for
//!   `starvation_quanta` quanta (S·W) without a turn is resumed at the next
//!   decision on its node, whatever its attained service, and runs M·W
//!   (`protect_quanta`) unpreemptible. `starvation=preempted` is the authors'
//!   code instead: a task preempted more than S times keeps running for M·W
//!   at its next quantum end.
//! - §6.13: the central scheduler is event-driven (every scheduling
//!   opportunity dispatches), task counts are updated as it assigns, and a
//!   node takes tasks while it holds fewer than N + Q.
//! - §6.14: the variance is over all the node's Kairos tasks, running and
//!   suspended, with live service; a node with fewer than two has variance 0.
//! - AM containers (phase `am`) are placed like tasks but never suspended and
//!   not counted in N + Q, as in the authors' YARN code (§3.5). An AM is
//!   not placed where it would leave the node's tasks less than the vcores
//!   of the largest of them: a node whose every core AMs hold could never
//!   resume its suspended tasks, and those AMs wait on them (a stall).
//! - Asks that cannot go anywhere (no node with memory left under the cap)
//!   do not block later jobs' asks that can: the queue is FIFO among what can
//!   be placed.

mod asks;
mod config;
pub mod dispatch;
mod dormant;
pub mod node;
mod refresh;
mod timers;

#[cfg(test)]
mod lazy_props;
#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;

use crate::common::{IdMap, SeqIdMap};
pub use config::{Config, Starvation, TieBreak, PARAMS};
use sojourn_core::{
    AppId, Cluster, ContainerId, ContainerState, Ctx, Decision, Event, NodeId, Params, Phase, Policy, Result, Time,
};
use std::collections::BTreeSet;

use crate::common::DemandIndex;

pub fn build(p: &Params) -> Result<Box<dyn Policy>> {
    Ok(Box::new(Kairos::new(Config::from_params(p)?)))
}

/// What Kairos keeps about one of its containers (K1). Running or
/// suspended and the attained service are the mirror's.
#[derive(Clone, Debug)]
pub struct Task {
    pub node: NodeId,
    pub app: AppId,
    /// When the current quantum ends (a timer is set for it); `None` while
    /// suspended.
    pub quantum_end: Option<Time>,
    /// When it was last suspended.
    pub suspended_since: Option<Time>,
    /// Times it was suspended since its last protected window.
    pub preemptions: u32,
    /// It may not be preempted before this time (the starvation guard).
    pub protected_until: Time,
    /// Its quantum ends can only start the next quantum until its node
    /// changes, so no timer is set for them ([`dormant`]).
    pub dormant: bool,
}

pub struct Kairos {
    pub(crate) cfg: Config,
    /// Looked up at every quantum end and placement: hashed; never walked
    /// in its order, except by `sweep`, which sorts what it collects.
    pub(crate) tasks: SeqIdMap<ContainerId, Task>,
    /// Kairos tasks (not AMs) per node, running and suspended, each node's
    /// in id order. Hashed by node (looked up at every placement, suspension
    /// and quantum end); walked in node order only by `describe`, which sorts.
    pub(crate) on_node: IdMap<NodeId, BTreeSet<ContainerId>>,
    /// The central FIFO queue: jobs with outstanding asks by submission.
    queue: DemandIndex<(u64, u32)>,
    /// The queued jobs' outstanding asks by shape, for the dispatch rounds.
    asks: asks::AskIndex,
    /// Nodes below N + Q in dispatch order, and each one's key there.
    pub(crate) open: BTreeSet<dispatch::NodeKey>,
    pub(crate) key_of: IdMap<NodeId, dispatch::NodeKey>,
    /// When every node's figures were last refreshed (`None`: now due).
    pub(crate) stats_at: Option<Time>,
    /// The nodes the next refresh must read again.
    pub(crate) refresh: refresh::Refresh,
    /// Containers on nodes that are not Kairos tasks (AMs, recovered
    /// containers) and where they are: a node changes when one ends.
    /// (Hashed: what `sweep` drops is touched in a set, in any order.)
    pub(crate) others: IdMap<ContainerId, NodeId>,
    /// How many tasks each app has (none: not there), so that an app going
    /// with tasks left is swept and one without is not. A count, not a set
    /// per app: a set cost a second lookup, into a table of its own, at
    /// every placement and task end; the rare sweep finds them in `tasks`.
    of_app: IdMap<AppId, u32>,
    /// Nodes whose idle cores may serve a suspended task again (a resume
    /// was rejected).
    dirty: BTreeSet<NodeId>,
    pub(crate) timers: timers::QuantumTimers,
    /// Per node id, what was last read from it ([`node::NodeView`]).
    pub(crate) views: std::cell::RefCell<Vec<Option<node::NodeView>>>,
    /// Whether tasks may be [`dormant`] (parameter `lazy_quanta`; off, the
    /// policy wakes for every quantum end).
    pub(crate) lazy_quanta: bool,
    /// How many dormant tasks each node holds (none: not there).
    pub(crate) dormant_on: IdMap<NodeId, u32>,
}

pub(crate) fn fifo_key(a: &sojourn_core::App) -> (u64, u32) {
    (a.submit.ms(), a.id().0)
}

impl Kairos {
    pub fn new(cfg: Config) -> Kairos {
        Kairos {
            lazy_quanta: cfg.lazy_quanta,
            cfg,
            tasks: SeqIdMap::default(),
            on_node: IdMap::default(),
            queue: DemandIndex::default(),
            asks: asks::AskIndex::default(),
            open: BTreeSet::new(),
            key_of: IdMap::default(),
            stats_at: None,
            refresh: refresh::Refresh::default(),
            others: IdMap::default(),
            of_app: IdMap::default(),
            dirty: BTreeSet::new(),
            timers: timers::QuantumTimers::default(),
            views: std::cell::RefCell::new(Vec::new()),
            dormant_on: IdMap::default(),
        }
    }

    /// N for a node: the configured cores, or its vcores.
    pub(crate) fn cores(&self, cluster: &Cluster, node: NodeId) -> u32 {
        if self.cfg.cores > 0 {
            self.cfg.cores
        } else {
            cluster.node(node).map_or(0, |n| n.capacity.vcores)
        }
    }

    /// Kairos tasks on `node` (running and suspended, AMs excluded).
    pub fn task_count(&self, node: NodeId) -> u32 {
        self.on_node.get(&node).map_or(0, |s| s.len() as u32)
    }

    /// Registers a task Kairos just placed and starts its quantum. (AM
    /// containers are not tasks: never suspended, not counted in N + Q.)
    pub(crate) fn track(&mut self, ctx: &mut Ctx<'_>, container: ContainerId, node: NodeId) {
        let app = ctx.cluster().container(container).map_or(AppId(u32::MAX), |c| c.app);
        *self.of_app.entry(app).or_default() += 1;
        let end = ctx.now.plus(self.cfg.quantum_ms);
        let task = Task {
            node,
            app,
            quantum_end: Some(end),
            suspended_since: None,
            preemptions: 0,
            protected_until: Time::ZERO,
            dormant: false,
        };
        self.on_node.entry(node).or_default().insert(container);
        self.tasks.insert(container, task);
        // The quantum W ends (§3.3): the task may yield to a suspended one
        // with less attained service.
        self.next_quantum(ctx, container);
        self.refresh.touch(node);
        self.forget_view(node);
        self.reindex(ctx, node);
    }

    /// Forgets a container; its node must be re-filed ([`Self::reindex`]).
    pub(crate) fn untrack(&mut self, ctx: &mut Ctx<'_>, container: ContainerId) -> Option<Task> {
        self.end_dormancy(ctx, container);
        let task = self.tasks.remove(&container)?;
        self.timers.drop_entries_of(container);
        self.refresh.touch(task.node);
        self.forget_view(task.node);
        if let Some(n) = self.of_app.get_mut(&task.app) {
            *n -= 1;
            if *n == 0 {
                self.of_app.remove(&task.app);
            }
        }
        if let Some(set) = self.on_node.get_mut(&task.node) {
            set.remove(&container);
            if set.is_empty() {
                self.on_node.remove(&task.node);
            }
        }
        Some(task)
    }

    /// Drops what the mirror no longer has (after a node or an app went):
    /// only `app`'s containers if that is what went.
    fn sweep(&mut self, ctx: &mut Ctx<'_>, app: Option<AppId>) {
        let cluster = ctx.cluster();
        let gone: Vec<ContainerId> = match app {
            Some(a) if !self.of_app.contains_key(&a) => Vec::new(),
            Some(a) => {
                let mut gone: Vec<ContainerId> = self
                    .tasks
                    .iter()
                    .filter(|(c, t)| t.app == a && cluster.container(**c).is_none())
                    .map(|(c, _)| *c)
                    .collect();
                gone.sort_unstable(); // in id order, as when the set was ordered
                gone
            }
            None => {
                let mut gone: Vec<ContainerId> =
                    self.tasks.keys().copied().filter(|c| cluster.container(*c).is_none()).collect();
                gone.sort_unstable(); // in id order, as before
                gone
            }
        };
        for c in gone {
            self.untrack(ctx, c);
        }
        let cluster = ctx.cluster();
        let refresh = &mut self.refresh;
        self.others.retain(|c, node| {
            let kept = cluster.container(*c).is_some();
            if !kept {
                refresh.touch(*node); // its memory came back
            }
            kept
        });
    }

    /// Live attained service of a container (ms).
    pub(crate) fn service(cluster: &Cluster, c: ContainerId, now: Time) -> u64 {
        cluster.container(c).map_or(0, |c| c.attained_ms(now))
    }

    pub(crate) fn is_running(cluster: &Cluster, c: ContainerId) -> bool {
        cluster.container(c).is_some_and(|c| c.state == ContainerState::Running)
    }

    /// The next refresh reads `container`'s node again (its state there
    /// was rolled back), or every node if it is gone.
    fn touch_node_of(&mut self, cluster: &Cluster, container: ContainerId) {
        match cluster.container(container) {
            Some(c) => self.refresh.touch(c.node),
            None => self.refresh.everything = true,
        }
    }

    fn schedule(&mut self, ctx: &mut Ctx<'_>, node: Option<NodeId>) {
        let mut nodes: Vec<NodeId> = std::mem::take(&mut self.dirty).into_iter().collect();
        nodes.extend(node);
        for n in nodes {
            self.fill_idle_cores(ctx, n);
        }
        self.dispatch(ctx);
    }
}

impl Policy for Kairos {
    fn name(&self) -> &'static str {
        "kairos"
    }

    fn on_event(&mut self, ctx: &mut Ctx<'_>, event: &Event) {
        self.queue.observe(ctx.cluster(), event, fifo_key);
        self.asks.observe(ctx.cluster(), event, fifo_key);
        match event {
            Event::ContainerCompleted { container, .. } => {
                if let Some(task) = self.untrack(ctx, *container) {
                    // K3: a core freed; the least-served suspended task takes it.
                    self.fill_idle_cores(ctx, task.node);
                    self.reindex(ctx, task.node);
                } else {
                    match self.others.remove(container) {
                        Some(node) => self.refresh.touch(node),
                        None => self.refresh.everything = true,
                    }
                }
            }
            Event::ContainerRecovered { container, node, .. } => {
                self.others.insert(*container, *node);
                self.refresh.touch(*node);
            }
            Event::Rejected { decision: Decision::Allocate { container, node, .. }, .. } => {
                self.untrack(ctx, *container);
                self.others.remove(container);
                self.refresh.touch(*node);
                self.reindex(ctx, *node);
            }
            Event::Rejected { decision: Decision::Resume { container }, .. } => {
                self.touch_node_of(ctx.cluster(), *container);
                self.end_dormancy(ctx, *container);
                if let Some(t) = self.tasks.get_mut(container) {
                    t.quantum_end = None;
                    t.suspended_since.get_or_insert(ctx.now);
                    let node = t.node;
                    self.dirty.insert(node);
                    // it waits to resume again: its node's quantum ends matter
                    self.wake_dormant(ctx, node);
                }
            }
            Event::Rejected { decision: Decision::Preempt { container, .. }, .. } => {
                self.touch_node_of(ctx.cluster(), *container);
                // still running: give it a fresh quantum
                if let Some(t) = self.tasks.get(container).filter(|t| t.quantum_end.is_none()) {
                    let node = t.node;
                    self.start_quantum(ctx, *container, self.cfg.quantum_ms);
                    self.dirty.insert(node);
                }
            }
            // Kairos issues no reservations; anything else rolled back
            // somewhere it cannot tell.
            Event::Rejected { .. } => self.refresh.everything = true,
            Event::NodeAdded(_) | Event::NodeResourceUpdated { .. } => {
                self.stats_at = None;
                self.refresh.everything = true;
            }
            Event::NodeRemoved { .. } => {
                self.sweep(ctx, None);
                self.stats_at = None;
                self.refresh.everything = true;
            }
            Event::AppRemoved { app } => {
                self.sweep(ctx, Some(*app));
                self.stats_at = None;
            }
            _ => {}
        }
    }

    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        self.schedule(ctx, Some(node));
    }

    /// Event-driven drivers: completions already resumed suspended tasks
    /// (K3), so only the central dispatch runs, plus nodes left with a
    /// rejected resume.
    fn on_schedule(&mut self, ctx: &mut Ctx<'_>) {
        self.schedule(ctx, None);
    }

    fn next_wake(&self) -> Option<Time> {
        self.timers.next()
    }

    fn on_wake(&mut self, ctx: &mut Ctx<'_>) {
        while let Some(c) = self.timers.pop_due(ctx.now) {
            let due =
                self.tasks.get(&c).filter(|t| !t.dormant).and_then(|t| t.quantum_end).is_some_and(|end| end <= ctx.now);
            if due && Self::is_running(ctx.cluster(), c) {
                self.quantum_end(ctx, c);
            }
        }
        let tasks = &self.tasks;
        self.timers.drop_forgotten(|c| tasks.contains_key(&c));
    }

    fn describe(&self, cluster: &Cluster, now: Time) -> serde_json::Value {
        let mut by_node: Vec<(&NodeId, &BTreeSet<ContainerId>)> = self.on_node.iter().collect();
        by_node.sort_unstable_by_key(|(n, _)| **n);
        let nodes: Vec<serde_json::Value> = by_node
            .into_iter()
            .map(|(n, set)| {
                let running = set.iter().filter(|c| Self::is_running(cluster, **c)).count();
                // Each task's attained service (§2, the quantity LAS orders
                // by), for the operator's page.
                let tasks: Vec<serde_json::Value> = set
                    .iter()
                    .map(|c| {
                        serde_json::json!({
                            "container": c.0,
                            "app": cluster.container(*c).map(|x| x.app.0),
                            "attained_ms": Self::service(cluster, *c, now),
                            "suspended": !Self::is_running(cluster, *c),
                        })
                    })
                    .collect();
                serde_json::json!({
                    "node": n.0,
                    "tasks": set.len(),
                    "running": running,
                    "suspended": set.len() - running,
                    "attained_variance": node::variance(cluster, set.iter().copied(), now),
                    "containers": tasks,
                })
            })
            .collect();
        serde_json::json!({
            "policy": "kairos",
            "cores": self.cfg.cores,
            "extra_tasks": self.cfg.extra,
            "quantum_ms": self.cfg.quantum_ms,
            "queued_jobs": self.queue.iter().map(|a| a.0).collect::<Vec<_>>(),
            "nodes": nodes,
        })
    }
}

/// Whether a container serves an AM ask.
pub(crate) fn is_am(cluster: &Cluster, app: AppId, prio: sojourn_core::Priority) -> bool {
    cluster.app(app).and_then(|a| a.asks.get(&prio)).is_some_and(|s| s.ask.phase == Phase::Am)
}
