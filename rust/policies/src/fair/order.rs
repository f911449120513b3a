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

/// The position of an app with pending demand in its leaf.
pub type AppKey = ([OrdF; 3], Time, AppId);

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

pub fn app_key(policy: QueuePolicy, usage: &Resources, total: &Resources, submit: Time, app: AppId) -> AppKey {
    let v = match policy {
        QueuePolicy::Fair => [f(usage.memory_mb as f64), f(0.0), f(0.0)],
        QueuePolicy::Drf => {
            let s = shares(usage, total, 1.0, total);
            let o = order_of(&s);
            [f(by_index(&s, o[0])), f(by_index(&s, o[1])), f(by_index(&s, o[2]))]
        }
    };
    (v, submit, app)
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
