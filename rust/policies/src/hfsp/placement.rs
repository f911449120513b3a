//! Placement on a scheduling opportunity (§1.7, A5): AM asks, tiny phases,
//! training tasks up to T, late phases, then the rest by V; each phase
//! takes every container it can on the node (resuming its suspended ones
//! first), within the pools' quotas (§7.1) and delay scheduling's locality
//! wait (§7.18).

use super::*;

impl Hfsp {
    /// Places one container of `key` on `node`: resume a suspended one
    /// there, else allocate one of its asks. Returns whether it did.
    /// Within the type's pool quota (`pool_quotas`).
    pub(super) fn place_one(&mut self, ctx: &mut Ctx<'_>, key: Key, node: NodeId, quota: &mut Room) -> bool {
        let k = key.1 as usize;
        if !quota.allows(k) || !self.place_one_here(ctx, key, node) {
            return false;
        }
        quota.take(k, 1);
        true
    }

    /// §7.1 (`pool_quotas`): per type, its running containers and its
    /// waiting asks.
    pub(crate) fn pool_usage(&self, cluster: &Cluster) -> ([u32; 2], [u32; 2]) {
        let mut used = [0, 0];
        for (cid, ci) in &self.containers {
            if cluster.container(*cid).is_some_and(|c| c.state == ContainerState::Running) {
                used[ci.key.1 as usize] += 1;
            }
        }
        let mut waiting = [0u32, 0];
        for (key, _) in self.phases.iter().filter(|(_, p)| !p.real_done) {
            let w = &mut waiting[key.1 as usize];
            *w = w.saturating_add(Self::pending(cluster, *key).0);
        }
        (used, waiting)
    }

    /// §7.1 (`pool_quotas`): containers a type may still start: its pool's
    /// slots minus its running containers while the other type has waiting
    /// demand, else no limit (it borrows the other pool's idle slots).
    pub(crate) fn pool_room(&self, cluster: &Cluster) -> Room {
        if !self.cfg.pool_quotas {
            return Room::UNLIMITED;
        }
        let (used, waiting) = self.pool_usage(cluster);
        Room([0, 1].map(|k| (waiting[1 - k] > 0).then(|| (self.pools[k].slots as u32).saturating_sub(used[k]))))
    }

    /// Whether a phase has something a placement step could place: an
    /// outstanding ask or a suspended container (without either, the step
    /// places nothing and changes nothing).
    pub(super) fn may_place(&self, cluster: &Cluster, key: Key) -> bool {
        self.index.has_suspended(key) || Self::pending(cluster, key).0 > 0
    }

    pub(super) fn place_one_here(&mut self, ctx: &mut Ctx<'_>, key: Key, node: NodeId) -> bool {
        for cid in self.index.suspended_on(key, node, &self.containers) {
            if ctx.resume(cid).is_ok() {
                ctx.metrics.count("resumes", 1);
                self.sync(ctx.cluster(), cid);
                return true;
            }
        }
        let cluster = ctx.cluster();
        let (Some(a), Some(n)) = (cluster.app(key.0), cluster.node(node)) else { return false };
        let asks: Vec<_> = a
            .outstanding_asks()
            .filter(|s| Kind::of(s.ask.phase) == Some(key.1))
            .map(|s| (s.ask.priority, cluster.locality_level(&s.ask, n)))
            .collect();
        let allowed = self.allowed_locality(key, ctx.now);
        let mut skipped = false;
        for (p, level) in asks {
            if ctx.cluster().can_allocate(key.0, p, node).is_err() {
                continue;
            }
            if level > allowed {
                skipped = true;
            } else if let Ok(cid) = ctx.allocate(key.0, p, node) {
                self.register(ctx, key, cid);
                // A node-local placement ends the wait, and so does the
                // last waiting container (a later wave waits afresh).
                if level == 0 || Self::pending(ctx.cluster(), key).0 == 0 {
                    if let Some(ph) = self.phases.get_mut(&key) {
                        ph.locality_wait = None;
                    }
                }
                return true;
            }
        }
        if skipped {
            self.skip_for_locality(ctx, key);
        }
        false
    }

    /// Whether a placement step on `node` may still place anything: a
    /// heartbeat that may still assign, or one with room and a suspended
    /// container (a resume is no assignment).
    fn step_may_place(&self, cluster: &Cluster, node: NodeId) -> bool {
        crate::common::heartbeat_may_assign(cluster, node)
            || (self.index.any_suspended() && crate::common::node_has_room(cluster, node))
    }

    /// Delay scheduling (§1.7 step 5, §7.18): the locality level a phase
    /// may take (0 node-local, 1 rack-local, 2 any) after waiting since its
    /// first skip: node-local only for D, rack-local until 2D, then any.
    pub(super) fn allowed_locality(&self, key: Key, now: Time) -> u8 {
        let d = self.cfg.locality_delay_ms;
        match self.phases.get(&key).and_then(|p| p.locality_wait) {
            _ if d == 0 => 2,
            None => 0,
            Some(since) => match now.since(since) {
                w if w >= 2 * d => 2,
                w if w >= d => 1,
                _ => 0,
            },
        }
    }

    /// Whether delay scheduling holds a phase back (skipped, not yet free to
    /// go anywhere).
    pub(super) fn waits_for_locality(&self, key: Key, now: Time) -> bool {
        self.phases.get(&key).is_some_and(|p| p.locality_wait.is_some()) && self.allowed_locality(key, now) < 2
    }

    /// A phase was skipped for locality: its wait starts now if it was not
    /// waiting, with wake-ups at D and 2D, when a pass over the nodes with
    /// room lets it relax (drivers that offer nodes only on changes would
    /// not offer them again by themselves).
    pub(super) fn skip_for_locality(&mut self, ctx: &mut Ctx<'_>, key: Key) {
        let Some(p) = self.phases.get_mut(&key) else { return };
        if p.locality_wait.is_none() {
            p.locality_wait = Some(ctx.now);
            for k in 1..=2 {
                self.timers.set(ctx.now, ctx.now.plus(k * self.cfg.locality_delay_ms), Timer::Locality);
            }
        }
    }

    /// Places as many containers of `key` on `node` as fit, within the
    /// type's budget of non-training containers and its pool quota.
    pub(super) fn fill(&mut self, ctx: &mut Ctx<'_>, key: Key, node: NodeId, budget: &mut Room, quota: &mut Room) {
        let k = key.1 as usize;
        while budget.allows(k)
            && crate::common::node_has_room(ctx.cluster(), node)
            && self.place_one(ctx, key, node, quota)
        {
            budget.take(k, 1);
        }
    }

    /// D11 (`reserve_training_slots`): while training tasks of a type wait,
    /// the other containers of that type may fill at most slots − T.
    pub(super) fn size_based_budget(&self, cluster: &Cluster) -> Room {
        let mut out = Room::UNLIMITED;
        if !self.cfg.reserve_training_slots {
            return out;
        }
        for kind in [Kind::Map, Kind::Reduce] {
            let k = kind as usize;
            if self.train_running[k] >= self.cfg.train_slots[k] || self.training_candidates(cluster, kind).is_empty() {
                continue;
            }
            let running = self.containers.values().filter(|c| c.key.1 == kind && !c.training).count() as u32;
            let quota = (self.pools[k].slots as u32).saturating_sub(self.cfg.train_slots[k]);
            out.0[k] = Some(quota.saturating_sub(running));
        }
        out
    }

    /// Training phases that may start a training task, best first.
    pub(super) fn training_candidates(&self, cluster: &Cluster, kind: Kind) -> Vec<Key> {
        self.first_training_candidates(cluster, kind, usize::MAX)
    }

    /// The first `most` of [`Hfsp::training_candidates`]: in the thesis's
    /// order, found one by one and no further.
    pub(super) fn first_training_candidates(&self, cluster: &Cluster, kind: Kind, most: usize) -> Vec<Key> {
        if !self.cfg.train_by_progress {
            let mut out = Vec::new();
            let mut cursor = None;
            while out.len() < most {
                let Some(entry) = self.next_training_candidate(cluster, kind, cursor) else { break };
                out.push(entry.2);
                cursor = Some(entry);
            }
            return out;
        }
        let mut c: Vec<((u64, u64), Key)> = self.train_wanting[kind as usize]
            .iter()
            .filter(|(_, _, k)| self.is_training_candidate(cluster, kind, *k))
            .map(|(_, seq, k)| {
                let p = &self.phases[k];
                ((u64::MAX - (p.train_started + p.finished) as u64, *seq), *k)
            })
            .collect();
        c.sort();
        c.into_iter().take(most).map(|(_, k)| k).collect()
    }

    /// The thesis's training order (smallest initial size first): the
    /// first candidate after `cursor`, as (initial size bits, seq, key).
    /// The order's keys never change, so a pass over the candidates walks
    /// `train_wanting` rather than sorting the queue.
    fn next_training_candidate(
        &self,
        cluster: &Cluster,
        kind: Kind,
        cursor: Option<(u64, u64, Key)>,
    ) -> Option<(u64, u64, Key)> {
        use std::ops::Bound::{Excluded, Unbounded};
        let from = cursor.map_or(Unbounded, Excluded);
        self.train_wanting[kind as usize]
            .range((from, Unbounded))
            .find(|(_, _, k)| self.is_training_candidate(cluster, kind, *k))
            .copied()
    }

    /// Files a phase in `train_wanting` (or takes it out) after anything
    /// that may change whether it wants a training task started: created,
    /// more tasks seen, a training task started, rejected or killed.
    pub(super) fn refile_training(&mut self, key: Key) {
        let Some(p) = self.phases.get(&key) else { return };
        let entry = (p.s_initial.to_bits(), p.seq, key);
        let wants = self.in_training.contains(&entry) && self.training_wanted(key) > 0;
        let wanting = &mut self.train_wanting[key.1 as usize];
        if wants {
            wanting.insert(entry);
        } else {
            wanting.remove(&entry);
        }
    }

    /// `train_wanting` filed afresh from every phase: what the kept one
    /// must be.
    #[cfg(test)]
    pub(crate) fn train_wanting_from_scratch(&self) -> [BTreeSet<(u64, u64, Key)>; 2] {
        let mut out = [BTreeSet::new(), BTreeSet::new()];
        for entry in &self.in_training {
            if self.training_wanted(entry.2) > 0 {
                out[entry.2 .1 as usize].insert(*entry);
            }
        }
        out
    }

    fn is_training_candidate(&self, cluster: &Cluster, kind: Kind, key: Key) -> bool {
        key.1 == kind
            && self.phases.get(&key).is_some_and(|p| !p.real_done)
            && self.training_wanted(key) > 0
            && Self::pending(cluster, key).0 > 0
    }

    pub(super) fn heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        // AM containers first, in submission order (§7.2).
        let mut ams: Vec<(Time, AppId, sojourn_core::Priority)> = Vec::new();
        let mut settled = Vec::new();
        for &app in &self.am_apps {
            let before = ams.len();
            if let Some(a) = ctx.cluster().app(app).filter(|a| a.pending_containers > 0) {
                let outstanding = a.outstanding_asks().filter(|s| s.ask.phase == Phase::Am);
                ams.extend(outstanding.map(|s| (a.submit, a.id(), s.ask.priority)));
            }
            if ams.len() == before {
                settled.push(app);
            }
        }
        for app in settled {
            self.am_apps.remove(&app);
        }
        ams.sort();
        for (_, app, prio) in ams {
            while ctx.cluster().can_allocate(app, prio, node).is_ok() && ctx.allocate(app, prio, node).is_ok() {}
        }
        let nothing_waits = ctx.cluster().pending_containers() == 0 && !self.index.any_suspended();
        if nothing_waits || !crate::common::node_has_room(ctx.cluster(), node) {
            // Nothing below can place on a full node (each placement step
            // checks for room first, without side effects), nor anywhere
            // when no ask is outstanding and nothing is suspended (a step
            // then finds nothing to place, without side effects), so the
            // order, which ranks phases, is not walked; suspended work may
            // still resume on the node's free vcores.
            preempt::resume_pass(self, ctx, Some(node));
            return;
        }
        self.keep_order();
        // Tiny phases outrank training (size 0).
        debug_assert_eq!(self.order(), self.order_by_full_sort(), "the order index went stale");
        let mut order = self.order_walk(Some(ctx.cluster()));
        let mut budget = self.size_based_budget(ctx.cluster());
        let mut quota = self.pool_room(ctx.cluster());
        // Tiny phases rank first (`rank`'s class 0), so they are the order's
        // head; the size-based pass below skips them anyway.
        let mut tiny: Vec<Key> = Vec::new();
        while let Some((_, key)) = order.peek(self, ctx.cluster()).filter(|(_, k)| self.phases[k].tiny) {
            order.next(self, ctx.cluster());
            tiny.push(key);
        }
        let mut nothing_to_place = Vec::new();
        for key in tiny {
            // A step with nothing to place places nothing, without side effects.
            if self.may_place(ctx.cluster(), key) {
                self.fill(ctx, key, node, &mut budget, &mut quota);
            } else {
                nothing_to_place.push(key);
            }
        }
        // Training tasks, up to T running per type (Algorithm 3, step 1).
        for kind in [Kind::Map, Kind::Reduce] {
            'train: while self.train_running[kind as usize] < self.cfg.train_slots[kind as usize] {
                if self.cfg.train_by_progress {
                    for key in self.training_candidates(ctx.cluster(), kind) {
                        if self.step_may_place(ctx.cluster(), node) && self.place_one(ctx, key, node, &mut quota) {
                            continue 'train;
                        }
                    }
                    break;
                }
                // The candidates one by one: a failed placement changes no
                // phase's candidacy, so this meets the list's sequence.
                // A failed placement leaves the node's room as it was: on a
                // full node every candidate would fail, so none is tried.
                if !self.step_may_place(ctx.cluster(), node) {
                    break;
                }
                let mut cursor = None;
                while let Some(entry) = self.next_training_candidate(ctx.cluster(), kind, cursor) {
                    if self.place_one(ctx, entry.2, node, &mut quota) {
                        continue 'train;
                    }
                    cursor = Some(entry);
                }
                break;
            }
        }
        // Late phases, then the size-based queue (step 2).
        while self.step_may_place(ctx.cluster(), node) {
            let Some((_, key)) = order.next(self, ctx.cluster()) else { break };
            // Most phases in the order have every task placed (late ones
            // above all): skip them before the placement step's lookups,
            // and leave them out of later walks until they may place.
            if !self.may_place(ctx.cluster(), key) {
                nothing_to_place.push(key);
            } else if self.phases.get(&key).is_some_and(|p| !p.tiny) {
                self.fill(ctx, key, node, &mut budget, &mut quota);
            }
        }
        self.unmark_placeable(&nothing_to_place);
        // Suspended work resumes in whatever room the order left idle.
        preempt::resume_pass(self, ctx, Some(node));
    }
}
