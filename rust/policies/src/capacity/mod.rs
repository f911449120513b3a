//! `capacity`: YARN's CapacityScheduler (yarn.md §1.5 for the heartbeat
//! path, §1.7 for preemption), after Hadoop 3.x's CapacityScheduler,
//! ParentQueue, AbstractLeafQueue, UsersManager, RegularContainerAllocator,
//! PriorityUtilizationQueueOrderingPolicy, FifoOrderingPolicy and
//! ProportionalCapacityPreemptionPolicy.
//!
//! # What it models
//!
//! - **Queue tree** (`config`): `queue.<path>.queues` lists children;
//!   capacity and maximum-capacity are percents of the parent, absolute
//!   capacities are their products down the tree. Without configuration the
//!   tree is `root` → `default` (100%). Apps name a leaf by full path or by
//!   its name when unambiguous.
//! - **Auto-created leaves** (CapacityScheduler's ManagedParentQueue): a
//!   parent with `auto_create_child_queue_enabled` creates a missing leaf
//!   right under it when an app names it (the shim names it by placement,
//!   e.g. `user@root.users`). Each created leaf gets the parent's
//!   `leaf_queue_template_capacity` while the parent's children sum to at
//!   most 100 with it, and 0 after that (elastic up to the template's
//!   maximum), in arrival order as GuaranteedOrZeroCapacityOverTimePolicy
//!   activates them. Unlike YARN, a created leaf keeps its capacity when it
//!   empties (no deactivation and re-grant).
//! - **Resource calculator** (`calc`): memory only by default
//!   (DefaultResourceCalculator); `resource_calculator = dominant` compares
//!   dominant shares and fits component-wise.
//! - **Queue selection** (`assign`): one container per descent from the root,
//!   children with demand in order of used / guaranteed capacity (ties: the
//!   larger absolute capacity first); each queue is held to the limit its
//!   parent hands down, `min(parent limit - parent used + own used, own
//!   maximum)`, so a queue grows beyond its capacity into idle resources, up
//!   to its maximum-capacity (elasticity), and an ask larger than the
//!   leaf's headroom is not placed.
//! - **Inside a leaf**: apps by application priority (higher first) then
//!   submission (FifoOrderingPolicy); an app is served while its user's
//!   usage is not above the user limit (`limits`): `max(⌈(active users'
//!   usage + minimum allocation) / active users⌉, ⌈current capacity ×
//!   minimum-user-limit-percent / 100⌉)` capped by `capacity ×
//!   user-limit-factor`, rounded up to the minimum allocation. Because the
//!   test is "usage > limit" before the allocation, a user may end one
//!   container above its limit, as in YARN (a lone user with factor 1 gets
//!   its queue's capacity plus one container). Active users are users with
//!   an app that wants containers. Apps wait for activation under the
//!   queue's AM limit (`maximum_am_resource_percent`, one app always runs;
//!   checked when the app's turn comes). An app tries its asks in request
//!   priority order and is skipped on a node its most important ask cannot
//!   use (locality delay, too small), and an ask larger than the leaf's
//!   headroom stops the leaf (QUEUE_SKIPPED): CapacityScheduler's
//!   head-of-line behaviour is kept, so less important asks may wait while
//!   they would fit.
//! - **Heartbeats**: multiple assignments per heartbeat (on, unlimited),
//!   at most `max_offswitch_assignments_per_heartbeat` (1) off-switch ones;
//!   asks without locality preferences count as off-switch, as YARN's
//!   ANY-only requests do, so by default such asks get one container per
//!   node heartbeat (event-driven `ScheduleAll` repeats passes).
//! - **Locality delay**: missed opportunities per (app, priority); rack-local
//!   after `node_locality_delay` (40, capped by the node count) misses,
//!   off-switch after `min(nodes, outstanding × min(locations / nodes, 1))`
//!   misses, or after `node_locality_delay + rack_locality_additional_delay`
//!   when the latter is not -1; counts reset on node- and rack-local
//!   allocations. `relax_locality = false` never goes off-switch.
//! - **Reservations**: an ask that fits the node's capacity but not its free
//!   space reserves the node (while the app holds fewer reservations than
//!   outstanding containers at that priority); a reserved node serves only
//!   its reservation; reservations count as usage of the queue and user;
//!   extra reservations are dropped once the ask is satisfied elsewhere, and
//!   (reservations-continue-looking) an app at its queue's limit may place a
//!   container by giving up one of its reservations.
//! - **Preemption** (`preempt`), off by default: ideal assignments,
//!   per-round and natural-termination damping, over-capacity tolerance,
//!   mark-then-kill after `max_wait_before_kill_ms`, containers of the
//!   latest apps and least important requests first, youngest first, AM
//!   containers last. A timer ([`Ctx::wake_at`]) runs a round every
//!   `monitoring_interval_ms` while apps exist.
//!
//! # What it leaves out
//!
//! - App rejection: an app submitted to an unknown or parent queue would be
//!   rejected by YARN; the core has no app-rejection decision yet, so the app
//!   is logged and never scheduled (listed by `describe`).
//! - Node-label partitions as CapacityScheduler has them (per-partition
//!   capacities, accessible labels, non-exclusive partitions): an ask with a
//!   label is placed only on nodes with it, and every queue may use them.
//! - Absolute-resource and weight-mode queues, flexible (3.4) auto-creation,
//!   deactivation of idle auto-created leaves, queue states,
//!   ACLs, queue priorities (all equal), user weights, the per-user AM limit,
//!   application-count limits, lifetimes.
//! - The re-reservation starvation term of shouldAllocOrReserveNewContainer;
//!   ParentQueue's blocked headroom; the per-app (rather than per-leaf)
//!   reservation allowance at a leaf's limit check.
//! - Over-committing resources the calculator ignores: with the memory
//!   calculator YARN places a container whose vcores exceed the node's; the
//!   core never over-commits, so such an ask reserves the node (if it could
//!   ever fit) or is passed over on it for the app's next ask.
//! - Asynchronous / global (multi-node) scheduling.
//! - Intra-queue preemption (user limit, application priority), lazy
//!   preemption, per-queue preemption switches. Marking a container does not
//!   warn its AM: the core has no PreemptionMessage decision, so a mark only
//!   starts the wait before the kill.

mod assign;
mod calc;
mod config;
mod limits;
mod preempt;
mod state;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_config;
#[cfg(test)]
mod tests_preempt;
#[cfg(test)]
mod tests_props;

use calc::{Calc, V};
use config::Config;
use serde_json::{json, Value};
use sojourn_core::{
    AppId, AppSpec, Cluster, ContainerId, Ctx, Decision, Event, NodeId, Params, Policy, Priority, Result, Time,
};
use state::State;
use std::collections::BTreeMap;

pub use config::PARAMS;

/// The policy: the configured tree, the books kept in step with the
/// mirror, and the preemption monitor's marks.
pub struct Capacity {
    conf: Config,
    state: State,
    /// Containers marked for preemption, with when.
    marked: BTreeMap<ContainerId, Time>,
    /// When the preemption monitor next runs (its one timer), if armed.
    monitor_at: Option<Time>,
}

/// Builds the policy from validated parameters; a bad tree is a
/// [`sojourn_core::CoreError::Config`] naming the key and queue.
pub fn build(p: &Params) -> Result<Box<dyn Policy>> {
    Ok(Box::new(Capacity::new(p)?))
}

impl Capacity {
    /// Validates the queue tree and the global parameters.
    pub fn new(p: &Params) -> Result<Capacity> {
        let conf = Config::from_params(p)?;
        let state = State::new(&conf.queues);
        Ok(Capacity { conf, state, marked: BTreeMap::new(), monitor_at: None })
    }

    fn app_added(&mut self, ctx: &Ctx<'_>, spec: &AppSpec) {
        let placed = self.conf.resolve(&spec.queue).or_else(|why| {
            // A missing leaf right under an auto-create parent is made now
            // (CapacityScheduler's auto-created leaf queues); other misses keep
            // resolve's reason.
            if why.starts_with("no queue") && spec.queue.contains('.') {
                let leaf = self.conf.auto_create(&spec.queue)?;
                self.state.add_queue(self.conf.queues[leaf].parent);
                log::info!(
                    "capacity: created leaf queue '{}' ({}% of its parent) for {}",
                    spec.queue.trim(),
                    self.conf.queues[leaf].capacity,
                    spec.app
                );
                Ok(leaf)
            } else {
                Err(why)
            }
        });
        match placed {
            Ok(leaf) => self.state.add_app(ctx.cluster(), spec.app, leaf),
            Err(why) => {
                log::warn!(
                    "capacity: {} submitted to queue '{}' will not be scheduled: {why} (YARN would reject it)",
                    spec.app,
                    spec.queue
                );
                self.state.unplaced.insert(spec.app, why);
            }
        }
    }

    fn asks_updated(&mut self, ctx: &mut Ctx<'_>, app: AppId) {
        self.state.sync(ctx.cluster(), app);
        let held: Vec<_> = self.state.reservations.values().filter(|r| r.0 == app).map(|r| r.1).collect();
        for p in held {
            self.drop_extra_reservations(ctx, app, p);
        }
        // Only this app's entries can change: a range, not a pass over every
        // app's missed opportunities.
        let cl = ctx.cluster();
        let done: Vec<(AppId, Priority)> = self
            .state
            .missed
            .range((app, Priority(0))..=(app, Priority(u32::MAX)))
            .map(|(k, _)| *k)
            .filter(|(_, p)| cl.app(app).and_then(|x| x.asks.get(p)).is_none_or(|s| s.outstanding == 0))
            .collect();
        for k in done {
            self.state.missed.remove(&k);
        }
    }

    fn node_removed(&mut self, ctx: &Ctx<'_>, node: NodeId) {
        let mut gone: Vec<ContainerId> =
            self.state.containers.iter().filter(|(_, (_, n))| *n == node).map(|(c, _)| *c).collect();
        gone.sort_unstable(); // in id order, as when the map was ordered
        for c in gone {
            self.state.untrack_container(ctx.cluster(), c);
        }
        self.state.unreserved(node);
    }

    fn arm_monitor(&mut self, ctx: &mut Ctx<'_>) {
        if self.conf.preemption.enabled && self.monitor_at.is_none() && !self.state.apps.is_empty() {
            self.monitor_at = Some(ctx.now.plus(self.conf.preemption.interval_ms));
        }
    }

    /// Checks the policy's books against the mirror (tests).
    #[cfg(test)]
    pub(crate) fn check(&self, cluster: &Cluster) -> std::result::Result<(), String> {
        self.state.check(cluster)
    }

    fn describe_queue(&self, q: usize, calc: &Calc) -> Value {
        let c = &self.conf.queues[q];
        let u = &self.state.queues[q];
        let g = limits::guaranteed(&self.conf, q, calc);
        let mut v = json!({
            "path": c.path,
            "capacity": c.capacity,
            "maximum_capacity": c.maximum_capacity,
            "absolute_capacity": c.abs_capacity,
            "absolute_maximum_capacity": c.abs_maximum_capacity,
            "guaranteed": {"memory_mb": g.mem, "vcores": g.cpu},
            "used": u.used,
            "used_capacity": limits::used_capacity(&self.conf, &self.state, q, calc),
            "absolute_used_capacity": calc.ratio(V::from(u.used)),
            "waiting_apps": u.waiting_apps,
        });
        if c.auto_create.is_some() {
            v["auto_create_child_queue_enabled"] = json!(true);
        }
        if c.auto_created {
            v["auto_created"] = json!(true);
        }
        if c.is_leaf() {
            let ul = limits::user_limit(&self.conf, &self.state, q, calc);
            let users: Vec<Value> = u
                .users
                .iter()
                .map(|(name, x)| json!({"user": name, "used": x.used, "apps": x.apps, "active": x.waiting_apps > 0}))
                .collect();
            v["user_limit_factor"] = json!(c.user_limit_factor);
            v["minimum_user_limit_percent"] = json!(c.minimum_user_limit_percent);
            v["user_limit"] = json!({"memory_mb": ul.mem, "vcores": ul.cpu});
            v["apps"] = json!(u.apps.len());
            v["am_used"] = json!(u.am_used);
            v["users"] = Value::Array(users);
        } else {
            v["children"] = Value::Array(c.children.iter().map(|&k| self.describe_queue(k, calc)).collect());
        }
        v
    }
}

impl Policy for Capacity {
    fn name(&self) -> &'static str {
        "capacity"
    }

    fn on_event(&mut self, ctx: &mut Ctx<'_>, event: &Event) {
        match event {
            Event::AppAdded(spec) => self.app_added(ctx, spec),
            Event::AppRemoved { app } => self.state.remove_app(*app),
            Event::AsksUpdated { app, .. } => self.asks_updated(ctx, *app),
            Event::ContainerCompleted { container, .. } => {
                self.state.untrack_container(ctx.cluster(), *container);
                self.marked.remove(container);
            }
            Event::NodeRemoved { node } => self.node_removed(ctx, *node),
            Event::Rejected { decision, .. } => match decision {
                Decision::Allocate { container, app, .. } => {
                    self.state.untrack_container(ctx.cluster(), *container);
                    self.state.sync(ctx.cluster(), *app);
                }
                Decision::Reserve { node, .. } => self.state.unreserved(*node),
                Decision::Preempt { container, .. } => {
                    self.marked.remove(container);
                }
                _ => {}
            },
            _ => {}
        }
        self.arm_monitor(ctx);
    }

    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        self.heartbeat(ctx, node);
    }

    fn next_wake(&self) -> Option<Time> {
        self.monitor_at
    }

    fn on_wake(&mut self, ctx: &mut Ctx<'_>) {
        if self.monitor_at.is_none_or(|t| t > ctx.now) {
            return;
        }
        self.monitor_at = None;
        if self.conf.preemption.enabled {
            self.preemption_round(ctx);
        }
        self.arm_monitor(ctx);
    }

    fn describe(&self, cluster: &Cluster, _now: Time) -> Value {
        let calc = Calc::new(self.conf.calculator, cluster.total());
        let unplaced: Vec<Value> =
            self.state.unplaced.iter().map(|(app, why)| json!({"app": app, "why": why})).collect();
        json!({
            "policy": "capacity",
            "resource_calculator": match self.conf.calculator {
                sojourn_core::Calculator::Memory => "memory",
                sojourn_core::Calculator::Dominant => "dominant",
            },
            "cluster": cluster.total(),
            "root": self.describe_queue(0, &calc),
            "reservations": self.state.reservations.len(),
            "preemption": {
                "enabled": self.conf.preemption.enabled,
                "marked": self.marked.len(),
            },
            "unschedulable_apps": unplaced,
        })
    }
}
