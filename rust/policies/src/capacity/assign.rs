//! One node heartbeat, as CapacityScheduler.allocateContainersToNode:
//!
//! 1. A node reserved for an app serves that reservation alone: allocate if
//!    the container fits now, drop it if the app no longer wants it, else
//!    wait. Nothing else is placed on a reserved node.
//! 2. Otherwise descend from the root, one container per descent, repeating
//!    while the last descent allocated (not reserved), multiple assignments
//!    are on, fewer than `max_assignments_per_heartbeat` were placed and
//!    fewer than `max_offswitch_assignments_per_heartbeat` were off-switch.
//! 3. A parent offers the node to its children with pending demand, least
//!    used capacity (used / guaranteed) first, ties to the larger absolute
//!    capacity; a queue at or above its limit is skipped.
//! 4. A leaf offers it to its apps in FIFO order (priority, submission),
//!    skipping apps not yet activated under the AM limit and users above
//!    the user limit. An app tries its asks in request-priority order; an
//!    ask larger than the queue's headroom stops the leaf (QUEUE_SKIPPED);
//!    locality is node-local, then rack-local after `node_locality_delay`
//!    missed opportunities, then off-switch after the delay
//!    RegularContainerAllocator.canAssign computes; an app whose off-switch
//!    turn is delayed is skipped for the next app.
//! 5. A container that fits is allocated; one that does not fit reserves
//!    the node if the app has fewer reservations than outstanding containers
//!    at that priority.

use super::calc::{Calc, V};
use super::limits;
use super::state::AppKey;
use super::Capacity;
use sojourn_core::{AppId, Ctx, Locality, NodeId, Phase, Priority, Resources};
use std::ops::Bound::{Excluded, Unbounded};

/// What a descent (or an app's turn) achieved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Allocated {
        off_switch: bool,
    },
    Reserved,
    /// Nothing placed; siblings may still try.
    Nothing,
    /// The queue's headroom cannot take the ask: stop this leaf.
    QueueLimit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    NodeLocal,
    RackLocal,
    OffSwitch,
}

/// An ask's result at one locality level.
enum Try {
    Done(Outcome),
    Skipped,
}

impl Capacity {
    pub(crate) fn calc(&self, ctx: &Ctx<'_>) -> Calc {
        Calc::new(self.conf.calculator, ctx.cluster().total())
    }

    pub(crate) fn heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        let Some(n) = ctx.cluster().node(node) else { return };
        if let Some((app, priority, _)) = n.reservation {
            self.serve_reservation(ctx, node, app, priority);
            return;
        }
        let (mut assigned, mut off_switch) = (0i64, 0i64);
        // The host's per-heartbeat limit (`Cluster::assignments_left`) ends
        // the heartbeat as a full node does: no queue is walked for nothing,
        // and no refusal counts as a missed opportunity.
        while crate::common::heartbeat_may_assign(ctx.cluster(), node) {
            let calc = self.calc(ctx);
            match self.descend(ctx, node, 0, calc.total, &calc) {
                Outcome::Allocated { off_switch: off } => {
                    assigned += 1;
                    off_switch += i64::from(off);
                }
                _ => break,
            }
            if !self.conf.assign_multiple
                || off_switch >= self.conf.max_offswitch
                || (self.conf.max_assignments >= 0 && assigned >= self.conf.max_assignments)
            {
                break;
            }
        }
    }

    fn serve_reservation(&mut self, ctx: &mut Ctx<'_>, node: NodeId, app: AppId, priority: Priority) {
        let wanted = ctx.cluster().app(app).and_then(|a| a.asks.get(&priority)).is_some_and(|s| s.outstanding > 0);
        if !wanted {
            if ctx.unreserve(node).is_ok() {
                self.state.unreserved(node);
            }
            return;
        }
        if ctx.cluster().can_allocate(app, priority, node).is_ok() {
            // Allocation from a reservation: limits were charged when it was made.
            self.place(ctx, node, app, priority, Level::NodeLocal, false);
        }
    }

    fn descend(&mut self, ctx: &mut Ctx<'_>, node: NodeId, q: usize, limit: V, calc: &Calc) -> Outcome {
        // canAssignToThisQueue, with reservations-continue-looking: a queue
        // at its limit may still place a container by giving up a
        // reservation.
        let (used, reserved) = (V::from(self.state.queues[q].used), V::from(self.state.queues[q].reserved));
        if calc.ge(used, limit) && !(calc.positive(reserved) && calc.lt(used.sub(reserved), limit)) {
            return Outcome::Nothing;
        }
        if self.conf.queues[q].is_leaf() {
            return self.assign_leaf(ctx, node, q, limit, calc);
        }
        let mut children: Vec<(f64, f64, usize)> = self.conf.queues[q]
            .children
            .iter()
            .filter(|&&c| self.state.queues[c].waiting_apps > 0)
            .map(|&c| (limits::used_capacity(&self.conf, &self.state, c, calc), self.conf.queues[c].abs_capacity, c))
            .collect();
        children.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2)));
        for (_, _, child) in children {
            let child_limit = limits::child_limit(&self.conf, &self.state, q, limit, child, calc);
            match self.descend(ctx, node, child, child_limit, calc) {
                done @ (Outcome::Allocated { .. } | Outcome::Reserved) => return done,
                _ => continue,
            }
        }
        Outcome::Nothing
    }

    fn assign_leaf(&mut self, ctx: &mut Ctx<'_>, node: NodeId, leaf: usize, limit: V, calc: &Calc) -> Outcome {
        let headroom = limit.sub(V::from(self.state.queues[leaf].used));
        let user_limit = limits::user_limit(&self.conf, &self.state, leaf, calc);
        // Walks the waiting apps from a cursor rather than a copy of the set:
        // with hundreds of thousands waiting, copying them on every descent
        // dominated the run, while the first app usually takes the node. An
        // app's turn changes only its own entry (at or before the cursor),
        // so the walk sees the apps a copy would.
        let mut cursor: Option<AppKey> = None;
        loop {
            let waiting = &self.state.queues[leaf].waiting;
            let next = match cursor {
                None => waiting.iter().next(),
                Some(at) => waiting.range((Excluded(at), Unbounded)).next(),
            };
            let Some(&key) = next else { break };
            cursor = Some(key);
            let app = key.2;
            let Some(u) = self.state.apps.get(&app) else { continue };
            if !u.activated && !self.try_activate(ctx, leaf, app, limit, calc) {
                continue;
            }
            let Some(u) = self.state.apps.get(&app) else { continue };
            let user_used = self.state.queues[leaf].users.get(&u.user).map_or(Resources::ZERO, |x| x.used);
            if calc.gt(V::from(user_used), user_limit) {
                continue;
            }
            match self.assign_app(ctx, node, app, headroom, calc) {
                Outcome::Nothing => continue,
                done => return done,
            }
        }
        Outcome::Nothing
    }

    /// YARN activates an app when its AM fits the queue's AM limit (or no
    /// app of the queue runs yet, so that one always starts).
    fn try_activate(&mut self, ctx: &Ctx<'_>, leaf: usize, app: AppId, limit: V, calc: &Calc) -> bool {
        let charge = ctx
            .cluster()
            .app(app)
            .and_then(|a| a.outstanding_asks().find(|s| s.ask.phase == Phase::Am).map(|s| s.ask.capability))
            .unwrap_or(Resources::ZERO);
        let lq = &self.state.queues[leaf];
        let am_limit = limits::am_limit(&self.conf, leaf, limit, calc);
        let fits = calc.fits(V::from(lq.am_used + charge), am_limit);
        if fits || lq.activated == 0 || lq.am_used.is_zero() {
            self.state.activate(app, charge);
            return true;
        }
        false
    }

    fn assign_app(&mut self, ctx: &mut Ctx<'_>, node: NodeId, app: AppId, headroom: V, calc: &Calc) -> Outcome {
        let prios: Vec<Priority> = match ctx.cluster().app(app) {
            Some(a) => a.outstanding_asks().map(|s| s.ask.priority).collect(),
            None => return Outcome::Nothing,
        };
        let nodes = ctx.cluster().node_count() as f64;
        for priority in prios {
            let cl = ctx.cluster();
            let (Some(st), Some(n)) = (cl.app(app).and_then(|a| a.asks.get(&priority)), cl.node(node)) else {
                continue;
            };
            if !n.has_label(st.ask.label.as_deref()) {
                continue; // PRIORITY_SKIPPED: wrong partition
            }
            // checkHeadroom: what the app has reserved could be given up.
            let reserved = self.state.apps.get(&app).map_or(Resources::ZERO, |u| u.reserved);
            if !calc.fits(V::from(st.ask.capability), headroom.add(V::from(reserved))) {
                return Outcome::QueueLimit;
            }
            let unreserve = !calc.fits(V::from(st.ask.capability), headroom);
            if calc.fits(V::from(st.ask.capability), V::from(n.capacity)) && !st.ask.capability.fits_in(&n.capacity) {
                // Fits by the calculator's measure but never on this node
                // (e.g. vcores under the memory calculator, which YARN would
                // over-commit and the core does not): try the next ask.
                continue;
            }
            let rack = cl.rack_name(n.rack);
            let node_local = st.ask.locality.iter().any(|l| matches!(l, Locality::Node(x, c) if *x == node && *c > 0));
            let rack_local = st.ask.locality.iter().any(|l| matches!(l, Locality::Rack(r, c) if r == rack && *c > 0));
            let locations = st
                .ask
                .locality
                .iter()
                .filter(|l| matches!(l, Locality::Node(_, c) | Locality::Rack(_, c) if *c > 0))
                .count();
            let any_only = locations == 0;
            let may_go_off_switch = st.ask.relax_locality || st.ask.locality.is_empty();
            let outstanding = st.outstanding as f64;
            let missed = {
                let m = self.state.missed.entry((app, priority)).or_insert(0);
                *m += 1;
                *m as f64
            };
            if node_local {
                if let Try::Done(o) = self.try_level(ctx, node, app, priority, Level::NodeLocal, unreserve) {
                    return o;
                }
            }
            if rack_local {
                let delay = nodes.min(self.conf.node_locality_delay as f64);
                if delay < missed {
                    if let Try::Done(o) = self.try_level(ctx, node, app, priority, Level::RackLocal, unreserve) {
                        return o;
                    }
                }
            }
            if !may_go_off_switch {
                // PRIORITY_SKIPPED: a skipped ask is not a missed opportunity.
                if let Some(m) = self.state.missed.get_mut(&(app, priority)) {
                    *m = m.saturating_sub(1);
                }
                continue;
            }
            let off_switch_ok = if any_only {
                true
            } else if self.conf.rack_locality_additional_delay > -1 {
                let delay =
                    nodes.min((self.conf.node_locality_delay + self.conf.rack_locality_additional_delay) as f64);
                missed > delay
            } else {
                let wait_factor = ((locations as f64) / nodes.max(1.0)).min(1.0);
                nodes.min(outstanding * wait_factor) < missed
            };
            if off_switch_ok {
                if let Try::Done(o) = self.try_level(ctx, node, app, priority, Level::OffSwitch, unreserve) {
                    return o;
                }
            }
            return Outcome::Nothing; // APP_SKIPPED
        }
        Outcome::Nothing
    }

    /// RegularContainerAllocator.assignContainer at one locality level.
    /// `unreserve`: the ask fits the queue's headroom only if the app gives
    /// up one of its reservations at this priority (on another node).
    fn try_level(
        &mut self,
        ctx: &mut Ctx<'_>,
        node: NodeId,
        app: AppId,
        priority: Priority,
        level: Level,
        unreserve: bool,
    ) -> Try {
        let cl = ctx.cluster();
        let (Some(st), Some(n)) = (cl.app(app).and_then(|a| a.asks.get(&priority)), cl.node(node)) else {
            return Try::Skipped;
        };
        let capability = st.ask.capability;
        if !capability.fits_in(&n.capacity) {
            return Try::Skipped;
        }
        if capability.fits_in(&n.available()) {
            let give_up = self.state.reserved_nodes(app, priority).into_iter().find(|r| *r != node);
            if unreserve && give_up.is_none() {
                return Try::Skipped;
            }
            if !self.place(ctx, node, app, priority, level, true) {
                return Try::Skipped;
            }
            if let Some(r) = give_up.filter(|_| unreserve) {
                if self.state.reservations.contains_key(&r) && ctx.unreserve(r).is_ok() {
                    self.state.unreserved(r);
                }
            }
            return Try::Done(Outcome::Allocated { off_switch: level == Level::OffSwitch });
        }
        let outstanding = st.outstanding as usize;
        if !unreserve
            && self.state.reserved_nodes(app, priority).len() < outstanding
            && ctx.reserve(app, priority, node).is_ok()
        {
            self.state.reserved(node, app, priority, capability);
            return Try::Done(Outcome::Reserved);
        }
        Try::Skipped
    }

    /// Allocates and books one container; drops reservations the app no
    /// longer needs at that priority.
    fn place(
        &mut self,
        ctx: &mut Ctx<'_>,
        node: NodeId,
        app: AppId,
        priority: Priority,
        level: Level,
        fresh: bool,
    ) -> bool {
        let from_reservation = self.state.reservations.get(&node).is_some_and(|r| r.0 == app && r.1 == priority);
        match ctx.allocate(app, priority, node) {
            Ok(c) => {
                if from_reservation {
                    self.state.unreserved(node);
                }
                self.state.track_container(ctx.cluster(), c, app, node);
                // Opportunities reset on the first node- or rack-local
                // allocation (rack-locality-full-reset defaults to true).
                if fresh && level != Level::OffSwitch {
                    self.state.missed.remove(&(app, priority));
                }
                self.drop_extra_reservations(ctx, app, priority);
                true
            }
            Err(e) => {
                log::warn!("capacity: allocation of {app} at {priority} on {node} refused: {e}");
                false
            }
        }
    }

    /// Keeps an app's reservations at a priority no more than its
    /// outstanding containers there.
    pub(crate) fn drop_extra_reservations(&mut self, ctx: &mut Ctx<'_>, app: AppId, priority: Priority) {
        let outstanding =
            ctx.cluster().app(app).and_then(|a| a.asks.get(&priority)).map_or(0, |s| s.outstanding as usize);
        let mut nodes = self.state.reserved_nodes(app, priority);
        while nodes.len() > outstanding {
            let Some(n) = nodes.pop() else { break };
            if ctx.unreserve(n).is_ok() {
                self.state.unreserved(n);
            }
        }
    }
}
