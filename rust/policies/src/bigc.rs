//! `bigc`: a Big-C-like baseline for Kairos's evaluation (delgado.md §3.8,
//! §5 B; Chen, Rao and Zhou, USENIX ATC'17), as Kairos's thesis ran it:
//! preemptive and size-class aware.
//!
//! What it models: two job classes, *short* (higher priority) and *long*,
//! from the submitter's queue (the `_bigc` Kairos workloads put categories
//! 1–3 in `short` and 4–5 in `long`) or, with `classify=tasks`, from the
//! size of a job's first task ask (a job asking `long_tasks` containers or
//! more at once is long). Each class has a guaranteed share of the cluster's
//! vcores (short 95% by default) and may use more when the other leaves it
//! idle (CapacityScheduler's elastic queues, which Big-C extends). Within a
//! class, jobs are served FIFO. A short task that finds no room suspends
//! running long tasks, the most recently started first (CapacityScheduler's
//! victim order), but only while the long class holds more than its share;
//! a short task never preempts another short one. Suspended long tasks keep
//! their memory (Big-C shrinks a Docker container's CPU) and resume on
//! their node as soon as no short task waits and the vcores are back, before
//! any new long task starts.
//!
//! What it leaves out: Big-C's "graceful" preemption mode and container
//! resizing beyond suspend/resume; per-node class reservations (its share is
//! cluster-wide, as CapacityScheduler's queue capacities are).

use crate::common::DemandIndex;
use sojourn_core::{
    App, AppId, Cluster, ContainerId, ContainerState, Ctx, Decision, Event, NodeId, ParamKind, ParamSpec, Params,
    Phase, Policy, PreemptMode, Resources, Result,
};
use std::collections::{BTreeMap, BTreeSet};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "short_share",
        ParamKind::Float,
        "0.95",
        "share of the cluster's vcores guaranteed to short jobs (Big-C default 95%); long jobs get the rest",
    ),
    ParamSpec::new(
        "classify",
        ParamKind::Choice(&["queue", "tasks"]),
        "queue",
        "job class from the queue (leaf named like long_queue is long) or from the task count of its first ask",
    ),
    ParamSpec::new("long_queue", ParamKind::Str, "long", "with classify=queue: the leaf queue of long jobs"),
    ParamSpec::new(
        "long_tasks",
        ParamKind::Int,
        "100",
        "with classify=tasks: a job whose first task ask has this many containers or more is long",
    ),
];

pub fn build(p: &Params) -> Result<Box<dyn Policy>> {
    let classify_by_queue = p.str("classify")? == "queue";
    Ok(Box::new(BigC {
        short_share: p.float_in("short_share", 0.0, 1.0)?,
        classify_by_queue,
        long_queue: p.str("long_queue")?,
        long_tasks: p.int_at_least("long_tasks", 1)? as u32,
        long: BTreeMap::new(),
        long_apps: BTreeSet::new(),
        zero_dim_asks: false,
        short_demand: DemandIndex::default(),
        long_demand: DemandIndex::default(),
        holding: BTreeSet::new(),
    }))
}

pub struct BigC {
    short_share: f64,
    classify_by_queue: bool,
    long_queue: String,
    long_tasks: u32,
    /// Each known app's class (true: long), fixed at its first task ask.
    long: BTreeMap<AppId, bool>,
    /// The known apps classed long (the `true` entries of `long`), so that
    /// the long class's holdings are summed over its own apps, not all.
    long_apps: BTreeSet<AppId>,
    /// Whether any ask so far had zero memory or zero vcores: only such an
    /// ask fits on a node without both free, so until one is seen a full
    /// node ends the walk of the demand index.
    zero_dim_asks: bool,
    short_demand: DemandIndex<(u64, u32)>,
    long_demand: DemandIndex<(u64, u32)>,
    /// Nodes holding suspended long tasks.
    holding: BTreeSet<NodeId>,
}

fn fifo_key(a: &App) -> (u64, u32) {
    (a.submit.ms(), a.id().0)
}

impl BigC {
    fn classify(&self, app: &App) -> Option<bool> {
        if self.classify_by_queue {
            let leaf = app.queue().rsplit('.').next().unwrap_or("");
            return Some(leaf == self.long_queue);
        }
        let task_ask = app.outstanding_asks().find(|s| s.ask.phase != Phase::Am)?;
        Some(task_ask.outstanding >= self.long_tasks)
    }

    fn is_long(&self, app: AppId) -> bool {
        self.long.get(&app).copied().unwrap_or(false)
    }

    /// vcores the long class holds (running containers; suspended ones hold none).
    fn long_vcores(&self, cluster: &Cluster) -> u64 {
        self.long_apps.iter().filter_map(|a| cluster.app(*a)).map(|a| a.allocated.vcores as u64).sum()
    }

    /// Whether no ask can fit on `node` any more: it has no memory or no
    /// vcores free, and no ask seen so far needs none of that resource.
    fn full(&self, cluster: &Cluster, node: NodeId) -> bool {
        cluster.node(node).is_none_or(|n| {
            let a = n.available();
            (a.memory_mb == 0 && a.vcores == 0) || (!self.zero_dim_asks && (a.memory_mb == 0 || a.vcores == 0))
        })
    }

    /// Suspended long containers on `node`, oldest app first.
    fn suspended_on(&self, cluster: &Cluster, node: NodeId) -> Vec<ContainerId> {
        let Some(n) = cluster.node(node) else { return Vec::new() };
        let mut v: Vec<(u64, u32, ContainerId)> = n
            .containers
            .iter()
            .filter_map(|c| cluster.container(*c))
            .filter(|c| c.state == ContainerState::Suspended)
            .filter_map(|c| cluster.app(c.app).map(|a| (a.submit.ms(), a.id().0, c.id)))
            .collect();
        v.sort();
        v.into_iter().map(|x| x.2).collect()
    }

    fn resume_on(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        let waiting = self.suspended_on(ctx.cluster(), node);
        let mut left = waiting.len();
        for c in waiting {
            let fits = match (ctx.cluster().container(c), ctx.cluster().node(node)) {
                (Some(ct), Some(n)) => ct.resources.saturating_sub(&ct.held()).fits_in(&n.available()),
                _ => false,
            };
            if !fits || ctx.resume(c).is_err() {
                break;
            }
            ctx.metrics.count("resumes", 1);
            left -= 1;
        }
        if left == 0 {
            self.holding.remove(&node);
        }
    }

    /// A short ask of `need` that fits nowhere: suspend long tasks, the most
    /// recently started first, while the long class is over its share, on
    /// the first node where that makes room. Returns whether room was made.
    fn make_room(&mut self, ctx: &mut Ctx<'_>, need: &Resources) -> Option<NodeId> {
        let total = ctx.cluster().total().vcores as f64;
        let long_share = (1.0 - self.short_share) * total;
        let over = self.long_vcores(ctx.cluster()) as f64 - long_share;
        if over < need.vcores.max(1) as f64 {
            return None;
        }
        let cluster = ctx.cluster();
        // an ask needing memory and vcores fits only where both are free
        let room = if need.memory_mb > 0 && need.vcores > 0 {
            cluster.nodes_with_space().filter_map(|n| cluster.node(n)).any(|n| need.fits_in(&n.available()))
        } else {
            cluster.nodes().any(|n| need.fits_in(&n.available()))
        };
        if room {
            return None; // room exists: the node's own opportunity will serve it
        }
        let mut victims: Vec<(u64, ContainerId, NodeId)> = self
            .long_apps
            .iter()
            .filter_map(|a| cluster.app(*a))
            .flat_map(|a| a.containers.iter())
            .filter_map(|c| cluster.container(*c))
            .filter(|c| c.state == ContainerState::Running && !c.preempting && c.phase != Phase::Am)
            .map(|c| (c.start.ms(), c.id, c.node))
            .collect();
        victims.sort_by(|a, b| b.cmp(a));
        for (_, c, node) in victims {
            let (Some(ct), Some(n)) = (cluster.container(c), cluster.node(node)) else { continue };
            let freed = ct.resources.saturating_sub(&ct.resources.held_while_suspended());
            if need.fits_in(&(n.available() + freed)) {
                if ctx.preempt(c, PreemptMode::Suspend).is_err() {
                    return None;
                }
                ctx.metrics.count("suspensions", 1);
                self.holding.insert(node);
                return Some(node);
            }
        }
        None
    }

    /// Serves the apps of one class in FIFO order on `nodes` (or, when
    /// `None`, on every node with space), as FifoScheduler fills nodes.
    fn fill(&mut self, ctx: &mut Ctx<'_>, long: bool, nodes: Option<&[NodeId]>) {
        let index = if long { &self.long_demand } else { &self.short_demand };
        let mut served = Vec::new();
        for app in index.iter() {
            match nodes {
                Some(ns) => {
                    // once every given node is full no later app can place
                    if ns.iter().all(|n| self.full(ctx.cluster(), *n)) {
                        break;
                    }
                    for n in ns {
                        if crate::common::fill_node_with_app(ctx, app, *n) > 0 {
                            served.push(app);
                        }
                    }
                }
                None => {
                    // a cursor over the nodes with space: a node loses space
                    // only by being allocated on, so the walk meets what a
                    // snapshot at the app's start would
                    let Some(mut n) = ctx.cluster().next_node_with_space(NodeId(0)) else { break };
                    loop {
                        if crate::common::fill_node_with_app(ctx, app, n) > 0 {
                            served.push(app);
                        }
                        if ctx.cluster().app(app).is_none_or(|a| a.pending_containers == 0) {
                            break;
                        }
                        match n.0.checked_add(1).and_then(|m| ctx.cluster().next_node_with_space(NodeId(m))) {
                            Some(m) => n = m,
                            None => break,
                        }
                    }
                }
            }
        }
        let index = if long { &mut self.long_demand } else { &mut self.short_demand };
        for app in served {
            index.refresh(ctx.cluster(), app);
        }
    }

    fn serve(&mut self, ctx: &mut Ctx<'_>, nodes: Option<&[NodeId]>) {
        // short jobs first, FIFO
        self.fill(ctx, false, nodes);
        // what still waits may suspend long tasks, while the long class is
        // over its share; one failed shape is not retried this round
        let mut hopeless: Vec<Resources> = Vec::new();
        let total = ctx.cluster().total().vcores as f64;
        // only waiting short apps may preempt: the long class's holdings
        // are summed only when some wait
        let long_over =
            !self.short_demand.is_empty() && self.long_vcores(ctx.cluster()) as f64 > (1.0 - self.short_share) * total;
        let waiting = if long_over { self.short_demand.in_order() } else { Vec::new() };
        for app in waiting {
            while let Some(a) = ctx.cluster().app(app) {
                let Some(st) = a.outstanding_asks().next() else { break };
                let (prio, need) = (st.ask.priority, st.ask.capability);
                if hopeless.contains(&need) {
                    break;
                }
                let Some(node) = self.make_room(ctx, &need) else {
                    hopeless.push(need);
                    break;
                };
                if ctx.allocate(app, prio, node).is_err() {
                    break;
                }
            }
            self.short_demand.refresh(ctx.cluster(), app);
        }
        if !self.short_demand.is_empty() {
            return;
        }
        let resumable: Vec<NodeId> = match nodes {
            Some(ns) => ns.iter().copied().filter(|n| self.holding.contains(n)).collect(),
            None => self.holding.iter().copied().collect(),
        };
        for n in resumable {
            self.resume_on(ctx, n);
        }
        self.fill(ctx, true, nodes);
    }
}

impl Policy for BigC {
    fn name(&self) -> &'static str {
        "bigc"
    }

    fn on_event(&mut self, ctx: &mut Ctx<'_>, event: &Event) {
        let app = match event {
            Event::AppAdded(spec) => Some(spec.app),
            Event::AppRemoved { app } | Event::AsksUpdated { app, .. } => Some(*app),
            Event::Rejected { decision: Decision::Allocate { app, .. }, .. } => Some(*app),
            _ => None,
        };
        if let Event::ContainerCompleted { .. } = event {
            // vcores came back: suspended long tasks resume first if no short
            // task waits (their nodes may get no other opportunity)
            if self.short_demand.is_empty() {
                let nodes: Vec<NodeId> = self.holding.iter().copied().collect();
                for n in nodes {
                    self.resume_on(ctx, n);
                }
            }
        }
        if let Event::AsksUpdated { asks, .. } = event {
            if asks.iter().any(|a| a.count > 0 && (a.capability.memory_mb == 0 || a.capability.vcores == 0)) {
                self.zero_dim_asks = true;
            }
        }
        let Some(app) = app else { return };
        if !self.long.contains_key(&app) {
            if let Some(long) = ctx.cluster().app(app).and_then(|a| self.classify(a)) {
                self.long.insert(app, long);
                if long {
                    self.long_apps.insert(app);
                }
            }
        }
        if let Event::AppRemoved { .. } = event {
            self.short_demand.observe(ctx.cluster(), event, fifo_key);
            self.long_demand.observe(ctx.cluster(), event, fifo_key);
            self.long.remove(&app);
            self.long_apps.remove(&app);
        } else if self.is_long(app) {
            self.long_demand.observe(ctx.cluster(), event, fifo_key);
        } else {
            self.short_demand.observe(ctx.cluster(), event, fifo_key);
        }
    }

    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        self.serve(ctx, Some(&[node]));
    }

    fn on_schedule(&mut self, ctx: &mut Ctx<'_>) {
        self.serve(ctx, None);
    }

    fn describe(&self, cluster: &Cluster, _now: sojourn_core::Time) -> serde_json::Value {
        serde_json::json!({
            "policy": "bigc",
            "short_share": self.short_share,
            "long_vcores": self.long_vcores(cluster),
            "short_waiting": self.short_demand.len(),
            "long_waiting": self.long_demand.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{allocations, core, finish, job_in, node, resumed, schedule, suspended};
    use sojourn_core::Phase;

    /// A short job finds the node full of a long job's tasks: the newest
    /// long task is suspended for it, and resumes when the short task ends.
    #[test]
    fn a_short_task_suspends_the_newest_long_task_which_resumes_after() {
        let mut c = core("bigc", &[]);
        node(&mut c, 0, 4096, 2);
        job_in(&mut c, 0, 1, "long", 1, Phase::Map);
        let first = allocations(&schedule(&mut c, 0))[0].1;
        job_in(&mut c, 1_000, 2, "long", 1, Phase::Map);
        let newest = allocations(&schedule(&mut c, 1_000))[0].1;
        job_in(&mut c, 2_000, 3, "short", 1, Phase::Map);
        let ds = schedule(&mut c, 2_000);
        assert_eq!(suspended(&ds), vec![newest], "not {first}: {ds:?}");
        let s = allocations(&ds);
        assert_eq!(s.iter().map(|a| a.0).collect::<Vec<_>>(), vec![3]);
        let ds = finish(&mut c, 5_000, s[0].1);
        assert_eq!(resumed(&ds), vec![newest], "resumes as soon as its vcores are back: {ds:?}");
    }

    /// Short tasks never preempt short tasks, and long tasks within the long
    /// class's share are safe.
    #[test]
    fn no_preemption_of_short_tasks_nor_of_long_ones_within_their_share() {
        let mut c = core("bigc", &[]);
        node(&mut c, 0, 4096, 1);
        job_in(&mut c, 0, 1, "short", 1, Phase::Map);
        assert_eq!(allocations(&schedule(&mut c, 0)).len(), 1);
        job_in(&mut c, 1_000, 2, "short", 1, Phase::Map);
        assert!(schedule(&mut c, 1_000).is_empty());

        let mut c = core("bigc", &[("short_share", "0.5")]);
        node(&mut c, 0, 4096, 2);
        job_in(&mut c, 0, 1, "short", 1, Phase::Map);
        job_in(&mut c, 0, 2, "long", 1, Phase::Map);
        assert_eq!(allocations(&schedule(&mut c, 0)).len(), 2);
        job_in(&mut c, 1_000, 3, "short", 1, Phase::Map);
        assert!(schedule(&mut c, 1_000).is_empty(), "the long job holds 1 of 2 vcores: its 50% share");
    }

    /// Short jobs go before long ones submitted earlier; by task count, a
    /// job asking 100 or more containers at once is long.
    #[test]
    fn short_jobs_first_and_classification_by_tasks() {
        let mut c = core("bigc", &[("classify", "tasks"), ("long_tasks", "3")]);
        node(&mut c, 0, 8192, 1);
        job_in(&mut c, 0, 1, "default", 3, Phase::Map);
        job_in(&mut c, 0, 2, "default", 2, Phase::Map);
        let a = allocations(&schedule(&mut c, 0));
        assert_eq!(a.iter().map(|x| x.0).collect::<Vec<_>>(), vec![2]);
        let v = c.describe();
        assert_eq!((v["short_waiting"].as_u64(), v["long_waiting"].as_u64()), (Some(1), Some(1)), "{v}");
    }
}
