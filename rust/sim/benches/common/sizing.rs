//! The pending sets `solver_sizing` sizes (tetrisched.md §2): shared by
//! the TetriSched benchmark here and the offload round-trip benchmark of
//! the bridge (`rust/jni/benches/offload.rs`), so both time the same
//! instances.

use sojourn_core::Rng;
use sojourn_policies::tetrisched::compile::{Supply, Window};
use sojourn_policies::tetrisched::strl::{EqSets, Leaf, Partitioning, Strl};

/// `nodes` one-slot nodes in `racks` racks, rack 0 GPU (A12); `jobs`
/// pending: 75% SLO split GPU/MPI (value 1000, deadline slack U[1.5, 3]),
/// 25% BE (value ≈ 1); k ≤ 8 (and ≤ a rack), σ = 1.5; ~70% of the nodes
/// busy at first, draining uniformly over the window (§8.2's setup).
pub fn instance(nodes: u32, racks: u32, slices: u32, jobs: u32, seed: u64) -> (Strl, Partitioning, Supply, Window) {
    let mut rng = Rng::seeded(seed);
    let per_rack = nodes / racks;
    let mut sets = EqSets::new();
    let all = sets.intern((0..nodes).collect());
    let rack: Vec<usize> = (0..racks).map(|r| sets.intern((r * per_rack..(r + 1) * per_rack).collect())).collect();
    let gpu = rack[0];
    let w = Window { now: 0, len: slices };
    let mut exprs = Vec::new();
    for j in 0..jobs {
        let k = 1 + rng.below(u64::from(8.min(per_rack))) as u32;
        let d = 1 + rng.below(8) as u32;
        let slow = (f64::from(d) * 1.5).ceil() as u32;
        let class = rng.next_f64();
        let deadline = (f64::from(d) * (1.5 + 1.5 * rng.next_f64())).ceil() as u64 + rng.below(u64::from(slices));
        let mut leaves = Vec::new();
        for s in 0..u64::from(slices) {
            let mut opt = |set: usize, dur: u32, v: f64| {
                if v > 0.0 {
                    leaves.push(Strl::NCk(Leaf { job: u64::from(j), set, k, start: s, dur, value: v, width: 1 }));
                }
            };
            let slo = |dur: u32| if s + u64::from(dur) <= deadline { 1000.0 } else { 0.0 };
            if class < 0.375 {
                opt(gpu, d, slo(d));
                opt(all, slow, slo(slow));
            } else if class < 0.75 {
                for &r in &rack {
                    opt(r, d, slo(d));
                }
                opt(all, slow, slo(slow));
            } else {
                opt(all, d, 1.0 - (s + u64::from(d)) as f64 / 900.0);
            }
        }
        exprs.push(Strl::Max(leaves));
    }
    let root = Strl::Sum(exprs);
    let parts = Partitioning::atoms(&sets, &root.sets());
    // Each node busy with probability 0.7 until a uniform slice.
    let mut free_from = vec![0u64; nodes as usize];
    for f in free_from.iter_mut() {
        if rng.next_f64() < 0.7 {
            *f = rng.below(u64::from(slices));
        }
    }
    let avail = parts
        .parts
        .iter()
        .map(|ns| {
            (0..u64::from(slices)).map(|t| ns.iter().filter(|n| free_from[**n as usize] <= t).count() as u32).collect()
        })
        .collect();
    (root, parts, Supply { avail }, w)
}
