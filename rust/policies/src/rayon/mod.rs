//! `rayon`: the Rayon/CapacityScheduler baseline of TetriSched's evaluation
//! (tetrisched.md §4.3–4.4, §5.8): YARN's ReservationSystem admitting SLO
//! jobs into a reservation plan, and a CapacityScheduler that honours the
//! plan with reservation queues, a best-effort queue and preemption.
//!
//! - **Admission** (`admission.rs`, shared with `tetrisched`): an app with a
//!   deadline is an SLO job; its request (k containers for its estimated
//!   duration inside [submit, deadline]) is placed by the greedy agent in
//!   the plan, a capacity-over-time profile, as late as the deadline allows
//!   (the agent allocating from the deadline backwards, §4.3; `placement =
//!   early` places it as early as possible), or rejected if no window has
//!   room. Apps without a deadline are best effort (BE) and never ask.
//! - **Reservation queues.** While an accepted job's reservation is active
//!   it is guaranteed the reserved slots: every pass serves the active
//!   reservations first, up to their guarantee, and if free capacity does
//!   not cover what they still ask, best-effort containers are killed
//!   (`preemption`, §4.4: CapacityScheduler's preemption enabled, which
//!   kills), the newest app's newest containers first, as CS's preemption
//!   takes the most recently allocated containers of the queue over its
//!   guarantee. Before its window an accepted job waits in the plan's
//!   default queue, so it shares spare capacity like a BE job.
//! - **Best-effort queue.** BE jobs, rejected SLO jobs and accepted jobs
//!   whose reservation ended before they finished (moved to the default
//!   queue, §4.3 [L374]) share what the guarantees leave, FIFO by
//!   submission (one default queue, CS's FIFO ordering within a leaf
//!   queue); a reservation's own job may also use spare capacity beyond its
//!   guarantee (CS queues are elastic), and those containers are
//!   preemptable too.
//!
//! Simplifications: CS's preemption acts at once (no 15 s wait for the AM to
//! release, no monitoring interval); guarantees are counted in slots
//! cluster-wide, not per node; spare capacity is FIFO over the BE queue and
//! the reservation jobs alike instead of CS's ordering of queues by used
//! share.

pub mod admission;
pub mod config;
#[cfg(test)]
mod tests;

use crate::common::DemandIndex;
use admission::{Admission, Decision};
use config::Config;
pub use config::PARAMS;
use serde_json::json;
use sojourn_core::{AppId, Cluster, ContainerId, Ctx, Event, NodeId, Params, Policy, PreemptMode, Result, Time};
use std::cmp::Reverse;
use std::collections::BTreeSet;

pub fn build(p: &Params) -> Result<Box<dyn Policy>> {
    Ok(Box::new(Rayon::new(Config::from_params(p)?)))
}

/// Decisions so far, for `describe` and tests.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Counts {
    pub accepted: u64,
    pub rejected: u64,
    /// Accepted jobs still unfinished when their reservation ended.
    pub expired: u64,
    /// Containers killed to honour a reservation.
    pub preempted: u64,
}

pub struct Rayon {
    cfg: Config,
    admission: Admission,
    /// Reservation starts and ends still to come: a reservation's start may
    /// need preemption, its end moves an unfinished job to the BE queue.
    wakes: BTreeSet<Time>,
    expired: BTreeSet<AppId>,
    counts: Counts,
    /// Apps with pending containers in FIFO order (submit, id): the queue
    /// every pass serves, kept as asks come and go rather than rebuilt and
    /// sorted from every app each pass.
    fifo: DemandIndex<(Time, AppId)>,
}

impl Rayon {
    pub fn new(cfg: Config) -> Rayon {
        let admission = Admission::new(cfg.admission);
        Rayon {
            cfg,
            admission,
            wakes: BTreeSet::new(),
            expired: BTreeSet::new(),
            counts: Counts::default(),
            fifo: DemandIndex::default(),
        }
    }

    pub fn admission(&self) -> &Admission {
        &self.admission
    }

    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    fn width(&self, r: &sojourn_core::Resources) -> u32 {
        admission::width(&self.cfg.admission, r)
    }

    fn admit(&mut self, ctx: &mut Ctx<'_>) {
        for (_, d) in self.admission.decide_new(ctx.cluster()) {
            match d {
                Decision::Accepted(r) => {
                    self.counts.accepted += 1;
                    ctx.metrics.count("rayon.accepted", 1);
                    self.wakes.insert(r.start);
                    self.wakes.insert(r.end);
                }
                Decision::Rejected => {
                    self.counts.rejected += 1;
                    ctx.metrics.count("rayon.rejected", 1);
                }
            }
        }
    }

    /// The slots `app` is guaranteed at `now`: its reservation's, while active.
    fn guarantee(&self, app: AppId, now: Time) -> u32 {
        match self.admission.decision(app) {
            Some(Decision::Accepted(r)) if r.start <= now && now < r.end => r.slots,
            _ => 0,
        }
    }

    /// Accepted jobs past their reservation's end go to the BE queue.
    fn expire(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now;
        let ended: Vec<AppId> = ctx
            .cluster()
            .apps()
            .filter(|a| matches!(self.admission.decision(a.id()), Some(Decision::Accepted(r)) if now >= r.end))
            .map(|a| a.id())
            .filter(|a| !self.expired.contains(a))
            .collect();
        for a in ended {
            self.expired.insert(a);
            self.counts.expired += 1;
            ctx.metrics.count("rayon.expired", 1);
        }
    }

    /// Slots `app` holds in containers not being killed.
    fn used(&self, cluster: &Cluster, app: AppId) -> u32 {
        cluster.app(app).map_or(0, |a| {
            a.containers
                .iter()
                .filter_map(|c| cluster.container(*c))
                .filter(|c| !c.preempting)
                .map(|c| self.width(&c.resources))
                .sum()
        })
    }

    fn pending(&self, cluster: &Cluster, app: AppId) -> u64 {
        cluster.app(app).map_or(0, |a| {
            a.outstanding_asks().map(|s| u64::from(s.outstanding) * u64::from(self.width(&s.ask.capability))).sum()
        })
    }

    /// Active reservations with demand, by start, then submission: (app, guarantee).
    fn active(&self, cluster: &Cluster, now: Time) -> Vec<(AppId, u32)> {
        let mut v: Vec<(Time, Time, AppId, u32)> = cluster
            .apps()
            .filter(|a| a.pending_containers > 0)
            .filter_map(|a| match self.admission.decision(a.id()) {
                Some(Decision::Accepted(r)) if r.start <= now && now < r.end => {
                    Some((r.start, a.submit, a.id(), r.slots))
                }
                _ => None,
            })
            .collect();
        v.sort();
        v.into_iter().map(|(_, _, a, g)| (a, g)).collect()
    }

    /// Kills best-effort containers (and containers beyond a reservation's
    /// guarantee) until free capacity covers what active reservations still
    /// ask within their guarantees.
    fn preempt_for_reservations(&mut self, ctx: &mut Ctx<'_>) {
        if !self.cfg.preemption {
            return;
        }
        let now = ctx.now;
        let cluster = ctx.cluster();
        let mut deficit: u64 = 0;
        for app in cluster.apps() {
            let g = self.guarantee(app.id(), now);
            if g > 0 {
                let short = u64::from(g.saturating_sub(self.used(cluster, app.id())));
                deficit += short.min(self.pending(cluster, app.id()));
            }
        }
        if deficit == 0 {
            return;
        }
        let cfg = &self.cfg.admission;
        // Free now, and soon: containers already being killed.
        let mut free: u64 = cluster.nodes().map(|n| u64::from(admission::slots(cfg, &n.available()))).sum();
        free += cluster
            .apps()
            .flat_map(|a| a.containers.iter())
            .filter_map(|c| cluster.container(*c))
            .filter(|c| c.preempting)
            .map(|c| u64::from(self.width(&c.resources)))
            .sum::<u64>();
        if free >= deficit {
            return;
        }
        type Victim = (Reverse<Time>, Reverse<AppId>, Reverse<Time>, Reverse<ContainerId>, u32);
        let mut victims: Vec<Victim> = Vec::new();
        for app in cluster.apps() {
            let g = self.guarantee(app.id(), now);
            let mut over = self.used(cluster, app.id()).saturating_sub(g);
            let mut cs: Vec<_> =
                app.containers.iter().filter_map(|c| cluster.container(*c)).filter(|c| !c.preempting).collect();
            cs.sort_by_key(|c| (Reverse(c.start), Reverse(c.id)));
            for c in cs {
                let w = self.width(&c.resources);
                if w <= over {
                    over -= w;
                    victims.push((Reverse(app.submit), Reverse(app.id()), Reverse(c.start), Reverse(c.id), w));
                }
            }
        }
        victims.sort();
        for (_, _, _, Reverse(c), w) in victims {
            if free >= deficit {
                break;
            }
            if ctx.preempt(c, PreemptMode::Kill).is_ok() {
                free += u64::from(w);
                self.counts.preempted += 1;
                ctx.metrics.count("rayon.preempted", 1);
            }
        }
    }

    /// One scheduling pass over `only` or every node with space: admission,
    /// expiry, the active reservations up to their guarantees, preemption
    /// for what they still miss, then spare capacity FIFO.
    fn pass(&mut self, ctx: &mut Ctx<'_>, only: Option<NodeId>) {
        // (admission runs on the events that bring an app or its asks,
        // `on_event`: nothing else makes an undecided app decidable)
        // Expiry, guarantees and preemption concern accepted reservations
        // only: with none (a workload without deadlines), each would walk
        // every app to find nothing.
        if self.counts.accepted > 0 {
            self.expire(ctx);
            let now = ctx.now;
            for (app, g) in self.active(ctx.cluster(), now) {
                self.place(ctx, app, only, Some(g));
            }
            self.preempt_for_reservations(ctx);
        }
        let mut drained = Vec::new();
        for app in self.fifo.iter() {
            let c = ctx.cluster();
            if !only.map_or(c.next_node_with_space(NodeId(0)).is_some(), |n| crate::common::node_has_room(c, n)) {
                break;
            }
            self.place(ctx, app, only, None);
            if ctx.cluster().app(app).is_none_or(|a| a.pending_containers == 0) {
                drained.push(app);
            }
        }
        for app in drained {
            self.fifo.refresh(ctx.cluster(), app);
        }
    }

    /// Places `app`'s pending containers on `only` or on the nodes with
    /// space in node order, while it holds less than `cap` slots (if given).
    fn place(&self, ctx: &mut Ctx<'_>, app: AppId, only: Option<NodeId>, cap: Option<u32>) {
        let mut node = match only {
            Some(n) => n,
            None => match ctx.cluster().next_node_with_space(NodeId(0)) {
                Some(n) => n,
                None => return,
            },
        };
        // (what it holds matters only against a guarantee)
        let mut used = if cap.is_some() { self.used(ctx.cluster(), app) } else { 0 };
        loop {
            loop {
                if ctx.cluster().app(app).is_none_or(|a| a.pending_containers == 0) {
                    return;
                }
                let Some(p) = crate::common::first_fitting(ctx.cluster(), app, node) else { break };
                let w =
                    ctx.cluster().app(app).and_then(|a| a.asks.get(&p)).map_or(1, |s| self.width(&s.ask.capability));
                if cap.is_some_and(|g| used + w > g) {
                    return;
                }
                if ctx.allocate(app, p, node).is_err() {
                    break;
                }
                used += w;
            }
            if only.is_some() {
                return;
            }
            match node.0.checked_add(1).and_then(|n| ctx.cluster().next_node_with_space(NodeId(n))) {
                Some(n) => node = n,
                None => return,
            }
        }
    }
}

impl Policy for Rayon {
    fn name(&self) -> &'static str {
        "rayon"
    }

    fn on_event(&mut self, ctx: &mut Ctx<'_>, event: &Event) {
        self.fifo.observe(ctx.cluster(), event, |a| (a.submit, a.id()));
        if matches!(event, Event::AppAdded(_) | Event::AsksUpdated { .. }) {
            self.admit(ctx);
        }
    }

    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        self.pass(ctx, Some(node));
    }

    fn on_schedule(&mut self, ctx: &mut Ctx<'_>) {
        self.pass(ctx, None);
    }

    fn next_wake(&self) -> Option<Time> {
        self.wakes.first().copied()
    }

    /// A reservation starts or ends: preempt for it, or move its job.
    fn on_wake(&mut self, ctx: &mut Ctx<'_>) {
        while self.wakes.first().is_some_and(|t| *t <= ctx.now) {
            self.wakes.pop_first();
        }
        self.pass(ctx, None);
    }

    fn describe(&self, cluster: &Cluster, now: Time) -> serde_json::Value {
        json!({
            "now_ms": now.ms(),
            "counts": serde_json::to_value(&self.counts).unwrap_or(serde_json::Value::Null),
            "plan_capacity_slots": self.admission.capacity(cluster),
            "plan_reserved_slots_now": self.admission.reserved_at(now),
            "active_reservations": self.active(cluster, now).len(),
            "next_boundary_ms": self.wakes.first().map(|t| t.ms()),
        })
    }
}
