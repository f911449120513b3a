//! Fair-share and min-share preemption (FSLeafQueue.updateStarvedApps,
//! FSAppAttempt.fairShareStarvation, FSPreemptionThread). Runs on the update
//! tick: starvation is measured as YARN's update thread does, then each
//! starved app's starved requests are matched, container by container, to a
//! minimal set of victims on one node; victims are killed and their node's
//! resources are kept for the starved app (FSSchedulerNode's preemption
//! list), which takes them first at the node's next heartbeats.

use super::assign::{Action, Assigned};
use super::order::{below, greater, min_by};
use super::tree::QIx;
use super::Fair;
use sojourn_core::{
    AppId, Ask, Cluster, Container, ContainerId, Ctx, Node, NodeId, Phase, PreemptMode, Resources, Time,
};
use std::collections::BTreeMap;

/// Victims found on one node for one container (PreemptableContainers).
struct Victims {
    node: NodeId,
    containers: Vec<(ContainerId, AppId, Resources)>,
    ams: usize,
}

/// Resources already being preempted, by app and by queue.
struct Pending {
    by_app: BTreeMap<AppId, Resources>,
    by_queue: Vec<Resources>,
}

impl Fair {
    /// Arms the update tick if preemption could have work: demand waits.
    pub(super) fn arm_tick(&mut self, ctx: &mut Ctx<'_>) {
        if self.tick_at.is_none() && ctx.cluster().pending_containers() > 0 {
            let at = ctx.now.plus(self.cfg.update_interval_ms.max(1));
            self.tick_at = Some(at);
        }
    }

    /// FairScheduler.update's starvation part, then the preemption thread.
    pub(super) fn update_tick(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now;
        let cl = ctx.cluster();
        let total = cl.total();
        let used = cl.allocated();
        let busy = used.memory_mb as f64 / (total.memory_mb.max(1) as f64);
        let busy = busy.max(used.vcores as f64 / (total.vcores.max(1) as f64));
        if total.is_zero() || busy <= self.cfg.utilization_threshold {
            return;
        }
        if self.demand_dirty {
            self.tree.update_demand();
            self.demand_dirty = false;
        }
        let mut starved: Vec<AppId> = Vec::new();
        for leaf in 0..self.tree.queues.len() {
            if self.tree.queues[leaf].is_leaf {
                self.update_starved_apps(leaf, now, &mut starved);
            }
        }
        starved.sort();
        starved.dedup();
        ctx.metrics.count("starvation_checks", 1);
        ctx.metrics.count("starved_apps", starved.len() as u64);
        // FSStarvedApps: the least starved first.
        let mut order: Vec<(u64, u32, AppId)> = starved
            .iter()
            .filter_map(|a| self.apps.get(a).map(|s| (a, s.fs_starvation + s.ms_starvation)))
            .map(|(a, s)| (s.memory_mb, s.vcores, *a))
            .collect();
        order.sort();
        let mut pending = self.pending_preemptions(ctx.cluster());
        for (_, _, app) in order {
            self.preempt_for(ctx, app, &mut pending);
            if let Some(st) = self.apps.get_mut(&app) {
                st.next_starvation_check = now.plus(self.cfg.recheck_delay_ms);
            }
        }
    }

    /// FSLeafQueue.updateStarvedApps for one leaf.
    fn update_starved_apps(&mut self, leaf: QIx, now: Time, starved: &mut Vec<AppId>) {
        let total = self.total;
        let Some(q) = self.tree.queues.get(leaf) else { return };
        let (policy, threshold, fs_timeout, ms_timeout) = (q.policy, q.fs_threshold, q.fs_timeout, q.ms_timeout);
        let apps: Vec<AppId> =
            q.order.apps().filter(|a| self.apps.get(a).is_some_and(|s| now >= s.next_starvation_check)).collect();
        // Fair-share starvation, in the leaf's order, until the first app
        // that is not starved.
        let mut fs_total = Resources::ZERO;
        for app in &apps {
            let share = self.apps.get(app).map_or(Resources::ZERO, |st| self.app_fair_share(st));
            let Some(st) = self.apps.get_mut(app) else { continue };
            let threshold_share = Resources {
                memory_mb: (share.memory_mb as f64 * threshold) as u64,
                vcores: (share.vcores as f64 * threshold) as u32,
                gpus: (share.gpus as f64 * threshold) as u32,
            };
            let fair_demand = threshold_share.min(&st.demand());
            let is_starved = below(policy, &st.usage, &fair_demand, &total);
            if !is_starved {
                st.last_time_at_fair_share = now;
            }
            let timed_out = fs_timeout.is_some_and(|t| now.since(st.last_time_at_fair_share) >= t);
            st.fs_starvation =
                if is_starved && timed_out { fair_demand.saturating_sub(&st.usage) } else { Resources::ZERO };
            if st.fs_starvation.is_zero() {
                break;
            }
            starved.push(*app);
            fs_total += st.fs_starvation;
        }
        // Min-share starvation of the leaf, beyond what fair share covers.
        let Some(q) = self.tree.queues.get_mut(leaf) else { return };
        let desired = min_by(policy, &q.min_share, &q.demand, &total);
        let mut ms = desired.saturating_sub(&q.usage);
        if ms.is_zero() {
            q.last_time_at_min_share = now;
        }
        if ms_timeout.is_none_or(|t| now.since(q.last_time_at_min_share) < t) {
            ms = Resources::ZERO;
        }
        let mut left = ms.saturating_sub(&fs_total);
        for app in &apps {
            let Some(st) = self.apps.get_mut(app) else { continue };
            if left.is_zero() {
                st.ms_starvation = Resources::ZERO;
                continue;
            }
            let mut share = st.pending.saturating_sub(&st.fs_starvation);
            if greater(policy, &share, &left, &total) {
                share = left;
                left = Resources::ZERO;
            } else {
                left = left.saturating_sub(&share);
            }
            st.ms_starvation = share;
            starved.push(*app);
        }
    }

    /// What is already being preempted (killed, completion not yet seen).
    fn pending_preemptions(&self, cl: &Cluster) -> Pending {
        let mut p = Pending { by_app: BTreeMap::new(), by_queue: vec![Resources::ZERO; self.tree.queues.len()] };
        for c in cl.containers().filter(|c| c.preempting) {
            self.add_pending(&mut p, c.app, c.resources);
        }
        p
    }

    fn add_pending(&self, p: &mut Pending, app: AppId, r: Resources) {
        *p.by_app.entry(app).or_default() += r;
        if let Some(st) = self.apps.get(&app) {
            for q in self.tree.path(st.queue) {
                if let Some(x) = p.by_queue.get_mut(q) {
                    *x += r;
                }
            }
        }
    }

    /// FSPreemptionThread.identifyContainersToPreempt and preemptContainers.
    fn preempt_for(&mut self, ctx: &mut Ctx<'_>, app: AppId, pending: &mut Pending) {
        let Some(st) = self.apps.get(&app) else { return };
        let mut want = st.fs_starvation + st.ms_starvation;
        // getStarvedResourceRequests: asks in priority order, as many
        // containers as fit in the starvation (by memory, as YARN's
        // scheduler-wide calculator).
        let mut requests: Vec<(Ask, u32)> = Vec::new();
        let Some(a) = ctx.cluster().app(app) else { return };
        for s in a.outstanding_asks() {
            if want.is_zero() {
                break;
            }
            let cap = s.ask.capability;
            if cap.memory_mb == 0 {
                continue;
            }
            let n = (want.memory_mb / cap.memory_mb).min(s.outstanding as u64) as u32;
            if n == 0 {
                continue;
            }
            requests.push((s.ask.clone(), n));
            want = want.saturating_sub(&cap.times(n as u64));
        }
        for (ask, n) in requests {
            for _ in 0..n {
                let Some(v) = self.best_victims(ctx.cluster(), app, &ask, pending) else { continue };
                if v.containers.is_empty() {
                    continue;
                }
                let mut freed = Resources::ZERO;
                for (c, owner, r) in &v.containers {
                    if ctx.preempt(*c, PreemptMode::Kill).is_ok() {
                        ctx.metrics.count("kills", 1);
                        self.add_pending(pending, *owner, *r);
                        freed += *r;
                    }
                }
                if !freed.is_zero() {
                    let list = self.preempted_for.entry(v.node).or_default();
                    match list.iter_mut().find(|(a, _)| *a == app) {
                        Some((_, r)) => *r += freed,
                        None => list.push((app, freed)),
                    }
                }
            }
        }
    }

    /// The victims on the best node for one container of `cap`: the first
    /// node where preemptable containers make it fit, unless a later node
    /// needs fewer AM containers.
    fn best_victims(&self, cl: &Cluster, starved: AppId, ask: &Ask, p: &Pending) -> Option<Victims> {
        let starved_leaf = self.apps.get(&starved)?.queue;
        let cap = &ask.capability;
        let mut best: Option<Victims> = None;
        let mut max_ams = usize::MAX;
        for node in cl.nodes() {
            let fits_node = node.has_label(ask.label.as_deref())
                && (ask.relax_locality || ask.locality.is_empty() || cl.locality_level(ask, node) < 2);
            if !fits_node {
                continue;
            }
            if let Some(v) = self.victims_on(cl, node, cap, max_ams, starved_leaf, p) {
                max_ams = v.ams;
                best = Some(v);
                if max_ams == 0 {
                    break;
                }
            }
        }
        best
    }

    /// FSPreemptionThread.identifyContainersToPreemptOnNode.
    fn victims_on(
        &self,
        cl: &Cluster,
        node: &Node,
        cap: &Resources,
        max_ams: usize,
        starved_leaf: QIx,
        p: &Pending,
    ) -> Option<Victims> {
        let mut list: Vec<&Container> =
            node.containers.iter().filter_map(|c| cl.container(*c)).filter(|c| !c.preempting).collect();
        // Running containers newest first, AMs at the end.
        list.sort_by_key(|c| (c.phase == Phase::Am, if c.phase == Phase::Am { c.id.0 } else { u64::MAX - c.id.0 }));
        let reserved = node.reservation.map_or(Resources::ZERO, |(_, _, r)| r)
            + self
                .preempted_for
                .get(&node.id)
                .map_or(Resources::ZERO, |l| l.iter().fold(Resources::ZERO, |s, x| s + x.1));
        let mut potential = node.available().saturating_sub(&reserved);
        let mut v = Victims { node: node.id, containers: Vec::new(), ams: 0 };
        for c in list {
            if self.can_preempt(c, &v, starved_leaf, p) {
                if c.phase == Phase::Am {
                    v.ams += 1;
                    if v.ams >= max_ams {
                        return None;
                    }
                }
                v.containers.push((c.id, c.app, c.resources));
                potential += c.resources;
            }
            if cap.fits_in(&potential) {
                return Some(v);
            }
        }
        None
    }

    /// FSAppAttempt.canContainerBePreempted, plus the queue guard: the app
    /// stays at or above its fair share once this container and those
    /// already chosen are gone, and so does every queue the resources would
    /// leave (the victim's leaf and ancestors that are not also the starved
    /// app's: preemption inside a queue moves nothing out of it).
    fn can_preempt(&self, c: &Container, chosen: &Victims, starved_leaf: QIx, p: &Pending) -> bool {
        let Some(st) = self.apps.get(&c.app) else { return false };
        let Some(leaf) = self.tree.queues.get(st.queue) else { return false };
        if !leaf.preemptable || (c.phase == Phase::Am && !self.cfg.am_preemption) {
            return false;
        }
        let total = self.total;
        let chosen_of = |pred: &dyn Fn(AppId) -> bool| {
            chosen.containers.iter().filter(|(_, a, _)| pred(*a)).fold(Resources::ZERO, |s, x| s + x.2)
        };
        let gone = p.by_app.get(&c.app).copied().unwrap_or_default() + chosen_of(&|a| a == c.app) + c.resources;
        if below(leaf.policy, &st.usage.saturating_sub(&gone), &leaf.app_share, &total) {
            return false;
        }
        for q in self.tree.path(st.queue) {
            if self.tree.path(starved_leaf).any(|s| s == q) {
                break; // q and everything above it also hold the starved app
            }
            let Some(x) = self.tree.queues.get(q) else { continue };
            let Some(parent) = x.parent.and_then(|pq| self.tree.queues.get(pq)) else { continue };
            let in_q = |a: AppId| self.apps.get(&a).is_some_and(|s| self.tree.path(s.queue).any(|y| y == q));
            let gone = p.by_queue.get(q).copied().unwrap_or_default() + chosen_of(&in_q) + c.resources;
            if below(parent.policy, &x.usage.saturating_sub(&gone), &x.fair_share, &total) {
                return false;
            }
        }
        true
    }

    pub(super) fn preempted_for_app(&self, node: NodeId, app: AppId) -> bool {
        self.preempted_for.get(&node).is_some_and(|l| l.iter().any(|(a, _)| *a == app))
    }

    /// FSSchedulerNode.allocateContainer: an allocation to an app the node
    /// holds preempted resources for uses them up.
    pub(super) fn note_allocated(&mut self, node: NodeId, app: AppId, res: &Resources) {
        if let Some(list) = self.preempted_for.get_mut(&node) {
            for (a, r) in list.iter_mut() {
                if *a == app {
                    *r = r.saturating_sub(&r.min(res));
                }
            }
            list.retain(|(_, r)| !r.is_zero());
            if list.is_empty() {
                self.preempted_for.remove(&node);
            }
        }
    }

    /// FairScheduler.assignPreemptedContainers: after dropping apps that no
    /// longer starve (FSSchedulerNode.cleanupPreemptionList), each app the
    /// node preempted for takes containers until its share is used up.
    pub(super) fn assign_preempted(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        let Some(list) = self.preempted_for.get(&node).cloned() else { return };
        let total = self.total;
        let keep: Vec<(AppId, Resources)> = list
            .into_iter()
            .filter(|(a, _)| {
                self.apps.get(a).is_some_and(|st| {
                    let policy = self.tree.queues.get(st.queue).map_or(super::QueuePolicy::Fair, |q| q.policy);
                    let starved =
                        below(policy, &st.usage, &self.app_fair_share(st), &total) || !st.ms_starvation.is_zero();
                    starved && !(st.fs_starvation.is_zero() && st.ms_starvation.is_zero())
                })
            })
            .collect();
        if keep.is_empty() {
            self.preempted_for.remove(&node);
            return;
        }
        self.preempted_for.insert(node, keep.clone());
        for (app, mut due) in keep {
            while !due.is_zero() {
                let cl = ctx.cluster();
                let Some(n) = cl.node(node) else { return };
                let Some(leaf) = self.apps.get(&app).map(|st| st.queue) else { break };
                let Some(action @ Action::Allocate(_)) = self.decide_app(cl, app, leaf, n) else { break };
                match self.apply(ctx, app, action, node) {
                    Assigned::Container(r) => due = due.saturating_sub(&r),
                    _ => break,
                }
            }
        }
    }
}
