//! Job-size estimation (hfsp.md §2, A4): the training check and the one
//! S_i → S_f update.

use super::virtual_cluster::Tasks;
use super::{Hfsp, Key, Kind};
use sojourn_core::{ContainerId, Ctx};

/// (elapsed, progress p) of a live task that has run Δ with p > 0: the
/// Δ rule's input (thesis: its size is Δ / p_k at Δ, here elapsed / p).
fn past_delta(h: &Hfsp, ctx: &Ctx<'_>, cid: ContainerId) -> Option<(f64, f64)> {
    let ci = h.containers.get(&cid)?;
    let c = ctx.cluster().container(cid)?;
    let attained = ci.attained(ctx.now);
    match c.progress {
        Some(p) if p > 0.0 && attained >= h.cfg.delta_ms => Some((attained as f64, p.min(1.0))),
        _ => None,
    }
}

/// A4 for every training phase: when each of its t training tasks has
/// completed or run Δ with progress, compute S_f once.
pub fn check_training(h: &mut Hfsp, ctx: &mut Ctx<'_>) {
    // The authors' estimators count finished and live tasks, not samples:
    // every sampling phase is checked. Otherwise a phase short of samples
    // stays short until a sample comes, which puts it back among
    // `sample_ready`.
    let code = h.cfg.map_completed_mean || h.cfg.reduce_sort_finish;
    let training: Vec<Key> = if code {
        h.sampling.iter().copied().collect()
    } else {
        let sampling = &h.sampling;
        h.sample_ready.retain(|k| sampling.contains(k));
        h.sample_ready.iter().copied().collect()
    };
    for key in training {
        if uses_code_estimate(h, key) {
            if let Some((s, tasks)) = code_estimate(h, ctx, key) {
                set_final(h, key, s, Tasks::uniform(s, tasks.into()));
            }
            continue;
        }
        let Some(p) = h.phases.get(&key) else { continue };
        let want = h.cfg.t.min(p.n) as usize;
        if want == 0 || p.train_samples.len() + p.train_reporting.len() < want {
            h.sample_ready.remove(&key);
            continue; // not enough samples even if every reporting task gave one
        }
        let mut samples = p.train_samples.clone();
        for cid in &p.train_reporting {
            if let Some((elapsed, progress)) = past_delta(h, ctx, *cid) {
                samples.push(elapsed / progress);
            }
        }
        if samples.len() < want {
            continue;
        }
        let s = samples.iter().sum::<f64>() / samples.len() as f64;
        finalize(h, ctx, key, s);
    }
}

/// Whether the phase's S_f comes from the authors' code's estimator.
fn uses_code_estimate(h: &Hfsp, key: Key) -> bool {
    match key.1 {
        Kind::Map => h.cfg.map_completed_mean,
        Kind::Reduce => h.cfg.reduce_sort_finish,
    }
}

/// The authors' code's estimate, once ready: (s̃, virtual tasks).
/// - Maps (D3): the mean time of the phase's completed tasks once
///   `map_completed_samples` of them have finished, over all n tasks.
/// - Reduces (D4): the mean over completed tasks and over live ones that
///   have run Δ past two thirds of their progress (Hadoop's copy and sort
///   thirds), each at elapsed/((p − 2/3)·3), once min(t, n) samples exist,
///   over the unfinished tasks. As in the code, a reduce's time runs from
///   its sort finish when the driver reports it (from launch otherwise).
fn code_estimate(h: &Hfsp, ctx: &Ctx<'_>, key: Key) -> Option<(f64, u32)> {
    let p = &h.phases[&key];
    let (mut total, mut count) = (p.finished_ms as f64, p.finished);
    let (want, tasks) = match key.1 {
        Kind::Map => (h.cfg.map_completed_samples, p.n),
        Kind::Reduce => {
            total = p.finished_since_sort_ms as f64;
            for cid in &p.live {
                if let Some((_, progress)) = past_delta(h, ctx, *cid).filter(|(_, p)| *p > 2.0 / 3.0) {
                    let elapsed = h.containers.get(cid).map_or(0, |c| c.since_sort(ctx.now)) as f64;
                    total += elapsed / ((progress - 2.0 / 3.0) * 3.0);
                    count += 1;
                }
            }
            (h.cfg.t, p.n.saturating_sub(p.finished))
        }
    };
    (count >= want.min(p.n).max(1)).then(|| (total / f64::from(count), tasks))
}

/// S_f = s̃·(unstarted + Σ over live tasks of (1 − p)), as virtual tasks:
/// one of s̃ per unstarted task and one of s̃·(1 − p) per live task.
pub fn finalize(h: &mut Hfsp, ctx: &mut Ctx<'_>, key: Key, s: f64) {
    ctx.metrics.count("sizes_estimated", 1);
    let p = &h.phases[&key];
    let unstarted = p.n.saturating_sub(p.finished + p.live.len() as u32);
    let mut tasks = Tasks::uniform(s, unstarted.into());
    for cid in &p.live {
        let progress = match (ctx.cluster().container(*cid), h.containers.get(cid)) {
            (Some(c), _) if c.progress.is_some() => c.progress.unwrap_or(0.0).clamp(0.0, 1.0),
            (_, Some(ci)) if s > 0.0 => (ci.attained(ctx.now) as f64 / s).min(1.0),
            _ => 0.0,
        };
        tasks.push(s * (1.0 - progress), 1);
    }
    set_final(h, key, s, tasks);
}

/// The S_i → S_f update with these virtual tasks (s̃ each at most): the
/// phase leaves training, once.
fn set_final(h: &mut Hfsp, key: Key, s: f64, mut tasks: Tasks) {
    let k = key.1 as usize;
    let p = &h.phases[&key];
    let s_final = tasks.sum();
    if h.cfg.keep_aging && p.s_initial > 0.0 {
        tasks.scale(h.virtual_size(key) / p.s_initial);
    }
    h.pools[k].replace_tasks(key, tasks);
    h.refile(key); // may be virtually done now
                   // The phase leaves training; its running training tasks become ordinary.
    let live: Vec<ContainerId> = h.phases[&key].live.iter().copied().collect();
    for cid in live {
        if let Some(ci) = h.containers.get_mut(&cid) {
            if ci.training {
                ci.training = false;
                h.train_running[k] = h.train_running[k].saturating_sub(1);
                h.reindex(cid);
            }
        }
    }
    h.sampling.remove(&key);
    let p = h.phases.get_mut(&key).expect("training phase");
    h.in_training.remove(&(p.s_initial.to_bits(), p.seq, key));
    h.train_wanting[k].remove(&(p.s_initial.to_bits(), p.seq, key));
    p.training = false;
    p.train_reporting.clear();
    p.s_final = Some(s_final);
    p.task_estimate = Some(s);
}
