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

use super::*;

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
    /// The moving ranks, best first, once ranked.
    moving: Option<Vec<(Rank, Key)>>,
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
        if self.moving.is_none() && fixed.is_some_and(|(r, _)| r.0 < 2) {
            return fixed;
        }
        let placeable_in = self.placeable_only.then_some(cluster);
        let moving = self.moving.get_or_insert_with(|| h.moving_ranked(placeable_in));
        match (fixed, moving.get(self.next_moving).copied()) {
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

    /// A walk over the order from its best phase; with `placeable_in`, a
    /// placement walk there (see [`OrderWalk`]).
    pub(crate) fn order_walk(&self, placeable_in: Option<&Cluster>) -> OrderWalk {
        OrderWalk {
            fixed_taken: None,
            moving: self.cfg.late_ps.then(|| self.moving_ranked(placeable_in)),
            next_moving: 0,
            placeable_only: placeable_in.is_some(),
        }
    }

    /// Phases not really done, best first.
    pub fn order(&self) -> Vec<Key> {
        let mut out = Vec::with_capacity(self.order_index.fixed.len() + self.order_index.moving.len());
        let mut fixed = self.order_index.fixed.iter().peekable();
        let mut moving = self.moving_ranked(None).into_iter().peekable();
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
