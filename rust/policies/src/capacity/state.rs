//! Runtime bookkeeping kept in step with the mirror: what each queue, user
//! and app uses (allocated plus reserved, as YARN charges reservations to
//! the queue and the user), which apps wait for containers, the containers
//! and reservations this policy made, and missed scheduling opportunities.
//! Every change goes through [`State::sync`], which re-reads an app from the
//! mirror and moves the difference up the tree, so the totals never drift.

use super::config::QueueConf;
use crate::common::IdMap;
use sojourn_core::{AppId, Cluster, ContainerId, NodeId, Priority, Resources, Time};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

/// FIFO order inside a leaf: application priority (higher first), then
/// submission time, then id.
pub(crate) type AppKey = (Reverse<i32>, Time, AppId);

#[derive(Clone, Debug, Default)]
pub(crate) struct UserUse {
    pub used: Resources,
    pub apps: u32,
    /// Apps of this user that want containers: the user is *active*.
    pub waiting_apps: u32,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct QueueUse {
    /// Allocated plus reserved, whole subtree.
    pub used: Resources,
    /// Of which reserved.
    pub reserved: Resources,
    /// Apps in the subtree that want containers.
    pub waiting_apps: u32,
    // ---- leaves only ----
    pub apps: BTreeSet<AppKey>,
    pub waiting: BTreeSet<AppKey>,
    pub users: BTreeMap<String, UserUse>,
    /// AM resources of activated apps (YARN's queue `amUsed`).
    pub am_used: Resources,
    pub activated: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct AppUse {
    pub leaf: usize,
    pub user: String,
    pub key: AppKey,
    pub allocated: Resources,
    pub reserved: Resources,
    pub waiting: bool,
    /// Passed the AM limit (sticky, as YARN's activation).
    pub activated: bool,
    pub am_charge: Resources,
    /// Hashed: looked up at every container's end, walked only to forget
    /// them all when the app goes (in any order).
    pub containers: IdMap<ContainerId, ()>,
}

impl AppUse {
    fn used(&self) -> Resources {
        self.allocated + self.reserved
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct State {
    pub queues: Vec<QueueUse>,
    parents: Vec<Option<usize>>,
    /// Hashed: looked up at every event of an app, never walked where the
    /// order could reach a decision (`check` sorts).
    pub apps: IdMap<AppId, AppUse>,
    /// Apps submitted to a queue that does not exist (or is a parent), with
    /// why: never scheduled.
    pub unplaced: BTreeMap<AppId, String>,
    /// Containers this policy placed that are still alive: (app, node).
    /// Hashed: touched at every placement and container end, where an
    /// ordered map's descent was the policy's largest cost; walked only
    /// when a node goes, which sorts what it collects.
    pub containers: IdMap<ContainerId, (AppId, NodeId)>,
    /// Reservations this policy holds: node → (app, priority, size).
    pub reservations: BTreeMap<NodeId, (AppId, Priority, Resources)>,
    /// Missed scheduling opportunities per (app, request priority).
    pub missed: BTreeMap<(AppId, Priority), u64>,
}

fn swap(total: &mut Resources, old: Resources, new: Resources) {
    *total = total.saturating_sub(&old) + new;
}

impl State {
    pub fn new(queues: &[QueueConf]) -> State {
        State {
            queues: vec![QueueUse::default(); queues.len()],
            parents: queues.iter().map(|q| q.parent).collect(),
            ..State::default()
        }
    }

    /// Books for a queue just added to the configured tree (an auto-created
    /// leaf), under `parent`.
    pub fn add_queue(&mut self, parent: Option<usize>) {
        self.queues.push(QueueUse::default());
        self.parents.push(parent);
    }

    /// `q` and its ancestors up to the root.
    pub fn chain(&self, q: usize) -> Vec<usize> {
        let mut out = vec![q];
        let mut at = q;
        while let Some(p) = self.parents.get(at).copied().flatten() {
            out.push(p);
            at = p;
        }
        out
    }

    /// Applies `f` to the books of `q` and each of its ancestors (as
    /// [`State::chain`], without allocating on every container event).
    fn up_chain(&mut self, q: usize, mut f: impl FnMut(&mut QueueUse)) {
        let mut at = Some(q);
        while let Some(x) = at {
            if let Some(qu) = self.queues.get_mut(x) {
                f(qu);
            }
            at = self.parents.get(x).copied().flatten();
        }
    }

    pub fn add_app(&mut self, cluster: &Cluster, app: AppId, leaf: usize) {
        let Some(a) = cluster.app(app) else { return };
        if self.apps.contains_key(&app) || leaf >= self.queues.len() {
            return;
        }
        let key = (Reverse(a.spec.priority), a.submit, app);
        let user = a.spec.user.clone();
        self.queues[leaf].apps.insert(key);
        self.queues[leaf].users.entry(user.clone()).or_default().apps += 1;
        self.apps.insert(
            app,
            AppUse {
                leaf,
                user,
                key,
                allocated: Resources::ZERO,
                reserved: Resources::ZERO,
                waiting: false,
                activated: false,
                am_charge: Resources::ZERO,
                containers: IdMap::default(),
            },
        );
        self.sync(cluster, app);
    }

    pub fn remove_app(&mut self, app: AppId) {
        self.unplaced.remove(&app);
        let Some(u) = self.apps.remove(&app) else { return };
        let chain = self.chain(u.leaf);
        for &q in &chain {
            swap(&mut self.queues[q].used, u.used(), Resources::ZERO);
            swap(&mut self.queues[q].reserved, u.reserved, Resources::ZERO);
            if u.waiting {
                self.queues[q].waiting_apps = self.queues[q].waiting_apps.saturating_sub(1);
            }
        }
        let leaf = &mut self.queues[u.leaf];
        leaf.apps.remove(&u.key);
        leaf.waiting.remove(&u.key);
        if u.activated {
            leaf.am_used = leaf.am_used.saturating_sub(&u.am_charge);
            leaf.activated = leaf.activated.saturating_sub(1);
        }
        if let Some(us) = leaf.users.get_mut(&u.user) {
            swap(&mut us.used, u.used(), Resources::ZERO);
            if u.waiting {
                us.waiting_apps = us.waiting_apps.saturating_sub(1);
            }
            us.apps = us.apps.saturating_sub(1);
            if us.apps == 0 {
                leaf.users.remove(&u.user);
            }
        }
        for c in u.containers.keys() {
            self.containers.remove(c);
        }
        self.reservations.retain(|_, (holder, _, _)| *holder != app);
        let keys: Vec<(AppId, Priority)> =
            self.missed.range((app, Priority(0))..=(app, Priority(u32::MAX))).map(|(k, _)| *k).collect();
        for k in keys {
            self.missed.remove(&k);
        }
    }

    /// Moves `app`'s usage from `old` to what it holds now, up the tree and
    /// to its user.
    fn recharge(&mut self, app: AppId, old: Resources) {
        let Some(u) = self.apps.get(&app) else { return };
        let (new, leaf) = (u.used(), u.leaf);
        if new == old {
            return;
        }
        let mut at = Some(leaf);
        while let Some(q) = at {
            swap(&mut self.queues[q].used, old, new);
            at = self.parents.get(q).copied().flatten();
        }
        if let Some(us) = self.queues[leaf].users.get_mut(&u.user) {
            swap(&mut us.used, old, new);
        }
    }

    /// Re-reads `app` from the mirror: what it holds and whether it wants
    /// containers.
    pub fn sync(&mut self, cluster: &Cluster, app: AppId) {
        let (allocated, waiting) = match cluster.app(app) {
            Some(a) => (a.allocated, a.pending_containers > 0),
            None => (Resources::ZERO, false),
        };
        let Some(u) = self.apps.get_mut(&app) else { return };
        let old = u.used();
        u.allocated = allocated;
        let was_waiting = u.waiting;
        u.waiting = waiting;
        let (leaf, key) = (u.leaf, u.key);
        self.recharge(app, old);
        if was_waiting != waiting {
            self.up_chain(leaf, |q| {
                let w = &mut q.waiting_apps;
                *w = if waiting { *w + 1 } else { w.saturating_sub(1) };
            });
            let Some(u) = self.apps.get(&app) else { return };
            let lq = &mut self.queues[leaf];
            if waiting {
                lq.waiting.insert(key);
            } else {
                lq.waiting.remove(&key);
            }
            if let Some(us) = lq.users.get_mut(&u.user) {
                us.waiting_apps = if waiting { us.waiting_apps + 1 } else { us.waiting_apps.saturating_sub(1) };
            }
        }
    }

    pub fn activate(&mut self, app: AppId, charge: Resources) {
        let Some(u) = self.apps.get_mut(&app) else { return };
        if u.activated {
            return;
        }
        u.activated = true;
        u.am_charge = charge;
        let leaf = &mut self.queues[u.leaf];
        leaf.am_used += charge;
        leaf.activated += 1;
    }

    pub fn track_container(&mut self, cluster: &Cluster, id: ContainerId, app: AppId, node: NodeId) {
        self.containers.insert(id, (app, node));
        if let Some(u) = self.apps.get_mut(&app) {
            u.containers.insert(id, ());
        }
        self.sync(cluster, app);
    }

    /// A container is gone from the mirror (completed, lost, rolled back).
    pub fn untrack_container(&mut self, cluster: &Cluster, id: ContainerId) {
        if let Some((app, _)) = self.containers.remove(&id) {
            if let Some(u) = self.apps.get_mut(&app) {
                u.containers.remove(&id);
            }
            self.sync(cluster, app);
        }
    }

    pub fn reserved(&mut self, node: NodeId, app: AppId, priority: Priority, size: Resources) {
        if let Some((old_app, _, old_size)) = self.reservations.insert(node, (app, priority, size)) {
            self.charge_reservation(old_app, old_size, false);
        }
        self.charge_reservation(app, size, true);
    }

    /// The reservation on `node` is gone (fulfilled, dropped, rolled back).
    pub fn unreserved(&mut self, node: NodeId) {
        if let Some((app, _, size)) = self.reservations.remove(&node) {
            self.charge_reservation(app, size, false);
        }
    }

    fn charge_reservation(&mut self, app: AppId, size: Resources, add: bool) {
        let Some(u) = self.apps.get_mut(&app) else { return };
        let (old, old_reserved) = (u.used(), u.reserved);
        u.reserved = if add { u.reserved + size } else { u.reserved.saturating_sub(&size) };
        let (new_reserved, leaf) = (u.reserved, u.leaf);
        self.up_chain(leaf, |q| swap(&mut q.reserved, old_reserved, new_reserved));
        self.recharge(app, old);
    }

    /// Nodes reserved for `app`'s ask at `priority`, in node order.
    pub fn reserved_nodes(&self, app: AppId, priority: Priority) -> Vec<NodeId> {
        self.reservations.iter().filter(|(_, (a, p, _))| *a == app && *p == priority).map(|(n, _)| *n).collect()
    }

    /// Checks the totals against a recomputation from the mirror (tests).
    #[cfg(test)]
    pub fn check(&self, cluster: &Cluster) -> Result<(), String> {
        let mut used = vec![Resources::ZERO; self.queues.len()];
        let mut reserved = vec![Resources::ZERO; self.queues.len()];
        let mut waiting = vec![0u32; self.queues.len()];
        let mut apps: Vec<(&AppId, &AppUse)> = self.apps.iter().collect();
        apps.sort_unstable_by_key(|(id, _)| **id);
        for (id, u) in apps {
            let a = cluster.app(*id).ok_or(format!("{id} tracked but not in the mirror"))?;
            if a.allocated != u.allocated {
                return Err(format!("{id}: allocated {} but the mirror says {}", u.allocated, a.allocated));
            }
            let held: Resources =
                self.reservations.values().filter(|r| r.0 == *id).map(|r| r.2).fold(Resources::ZERO, |s, r| s + r);
            if held != u.reserved {
                return Err(format!("{id}: reserved {} but holds {held}", u.reserved));
            }
            for q in self.chain(u.leaf) {
                used[q] += u.used();
                reserved[q] += u.reserved;
                waiting[q] += u32::from(a.pending_containers > 0);
            }
        }
        for (q, qu) in self.queues.iter().enumerate() {
            if qu.used != used[q] || qu.waiting_apps != waiting[q] || qu.reserved != reserved[q] {
                return Err(format!(
                    "queue #{q}: books {} / {} waiting, recomputed {} / {}",
                    qu.used, qu.waiting_apps, used[q], waiting[q]
                ));
            }
            for (name, us) in &qu.users {
                let mine = self.apps.values().filter(|u| u.leaf == q && u.user == *name);
                let (mut sum, mut w) = (Resources::ZERO, 0);
                for u in mine {
                    sum += u.used();
                    w += u32::from(u.waiting);
                }
                if sum != us.used || w != us.waiting_apps {
                    return Err(format!(
                        "user {name} in queue #{q}: books {} / {}, recomputed {sum} / {w}",
                        us.used, us.waiting_apps
                    ));
                }
            }
        }
        for (node, (app, prio, _)) in &self.reservations {
            match cluster.node(*node).and_then(|n| n.reservation) {
                Some((a, p, _)) if a == *app && p == *prio => {}
                other => return Err(format!("reservation on {node} for {app} but the mirror has {other:?}")),
            }
        }
        for n in cluster.nodes() {
            if let Some((a, p, _)) = n.reservation {
                if !self.reservations.get(&n.id).is_some_and(|r| r.0 == a && r.1 == p) {
                    return Err(format!("the mirror reserves {} for {a} at {p}, unknown to the policy", n.id));
                }
            }
        }
        Ok(())
    }
}
