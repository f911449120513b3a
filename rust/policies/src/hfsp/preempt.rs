//! Preemption (hfsp.md §3, A6): for waiting demand of a higher-ranked
//! phase (training tasks first, bounded by T, then the real order), take
//! containers from the lowest-ranked phases, youngest first, until the
//! demand fits. WAIT does nothing. Victims are never tasks of tiny, late or
//! training phases, nor training tasks, nor tasks that started or resumed
//! less than `min_run_ms` ago, nor maps with `preempt_maps=false` (the
//! authors' code, D8). With `victims=heartbeat_node` (also D8) victims are
//! taken only on the node whose heartbeat is processed.
//!
//! SUSPEND is hybrid when its thresholds are set (A6 step 4, §7.16): a
//! victim with progress below `kill_below_progress` is killed instead (its
//! lost work is small and its memory comes back), one estimated to finish
//! within `wait_below_remaining_ms` is left alone (WAIT), and a node holds at
//! most `max_suspended_per_node` suspended tasks. Progress is the driver's
//! report when there is one, else attained service over the phase's
//! per-task size estimate.

use super::{Hfsp, Key, Kind, Preemption};
use sojourn_core::{ContainerId, ContainerState, Ctx, NodeId, PreemptMode, Resources, Time};
use std::collections::{BTreeMap, BTreeSet};

/// (progress in [0, 1], estimated remaining ms) of a live container.
fn progress_and_remaining(h: &Hfsp, ctx: &Ctx<'_>, cid: ContainerId) -> Option<(f64, f64)> {
    let c = ctx.cluster().container(cid)?;
    let ci = h.containers.get(&cid)?;
    let p = h.phases.get(&ci.key)?;
    let attained = ci.attained(ctx.now) as f64;
    if let Some(pr) = c.progress.filter(|pr| *pr > 0.0) {
        let pr = pr.min(1.0);
        return Some((pr, attained / pr - attained));
    }
    let size = if p.train_samples.is_empty() {
        p.s_initial / f64::from(p.n.max(1))
    } else {
        p.train_samples.iter().sum::<f64>() / p.train_samples.len() as f64
    };
    if size <= 0.0 {
        return Some((1.0, 0.0));
    }
    Some(((attained / size).min(1.0), (size - attained).max(0.0)))
}

/// How many containers of size `cap` fit in `r`.
fn fits(r: &Resources, cap: &Resources) -> u64 {
    let m = r.memory_mb.checked_div(cap.memory_mb).unwrap_or(u64::MAX);
    let v = r.vcores.checked_div(cap.vcores).map_or(u64::MAX, u64::from);
    m.min(v)
}

/// A phase's containers that may be victims, as (start of the running
/// spell, id): none of tiny, training or late phases, nor of maps with
/// `preempt_maps=false`; only running ones past `min_run_ms`, not training
/// tasks, not already taken or being preempted.
fn eligible(h: &Hfsp, ctx: &Ctx<'_>, key: Key, taken: &BTreeSet<ContainerId>) -> Vec<(Time, ContainerId)> {
    let p = &h.phases[&key];
    if p.tiny || p.training || h.is_late(key) || (!h.cfg.preempt_maps && key.1 == Kind::Map) {
        return Vec::new();
    }
    p.live
        .iter()
        .filter(|c| !taken.contains(c))
        .filter_map(|cid| {
            let c = ctx.cluster().container(*cid)?;
            let ci = h.containers.get(cid)?;
            let since = c.running_since?;
            let ok = c.state == ContainerState::Running
                && !c.preempting
                && !ci.training
                // At least 1 ms: a task resumed at this instant is never
                // suspended again at the same instant (no livelock when
                // the waiting demand cannot use the freed room after all).
                && ctx.now.since(since) >= h.cfg.min_run_ms.max(1);
            ok.then_some((since, *cid))
        })
        .collect()
}

/// Candidate victims below position `pos` of `order`, worst first:
/// lowest-ranked phase first, youngest container first within it.
fn victims(h: &Hfsp, ctx: &Ctx<'_>, order: &[Key], pos: usize, taken: &BTreeSet<ContainerId>) -> Vec<ContainerId> {
    let mut out = Vec::new();
    for key in order[pos..].iter().rev() {
        let mut cs = eligible(h, ctx, *key, taken);
        cs.sort_by(|a, b| b.cmp(a)); // youngest (latest start) first
        out.extend(cs.into_iter().map(|(_, c)| c));
    }
    out
}

/// §7.1 (`pool_quotas`): per type, its containers beyond its pool's slots
/// while the other type waits (borrowed), youngest first: the first
/// victims for the other type's demand, whatever their rank.
fn borrowed(h: &Hfsp, ctx: &Ctx<'_>) -> [Vec<ContainerId>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    if !h.cfg.pool_quotas {
        return out;
    }
    let (used, waiting) = h.pool_usage(ctx.cluster());
    for kind in [Kind::Map, Kind::Reduce] {
        let k = kind as usize;
        let over = used[k].saturating_sub(h.pools[k].slots as u32);
        if waiting[1 - k] == 0 || over == 0 {
            continue;
        }
        let none = BTreeSet::new();
        let mut cs: Vec<(Time, ContainerId)> =
            h.phases.keys().filter(|key| key.1 == kind).flat_map(|key| eligible(h, ctx, *key, &none)).collect();
        cs.sort_by(|a, b| b.cmp(a));
        out[k] = cs.into_iter().take(over as usize).map(|(_, c)| c).collect();
    }
    out
}

/// Preempts for the waiting demand. `heartbeat`: the node whose heartbeat
/// is processed, if any. With `victims=heartbeat_node` (the code, D8) this
/// runs on heartbeats only and preempts only there; victims found on other
/// nodes are claimed (they count against the demand) but left running
/// until their own node heartbeats. Otherwise it runs on every other
/// event, on any node.
pub fn preempt(h: &mut Hfsp, ctx: &mut Ctx<'_>, heartbeat: Option<NodeId>) {
    if h.cfg.victims_on_heartbeat_node != heartbeat.is_some() {
        return;
    }
    let mode = match h.cfg.preemption {
        Preemption::Wait => return,
        Preemption::Kill => PreemptMode::Kill,
        Preemption::Suspend => PreemptMode::Suspend,
    };
    let order = h.order();
    let cluster = ctx.cluster();
    let mut free = cluster.total().saturating_sub(&cluster.allocated());
    // Demand, best first: training tasks (may preempt anyone below late
    // phases), then each phase's outstanding asks.
    let mut demand: Vec<(usize, Key, u64)> = Vec::new();
    for kind in [Kind::Map, Kind::Reduce] {
        let mut room = h.cfg.train_slots[kind as usize].saturating_sub(h.train_running[kind as usize]);
        for key in h.training_candidates(cluster, kind) {
            let want = h.training_wanted(key).min(Hfsp::pending(cluster, key).0).min(room);
            room -= want;
            let pos = order.iter().position(|k| !h.phases[k].tiny && !h.is_late(*k)).unwrap_or(order.len());
            if want > 0 {
                demand.push((pos, key, want as u64));
            }
        }
    }
    for (i, key) in order.iter().enumerate() {
        let n = Hfsp::pending(cluster, *key).0;
        if n > 0 {
            demand.push((i + 1, *key, n as u64));
        }
    }
    // A phase held back by delay scheduling would not take the room freed
    // on an arbitrary node: it preempts once it may go anywhere.
    demand.retain(|(_, key, _)| !h.waits_for_locality(*key, ctx.now));
    let borrowed = borrowed(h, ctx);
    let mut room = h.pool_room(ctx.cluster());
    let mut taken: BTreeSet<ContainerId> = BTreeSet::new();
    let mut chosen: Vec<(ContainerId, PreemptMode)> = Vec::new();
    // Suspended tasks per node, for the per-node cap.
    let mut held: BTreeMap<NodeId, u32> = BTreeMap::new();
    if mode == PreemptMode::Suspend && h.cfg.max_suspended_per_node > 0 {
        for c in ctx.cluster().containers().filter(|c| c.state == ContainerState::Suspended) {
            *held.entry(c.node).or_default() += 1;
        }
    }
    for (pos, key, want) in demand {
        let cap = Hfsp::pending(ctx.cluster(), key).1;
        if cap.is_zero() {
            continue;
        }
        // Under pool quotas the demand may start only as many containers as
        // its type's room, which victims of its own type widen.
        let j = key.1 as usize;
        let from_free = fits(&free, &cap).min(want).min(room.limit(j));
        free = free.saturating_sub(&cap.times(from_free));
        room.take(j, from_free as u32);
        let mut need = want - from_free;
        if need == 0 {
            continue;
        }
        let mut candidates: Vec<ContainerId> = borrowed[1 - j].iter().copied().filter(|c| !taken.contains(c)).collect();
        if pos < order.len() {
            candidates.extend(victims(h, ctx, &order, pos, &taken));
        }
        let mut freed = Resources::default();
        for v in candidates {
            if need == 0 {
                break;
            }
            if taken.contains(&v) {
                continue;
            }
            let same_type = h.containers.get(&v).is_some_and(|ci| ci.key.1 == key.1);
            if !room.allows(j) && !same_type {
                continue; // freeing it gives this type no room
            }
            let Some(c) = ctx.cluster().container(v) else { continue };
            let mut how = mode;
            if mode == PreemptMode::Suspend {
                let (progress, remaining) = progress_and_remaining(h, ctx, v).unwrap_or((1.0, f64::MAX));
                if progress < h.cfg.kill_below_progress {
                    how = PreemptMode::Kill;
                } else if remaining < h.cfg.wait_below_remaining_ms as f64 {
                    continue; // WAIT: it is nearly done
                } else if h.cfg.max_suspended_per_node > 0
                    && held.get(&c.node).copied().unwrap_or(0) >= h.cfg.max_suspended_per_node
                {
                    continue;
                }
            }
            let gain = match how {
                PreemptMode::Kill => {
                    freed += c.resources;
                    let g = fits(&freed, &cap);
                    freed = freed.saturating_sub(&cap.times(g));
                    g
                }
                PreemptMode::Suspend => {
                    // The suspended task keeps its memory: the node must have
                    // room in memory for the waiting one.
                    let node_mem = ctx.cluster().node(c.node).map_or(0, |n| n.available().memory_mb);
                    if node_mem < cap.memory_mb || c.resources.vcores < cap.vcores {
                        continue;
                    }
                    *held.entry(c.node).or_default() += 1;
                    1
                }
            };
            taken.insert(v);
            if heartbeat.is_none_or(|n| n == c.node) {
                chosen.push((v, how));
            }
            if !same_type {
                room.take(j, gain as u32);
            }
            need = need.saturating_sub(gain);
        }
    }
    for (v, how) in chosen {
        if ctx.preempt(v, how).is_ok() {
            h.sync(ctx.cluster(), v);
        }
    }
}

/// Resumes suspended containers of the phases ranked above every phase with
/// waiting demand, best first, where their nodes have room again. Drivers
/// offer nodes only while asks wait, so without this pass a task suspended
/// for the last waiting demand would never run again; a phase that is
/// outranked by waiting demand resumes at its turn in a heartbeat instead.
pub fn resume_pass(h: &mut Hfsp, ctx: &mut Ctx<'_>) {
    if h.cfg.preemption != Preemption::Suspend {
        return;
    }
    for key in h.order() {
        if Hfsp::pending(ctx.cluster(), key).0 > 0 {
            return;
        }
        let suspended: Vec<ContainerId> = h.phases[&key]
            .live
            .iter()
            .copied()
            .filter(|c| ctx.cluster().container(*c).is_some_and(|c| c.state == ContainerState::Suspended))
            .collect();
        for cid in suspended {
            if ctx.resume(cid).is_ok() {
                h.sync(ctx.cluster(), cid);
            }
        }
    }
}
