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
//!
//! Victims come from an index kept up to date as containers change (per
//! phase, its preemptable running containers by start of their running
//! spell; its suspended ones), read lazily in one worst-first list that all
//! the demands of a pass share, so a pass costs about the victims it looks
//! at rather than demands × containers. Suspended containers resume by the
//! rule of the module doc ([`resume_pass`]).

use super::{CInfo, Hfsp, Key, Kind, Preemption};
use crate::common::IdMap;
use sojourn_core::{ContainerId, Ctx, NodeId, Phase, PreemptMode, Resources, Time};
use std::collections::{BTreeMap, BTreeSet};

/// Where the index files a container.
#[derive(Clone, Copy, Debug)]
enum Filed {
    /// Running, neither a training task nor being killed: a victim
    /// candidate, by the start of its running spell.
    Running(Key, Time),
    Suspended(Key),
    /// A kill was decided and the driver has not reported it done: its
    /// resources are as good as free to the demand.
    Dying(Resources),
}

/// HFSP's containers as preemption and resumption look them up, kept up
/// to date on every change (allocation, completion, suspend, resume, kill
/// decision, end of training), so that neither scans the mirror. Under
/// WAIT nothing preempts, suspends or resumes, so it stays empty: filing
/// every container there would cost each allocation and completion for
/// nothing.
#[derive(Clone, Debug, Default)]
pub struct Index {
    /// Whether containers are filed (not under WAIT).
    kept: bool,
    running: BTreeMap<Key, BTreeSet<(Time, ContainerId)>>,
    suspended: BTreeMap<Key, BTreeSet<ContainerId>>,
    /// Looked up only, never walked.
    filed: IdMap<ContainerId, Filed>,
    /// Σ resources of the containers being killed.
    dying: Resources,
}

impl Index {
    /// An empty index; `kept`: whether containers are filed at all.
    pub(crate) fn new(kept: bool) -> Index {
        Index { kept, ..Index::default() }
    }

    /// Files (or refiles) a container from its bookkeeping.
    pub(crate) fn file(&mut self, cid: ContainerId, ci: &CInfo) {
        if !self.kept {
            return;
        }
        self.remove(cid);
        let f = match ci.since {
            _ if ci.preempting => Filed::Dying(ci.resources),
            None => Filed::Suspended(ci.key),
            Some(t) if !ci.training => Filed::Running(ci.key, t),
            Some(_) => return,
        };
        match f {
            Filed::Running(key, t) => {
                self.running.entry(key).or_default().insert((t, cid));
            }
            Filed::Suspended(key) => {
                self.suspended.entry(key).or_default().insert(cid);
            }
            Filed::Dying(r) => self.dying += r,
        }
        self.filed.insert(cid, f);
    }

    pub(crate) fn remove(&mut self, cid: ContainerId) {
        if !self.kept {
            return;
        }
        match self.filed.remove(&cid) {
            Some(Filed::Running(key, t)) => {
                if let Some(set) = self.running.get_mut(&key) {
                    set.remove(&(t, cid));
                    if set.is_empty() {
                        self.running.remove(&key);
                    }
                }
            }
            Some(Filed::Suspended(key)) => {
                if let Some(set) = self.suspended.get_mut(&key) {
                    set.remove(&cid);
                    if set.is_empty() {
                        self.suspended.remove(&key);
                    }
                }
            }
            Some(Filed::Dying(r)) => self.dying = self.dying.saturating_sub(&r),
            None => {}
        }
    }

    /// Whether any container is suspended.
    pub(crate) fn any_suspended(&self) -> bool {
        !self.suspended.is_empty()
    }

    /// Whether a phase has a suspended container.
    pub(crate) fn has_suspended(&self, key: Key) -> bool {
        self.suspended.contains_key(&key)
    }

    /// A phase's suspended containers on `node`.
    pub(crate) fn suspended_on(
        &self,
        key: Key,
        node: NodeId,
        containers: &IdMap<ContainerId, CInfo>,
    ) -> Vec<ContainerId> {
        self.suspended
            .get(&key)
            .into_iter()
            .flatten()
            .copied()
            .filter(|c| containers.get(c).is_some_and(|ci| ci.node == node))
            .collect()
    }
}

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

/// A phase's containers that may be victims, youngest (latest start of
/// the running spell) first: none of tiny, training or late phases, nor of
/// maps with `preempt_maps=false`; only running ones past `min_run_ms`,
/// not training tasks, not being killed, not already taken.
fn eligible(h: &Hfsp, now: Time, key: Key, taken: &BTreeSet<ContainerId>) -> Vec<(Time, ContainerId)> {
    if !may_give(h, key) {
        return Vec::new();
    }
    h.index
        .running
        .get(&key)
        .into_iter()
        .flat_map(|set| set.iter().rev())
        .filter(|(since, c)| may_take(h, now, *since, *c, taken))
        .copied()
        .collect()
}

/// Whether a phase's containers may be victims at all (see [`eligible`]).
fn may_give(h: &Hfsp, key: Key) -> bool {
    h.phases
        .get(&key)
        .is_some_and(|p| !(p.tiny || p.training || h.is_late(key) || (!h.cfg.preempt_maps && key.1 == Kind::Map)))
}

/// Whether a running container (of a phase that may give) may be a victim.
fn may_take(h: &Hfsp, now: Time, since: Time, c: ContainerId, taken: &BTreeSet<ContainerId>) -> bool {
    // At least 1 ms: a task resumed at this instant is never suspended
    // again at the same instant (no livelock when the waiting demand
    // cannot use the freed room after all).
    now.since(since) >= h.cfg.min_run_ms.max(1) && !taken.contains(&c)
}

/// The victim candidates of one preemption pass, worst first (the
/// lowest-ranked phase first, youngest container first within it) with
/// their phase's position in the order, listed lazily as far as the
/// demands reach and shared by all of them: a demand at position `pos`
/// takes from the front of the list down to the phases at `pos`.
///
/// A phase's containers are listed one at a time as demands reach them
/// (a phase may run thousands while a demand wants a few). A container
/// taken before it is listed is left out rather than listed dead: either
/// way no demand takes it, and the positions behind it are no higher.
struct Candidates {
    /// Phases `order[..next]` are not listed yet.
    next: usize,
    /// The phase being listed (its position), and the last container
    /// listed from it (youngest first, so the next is older).
    current: Option<(usize, Option<(Time, ContainerId)>)>,
    list: Vec<(usize, ContainerId)>,
    /// Taken, or of no use to any later demand in this pass.
    dead: Vec<bool>,
    /// Every candidate before it is dead.
    start: usize,
    /// SUSPEND without KILL below a progress: no smaller than every
    /// demand's container (in memory and in vcores, each the least over the
    /// demands). A container with fewer vcores, or on a node with less
    /// memory left, is of use to no demand of the pass (a node's memory
    /// left only shrinks as the pass goes), so it is left out rather than
    /// listed and judged by each demand: on a cluster whose memory is held
    /// by suspended tasks, most running containers are such.
    suspend_floor: Option<Resources>,
}

impl Candidates {
    fn get(&mut self, h: &Hfsp, ctx: &Ctx<'_>, order: &[Key], pass: &Pass, i: usize) -> Option<(usize, ContainerId)> {
        while self.list.len() <= i {
            let Some(c) = self.next_candidate(h, ctx, order, pass) else { break };
            self.list.push(c);
            self.dead.push(false);
        }
        self.list.get(i).copied()
    }

    /// The next victim candidate: the next eligible container of the phase
    /// being listed, else of the next phase up the order.
    fn next_candidate(&mut self, h: &Hfsp, ctx: &Ctx<'_>, order: &[Key], pass: &Pass) -> Option<(usize, ContainerId)> {
        loop {
            if let Some((pos, last)) = self.current {
                if let Some(set) = h.index.running.get(&order[pos]) {
                    let older = match last {
                        Some(l) => set.range(..l),
                        None => set.range(..),
                    };
                    for &(since, c) in older.rev() {
                        if may_take(h, ctx.now, since, c, &pass.taken) && self.may_suspend(h, ctx, pass, c) {
                            self.current = Some((pos, Some((since, c))));
                            return Some((pos, c));
                        }
                    }
                }
                self.current = None;
            }
            if self.next == 0 {
                return None;
            }
            self.next -= 1;
            if may_give(h, order[self.next]) {
                self.current = Some((self.next, None));
            }
        }
    }

    /// Whether a container passes [`Candidates::suspend_floor`].
    fn may_suspend(&self, h: &Hfsp, ctx: &Ctx<'_>, pass: &Pass, c: ContainerId) -> bool {
        let Some(floor) = self.suspend_floor else { return true };
        let Some(ci) = h.containers.get(&c) else { return true };
        ci.resources.vcores >= floor.vcores && pass.mem_left_on(ctx, ci.node) >= floor.memory_mb
    }

    fn kill(&mut self, i: usize) {
        self.dead[i] = true;
        while self.start < self.dead.len() && self.dead[self.start] {
            self.start += 1;
        }
    }
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
            h.phases.keys().filter(|key| key.1 == kind).flat_map(|key| eligible(h, ctx.now, *key, &none)).collect();
        cs.sort_by(|a, b| b.cmp(a));
        out[k] = cs.into_iter().take(over as usize).map(|(_, c)| c).collect();
    }
    out
}

/// SUSPEND without KILL below a progress: whether no node has the memory
/// for any phase's waiting container (each demand below is one phase's
/// outstanding asks, sized by its first, and a suspension needs room in
/// memory for it: [`Pass::no_node_fits`] for every demand). Then the pass
/// would choose nothing, and it is not made: on a cluster whose memory
/// suspended tasks hold, that is most passes, and ranking the phases for
/// them was most of their cost.
fn no_suspension_fits(h: &Hfsp, ctx: &Ctx<'_>) -> bool {
    let cluster = ctx.cluster();
    let most = cluster.nodes().map(|n| n.available().memory_mb).max().unwrap_or(0);
    let waiting =
        h.phases.iter().filter(|(key, p)| !p.real_done && cluster.app(key.0).is_some_and(|a| a.pending_containers > 0));
    waiting.into_iter().all(|(key, _)| {
        let (n, cap) = Hfsp::pending(cluster, *key);
        n == 0 || cap.is_zero() || cap.memory_mb > most
    })
}

/// What one preemption pass has decided so far.
struct Pass {
    mode: PreemptMode,
    heartbeat: Option<NodeId>,
    taken: BTreeSet<ContainerId>,
    chosen: Vec<(ContainerId, PreemptMode)>,
    /// Suspended tasks per node, for the per-node cap.
    held: BTreeMap<NodeId, u32>,
    /// SUSPEND: memory each node still has for the waiting containers the
    /// suspensions chosen there are for (a suspended task keeps its memory,
    /// so two suspensions on a node need room for two waiting containers).
    mem_left: BTreeMap<NodeId, u64>,
    /// The most memory any node has for them, while known.
    mem_max: Option<u64>,
}

impl Pass {
    /// SUSPEND: the memory `node` has left for waiting containers.
    fn mem_left_on(&self, ctx: &Ctx<'_>, node: NodeId) -> u64 {
        match self.mem_left.get(&node) {
            Some(m) => *m,
            None => ctx.cluster().node(node).map_or(0, |n| n.available().memory_mb),
        }
    }

    /// SUSPEND, pure (no KILL below a progress): whether no node has the
    /// memory for a waiting container of `cap`, so no suspension can help.
    fn no_node_fits(&mut self, h: &Hfsp, ctx: &Ctx<'_>, cap: &Resources) -> bool {
        if self.mode != PreemptMode::Suspend || h.cfg.kill_below_progress > 0.0 {
            return false;
        }
        let max = match self.mem_max {
            Some(m) => m,
            None => {
                let m = ctx
                    .cluster()
                    .nodes()
                    .map(|n| self.mem_left.get(&n.id).copied().unwrap_or_else(|| n.available().memory_mb))
                    .max()
                    .unwrap_or(0);
                self.mem_max = Some(m);
                m
            }
        };
        max < cap.memory_mb
    }
}

/// What a candidate victim is to a demand.
enum Verdict {
    /// Taken; frees room for this many of the demand's containers.
    Use(u64),
    /// Of no use to this demand (another may use it).
    Skip,
    /// Of no use to any demand of this pass.
    Dead,
}

impl Pass {
    /// Whether to take `v` for a demand of containers of `cap` of type `j`
    /// (`freed`: what the demand's KILL victims freed so far, not yet
    /// enough for a container).
    fn judge(
        &mut self,
        h: &Hfsp,
        ctx: &Ctx<'_>,
        v: ContainerId,
        (cap, j): (&Resources, usize),
        room: &mut super::Room,
        freed: &mut Resources,
    ) -> Verdict {
        if self.taken.contains(&v) {
            return Verdict::Dead;
        }
        let Some(ci) = h.containers.get(&v) else { return Verdict::Dead };
        let same_type = ci.key.1 as usize == j;
        if !room.allows(j) && !same_type {
            return Verdict::Skip; // freeing it gives this type no room
        }
        let mut how = self.mode;
        if self.mode == PreemptMode::Suspend {
            let thresholds = h.cfg.kill_below_progress > 0.0 || h.cfg.wait_below_remaining_ms > 0;
            let (progress, remaining) =
                if thresholds { progress_and_remaining(h, ctx, v).unwrap_or((1.0, f64::MAX)) } else { (1.0, f64::MAX) };
            if progress < h.cfg.kill_below_progress {
                how = PreemptMode::Kill;
            } else if remaining < h.cfg.wait_below_remaining_ms as f64 {
                return Verdict::Dead; // WAIT: it is nearly done
            } else if h.cfg.max_suspended_per_node > 0
                && self.held.get(&ci.node).copied().unwrap_or(0) >= h.cfg.max_suspended_per_node
            {
                return Verdict::Dead;
            }
        }
        let gain = match how {
            PreemptMode::Kill => {
                *freed += ci.resources;
                let g = fits(freed, cap);
                *freed = freed.saturating_sub(&cap.times(g));
                g
            }
            PreemptMode::Suspend => {
                // The suspended task keeps its memory: the node must have
                // room in memory for the waiting one.
                let left = self
                    .mem_left
                    .entry(ci.node)
                    .or_insert_with(|| ctx.cluster().node(ci.node).map_or(0, |n| n.available().memory_mb));
                if *left < cap.memory_mb || ci.resources.vcores < cap.vcores {
                    return Verdict::Skip;
                }
                *left -= cap.memory_mb;
                self.mem_max = None;
                *self.held.entry(ci.node).or_default() += 1;
                1
            }
        };
        self.taken.insert(v);
        if self.heartbeat.is_none_or(|n| n == ci.node) {
            self.chosen.push((v, how));
        }
        if !same_type {
            room.take(j, gain as u32);
        }
        Verdict::Use(gain)
    }
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
    if ctx.cluster().pending_containers() == 0 {
        return; // no demand (every demand below is of outstanding asks)
    }
    if mode == PreemptMode::Suspend && h.cfg.kill_below_progress <= 0.0 && no_suspension_fits(h, ctx) {
        return;
    }
    let order = h.order();
    let cluster = ctx.cluster();
    // Containers being killed count as free: without them every call
    // between a kill and its completion would choose another victim.
    let mut free = (cluster.total() + h.index.dying).saturating_sub(&cluster.allocated());
    // Demand, best first: training tasks (may preempt anyone below late
    // phases), then each phase's outstanding asks.
    let mut demand: Vec<(usize, Key, u64, Resources)> = Vec::new();
    // Training demand ranks at the size-based queue's head, the same place
    // for every candidate: found once, when first wanted.
    let mut sized_head: Option<usize> = None;
    for kind in [Kind::Map, Kind::Reduce] {
        let mut room = h.cfg.train_slots[kind as usize].saturating_sub(h.train_running[kind as usize]);
        // Each candidate takes at least one of the room, so the candidates
        // past the first `room` add no demand.
        for key in h.first_training_candidates(cluster, kind, room as usize) {
            let (pending, cap) = Hfsp::pending(cluster, key);
            let want = h.training_wanted(key).min(pending).min(room);
            room -= want;
            let pos = *sized_head.get_or_insert_with(|| {
                order.iter().position(|k| !h.phases[k].tiny && !h.is_late(*k)).unwrap_or(order.len())
            });
            if want > 0 {
                demand.push((pos, key, want as u64, cap));
            }
        }
    }
    for (i, key) in order.iter().enumerate() {
        let (n, cap) = Hfsp::pending(cluster, *key);
        if n > 0 {
            demand.push((i + 1, *key, n as u64, cap));
        }
    }
    // A phase held back by delay scheduling would not take the room freed
    // on an arbitrary node: it preempts once it may go anywhere.
    demand.retain(|(_, key, _, _)| !h.waits_for_locality(*key, ctx.now));
    let borrowed = borrowed(h, ctx);
    let mut room = h.pool_room(ctx.cluster());
    let mut pass = Pass {
        mode,
        heartbeat,
        taken: BTreeSet::new(),
        chosen: Vec::new(),
        held: BTreeMap::new(),
        mem_left: BTreeMap::new(),
        mem_max: None,
    };
    if mode == PreemptMode::Suspend && h.cfg.max_suspended_per_node > 0 {
        for key in h.index.suspended.keys() {
            for cid in &h.index.suspended[key] {
                if let Some(ci) = h.containers.get(cid) {
                    *pass.held.entry(ci.node).or_default() += 1;
                }
            }
        }
    }
    let pure_suspend = mode == PreemptMode::Suspend && h.cfg.kill_below_progress <= 0.0;
    let suspend_floor = pure_suspend
        .then(|| {
            let caps = demand.iter().map(|d| d.3).filter(|c| !c.is_zero());
            caps.reduce(|a, b| Resources::new(a.memory_mb.min(b.memory_mb), a.vcores.min(b.vcores)))
        })
        .flatten();
    let mut cands =
        Candidates { next: order.len(), current: None, list: Vec::new(), dead: Vec::new(), start: 0, suspend_floor };
    // Demands that ran out of candidates, as (position, size, type): a
    // later demand no higher and no smaller of the same type would too.
    let mut exhausted: Vec<(usize, Resources, usize)> = Vec::new();
    for (pos, key, want, cap) in demand {
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
        if need == 0 || exhausted.iter().any(|(p, c, k)| *k == j && pos >= *p && c.fits_in(&cap)) {
            continue;
        }
        if pass.no_node_fits(h, ctx, &cap) {
            exhausted.push((pos, cap, j));
            continue;
        }
        let mut freed = Resources::default();
        for &v in &borrowed[1 - j] {
            if need == 0 {
                break;
            }
            if let Verdict::Use(g) = pass.judge(h, ctx, v, (&cap, j), &mut room, &mut freed) {
                need = need.saturating_sub(g);
            }
        }
        let mut i = cands.start;
        while need > 0 {
            let Some((p, v)) = cands.get(h, ctx, &order, &pass, i) else { break };
            if p < pos {
                break;
            }
            if !cands.dead[i] {
                match pass.judge(h, ctx, v, (&cap, j), &mut room, &mut freed) {
                    Verdict::Use(g) => {
                        need = need.saturating_sub(g);
                        cands.kill(i);
                    }
                    Verdict::Dead => cands.kill(i),
                    Verdict::Skip => {}
                }
            }
            i += 1;
        }
        if need > 0 {
            exhausted.push((pos, cap, j));
        }
    }
    for (v, how) in pass.chosen {
        if ctx.preempt(v, how).is_ok() {
            ctx.metrics.count(if how == PreemptMode::Kill { "kills" } else { "suspensions" }, 1);
            h.sync(ctx.cluster(), v);
        }
    }
}

/// Whether some suspended container (on `only`, if given) could resume
/// now: its node has the room it gives back on resuming (what the cluster
/// checks before a resume), and no kill of it is on the way.
fn any_resumable(h: &Hfsp, ctx: &Ctx<'_>, only: Option<NodeId>) -> bool {
    let cluster = ctx.cluster();
    h.index.suspended.values().flatten().filter_map(|cid| cluster.container(*cid)).any(|c| {
        only.is_none_or(|n| n == c.node)
            && c.state == sojourn_core::ContainerState::Suspended
            && !c.preempting
            && cluster.node(c.node).is_some_and(|n| c.resources.saturating_sub(&c.held()).fits_in(&n.available()))
    })
}

/// Resumes suspended containers, never leaving a node's room idle while
/// its suspended work could run there (module doc): a suspended container
/// resumes once its node has its vcores back, unless waiting demand ranked
/// above its phase fits in the node's free room (that demand takes it at
/// the next scheduling pass). Above every phase are AM asks; a phase held
/// back by delay scheduling does not count. With `only`, after a heartbeat
/// filled that node in rank order, whatever fits there resumes.
pub fn resume_pass(h: &mut Hfsp, ctx: &mut Ctx<'_>, only: Option<NodeId>) {
    if h.cfg.preemption != Preemption::Suspend || h.index.suspended.is_empty() {
        return;
    }
    if !any_resumable(h, ctx, only) {
        return; // every resume below would be refused: nothing to rank for
    }
    let order = h.order();
    // Waiting demand, best first, as (rank, size); a size that an earlier
    // one fits in is left out (where it fits, so does the earlier one).
    let mut front: Vec<(usize, Resources)> = Vec::new();
    let mut add = |rank: usize, cap: Resources| {
        if !cap.is_zero() && !front.iter().any(|(_, c)| c.fits_in(&cap)) {
            front.push((rank, cap));
        }
    };
    if only.is_none() {
        // in app id order, as the cluster's apps; an app with an AM ask
        // outstanding is always among `am_apps`
        for a in h.am_apps.iter().filter_map(|a| ctx.cluster().app(*a)) {
            for s in a.outstanding_asks().filter(|s| s.ask.phase == Phase::Am) {
                add(0, s.ask.capability);
            }
        }
        for (i, key) in order.iter().enumerate() {
            let (n, cap) = Hfsp::pending(ctx.cluster(), *key);
            if n > 0 && !h.waits_for_locality(*key, ctx.now) {
                add(i + 1, cap);
            }
        }
    }
    for (i, key) in order.iter().enumerate() {
        let Some(set) = h.index.suspended.get(key) else { continue };
        for cid in set.clone() {
            let Some(node) = h.containers.get(&cid).map(|ci| ci.node) else { continue };
            if only.is_some_and(|n| n != node) {
                continue;
            }
            let Some(avail) = ctx.cluster().node(node).map(|n| n.available()) else { continue };
            if front.iter().take_while(|(r, _)| *r <= i).any(|(_, cap)| cap.fits_in(&avail)) {
                continue;
            }
            if ctx.resume(cid).is_ok() {
                ctx.metrics.count("resumes", 1);
                h.sync(ctx.cluster(), cid);
            }
        }
    }
}
