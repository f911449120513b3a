//! The policies' comparators, written as sort keys so that every sort is a
//! total order (a comparator that is not one may panic in Rust's sort):
//!
//! - `fair` (FairSharePolicy): schedulables without demand last; those below
//!   `min(min share, demand)` ("needy") first, by usage / min share; the
//!   rest by usage / weight (zero weights after positive ones); memory only.
//! - `drf` (DominantResourceFairnessPolicy): needy if the dominant resource's
//!   usage is below its min share; needy ones by usage / min share, the rest
//!   by usage / (cluster × weight), each compared resource by resource from
//!   its own dominant one down.
//!
//! Ties go to the earlier start (queues all start at 0, as in YARN), then the
//! name (queue name, app id). Apps have weight 1 and no min share, so an
//! app's key is its usage vector alone and can be kept in an ordered index.

use super::config::QueuePolicy;
use sojourn_core::{AppId, Resources, Time};
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// An `f64` with a total order (`total_cmp`); NaN never occurs in keys.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrdF(pub f64);

impl Eq for OrdF {}
impl PartialOrd for OrdF {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OrdF {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

fn f(x: f64) -> OrdF {
    OrdF(if x.is_nan() { 0.0 } else { x })
}

/// An app's usage key in its leaf: the compared shares, each as
/// [`ord_bits`]. The submit time and the id follow it in [`AppOrder`].
pub type AppKey = [u64; 3];

/// `x` as an integer that orders as `f64::total_cmp` orders the floats:
/// keys kept as integers compare exactly as the floats did, and a `fair`
/// leaf's entry needs only the first.
pub fn ord_bits(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// A leaf's apps with pending demand, in its policy's order: by usage key,
/// then submit time, then id. A `fair` leaf compares memory alone, so its
/// entries keep one component (24 bytes instead of 48): the set is
/// reordered at nearly every placement and container end, and its
/// descents, which miss the cache, were much of the policy's cost.
#[derive(Clone, Debug)]
pub enum AppOrder {
    Fair(BTreeSet<(u64, Time, AppId)>),
    Drf(BTreeSet<(AppKey, Time, AppId)>),
}

impl AppOrder {
    pub fn new(policy: QueuePolicy) -> AppOrder {
        match policy {
            QueuePolicy::Fair => AppOrder::Fair(BTreeSet::new()),
            QueuePolicy::Drf => AppOrder::Drf(BTreeSet::new()),
        }
    }

    pub fn insert(&mut self, k: &AppKey, submit: Time, app: AppId) {
        match self {
            AppOrder::Fair(s) => s.insert((k[0], submit, app)),
            AppOrder::Drf(s) => s.insert((*k, submit, app)),
        };
    }

    pub fn remove(&mut self, k: &AppKey, submit: Time, app: AppId) {
        match self {
            AppOrder::Fair(s) => s.remove(&(k[0], submit, app)),
            AppOrder::Drf(s) => s.remove(&(*k, submit, app)),
        };
    }

    pub fn clear(&mut self) {
        match self {
            AppOrder::Fair(s) => s.clear(),
            AppOrder::Drf(s) => s.clear(),
        }
    }

    /// The apps, first in order first.
    pub fn apps(&self) -> AppOrderIter<'_> {
        match self {
            AppOrder::Fair(s) => AppOrderIter::Fair(s.iter()),
            AppOrder::Drf(s) => AppOrderIter::Drf(s.iter()),
        }
    }
}

pub enum AppOrderIter<'a> {
    Fair(std::collections::btree_set::Iter<'a, (u64, Time, AppId)>),
    Drf(std::collections::btree_set::Iter<'a, (AppKey, Time, AppId)>),
}

impl Iterator for AppOrderIter<'_> {
    type Item = AppId;
    fn next(&mut self) -> Option<AppId> {
        match self {
            AppOrderIter::Fair(i) => i.next().map(|e| e.2),
            AppOrderIter::Drf(i) => i.next().map(|e| e.2),
        }
    }
}

/// Per-type shares `usage / (pool × weight)` (types absent from `total`
/// count 0), as (vcores, memory, gpus) so that a stable sort breaks ties
/// towards CPU as YARN's calculateShares does.
fn shares(usage: &Resources, pool: &Resources, weight: f64, total: &Resources) -> [(usize, f64); 3] {
    let one = |u: u64, p: u64, present: bool| if present { u as f64 / (p as f64 * weight) } else { 0.0 };
    [
        (0, one(usage.vcores as u64, pool.vcores as u64, total.vcores > 0)),
        (1, one(usage.memory_mb, pool.memory_mb, total.memory_mb > 0)),
        (2, one(usage.gpus as u64, pool.gpus as u64, total.gpus > 0)),
    ]
}

/// Types in decreasing order of share.
fn order_of(s: &[(usize, f64); 3]) -> [usize; 3] {
    let mut v = *s;
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    [v[0].0, v[1].0, v[2].0]
}

fn by_index(s: &[(usize, f64); 3], i: usize) -> f64 {
    s.iter().find(|(j, _)| *j == i).map_or(0.0, |(_, x)| *x)
}

pub fn app_key(policy: QueuePolicy, usage: &Resources, total: &Resources) -> AppKey {
    let v = match policy {
        QueuePolicy::Fair => [f(usage.memory_mb as f64), f(0.0), f(0.0)],
        QueuePolicy::Drf => {
            let s = shares(usage, total, 1.0, total);
            let o = order_of(&s);
            [f(by_index(&s, o[0])), f(by_index(&s, o[1])), f(by_index(&s, o[2]))]
        }
    };
    v.map(|x| ord_bits(x.0))
}

/// The sort key of a child queue under its parent's policy. It borrows the
/// queue's name: keys are built at every heartbeat, and copying the name
/// there was a cost of its own.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct QueueKey<'a> {
    no_demand: bool,
    not_needy: bool,
    zero_weight: bool,
    v: [OrdF; 3],
    name: &'a str,
}

pub struct QueueView<'a> {
    pub name: &'a str,
    pub usage: Resources,
    pub demand: Resources,
    pub min_share: Resources,
    pub weight: f64,
}

pub fn queue_key<'a>(policy: QueuePolicy, q: &QueueView<'a>, total: &Resources) -> QueueKey<'a> {
    let name = q.name;
    match policy {
        QueuePolicy::Fair => {
            // Resources.min by memory; the min share wins ties.
            let min = if q.min_share.memory_mb <= q.demand.memory_mb { q.min_share } else { q.demand };
            let needy = q.usage.memory_mb < min.memory_mb;
            let used = q.usage.memory_mb as f64;
            let (zero_weight, v) = if needy {
                (false, used / min.memory_mb.max(1) as f64)
            } else if q.weight > 0.0 {
                (false, used / q.weight)
            } else {
                (true, used)
            };
            QueueKey { no_demand: q.demand.is_zero(), not_needy: !needy, zero_weight, v: [f(v), f(0.0), f(0.0)], name }
        }
        QueuePolicy::Drf => {
            let of_cluster = shares(&q.usage, total, q.weight, total);
            let of_min = shares(&q.usage, &q.min_share, 1.0, &Resources { memory_mb: 1, vcores: 1, gpus: 1 });
            let o = order_of(&of_cluster);
            let needy = by_index(&of_min, o[0]) < 1.0;
            let src = if needy { &of_min } else { &of_cluster };
            QueueKey {
                no_demand: false,
                not_needy: !needy,
                zero_weight: false,
                v: [f(by_index(src, o[0])), f(by_index(src, o[1])), f(by_index(src, o[2]))],
                name,
            }
        }
    }
}

/// How a policy compares resources (YARN's ResourceCalculator of the policy).
pub fn dominant(r: &Resources, total: &Resources) -> f64 {
    r.dominant_share(total)
}

/// `a < b` as the policy's calculator sees it (single-type comparison for
/// DRF: dominant shares only), as in FSAppAttempt.isUsageBelowShare.
pub fn below(policy: QueuePolicy, a: &Resources, b: &Resources, total: &Resources) -> bool {
    match policy {
        QueuePolicy::Fair => a.memory_mb < b.memory_mb,
        QueuePolicy::Drf => dominant(a, total) < dominant(b, total),
    }
}

/// `a > b` under the policy's calculator (full comparison for DRF: dominant
/// shares, then the next ones).
pub fn greater(policy: QueuePolicy, a: &Resources, b: &Resources, total: &Resources) -> bool {
    match policy {
        QueuePolicy::Fair => a.memory_mb > b.memory_mb,
        QueuePolicy::Drf => {
            let (sa, sb) = (shares(a, total, 1.0, total), shares(b, total, 1.0, total));
            let (oa, ob) = (order_of(&sa), order_of(&sb));
            for i in 0..3 {
                match by_index(&sa, oa[i]).total_cmp(&by_index(&sb, ob[i])) {
                    Ordering::Equal => continue,
                    o => return o == Ordering::Greater,
                }
            }
            false
        }
    }
}

/// `Resources.min` under the policy's calculator (the first wins ties).
pub fn min_by(policy: QueuePolicy, a: &Resources, b: &Resources, total: &Resources) -> Resources {
    if greater(policy, a, b, total) {
        *b
    } else {
        *a
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    fn any_f64() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            Just(0.0),
            Just(-0.0),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::NAN),
            (0u64..1 << 20).prop_map(|m| m as f64),
        ]
    }

    proptest! {
        /// The integer keys order exactly as the floats did under `total_cmp`.
        #[test]
        fn ord_bits_orders_as_total_cmp(a in any_f64(), b in any_f64()) {
            prop_assert_eq!(ord_bits(a).cmp(&ord_bits(b)), a.total_cmp(&b));
        }

        /// A leaf's order, kept compact, walks its apps as a set of the full
        /// float keys (usage vector, submit time, id) would, under either
        /// policy and whatever the usages.
        #[test]
        fn app_order_walks_as_the_float_keys_sort(
            apps in proptest::collection::vec((0u64..8, 0u32..4, 0u64..3), 0..40),
            drf in any::<bool>(),
        ) {
            let policy = if drf { QueuePolicy::Drf } else { QueuePolicy::Fair };
            let total = Resources { memory_mb: 8 * 1024, vcores: 4, gpus: 0 };
            let mut order = AppOrder::new(policy);
            let mut plain = Vec::new();
            for (i, (mem, vcores, submit)) in apps.iter().enumerate() {
                let usage = Resources { memory_mb: mem * 1024, vcores: *vcores, gpus: 0 };
                let (app, submit) = (AppId(i as u32), Time(*submit));
                order.insert(&app_key(policy, &usage, &total), submit, app);
                let floats = match policy {
                    QueuePolicy::Fair => [usage.memory_mb as f64, 0.0, 0.0],
                    QueuePolicy::Drf => {
                        let s = shares(&usage, &total, 1.0, &total);
                        let o = order_of(&s);
                        [by_index(&s, o[0]), by_index(&s, o[1]), by_index(&s, o[2])]
                    }
                };
                plain.push((floats.map(OrdF), submit, app));
            }
            // Every other app taken out again, as apps leave.
            for (i, (mem, vcores, submit)) in apps.iter().enumerate().filter(|(i, _)| i % 2 == 1) {
                let usage = Resources { memory_mb: mem * 1024, vcores: *vcores, gpus: 0 };
                order.remove(&app_key(policy, &usage, &total), Time(*submit), AppId(i as u32));
            }
            plain.retain(|(_, _, a)| a.0 % 2 == 0);
            plain.sort();
            let walked: Vec<AppId> = order.apps().collect();
            prop_assert_eq!(walked, plain.into_iter().map(|(_, _, a)| a).collect::<Vec<_>>());
        }
    }
}
