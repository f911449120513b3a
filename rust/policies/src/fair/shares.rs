//! Instantaneous fair shares, as YARN's `ComputeFairShares`: per resource
//! type, find the weight-to-resource ratio R such that each schedulable gets
//! `clamp(weight * R, min, max)` and the shares add up to what is there.
//! Inactive queues (no apps), zero max shares and zero weights get fixed
//! shares first; the rest is found by doubling R, then 25 steps of bisection;
//! shares are truncated to integers. A `fair` parent shares memory only
//! (FairSharePolicy), a `drf` parent every resource type (DRF policy).

use super::config::QueuePolicy;
use super::tree::Tree;
use sojourn_core::Resources;

const ITERATIONS: usize = 25;

/// One schedulable as the computation sees it, for one resource type.
#[derive(Clone, Copy, Debug)]
pub struct Sched {
    pub weight: f64,
    pub min: u64,
    pub max: u64,
    pub active: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Memory,
    Vcores,
    Gpus,
}

impl Kind {
    pub fn get(self, r: &Resources) -> u64 {
        match self {
            Kind::Memory => r.memory_mb,
            Kind::Vcores => r.vcores as u64,
            Kind::Gpus => r.gpus as u64,
        }
    }
    pub fn set(self, r: &mut Resources, v: u64) {
        match self {
            Kind::Memory => r.memory_mb = v,
            Kind::Vcores => r.vcores = v.min(u32::MAX as u64) as u32,
            Kind::Gpus => r.gpus = v.min(u32::MAX as u64) as u32,
        }
    }
}

/// The resource types a policy divides (GPUs only where the cluster has some).
pub fn kinds(policy: QueuePolicy, total: &Resources) -> &'static [Kind] {
    match policy {
        QueuePolicy::Fair => &[Kind::Memory],
        QueuePolicy::Drf if total.gpus > 0 => &[Kind::Memory, Kind::Vcores, Kind::Gpus],
        QueuePolicy::Drf => &[Kind::Memory, Kind::Vcores],
    }
}

fn share(s: &Sched, r: f64) -> u64 {
    let v = (s.weight * r).max(s.min as f64).min(s.max as f64);
    // Java's (long) cast: truncation, saturating; NaN is 0.
    v as u64
}

fn used(items: &[(usize, Sched)], r: f64) -> u64 {
    items.iter().fold(0u64, |acc, (_, s)| acc.saturating_add(share(s, r)))
}

/// Divides `total` of one resource type among `items`.
pub fn compute(items: &[Sched], total: u64) -> Vec<u64> {
    let mut out = vec![0u64; items.len()];
    let mut taken = 0u64;
    let mut free: Vec<(usize, Sched)> = Vec::with_capacity(items.len());
    for (i, s) in items.iter().enumerate() {
        if s.max == 0 || !s.active {
            out[i] = 0;
        } else if s.weight <= 0.0 {
            out[i] = s.min;
            taken = taken.saturating_add(s.min);
        } else {
            free.push((i, *s));
        }
    }
    if free.is_empty() {
        return out;
    }
    let total_max = free.iter().fold(0u64, |acc, (_, s)| acc.saturating_add(s.max));
    let target = total.saturating_sub(taken).min(total_max);
    let r = solve(target, |r| used(&free, r));
    for (i, s) in &free {
        out[*i] = share(s, r);
    }
    out
}

/// The ratio R the shares are set with: doubled from 1 until `used(R)`
/// reaches `target`, then 25 bisection steps (stopping early on an exact
/// hit); the upper end is returned, as in YARN.
fn solve(target: u64, used: impl Fn(f64) -> u64) -> f64 {
    let mut r_max = 1.0f64;
    // Doubling ends once every share reaches its max (2^1100 overflows to
    // infinity, which reaches any max): the cap only guards the loop.
    for _ in 0..1100 {
        if used(r_max) >= target {
            break;
        }
        r_max *= 2.0;
    }
    let (mut left, mut right) = (0.0f64, r_max);
    for _ in 0..ITERATIONS {
        let mid = (left + right) / 2.0;
        let planned = used(mid);
        if planned == target {
            right = mid;
            break;
        } else if planned < target {
            left = mid;
        } else {
            right = mid;
        }
    }
    right
}

/// [`compute`] for `n` apps of a leaf (weight 1, no min, no max): they all
/// get the same share, found in constant time instead of O(n).
pub fn compute_equal(n: usize, total: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let one = Sched { weight: 1.0, min: 0, max: u64::MAX, active: true };
    let r = solve(total, |r| share(&one, r).saturating_mul(n as u64));
    share(&one, r)
}

/// Recomputes every queue's and every app's instantaneous fair share, top
/// down from the cluster's total (FSParentQueue/FSLeafQueue.updateInternal).
/// A leaf's apps all get the same share, so it is kept once on the leaf
/// ([`super::tree::Queue::app_share`]) rather than written into each app:
/// with hundreds of thousands of apps queued, that write dominated the run.
pub fn update(tree: &mut Tree, total: Resources) {
    if let Some(root) = tree.queues.first_mut() {
        root.fair_share = total;
    }
    for ix in 0..tree.queues.len() {
        let q = &mut tree.queues[ix];
        let (policy, fair_share) = (q.policy, q.fair_share);
        let kinds = kinds(policy, &total);
        if q.is_leaf {
            let mut each = Resources::ZERO;
            for k in kinds {
                k.set(&mut each, compute_equal(q.apps.len(), k.get(&fair_share)));
            }
            q.app_share = each;
        } else {
            let children = q.children.clone();
            let mut shares = vec![Resources::ZERO; children.len()];
            for k in kinds {
                let items: Vec<Sched> = children
                    .iter()
                    .filter_map(|c| tree.queues.get(*c))
                    .map(|c| Sched {
                        weight: c.weight,
                        min: k.get(&c.min_share),
                        max: k.get(&c.max_share.max_of(&c.min_share)),
                        active: c.runnable > 0,
                    })
                    .collect();
                for (i, v) in compute(&items, k.get(&fair_share)).into_iter().enumerate() {
                    if let Some(s) = shares.get_mut(i) {
                        k.set(s, v);
                    }
                }
            }
            for (c, s) in children.iter().zip(shares) {
                if let Some(child) = tree.queues.get_mut(*c) {
                    child.fair_share = s;
                }
            }
        }
    }
}

/// Component-wise maximum (YARN's getMaxShare never returns less than the
/// min share).
trait MaxOf {
    fn max_of(&self, other: &Resources) -> Resources;
}

impl MaxOf for Resources {
    fn max_of(&self, o: &Resources) -> Resources {
        Resources {
            memory_mb: self.memory_mb.max(o.memory_mb),
            vcores: self.vcores.max(o.vcores),
            gpus: self.gpus.max(o.gpus),
        }
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    fn s(weight: f64, min: u64, max: u64) -> Sched {
        Sched { weight, min, max, active: true }
    }

    #[test]
    fn weights_split_in_proportion() {
        assert_eq!(compute(&[s(1.0, 0, u64::MAX), s(2.0, 0, u64::MAX)], 12288), vec![4096, 8192]);
    }

    #[test]
    fn min_and_max_clamp() {
        // min 6144 above the even split; the other gets the rest.
        assert_eq!(compute(&[s(1.0, 6144, u64::MAX), s(1.0, 0, u64::MAX)], 8192), vec![6144, 2048]);
        // max 2048 below the even split.
        assert_eq!(compute(&[s(1.0, 0, 2048), s(1.0, 0, u64::MAX)], 8192), vec![2048, 6144]);
    }

    #[test]
    fn inactive_and_zero_weight_are_fixed() {
        let mut idle = s(1.0, 4096, u64::MAX);
        idle.active = false;
        assert_eq!(compute(&[idle, s(0.0, 1024, u64::MAX), s(1.0, 0, u64::MAX)], 8192), vec![0, 1024, 7168]);
    }

    #[test]
    fn equal_apps_match_the_general_computation() {
        for n in [1usize, 2, 3, 7, 64, 1000] {
            for total in [0u64, 1, 9, 8192, 12288, 1 << 40] {
                let general = compute(&vec![s(1.0, 0, u64::MAX); n], total);
                assert!(general.iter().all(|v| *v == compute_equal(n, total)), "n {n} total {total}");
            }
        }
    }

    #[test]
    fn indivisible_totals_round_like_yarn() {
        // 9 vcores, two equal weights: R converges to 5 from above, so each
        // gets 5 (YARN's truncation lets the sum exceed the total by one).
        assert_eq!(compute(&[s(1.0, 0, u64::MAX), s(1.0, 0, u64::MAX)], 9), vec![5, 5]);
    }
}
