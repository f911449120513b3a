//! The distributors' split (pigeon.md §1, D3–D4): how a job's tasks are
//! spread over the group masters.

use sojourn_core::Ctx;

/// `k` tasks over masters whose groups hold `sizes` workers: the paper's
/// even split ([`split_with`]) when the groups are equal, as the paper's
/// are (sizes within one worker of each other, A5). Groups of whole
/// NodeManagers with many slots each cannot be equal (groups of one and two
/// 64-slot nodes for N_w = 100): there an even split would send a small
/// group as many tasks as a large one, queueing them at its master while
/// the large group's workers idle (Pigeon has no stealing between groups).
/// So each master gets ⌊k · size / total⌋, and the remainder goes one each
/// to distinct masters, each drawn with the probability of its fractional
/// share (systematic sampling, one draw per job): a master's expected tasks
/// are exactly k · size / total, so each worker gets an equal share, which
/// is what the even split means for equal groups. (With k below the number
/// of masters every floor is 0 and the draw is all of it.)
pub fn split(ctx: &mut Ctx<'_>, k: u32, sizes: &[u32]) -> Vec<(usize, u32)> {
    split_by_size(ctx.rng, k, sizes)
}

pub fn split_by_size(rng: &mut sojourn_core::Rng, k: u32, sizes: &[u32]) -> Vec<(usize, u32)> {
    let (lo, hi) = (sizes.iter().min().copied().unwrap_or(0), sizes.iter().max().copied().unwrap_or(0));
    let total: u64 = sizes.iter().map(|s| u64::from(*s)).sum();
    if hi - lo <= 1 || total == 0 || k == 0 {
        return split_with(rng, k, sizes.len());
    }
    let shares: Vec<u64> = sizes.iter().map(|s| u64::from(k) * u64::from(*s)).collect();
    let mut counts: Vec<u32> = shares.iter().map(|x| (x / total) as u32).collect();
    // The fractional shares (numerators over `total`) sum to the remainder
    // times `total`; marks at u, u + total, ... fall in distinct masters,
    // each inside a master's fraction with probability equal to it.
    let mut mark = rng.below(total);
    let mut cum = 0u64;
    for (g, x) in shares.iter().enumerate() {
        cum += x % total;
        if mark < cum {
            counts[g] += 1;
            mark += total;
        }
    }
    counts.into_iter().enumerate().filter(|(_, n)| *n > 0).collect()
}

/// D3–D4 (L90, A2): `k` tasks over `groups` masters: ⌊k/N_g⌋ to each, one
/// more to each of k mod N_g distinct masters drawn uniformly. Returns
/// (master, tasks) for the masters that get any, in master order.
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
