//! Pieces the policies share: an ordered index of apps with outstanding
//! demand, the "place as many of this app's asks as fit" step, and a map
//! hashed by the core's integer ids.

use sojourn_core::{App, AppId, Cluster, Ctx, Event, NodeId, Priority};
use std::collections::{BTreeMap, BTreeSet};
// Only through `IdMap`, whose users never let its order reach a decision.
#[allow(clippy::disallowed_types)]
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for the core's ids (containers, apps, nodes, asks): one
/// multiply (Fibonacci hashing) instead of SipHash. Ids come from the
/// core's counters, not from an adversary.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = fold_bytes(self.0, bytes);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

/// Both hashers' fallback for keys that are not one integer: each byte
/// mixed in by one multiply.
fn fold_bytes(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    h
}

/// A map keyed by the core's ids, hashed by [`IdHasher`]: for lookups on
/// hot paths. Never walk it where its order could reach a decision (sort
/// what is collected from it first): runs must stay deterministic.
#[allow(clippy::disallowed_types)]
pub(crate) type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// A hasher for ids handed out in sequence (containers): the id itself
/// picks the bucket, so ids given out together sit together in the table
/// and a placement's insert lands beside the last one, in cache, where a
/// multiplicative hash sent every insert to a random line. Live
/// containers' ids span a sliding window, which such a table holds
/// without collisions. The top 7 bits (hashbrown's tag) are mixed, so the
/// tags still tell keys apart.
#[derive(Default)]
pub(crate) struct SeqHasher(u64);

impl Hasher for SeqHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = fold_bytes(self.0, bytes);
    }
    fn write_u64(&mut self, n: u64) {
        const TAG: u64 = 0x7F << 57;
        self.0 = n ^ (n.wrapping_mul(0x9E37_79B9_7F4A_7C15) & TAG);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

/// A map keyed by ids handed out in sequence, hashed by [`SeqHasher`];
/// the same rules as [`IdMap`] (never let its order reach a decision).
#[allow(clippy::disallowed_types)]
pub(crate) type SeqIdMap<K, V> = HashMap<K, V, BuildHasherDefault<SeqHasher>>;

/// Apps that want containers, in a policy's order. The key of an app is
/// computed when it first has demand and kept until it has none, so the
/// key must be stable for an app (e.g. submit time), not a changing share.
pub struct DemandIndex<K: Ord + Copy> {
    key_of: BTreeMap<AppId, K>,
    ordered: BTreeSet<(K, AppId)>,
    make_key: Option<fn(&App) -> K>,
}

impl<K: Ord + Copy> Default for DemandIndex<K> {
    fn default() -> Self {
        DemandIndex { key_of: BTreeMap::new(), ordered: BTreeSet::new(), make_key: None }
    }
}

impl<K: Ord + Copy> DemandIndex<K> {
    /// Updates the index after the mirror applied `event`.
    pub fn observe(&mut self, cluster: &Cluster, event: &Event, make_key: fn(&App) -> K) {
        self.make_key = Some(make_key);
        match event {
            Event::AppAdded(spec) => self.refresh(cluster, spec.app),
            Event::AppRemoved { app } => self.remove(*app),
            Event::AsksUpdated { app, .. } => self.refresh(cluster, *app),
            Event::Rejected { decision: sojourn_core::Decision::Allocate { app, .. }, .. } => {
                self.refresh(cluster, *app)
            }
            _ => {}
        }
    }

    /// Re-reads whether `app` has demand.
    pub fn refresh(&mut self, cluster: &Cluster, app: AppId) {
        match cluster.app(app) {
            Some(a) if a.pending_containers > 0 => {
                if !self.key_of.contains_key(&app) {
                    if let Some(f) = self.make_key {
                        let k = f(a);
                        self.key_of.insert(app, k);
                        self.ordered.insert((k, app));
                    }
                }
            }
            _ => self.remove(app),
        }
    }

    fn remove(&mut self, app: AppId) {
        if let Some(k) = self.key_of.remove(&app) {
            self.ordered.remove(&(k, app));
        }
    }

    /// Apps with demand, first in order first (a snapshot, so the caller may
    /// allocate while iterating).
    pub fn in_order(&self) -> Vec<AppId> {
        self.ordered.iter().map(|(_, a)| *a).collect()
    }

    /// Apps with demand in order, without copying (the index itself must not
    /// change while this borrow lives; call `refresh` afterwards).
    pub fn iter(&self) -> impl Iterator<Item = AppId> + '_ {
        self.ordered.iter().map(|(_, a)| *a)
    }

    /// The app after `after` in order (the first when `None`), with its key:
    /// a cursor for a policy that changes the index as it walks it (taking
    /// the current app out keeps the cursor's place).
    pub fn next_after(&self, after: Option<(K, AppId)>) -> Option<(K, AppId)> {
        match after {
            None => self.ordered.first().copied(),
            Some(k) => self.ordered.range((std::ops::Bound::Excluded(k), std::ops::Bound::Unbounded)).next().copied(),
        }
    }

    /// The first app in order.
    pub fn first(&self) -> Option<AppId> {
        self.ordered.first().map(|(_, a)| *a)
    }

    pub fn len(&self) -> usize {
        self.ordered.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ordered.is_empty()
    }
}

/// Whether a node can take any more containers at all.
pub fn node_has_room(cluster: &Cluster, node: NodeId) -> bool {
    cluster.node(node).is_some_and(|n| {
        let a = n.available();
        a.memory_mb > 0 && a.vcores > 0
    })
}

/// Whether a heartbeat of `node` may still place a container: the node has
/// room and the host's per-heartbeat limit ([`Cluster::assignments_left`])
/// is not spent. Past that every placement is refused, with no side effect,
/// so a heartbeat's walk stops there rather than ask each waiting app.
pub fn heartbeat_may_assign(cluster: &Cluster, node: NodeId) -> bool {
    node_has_room(cluster, node) && cluster.assignments_left() != Some(0)
}

/// Places as many containers of `app` on `node` as fit, its asks in
/// request-priority order. Returns how many were placed.
pub fn fill_node_with_app(ctx: &mut Ctx<'_>, app: AppId, node: NodeId) -> u32 {
    // The asks are walked with a cursor (no list per call): placing at one
    // priority changes no other, so the walk meets what a snapshot would.
    let mut placed = 0;
    let mut at = None;
    while let Some(p) = ctx.cluster().app(app).and_then(|a| a.next_outstanding_priority(at)) {
        while ctx.cluster().can_allocate(app, p, node).is_ok() {
            if ctx.allocate(app, p, node).is_err() {
                break;
            }
            placed += 1;
        }
        at = Some(p);
    }
    placed
}

/// Places at most one container of `app` on `node`: its most important
/// ask that fits. Returns whether one was placed.
pub fn place_one(ctx: &mut Ctx<'_>, app: AppId, node: NodeId) -> bool {
    first_fitting(ctx.cluster(), app, node).is_some_and(|p| ctx.allocate(app, p, node).is_ok())
}

/// `app`'s most important outstanding ask that fits on `node` (the core
/// allocates whatever `can_allocate` accepts).
pub fn first_fitting(cluster: &Cluster, app: AppId, node: NodeId) -> Option<Priority> {
    let mut at = None;
    while let Some(p) = cluster.app(app).and_then(|a| a.next_outstanding_priority(at)) {
        if cluster.can_allocate(app, p, node).is_ok() {
            return Some(p);
        }
        at = Some(p);
    }
    None
}

/// A list parameter of queue names (`short_queues` of pigeon and the hawk
/// family): comma separated, empty entries ignored, a name with spaces or an
/// empty path element refused, naming `param`.
pub(crate) fn parse_queues(param: &str, s: &str) -> sojourn_core::Result<Vec<String>> {
    let mut out = Vec::new();
    for q in s.split(',').map(str::trim).filter(|q| !q.is_empty()) {
        if q.contains(char::is_whitespace) || q.split('.').any(str::is_empty) {
            return Err(sojourn_core::CoreError::Config(format!(
                "parameter '{param}': '{q}' is not a queue name or path"
            )));
        }
        out.push(q.to_string());
    }
    Ok(out)
}

/// Whether an app submitted to `queue` (a leaf or a full path) is in one of
/// `listed`: the queue is listed, or its path ends with a listed path, or a
/// bare leaf name matches a listed path's leaf.
pub(crate) fn in_queues(listed: &[String], queue: &str) -> bool {
    listed.iter().any(|q| {
        queue == q
            || queue.strip_suffix(q.as_str()).is_some_and(|head| head.ends_with('.'))
            || q.strip_suffix(queue).is_some_and(|head| head.ends_with('.') && !queue.contains('.'))
    })
}
