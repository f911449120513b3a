//! The distributors' split (pigeon.md §1, D3–D4): how a job's tasks are
//! spread over the group masters.

use sojourn_core::Ctx;

/// D3–D4 (L90, A2): `k` tasks over `groups` masters: ⌊k/N_g⌋ to each, one
/// more to each of k mod N_g distinct masters drawn uniformly. Returns
/// (master, tasks) for the masters that get any, in master order.
pub fn split(ctx: &mut Ctx<'_>, k: u32, groups: usize) -> Vec<(usize, u32)> {
    split_with(ctx.rng, k, groups)
}

pub fn split_with(rng: &mut sojourn_core::Rng, k: u32, groups: usize) -> Vec<(usize, u32)> {
    if groups == 0 || k == 0 {
        return Vec::new();
    }
    let s = k / groups as u32;
    let r = (k % groups as u32) as usize;
    let mut counts = vec![s; groups];
    if r == 1 {
        counts[rng.below(groups as u64) as usize] += 1;
    } else if r > 1 {
        // partial Fisher-Yates: the first r of a shuffled index list
        let mut idx: Vec<usize> = (0..groups).collect();
        for i in 0..r {
            let j = i + rng.below((groups - i) as u64) as usize;
            idx.swap(i, j);
            counts[idx[i]] += 1;
        }
    }
    counts.into_iter().enumerate().filter(|(_, n)| *n > 0).collect()
}
