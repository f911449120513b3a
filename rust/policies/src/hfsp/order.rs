//! The real order (§1.7, A5) kept as an index rather than re-sorted on
//! every scheduling opportunity. A phase's rank either stays put until the
//! phase itself changes (tiny phases by submission; late phases by virtual
//! finish under FSPE; size-based phases of a pool of no virtual slots, whose
//! V nothing ages) or moves with the virtual clock (the size-based queue by
//! V, which every aging step changes; late phases under FSPE+PS, whose key
//! is their live task count). The first kind sits in a sorted set, refiled
//! when its phase changes; only the second is ranked afresh at each use,
//! and the two are merged. On a loaded cluster most waiting phases are late
//! (virtually done, really not), or none ages (a cluster of nodes too small
//! for a virtual slot), so a heartbeat ranks a few phases instead of every
//! phase.
//!
//! When the waiting phases are many and size-based (hundreds of jobs queued,
//! each with tasks to place), ranking the moving ones at every heartbeat is
//! still most of its cost. Between two reallocations of the virtual slots
//! each phase's V falls at a constant rate, its virtual slots, so the order
//! they were ranked in holds until the first two neighbours in it meet: a
//! [`KeptOrder`] keeps it that long, and a walk ranks its phases only as it
//! reaches them.

use super::*;
use std::sync::Arc;

/// Every phase not really done, filed by whether its rank moves.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct OrderIndex {
    /// Phases whose rank holds until they change, sorted by rank.
    fixed: BTreeSet<(Rank, Key)>,
    /// Each phase of `fixed` with the rank it is filed under.
    fixed_rank: BTreeMap<Key, Rank>,
    /// Phases whose rank moves with the virtual clock or their tasks.
    moving: BTreeSet<Key>,
}

#[cfg(test)]
impl OrderIndex {
    /// The fixed rank a phase is filed under, if its rank is fixed.
    pub(crate) fn fixed_rank_of(&self, key: Key) -> Option<Rank> {
        self.fixed_rank.get(&key).copied()
    }
}

/// The moving phases (size-based, ranked by V) in the order a full ranking
/// gave, with how long that order provably holds.
///
/// Between two reallocations of a pool (`Pool::reallocations`) no virtual
/// task completes and every phase keeps its virtual slots, so a phase's V
/// falls by its slots × the work done (`advance_first`). Two neighbours in
/// the order, the better a and the worse b, stay in that order until b's V,
/// falling faster, meets a's: after (V_b − V_a) / (slots_b − slots_a) of
/// work. The order holds until the first neighbours meet, less a margin of
/// 10⁻⁹ of V for rounding; neighbours with the same tasks and slots stay
/// equal and keep their sequence order. A refiling of the order index (a
/// phase in, out, or changing how it ranks) or a reallocation voids it.
#[derive(Clone, Debug)]
pub(crate) struct KeptOrder {
    keys: Arc<[Key]>,
    /// `Hfsp::order_stamp` when ranked.
    stamp: [u64; 3],
    /// `Hfsp::virtual_work` when ranked, and below which it holds.
    work_at: f64,
    holds_until: f64,
}

#[cfg(test)]
impl KeptOrder {
    /// The virtual work done when the order was ranked.
    pub(crate) fn ranked_at(&self) -> f64 {
        self.work_at
    }
}

/// Where a walk takes its moving ranks from.
enum Moving {
    /// Not ranked yet: ranked in full when the walk first needs one.
    Unranked,
    /// Ranked, best first.
    Ranked(Vec<(Rank, Key)>),
    /// A kept order: each phase ranked when the walk reaches it (on a
    /// placement walk, phases with nothing to place passed over then), the
    /// one reached so far in `reached`.
    Kept { keys: Arc<[Key]>, reached: Option<(Rank, Key)> },
}

/// A walk over the order, best first, for a scheduling opportunity: the
/// fixed ranks read from the index as it goes, the moving ones ranked when
/// the walk first reaches them. Nothing a scheduling opportunity does after
/// it starts (placing, resuming) changes a rank, except a late phase's live
/// count under FSPE+PS, so then the moving ones are ranked at the start;
/// either way the walk meets the order as it stood at its start.
///
/// A walk for placement leaves out the moving phases with nothing to place
/// (no outstanding ask, nothing suspended), which a placement step would
/// pass over anyway: on a cluster with room most phases have every task
/// placed, and ranking them is most of a heartbeat's cost. A phase gains
/// nothing to place during a scheduling opportunity, so leaving it out
/// when the moving ranks are made is as good as passing over it later.
pub(crate) struct OrderWalk {
    /// The last fixed rank the walk took (it goes on after it).
    fixed_taken: Option<(Rank, Key)>,
    /// The moving ranks, best first.
    moving: Moving,
    next_moving: usize,
    /// Whether moving phases with nothing to place are left out.
    placeable_only: bool,
}

impl OrderWalk {
    /// The next phase in the order, with its rank, without moving on.
    /// `cluster`: where a placement walk checks what phases can place (a
    /// walk that leaves none out ignores it).
    pub(crate) fn peek(&mut self, h: &Hfsp, cluster: &Cluster) -> Option<(Rank, Key)> {
        let fixed = self.next_fixed(h);
        // Without FSPE+PS every moving rank is size-based (class 2): the
        // fixed ones of a better class all come first.
        if !matches!(self.moving, Moving::Ranked(_)) && fixed.is_some_and(|(r, _)| r.0 < 2) {
            return fixed;
        }
        let placeable_in = self.placeable_only.then_some(cluster);
        let moving = match &mut self.moving {
            Moving::Unranked => {
                let ranked = h.moving_ranked(placeable_in);
                let first = ranked.get(self.next_moving).copied();
                self.moving = Moving::Ranked(ranked);
                first
            }
            Moving::Ranked(ranked) => ranked.get(self.next_moving).copied(),
            Moving::Kept { keys, reached } => {
                while reached.is_none() {
                    let Some(key) = keys.get(self.next_moving) else { break };
                    match placeable_in.is_none_or(|c| h.may_place(c, *key)).then(|| h.rank_now(*key)).flatten() {
                        Some(rank) => *reached = Some((rank, *key)),
                        None => self.next_moving += 1,
                    }
                }
                *reached
            }
        };
        match (fixed, moving) {
            (Some(f), Some(m)) => Some(f.min(m)),
            (f, m) => f.or(m),
        }
    }

    /// The first fixed rank after the last one taken (of those that may
    /// place, on a placement walk).
    fn next_fixed(&self, h: &Hfsp) -> Option<(Rank, Key)> {
        use std::ops::Bound::{Excluded, Unbounded};
        let fixed = if self.placeable_only { &h.placeable } else { &h.order_index.fixed };
        match self.fixed_taken {
            Some(taken) => fixed.range((Excluded(taken), Unbounded)).next().copied(),
            None => fixed.first().copied(),
        }
    }

    /// The next phase in the order, with its rank.
    pub(crate) fn next(&mut self, h: &Hfsp, cluster: &Cluster) -> Option<(Rank, Key)> {
        let entry = self.peek(h, cluster)?;
        if self.next_fixed(h) == Some(entry) {
            self.fixed_taken = Some(entry);
        } else {
            self.next_moving += 1;
            if let Moving::Kept { reached, .. } = &mut self.moving {
                *reached = None;
            }
        }
        Some(entry)
    }
}

impl Hfsp {
    /// Whether a phase's rank moves on its own (see the module doc).
    fn rank_moves(&self, key: Key, p: &PhaseState, vp: Option<&VPhase>) -> bool {
        match vp {
            _ if p.tiny => false,
            Some(vp) => (vp.finish_seq.is_none() && self.ages(key.1)) || self.cfg.late_ps,
            None => false,
        }
    }

    /// Whether a size-based phase of this type may rank elsewhere without
    /// changing itself: its pool has virtual slots (so V ages), or the key
    /// is the projected virtual finish, which other phases move.
    pub(crate) fn ages(&self, kind: Kind) -> bool {
        self.pools[kind as usize].slots > 0 || self.cfg.order_by_finish
    }

    /// Files a phase in the order index from its current state; called
    /// after anything that may change where it ranks or whether it is in
    /// the order (created, virtually done, sized, really done, revived,
    /// forgotten).
    pub(crate) fn refile(&mut self, key: Key) {
        self.refilings += 1;
        let mut index = std::mem::take(&mut self.order_index);
        if let Some(r) = index.fixed_rank.remove(&key) {
            index.fixed.remove(&(r, key));
            self.placeable.remove(&(r, key));
        }
        index.moving.remove(&key);
        self.file(&mut index, key);
        self.order_index = index;
        self.mark_placeable(key);
    }

    /// A phase of a fixed rank may have something to place now: placement
    /// walks take it until one finds it with nothing.
    pub(crate) fn mark_placeable(&mut self, key: Key) {
        if let Some(r) = self.order_index.fixed_rank.get(&key) {
            self.placeable.insert((*r, key));
        }
    }

    /// A placement walk found these phases with nothing to place.
    pub(crate) fn unmark_placeable(&mut self, keys: &[Key]) {
        for key in keys {
            if let Some(r) = self.order_index.fixed_rank.get(key) {
                self.placeable.remove(&(*r, *key));
            }
        }
    }

    /// Files a phase not filed yet.
    fn file(&self, index: &mut OrderIndex, key: Key) {
        let Some(p) = self.phases.get(&key).filter(|p| !p.real_done) else { return };
        let vp = self.pools[key.1 as usize].phases.get(&key);
        if self.rank_moves(key, p, vp) {
            index.moving.insert(key);
        } else {
            let r = self.rank(key, p, vp, None);
            index.fixed.insert((r, key));
            index.fixed_rank.insert(key, r);
        }
    }

    /// The index filed afresh from every phase: what the kept one must be.
    #[cfg(test)]
    pub(crate) fn order_index_from_scratch(&self) -> OrderIndex {
        let mut index = OrderIndex::default();
        for key in self.phases.keys() {
            self.file(&mut index, *key);
        }
        index
    }

    /// The phases whose rank moves, ranked now, best first; with
    /// `placeable_in`, only those with something to place there.
    fn moving_ranked(&self, placeable_in: Option<&Cluster>) -> Vec<(Rank, Key)> {
        let index = &self.order_index;
        // Projected finish times only when some phase is ranked by them.
        let finish = (self.cfg.order_by_finish && !index.moving.is_empty())
            .then(|| [self.pools[0].projected_finish(), self.pools[1].projected_finish()]);
        let mut v: Vec<(Rank, Key)> = index
            .moving
            .iter()
            .filter(|k| placeable_in.is_none_or(|c| self.may_place(c, **k)))
            .filter_map(|k| {
                let p = self.phases.get(k)?;
                Some((self.rank(*k, p, self.pools[k.1 as usize].phases.get(k), finish.as_ref()), *k))
            })
            .collect();
        // Keys are unique, so an unstable sort gives the one order.
        v.sort_unstable();
        v
    }

    /// A phase's rank now, from its state (none if it has no phase).
    fn rank_now(&self, key: Key) -> Option<Rank> {
        let p = self.phases.get(&key)?;
        Some(self.rank(key, p, self.pools[key.1 as usize].phases.get(&key), None))
    }

    /// What a kept order depends on: refilings and both pools' reallocations.
    fn order_stamp(&self) -> [u64; 3] {
        [self.refilings, self.pools[0].reallocations, self.pools[1].reallocations]
    }

    /// The kept order of the moving phases, if it still holds.
    fn kept_keys(&self) -> Option<&Arc<[Key]>> {
        let kept = self.kept.as_ref()?;
        let holds = kept.stamp == self.order_stamp()
            && (self.virtual_work == kept.work_at || self.virtual_work < kept.holds_until);
        holds.then_some(&kept.keys)
    }

    /// Ranks the moving phases in full and keeps their order, unless the
    /// kept one still holds. Only for V (FSPE+PS ranks late phases by
    /// their live tasks, and `virtual_finish` by projections, which move
    /// otherwise).
    pub(crate) fn keep_order(&mut self) {
        if self.cfg.late_ps || self.cfg.order_by_finish || self.kept_keys().is_some() {
            return;
        }
        let ranked = self.moving_ranked(None);
        let vphase = |k: &Key| self.pools[k.1 as usize].phases.get(k);
        let mut horizon = f64::INFINITY;
        for pair in ranked.windows(2) {
            let (Some(a), Some(b)) = (vphase(&pair[0].1), vphase(&pair[1].1)) else {
                horizon = 0.0;
                break;
            };
            horizon = horizon.min(work_apart(a, b));
        }
        self.kept = Some(KeptOrder {
            keys: ranked.iter().map(|(_, k)| *k).collect(),
            stamp: self.order_stamp(),
            work_at: self.virtual_work,
            holds_until: self.virtual_work + horizon,
        });
    }

    /// A walk over the order from its best phase; with `placeable_in`, a
    /// placement walk there (see [`OrderWalk`]).
    pub(crate) fn order_walk(&self, placeable_in: Option<&Cluster>) -> OrderWalk {
        OrderWalk {
            fixed_taken: None,
            moving: match self.kept_keys() {
                _ if self.cfg.late_ps => Moving::Ranked(self.moving_ranked(placeable_in)),
                Some(keys) => Moving::Kept { keys: Arc::clone(keys), reached: None },
                None => Moving::Unranked,
            },
            next_moving: 0,
            placeable_only: placeable_in.is_some(),
        }
    }

    /// Phases not really done, best first.
    pub fn order(&self) -> Vec<Key> {
        let mut out = Vec::with_capacity(self.order_index.fixed.len() + self.order_index.moving.len());
        let mut fixed = self.order_index.fixed.iter().peekable();
        let moving = match self.kept_keys() {
            Some(keys) => keys.iter().filter_map(|k| self.rank_now(*k).map(|r| (r, *k))).collect(),
            None => self.moving_ranked(None),
        };
        let mut moving = moving.into_iter().peekable();
        loop {
            let take_fixed = match (fixed.peek(), moving.peek()) {
                (Some(f), Some(m)) => *f < m,
                (f, m) => f.is_some() || m.is_none(),
            };
            let next = if take_fixed { fixed.next().copied() } else { moving.next() };
            let Some((_, key)) = next else { return out };
            out.push(key);
        }
    }

    /// [`Hfsp::order`] by ranking and sorting every phase: what the index
    /// must always agree with.
    pub(crate) fn order_by_full_sort(&self) -> Vec<Key> {
        let finish =
            self.cfg.order_by_finish.then(|| [self.pools[0].projected_finish(), self.pools[1].projected_finish()]);
        let mut v: Vec<(Rank, Key)> = self
            .phases
            .iter()
            .filter(|(_, p)| !p.real_done)
            .map(|(k, p)| (self.rank(*k, p, self.pools[k.1 as usize].phases.get(k), finish.as_ref()), *k))
            .collect();
        v.sort_unstable();
        v.into_iter().map(|(_, k)| k).collect()
    }
}

/// The work (slot-ms per slot) for which phase `a`, ranked before `b` by V,
/// provably stays before it while both keep their virtual slots (see
/// [`KeptOrder`]).
fn work_apart(a: &VPhase, b: &VPhase) -> f64 {
    if a.running == b.running && a.tasks == b.tasks {
        return f64::INFINITY; // stepped alike, equal at every step
    }
    let (va, vb) = (a.size(), b.size());
    let margin = 1e-9 * va.max(vb).max(1.0);
    let gap = vb - va;
    if gap <= margin {
        return 0.0;
    }
    let closing = b.running as f64 - a.running as f64;
    if closing <= 0.0 {
        f64::INFINITY
    } else {
        (gap - margin) / closing
    }
}
