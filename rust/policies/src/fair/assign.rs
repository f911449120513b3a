//! One node heartbeat (FairScheduler.attemptScheduling): containers
//! preempted for starved apps go to them first; a valid reservation is
//! served next and ends the heartbeat; then the node is offered top-down
//! (FSParentQueue/FSLeafQueue.assignContainer) once, or several times with
//! `assign_multiple`. Deciding is read-only ([`Fair::find`]); applying goes
//! through the `Ctx`, which validates it.

use super::order::{below, greater, queue_key, QueueView};
use super::tree::QIx;
use super::Fair;
use sojourn_core::{AppId, AskState, Cluster, Ctx, Node, NodeId, Phase, Priority, Resources};

/// What the most deserving app does with the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Action {
    Allocate(Priority),
    Reserve(Priority),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Assigned {
    Nothing,
    Container(Resources),
    Reserved,
}

impl Fair {
    pub(super) fn heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        if self.demand_dirty {
            self.tree.update_demand();
            self.demand_dirty = false;
        }
        if self.cfg.preemption {
            self.assign_preempted(ctx, node);
        }
        if self.serve_reservation(ctx, node) {
            return;
        }
        let Some(start) = ctx.cluster().node(node).map(|n| n.available()) else { return };
        // Resources.multiply(unallocated, 0.5): each component, truncated.
        let half = Resources { memory_mb: start.memory_mb / 2, vcores: start.vcores / 2, gpus: start.gpus / 2 };
        let (mut count, mut total) = (0i64, Resources::ZERO);
        loop {
            let cl = ctx.cluster();
            // The host's per-heartbeat limit ends the heartbeat as
            // max_assign does, before an allocation it would refuse.
            if cl.assignments_left() == Some(0) {
                return;
            }
            let Some(n) = cl.node(node) else { return };
            if n.reservation.is_some() {
                return;
            }
            let Some((app, action)) = self.find(cl, 0, n) else { return };
            match self.apply(ctx, app, action, node) {
                Assigned::Nothing | Assigned::Reserved => return,
                Assigned::Container(r) => {
                    count += 1;
                    total += r;
                }
            }
            let more = self.cfg.assign_multiple
                && if self.cfg.dynamic_max_assign {
                    total.fits_in(&half)
                } else {
                    self.cfg.max_assign <= 0 || count < self.cfg.max_assign
                };
            if !more {
                return;
            }
        }
    }

    /// FSAppAttempt.assignReservedContainer: `true` if the node's
    /// reservation is still wanted (whether or not it could be served),
    /// which ends the heartbeat.
    fn serve_reservation(&mut self, ctx: &mut Ctx<'_>, node: NodeId) -> bool {
        let cl = ctx.cluster();
        let Some(n) = cl.node(node) else { return false };
        let Some((app, prio, res)) = n.reservation else { return false };
        let valid = cl.app(app).and_then(|a| a.asks.get(&prio)).filter(|s| s.outstanding > 0).is_some_and(|s| {
            self.apps.get(&app).is_some_and(|st| self.eligible(cl, st.queue, s, n)) && s.ask.capability == res
        });
        if !valid {
            let _ = ctx.unreserve(node);
            if let Some(set) = self.reserved.get_mut(&app) {
                set.remove(&node);
            }
            return false;
        }
        if res.fits_in(&n.available()) && self.apply(ctx, app, Action::Allocate(prio), node) != Assigned::Nothing {
            if let Some(set) = self.reserved.get_mut(&app) {
                set.remove(&node);
            }
        }
        true
    }

    /// The app the node goes to, and what it does there: queue `q` and below.
    pub(super) fn find(&self, cl: &Cluster, q: QIx, node: &Node) -> Option<(AppId, Action)> {
        let queue = self.tree.queues.get(q)?;
        // assignContainerPreCheck: no reservation, usage within max share.
        if node.reservation.is_some() || !queue.usage.fits_in(&queue.max_share) {
            return None;
        }
        if queue.is_leaf {
            return queue.order.apps().find_map(|app| self.decide_app(cl, app, q, node).map(|a| (app, a)));
        }
        // An only child needs no keys (the common tree: one leaf under root).
        if let [only] = queue.children.as_slice() {
            return self.find(cl, *only, node);
        }
        let mut kids: Vec<_> = queue
            .children
            .iter()
            .filter_map(|c| self.tree.queues.get(*c).map(|x| (c, x)))
            .map(|(c, x)| {
                let view = QueueView {
                    name: &x.name,
                    usage: x.usage,
                    demand: x.demand,
                    min_share: x.min_share,
                    weight: x.weight,
                };
                (queue_key(queue.policy, &view, &self.total), *c)
            })
            .collect();
        kids.sort();
        kids.into_iter().find_map(|(_, c)| self.find(cl, c, node))
    }

    /// Whether `ask` could ever run on `node` for an app of `leaf`
    /// (FSAppAttempt.hasContainerForNode): partition, strict locality, node
    /// size, and the max shares of the leaf and its ancestors.
    fn eligible(&self, cl: &Cluster, leaf: QIx, s: &AskState, node: &Node) -> bool {
        let ask = &s.ask;
        node.has_label(ask.label.as_deref())
            && (ask.relax_locality || ask.locality.is_empty() || cl.locality_level(ask, node) < 2)
            && ask.capability.fits_in(&node.capacity)
            && self.tree.fits_max_share(leaf, &ask.capability)
    }

    /// What `app` (of leaf `leaf`) does with `node`: place its most
    /// important ask that fits, else reserve the node for its most
    /// important eligible ask if allowed. The app's own state is read only
    /// for an AM ask: the leaf is the caller's, and this runs at every
    /// heartbeat, where that lookup missed the cache.
    pub(super) fn decide_app(&self, cl: &Cluster, app: AppId, leaf: QIx, node: &Node) -> Option<Action> {
        let a = cl.app(app)?;
        if matches!(node.reservation, Some((holder, _, _)) if holder != app) {
            return None;
        }
        let mut blocked: Option<&AskState> = None;
        for s in a.outstanding_asks() {
            if !self.eligible(cl, leaf, s, node) {
                continue;
            }
            // FSAppAttempt.assignContainer: an AM waits (and reserves
            // nothing) while its queue's AMs hold their share.
            if s.ask.phase == Phase::Am
                && self.apps.get(&app).is_some_and(|st| st.am_charge.is_zero())
                && !self.can_run_am(leaf, &s.ask.capability)
            {
                continue;
            }
            if s.ask.capability.fits_in(&node.available()) {
                return Some(Action::Allocate(s.ask.priority));
            }
            blocked = blocked.or(Some(s));
        }
        let s = blocked?;
        self.reservable(cl, app, s, node).then_some(Action::Reserve(s.ask.priority))
    }

    /// FSAppAttempt.isReservable and reservationExceedsThreshold.
    fn reservable(&self, cl: &Cluster, app: AppId, s: &AskState, node: &Node) -> bool {
        let Some(st) = self.apps.get(&app) else { return false };
        let Some(policy) = self.tree.queues.get(st.queue).map(|q| q.policy) else { return false };
        if node.reservation.is_some() || self.preempted_for_app(node.id, app) {
            return false;
        }
        let starved = below(policy, &st.usage, &self.app_fair_share(st), &self.total) || !st.ms_starvation.is_zero();
        if !starved || greater(policy, &self.cfg.reservation_threshold, &s.ask.capability, &self.total) {
            return false;
        }
        let node_local = !s.ask.locality.is_empty() && cl.locality_level(&s.ask, node) == 0;
        if node_local {
            return true;
        }
        let held = self.reserved.get(&app).map_or(0, |set| {
            set.iter()
                .filter(|n| matches!(cl.node(**n).and_then(|x| x.reservation), Some((h, _, _)) if h == app))
                .count()
        });
        let allowed = (cl.node_count() as f64 * self.cfg.reservable_nodes).ceil() as usize;
        held < allowed
    }

    /// Carries out `action` through the context.
    pub(super) fn apply(&mut self, ctx: &mut Ctx<'_>, app: AppId, action: Action, node: NodeId) -> Assigned {
        match action {
            Action::Allocate(p) => match ctx.allocate(app, p, node) {
                Ok(c) => {
                    let (res, phase) = ctx
                        .cluster()
                        .container(c)
                        .map(|x| (x.resources, x.phase))
                        .unwrap_or((Resources::ZERO, Phase::Other));
                    if phase == Phase::Am {
                        self.charge_am(app, res);
                    }
                    self.track(c, app);
                    self.refresh_app(ctx.cluster(), app);
                    self.note_allocated(node, app, &res);
                    Assigned::Container(res)
                }
                Err(e) => {
                    log::warn!("fair: allocation for {app} on {node} refused: {e}");
                    Assigned::Nothing
                }
            },
            Action::Reserve(p) => match ctx.reserve(app, p, node) {
                Ok(()) => {
                    let cl = ctx.cluster();
                    let set = self.reserved.entry(app).or_default();
                    set.retain(|n| matches!(cl.node(*n).and_then(|x| x.reservation), Some((h, _, _)) if h == app));
                    set.insert(node);
                    Assigned::Reserved
                }
                Err(e) => {
                    log::warn!("fair: reservation for {app} on {node} refused: {e}");
                    Assigned::Nothing
                }
            },
        }
    }
}
