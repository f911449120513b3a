//! The queue tree: an arena of queues (parents before children, so index
//! order is top-down), their configured limits, and their running totals
//! (usage, demand, runnable apps). Also YARN's default queue placement:
//! `specified`, then `user`, then `default` (QueuePlacementPolicy built from
//! `allow-undeclared-pools` and `user-as-default-queue`).

use super::config::{full_queue_name, parent_name, Config, QueueConf, QueuePolicy, Timeout};
use super::order::AppOrder;
use sojourn_core::{AppId, Resources, Time};
use std::collections::{BTreeMap, BTreeSet};

/// Index of a queue in [`Tree::queues`].
pub type QIx = usize;

pub const UNBOUNDED: Resources = Resources { memory_mb: u64::MAX, vcores: u32::MAX, gpus: u32::MAX };

#[derive(Clone, Debug)]
pub struct Queue {
    /// Full name, `root.a.b`.
    pub name: String,
    pub parent: Option<QIx>,
    pub children: Vec<QIx>,
    pub is_leaf: bool,
    /// Created at submission, not declared.
    pub dynamic: bool,
    pub weight: f64,
    pub min_share: Resources,
    pub max_share: Resources,
    pub policy: QueuePolicy,
    pub fs_timeout: Timeout,
    pub ms_timeout: Timeout,
    pub fs_threshold: f64,
    pub preemptable: bool,
    /// Apps of a leaf.
    pub apps: BTreeSet<AppId>,
    /// Apps of a leaf with pending demand, in the leaf policy's order.
    pub order: AppOrder,
    /// Apps in the subtree (all runnable: no max-running-apps limit).
    pub runnable: usize,
    /// Resources held by the subtree's apps.
    pub usage: Resources,
    /// A leaf: sum of its apps' demands (usage + pending), uncapped.
    pub raw_demand: Resources,
    /// Demand capped at the max share at every level (YARN's updateDemand).
    pub demand: Resources,
    /// Instantaneous fair share.
    pub fair_share: Resources,
    /// A leaf: the instantaneous fair share of each of its apps (they all
    /// get the same, FSLeafQueue with weight-1 apps).
    pub app_share: Resources,
    /// Last update tick at which the leaf was not below its min share.
    pub last_time_at_min_share: Time,
    /// A leaf's own maxAMShare: `None` takes the global `max_am_share`,
    /// `Some(None)` is no limit.
    pub max_am_share: Option<Option<f64>>,
    /// A leaf: resources of its apps' running AMs (FSLeafQueue's
    /// amResourceUsage), charged when an AM is placed, released with its app.
    pub am_usage: Resources,
}

impl Queue {
    fn new(name: String, parent: Option<QIx>, is_leaf: bool, conf: Option<&QueueConf>, inherit: Inherit) -> Queue {
        let d = QueueConf::default();
        let c = conf.unwrap_or(&d);
        let preemptable = inherit.preemptable && c.preemptable.unwrap_or(true);
        let policy = c.policy.unwrap_or(inherit.policy);
        Queue {
            name,
            parent,
            children: Vec::new(),
            is_leaf,
            dynamic: conf.is_none(),
            weight: c.weight.unwrap_or(1.0),
            min_share: c.min_share(),
            max_share: c.max_share(),
            policy,
            fs_timeout: c.fs_timeout.unwrap_or(inherit.fs_timeout),
            ms_timeout: c.ms_timeout.unwrap_or(inherit.ms_timeout),
            fs_threshold: c.fs_threshold.unwrap_or(inherit.fs_threshold),
            preemptable,
            apps: BTreeSet::new(),
            order: AppOrder::new(policy),
            runnable: 0,
            usage: Resources::ZERO,
            raw_demand: Resources::ZERO,
            demand: Resources::ZERO,
            fair_share: Resources::ZERO,
            app_share: Resources::ZERO,
            last_time_at_min_share: inherit.now,
            max_am_share: c.max_am_share,
            am_usage: Resources::ZERO,
        }
    }
}

/// What a new queue takes from its parent (or, for root, from the globals).
#[derive(Clone, Copy)]
struct Inherit {
    policy: QueuePolicy,
    fs_timeout: Timeout,
    ms_timeout: Timeout,
    fs_threshold: f64,
    preemptable: bool,
    now: Time,
}

#[derive(Clone, Debug)]
pub struct Tree {
    pub queues: Vec<Queue>,
    by_name: BTreeMap<String, QIx>,
    default_policy: QueuePolicy,
    user_as_default_queue: bool,
    allow_undeclared: bool,
}

impl Tree {
    /// The declared tree (implied parents included) plus `root.default`,
    /// which FairScheduler always creates.
    pub fn new(cfg: &Config) -> Tree {
        let mut t = Tree {
            queues: Vec::new(),
            by_name: BTreeMap::new(),
            default_policy: cfg.default_policy,
            user_as_default_queue: cfg.user_as_default_queue,
            allow_undeclared: cfg.allow_undeclared_pools,
        };
        let root_inherit = Inherit {
            policy: cfg.default_policy,
            fs_timeout: cfg.fs_timeout,
            ms_timeout: cfg.ms_timeout,
            fs_threshold: cfg.fs_threshold,
            preemptable: true,
            now: Time::ZERO,
        };
        // BTreeMap order puts every parent before its children ("root" <
        // "root.a" < "root.a.b"), so parents exist when children are added.
        for (name, conf) in &cfg.queues {
            let is_leaf = name != "root" && !cfg.queues.keys().any(|k| parent_name(k) == Some(name.as_str()));
            let parent = parent_name(name).and_then(|p| t.by_name.get(p).copied());
            let inherit = match parent {
                Some(p) => t.inherit_from(p, Time::ZERO),
                None => root_inherit,
            };
            let mut q = Queue::new(name.clone(), parent, is_leaf, Some(conf), inherit);
            q.dynamic = false;
            t.push(q);
        }
        if !t.by_name.contains_key("root.default") {
            let _ = t.leaf("root.default", true, Time::ZERO);
        }
        t
    }

    fn inherit_from(&self, p: QIx, now: Time) -> Inherit {
        let q = &self.queues[p];
        Inherit {
            policy: self.default_policy,
            fs_timeout: q.fs_timeout,
            ms_timeout: q.ms_timeout,
            fs_threshold: q.fs_threshold,
            preemptable: q.preemptable,
            now,
        }
    }

    fn push(&mut self, q: Queue) -> QIx {
        let ix = self.queues.len();
        if let Some(p) = q.parent {
            self.queues[p].children.push(ix);
        }
        self.by_name.insert(q.name.clone(), ix);
        self.queues.push(q);
        ix
    }

    pub fn get(&self, name: &str) -> Option<QIx> {
        self.by_name.get(name).copied()
    }

    /// The leaf named `full`, creating it (and missing parents) if `create`.
    /// `None` if it is a parent, or the path crosses a leaf, or it is missing
    /// and may not be created.
    pub fn leaf(&mut self, full: &str, create: bool, now: Time) -> Option<QIx> {
        if let Some(ix) = self.get(full) {
            return self.queues[ix].is_leaf.then_some(ix);
        }
        if !create || full == "root" {
            return None;
        }
        // Check the whole path before creating anything.
        let parts: Vec<&str> = full.split('.').collect();
        for i in 1..parts.len() - 1 {
            if let Some(ix) = self.get(&parts[..=i].join(".")) {
                if self.queues[ix].is_leaf {
                    return None;
                }
            }
        }
        let mut parent = self.get("root")?;
        for i in 1..parts.len() {
            let name = parts[..=i].join(".");
            let last = i == parts.len() - 1;
            parent = match self.get(&name) {
                Some(ix) => ix,
                None => {
                    let mut inherit = self.inherit_from(parent, now);
                    // drf is not allowed under a fair parent (FairSharePolicy.isChildPolicyAllowed).
                    if self.queues[parent].policy == QueuePolicy::Fair {
                        inherit.policy = QueuePolicy::Fair;
                    }
                    self.push(Queue::new(name, Some(parent), last, None, inherit))
                }
            };
        }
        Some(parent)
    }

    /// Where an app submitted to `requested` by `user` runs: the rules
    /// `specified` (skipped for `default`), `user` (if user-as-default-queue),
    /// `default` (if either is off), each creating queues if undeclared pools
    /// are allowed (`default` always may). YARN rejects what no rule places;
    /// the core cannot reject an app, so it falls back to `root.default`, or
    /// the first leaf if that name is a parent.
    pub fn place(&mut self, requested: &str, user: &str, now: Time) -> QIx {
        let create = self.allow_undeclared;
        let requested = requested.trim();
        if requested != "default" {
            if let Some(ix) = full_queue_name(requested).and_then(|n| self.leaf(&n, create, now)) {
                return ix;
            }
        }
        if self.user_as_default_queue {
            let user = user.trim().replace('.', "_dot_");
            if full_queue_name(&user).is_some() {
                if let Some(ix) = self.leaf(&format!("root.{user}"), create, now) {
                    return ix;
                }
            }
        }
        if let Some(ix) = self.leaf("root.default", true, now) {
            return ix;
        }
        self.queues.iter().position(|q| q.is_leaf).unwrap_or(0)
    }

    /// The queue and its ancestors, leaf first.
    pub fn path(&self, q: QIx) -> impl Iterator<Item = QIx> + '_ {
        std::iter::successors(self.queues.get(q).map(|_| q), move |x| self.queues.get(*x).and_then(|y| y.parent))
    }

    /// Applies `f` to `leaf` and each of its ancestors.
    pub fn update_path(&mut self, leaf: QIx, mut f: impl FnMut(&mut Queue)) {
        let mut cur = Some(leaf);
        while let Some(q) = cur.and_then(|ix| self.queues.get_mut(ix)) {
            f(q);
            cur = q.parent;
        }
    }

    /// Removes `sub` and adds `add` to the usage of `leaf` and its ancestors.
    pub fn shift_usage(&mut self, leaf: QIx, sub: Resources, add: Resources) {
        self.update_path(leaf, |q| q.usage = q.usage.saturating_sub(&sub) + add);
    }

    pub fn shift_runnable(&mut self, leaf: QIx, up: bool) {
        self.update_path(leaf, |q| q.runnable = if up { q.runnable + 1 } else { q.runnable.saturating_sub(1) });
    }

    /// Every queue's demand capped at its max share, bottom-up
    /// (FSLeafQueue/FSParentQueue.updateDemand).
    pub fn capped_demands(&self) -> Vec<Resources> {
        let mut out = vec![Resources::ZERO; self.queues.len()];
        for (ix, q) in self.queues.iter().enumerate().rev() {
            let raw = if q.is_leaf {
                q.raw_demand
            } else {
                q.children.iter().fold(Resources::ZERO, |acc, c| acc + out.get(*c).copied().unwrap_or_default())
            };
            out[ix] = raw.min(&q.max_share);
        }
        out
    }

    pub fn update_demand(&mut self) {
        let demands = self.capped_demands();
        for (q, d) in self.queues.iter_mut().zip(demands) {
            q.demand = d;
        }
    }

    /// Whether `extra` more fits the max share of `leaf` and every ancestor
    /// (FSQueue.fitsInMaxShare).
    pub fn fits_max_share(&self, leaf: QIx, extra: &Resources) -> bool {
        self.path(leaf).all(|q| self.queues.get(q).is_some_and(|x| (x.usage + *extra).fits_in(&x.max_share)))
    }
}
