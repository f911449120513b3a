//! `fair`: YARN's FairScheduler (yarn.md §5; Hadoop 3.x
//! `scheduler/fair/`: FairScheduler, FSParentQueue, FSLeafQueue, FSAppAttempt,
//! ComputeFairShares, FairSharePolicy, DominantResourceFairnessPolicy,
//! FSPreemptionThread).
//!
//! What it models:
//! - A queue tree under `root` with per-queue weight, min share, max share
//!   (memory and vcores) and policy `fair` (memory) or `drf` (dominant
//!   resource); `drf` is allowed only under a `drf` parent, as in YARN.
//! - Instantaneous fair shares (`shares`): ComputeFairShares' water-filling
//!   of each parent's share among its *active* children (those with apps),
//!   clamped to min and max shares, and of each leaf's share equally among
//!   its apps. Demand enters as YARN 3 has it: a queue's demand (usage plus
//!   pending, capped at its max share at every level) orders queues and
//!   bounds starvation; it does not cap the fair share itself.
//! - Allocation on each node heartbeat (`assign`): a valid reservation on
//!   the node is served first and ends the heartbeat; otherwise the root
//!   offers the node to its children sorted by its policy's comparator
//!   (`order`), recursively, down to the leaf's most deserving app with
//!   pending demand; the first that places (or reserves) wins. One container
//!   per heartbeat unless `assign_multiple` (then `dynamic_max_assign`, or
//!   `max_assign`). A queue never exceeds its max share, nor its ancestors'.
//! - Reservations (FSAppAttempt.reserve): an app below its fair share whose
//!   container does not fit a node reserves it, if the container is at
//!   least the reservation threshold and the app holds fewer than
//!   `reservable_nodes` of the cluster (node-local asks excepted).
//! - Placement (`tree`): `specified`, then `user` (if
//!   `user_as_default_queue`, YARN's default: `default` goes to
//!   `root.<user>`), then `default`; undeclared queues are created (weight 1,
//!   no limits, the default policy, parents as needed) if
//!   `allow_undeclared_pools`. Names may be `a.b` or `root.a.b`.
//! - The AM share (FSLeafQueue.canRunAppAM): an app's AM is placed only if
//!   the AMs running in its leaf plus this one fit in `max_am_share` (per
//!   leaf `queue.<leaf>.max_am_share`; YARN's default 0.5, -1 no limit)
//!   of the leaf's fair share, a zero component of the fair share replaced
//!   by the cluster's free resources capped at the max share. An AM is
//!   charged when placed and released with its app.
//! - Preemption (`preempt`), off by default as in YARN: every
//!   `update_interval_ms` while demand waits and the cluster is busier than
//!   `preemption_utilization_threshold`, apps starved of
//!   `fair_share_preemption_threshold` × fair share for
//!   `fair_share_preemption_timeout_ms`, and leaves below their min share
//!   for `min_share_preemption_timeout_ms`, get starved requests; for each
//!   container, FSPreemptionThread's victim search: per node, newest
//!   containers first and AMs last, only from apps that stay at or above
//!   their fair share, until the container fits; the node with the fewest
//!   AMs wins. Victims are killed (`PreemptMode::Kill`; the driver applies
//!   YARN's warning period) and their node's freed resources go to the
//!   starved app first at its next heartbeats.
//!
//! Where it differs, on purpose:
//! - An app's asks are tried in priority order and the first that fits is
//!   placed; YARN stops at the first priority that could ever run on the
//!   node. This keeps the project's work-conservation invariant.
//! - Victims must also keep every queue the resources would leave (the
//!   victim's leaf and its ancestors below the one it shares with the
//!   starved app) at or above its fair share, a queue-level guard like
//!   FairScheduler <= 2.8's; YARN 3 checks only the victim app.
//! - Min-share starvation handed to an app is `min(its pending demand,
//!   what is left)`; YARN's FSLeafQueue subtracts the wrong way round.
//! - Shares, demands and usage are exact at every event instead of being
//!   refreshed every 500 ms; starvation is checked on `update_interval_ms`
//!   ticks as YARN's update thread does.
//! - The preemption timeouts default to never, as in YARN, but turning
//!   `preemption` on with no timeout anywhere is a configuration error
//!   rather than a silent no-op.
//! - A leaf with no AM running may always start one, even above its AM
//!   share: with many active queues on a small cluster a fair share can be
//!   below one AM, and YARN then leaves the cluster idle (CapacityScheduler
//!   has the same exception).
//! - Apps submitted to no placeable leaf (a parent queue, a bad name) are
//!   rejected by YARN; the core cannot reject, so they run in `root.default`.
//!
//! What it leaves out: delay scheduling (YARN's default: off),
//! `maxRunningApps`, size-based weight, per-resource weights, application
//! priorities (FairScheduler ignores them too), steady
//! fair shares, node labels beyond the core's own filter, the `fifo` queue
//! policy, removal of empty dynamic queues, ACLs, continuous scheduling.

mod assign;
mod config;
mod order;
mod preempt;
mod shares;
mod tree;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub use config::{Config, QueuePolicy, PARAMS};

use crate::common::{IdMap, SeqIdMap};
use order::app_key;
use serde_json::{json, Value};
use sojourn_core::Decision;
use sojourn_core::{AppId, Cluster, ContainerId, Ctx, Event, NodeId, Params, Phase, Policy, Resources, Result, Time};
use std::collections::{BTreeMap, BTreeSet};
use tree::{QIx, Tree, UNBOUNDED};

/// Builds the policy from validated parameters; a bad queue tree is a
/// `CoreError::Config` naming the queue and key.
pub fn build(p: &Params) -> Result<Box<dyn Policy>> {
    Ok(Box::new(Fair::new(Config::from_params(p)?)))
}

/// What the policy keeps about one app.
#[derive(Clone, Debug)]
pub(crate) struct AppState {
    pub queue: QIx,
    pub submit: Time,
    /// Mirror's allocation and pending demand when last refreshed.
    pub usage: Resources,
    pub pending: Resources,
    pub key: Option<order::AppKey>,
    pub fs_starvation: Resources,
    pub ms_starvation: Resources,
    pub last_time_at_fair_share: Time,
    pub next_starvation_check: Time,
    /// How many of [`Fair::containers`] are this app's. A count, not a
    /// set: a set per app cost a hash lookup at every placement and every
    /// end; only an app that goes with containers left (not the simulator's
    /// apps, whose AM ends first) needs them found, by a pass over the map.
    pub live: u32,
    /// The app's AM as charged to its leaf's `am_usage` (zero until it runs).
    pub am_charge: Resources,
}

impl AppState {
    fn demand(&self) -> Resources {
        self.usage + self.pending
    }
}

/// YARN's FairScheduler as a Sojourn policy.
pub struct Fair {
    cfg: Config,
    tree: Tree,
    /// Hashed, not ordered: every event looks apps up, and with hundreds of
    /// thousands queued an ordered map's descent cost more than the rest
    /// of the policy. Looked up only; the passes over all apps sort their
    /// ids first ([`Fair::app_ids`]).
    apps: IdMap<AppId, AppState>,
    /// Owner of every container this policy placed. Hashed: touched at
    /// every placement and container end, which an ordered map's descent
    /// made the policy's largest cost; walked only by `resync_all`, which
    /// sorts what it collects.
    containers: SeqIdMap<ContainerId, AppId>,
    /// Cluster total the shares and DRF keys were computed for.
    total: Resources,
    demand_dirty: bool,
    /// Per node, resources preempted for starved apps, in preemption order.
    preempted_for: BTreeMap<NodeId, Vec<(AppId, Resources)>>,
    /// Nodes each app reserved (pruned lazily against the mirror).
    reserved: BTreeMap<AppId, BTreeSet<NodeId>>,
    /// The update tick that checks starvation (preemption only): its one
    /// timer, when armed.
    tick_at: Option<Time>,
}

impl Fair {
    pub fn new(cfg: Config) -> Fair {
        let tree = Tree::new(&cfg);
        Fair {
            cfg,
            tree,
            apps: IdMap::default(),
            containers: SeqIdMap::default(),
            total: Resources::ZERO,
            demand_dirty: true,
            preempted_for: BTreeMap::new(),
            reserved: BTreeMap::new(),
            tick_at: None,
        }
    }

    /// Re-reads `app`'s allocation and pending demand from the mirror and
    /// updates its queues' totals and its place in the leaf's order.
    fn refresh_app(&mut self, cl: &Cluster, app: AppId) {
        let (usage, pending) = cl.app(app).map_or((Resources::ZERO, Resources::ZERO), |a| (a.allocated, a.pending));
        let Some(st) = self.apps.get_mut(&app) else { return };
        let (old_usage, old_demand, leaf) = (st.usage, st.demand(), st.queue);
        st.usage = usage;
        st.pending = pending;
        let new_demand = st.demand();
        let old_key = st.key.take();
        let policy = self.tree.queues.get(leaf).map(|q| q.policy);
        if let (Some(policy), false) = (policy, pending.is_zero()) {
            st.key = Some(app_key(policy, &usage, &self.total));
        }
        let (new_key, submit) = (st.key, st.submit);
        if old_usage != usage {
            self.tree.shift_usage(leaf, old_usage, usage);
        }
        if let Some(q) = self.tree.queues.get_mut(leaf) {
            if old_demand != new_demand {
                q.raw_demand = q.raw_demand.saturating_sub(&old_demand) + new_demand;
                self.demand_dirty = true;
            }
            if old_key != new_key {
                if let Some(k) = old_key {
                    q.order.remove(&k, submit, app);
                }
                if let Some(k) = new_key {
                    q.order.insert(&k, submit, app);
                }
            }
        }
    }

    /// Recomputes fair shares (and DRF keys if the cluster changed size).
    fn reshare(&mut self, cl: &Cluster) {
        let total = cl.total();
        if total != self.total {
            self.total = total;
            // DRF keys depend on the total: rebuild every leaf's order.
            for q in &mut self.tree.queues {
                q.order.clear();
            }
            for st in self.apps.values_mut() {
                st.key = None;
            }
            for app in self.app_ids() {
                self.refresh_app(cl, app);
            }
        }
        shares::update(&mut self.tree, total);
    }

    fn add_app(&mut self, cl: &Cluster, app: AppId, now: Time) {
        let Some(a) = cl.app(app) else { return };
        let leaf = self.tree.place(&a.spec.queue, &a.spec.user, now);
        if let Some(q) = self.tree.queues.get(leaf) {
            log::debug!("fair: {app} submitted to '{}' by '{}' runs in {}", a.spec.queue, a.spec.user, q.name);
        }
        self.apps.insert(
            app,
            AppState {
                queue: leaf,
                submit: a.submit,
                usage: Resources::ZERO,
                pending: Resources::ZERO,
                key: None,
                fs_starvation: Resources::ZERO,
                ms_starvation: Resources::ZERO,
                last_time_at_fair_share: a.submit,
                next_starvation_check: Time::ZERO,
                live: 0,
                am_charge: Resources::ZERO,
            },
        );
        if let Some(q) = self.tree.queues.get_mut(leaf) {
            q.apps.insert(app);
        }
        self.tree.shift_runnable(leaf, true);
        self.refresh_app(cl, app);
        self.reshare(cl);
    }

    fn remove_app(&mut self, cl: &Cluster, app: AppId) {
        let Some(st) = self.apps.remove(&app) else { return };
        self.tree.shift_usage(st.queue, st.usage, Resources::ZERO);
        self.tree.shift_runnable(st.queue, false);
        if let Some(q) = self.tree.queues.get_mut(st.queue) {
            // FSLeafQueue.removeApp: the AM's share is given back with its app.
            q.am_usage = q.am_usage.saturating_sub(&st.am_charge);
            q.raw_demand = q.raw_demand.saturating_sub(&st.demand());
            q.apps.remove(&app);
            if let Some(k) = st.key {
                q.order.remove(&k, st.submit, app);
            }
        }
        if st.live > 0 {
            self.containers.retain(|_, a| *a != app);
        }
        for list in self.preempted_for.values_mut() {
            list.retain(|(a, _)| *a != app);
        }
        self.reserved.remove(&app);
        self.demand_dirty = true;
        self.reshare(cl);
    }

    /// The instantaneous fair share of an app: its leaf's equal share.
    pub(crate) fn app_fair_share(&self, st: &AppState) -> Resources {
        self.tree.queues.get(st.queue).map_or(Resources::ZERO, |q| q.app_share)
    }

    /// The leaf's AM limit (FSLeafQueue.computeMaxAMResource): its fair
    /// share times its max AM share; a component of the fair share that is
    /// zero (a memory-only `fair` queue has no vcore share) is replaced by
    /// what the cluster has free, capped at the queue's max share. `None`:
    /// no limit.
    pub(crate) fn max_am_resource(&self, leaf: QIx) -> Option<Resources> {
        let q = self.tree.queues.get(leaf)?;
        let share = q.max_am_share.unwrap_or(self.cfg.max_am_share)?;
        let free = self.total.saturating_sub(&self.tree.queues.first().map_or(Resources::ZERO, |r| r.usage));
        let mut base = q.fair_share;
        if base.memory_mb == 0 {
            base.memory_mb = free.memory_mb.min(q.max_share.memory_mb);
        }
        if base.vcores == 0 {
            base.vcores = free.vcores.min(q.max_share.vcores);
        }
        // Resources.multiply truncates each component.
        Some(Resources {
            memory_mb: (base.memory_mb as f64 * share) as u64,
            vcores: (base.vcores as f64 * share) as u32,
            gpus: (base.gpus as f64 * share) as u32,
        })
    }

    /// FSLeafQueue.canRunAppAM: whether an AM of `am` may start in `leaf`.
    /// Unlike YARN, a leaf with no AM running may always start one: with many
    /// active queues on a small cluster a fair share can be below one AM,
    /// and YARN would then leave the cluster idle with every queue waiting.
    pub(crate) fn can_run_am(&self, leaf: QIx, am: &Resources) -> bool {
        let Some(q) = self.tree.queues.get(leaf) else { return false };
        if q.am_usage.is_zero() {
            return true;
        }
        self.max_am_resource(leaf).is_none_or(|max| (q.am_usage + *am).fits_in(&max))
    }

    /// Charges `app`'s AM container to its leaf, once.
    fn charge_am(&mut self, app: AppId, res: Resources) {
        let Some(st) = self.apps.get_mut(&app) else { return };
        if !st.am_charge.is_zero() {
            return;
        }
        st.am_charge = res;
        if let Some(q) = self.tree.queues.get_mut(st.queue) {
            q.am_usage += res;
        }
    }

    /// Records that this policy placed `container` for `app`.
    fn track(&mut self, container: ContainerId, app: AppId) {
        self.containers.insert(container, app);
        if let Some(st) = self.apps.get_mut(&app) {
            st.live += 1;
        }
    }

    fn untrack(&mut self, container: ContainerId) -> Option<AppId> {
        let app = self.containers.remove(&container)?;
        if let Some(st) = self.apps.get_mut(&app) {
            st.live = st.live.saturating_sub(1);
        }
        Some(app)
    }

    /// After a node was lost: containers vanished from the mirror.
    fn resync_all(&mut self, cl: &Cluster) {
        let mut gone: Vec<ContainerId> =
            self.containers.keys().copied().filter(|c| cl.container(*c).is_none()).collect();
        gone.sort_unstable(); // in id order, as when the map was ordered
        for c in gone {
            self.untrack(c);
        }
        for app in self.app_ids() {
            self.refresh_app(cl, app);
        }
    }

    /// Every app's id, in id order.
    fn app_ids(&self) -> Vec<AppId> {
        let mut ids: Vec<AppId> = self.apps.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    fn queue_json(&self, ix: QIx, demands: &[Resources]) -> Value {
        let Some(q) = self.tree.queues.get(ix) else { return Value::Null };
        let max = |r: &Resources| {
            if q.max_share == UNBOUNDED {
                Value::Null
            } else {
                json!({
                    "memory_mb": if r.memory_mb == u64::MAX { Value::Null } else { json!(r.memory_mb) },
                    "vcores": if r.vcores == u32::MAX { Value::Null } else { json!(r.vcores) },
                })
            }
        };
        let mut v = json!({
            "name": q.name,
            "leaf": q.is_leaf,
            "dynamic": q.dynamic,
            "policy": q.policy.name(),
            "weight": q.weight,
            "min_share": q.min_share,
            "max_share": max(&q.max_share),
            "fair_share": q.fair_share,
            "usage": q.usage,
            "demand": demands.get(ix).copied().unwrap_or(q.demand),
            "active": q.runnable > 0,
        });
        if q.is_leaf {
            v["max_am_share"] = match q.max_am_share.unwrap_or(self.cfg.max_am_share) {
                Some(x) => json!(x),
                None => json!(-1.0),
            };
            v["am_usage"] = json!(q.am_usage);
            v["max_am_resource"] = self.max_am_resource(ix).map_or(Value::Null, |r| json!(r));
            let apps: Vec<Value> = q
                .apps
                .iter()
                .filter_map(|a| self.apps.get(a).map(|s| (a, s)))
                .map(|(a, s)| {
                    json!({
                        "app": a.0,
                        "usage": s.usage,
                        "demand": s.demand(),
                        "fair_share": q.app_share,
                        "fair_share_starvation": s.fs_starvation,
                        "min_share_starvation": s.ms_starvation,
                        "am": s.am_charge,
                    })
                })
                .collect();
            v["apps"] = Value::Array(apps);
        } else {
            v["children"] = Value::Array(q.children.iter().map(|c| self.queue_json(*c, demands)).collect());
        }
        v
    }
}

impl Policy for Fair {
    fn name(&self) -> &'static str {
        "fair"
    }

    fn on_event(&mut self, ctx: &mut Ctx<'_>, event: &Event) {
        match event {
            Event::NodeAdded(_) | Event::NodeResourceUpdated { .. } => self.reshare(ctx.cluster()),
            Event::NodeRemoved { node } => {
                self.preempted_for.remove(node);
                self.resync_all(ctx.cluster());
                self.reshare(ctx.cluster());
            }
            Event::AppAdded(spec) => self.add_app(ctx.cluster(), spec.app, ctx.now),
            Event::AppRemoved { app } => self.remove_app(ctx.cluster(), *app),
            Event::AsksUpdated { app, .. } => self.refresh_app(ctx.cluster(), *app),
            // An AM that YARN kept (RM restart, core rebuilt) holds its share.
            Event::ContainerRecovered { app, resources, phase: Phase::Am, .. } => {
                self.charge_am(*app, *resources);
                self.refresh_app(ctx.cluster(), *app);
            }
            Event::ContainerCompleted { container, .. } => {
                if let Some(app) = self.untrack(*container) {
                    self.refresh_app(ctx.cluster(), app);
                }
            }
            Event::Rejected { decision: Decision::Allocate { container, app, .. }, .. } => {
                self.untrack(*container);
                self.refresh_app(ctx.cluster(), *app);
            }
            _ => {}
        }
        if self.cfg.preemption {
            self.arm_tick(ctx);
        }
    }

    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        self.heartbeat(ctx, node);
    }

    fn next_wake(&self) -> Option<Time> {
        self.tick_at
    }

    fn on_wake(&mut self, ctx: &mut Ctx<'_>) {
        if self.tick_at.is_some_and(|t| t <= ctx.now) {
            self.tick_at = None;
            self.update_tick(ctx);
            self.arm_tick(ctx);
        }
    }

    fn describe(&self, cluster: &Cluster, _now: Time) -> Value {
        json!({
            "policy": "fair",
            "cluster": cluster.total(),
            "assign_multiple": self.cfg.assign_multiple,
            "preemption": self.cfg.preemption,
            "root": self.queue_json(0, &self.tree.capped_demands()),
        })
    }
}
