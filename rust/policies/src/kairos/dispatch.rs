//! Kairos's central scheduler (delgado.md §3.4, Algorithm 3; K6 of §5):
//! the FIFO queue of tasks goes out one by one, each to the node with the
//! fewest tasks below N + Q, ties to the lowest variance of attained service
//! (or a random node, or the lowest total attained service).

use super::asks::Walk;
use super::refresh::Moving;
use super::{fifo_key, is_am, Kairos, TieBreak};
use sojourn_core::{AppId, Cluster, Ctx, NodeId, Phase, Priority, Refusal, Time};

/// A node's place in the dispatch order: (task count, tie-break, id).
pub(crate) type NodeKey = (u32, u64, NodeId);

/// An ask looks at the open nodes it fits in (by room) one by one only if
/// there are at most this many; past that it walks the dispatch order.
const FEW_FITTING: usize = 48;

impl Kairos {
    /// The node's key now, and what it was read from if it moves with time
    /// (a tie-break over live services moves while one of them runs; a
    /// variance only with two tasks or more).
    fn node_key(&self, ctx: &mut Ctx<'_>, node: NodeId) -> (NodeKey, Option<Moving>) {
        let count = self.task_count(node);
        let (cluster, now) = (ctx.cluster(), ctx.now);
        let sum = match self.cfg.tie_break {
            TieBreak::Random => return ((count, ctx.rng.next_u64(), node), None),
            TieBreak::Var => false,
            TieBreak::Sum => true,
        };
        // Each task's (attained service before its current spell, running
        // since): its live service at any time (0 for one the mirror lost).
        let spells: Vec<(u64, Option<Time>)> = self
            .on_node
            .get(&node)
            .into_iter()
            .flatten()
            .map(|c| cluster.container(*c).map_or((0, None), |c| (c.attained_before_ms, c.running_since)))
            .collect();
        let moves = spells.iter().any(|s| s.1.is_some()) && (sum || count >= 2);
        let read = Moving { count, spells, filed_epoch: self.refresh.epoch };
        let key = read.key_at(node, now, sum);
        (key, moves.then_some(read))
    }

    /// The node's key in the dispatch order as a full re-read at the last
    /// refresh would have filed it.
    fn current_key(&self, node: NodeId) -> Option<NodeKey> {
        match self.refresh.moving.get(&node) {
            Some(m) if m.filed_epoch < self.refresh.epoch => {
                Some(m.key_at(node, self.refresh.epoch_at, self.cfg.tie_break == TieBreak::Sum))
            }
            _ => self.key_of.get(&node).copied(),
        }
    }

    /// Files the moving nodes with `count` tasks under their key of the last
    /// refresh, so that this level of the dispatch order can be walked (a
    /// node's count is in its key, so the levels are filed apart and a walk
    /// that stops early leaves the levels after it alone). Returns whether
    /// it filed any.
    fn materialize_level(&mut self, count: u32) -> bool {
        if self.refresh.materialized || !self.refresh.levels_done.insert(count) {
            return false;
        }
        let (epoch, at, sum) = (self.refresh.epoch, self.refresh.epoch_at, self.cfg.tie_break == TieBreak::Sum);
        let level = (count, 0, NodeId(0))..;
        let stale: Vec<NodeId> = self
            .open
            .range(level)
            .take_while(|k| k.0 == count)
            .map(|k| k.2)
            .filter(|n| self.refresh.moving.get(n).is_some_and(|m| m.filed_epoch < epoch))
            .collect();
        for node in &stale {
            let Some(m) = self.refresh.moving.get_mut(node) else { continue };
            let key = m.key_at(*node, at, sum);
            m.filed_epoch = epoch;
            if let Some(old) = self.key_of.insert(*node, key) {
                self.open.remove(&old);
            }
            self.open.insert(key);
        }
        !stale.is_empty()
    }

    /// The first open node at or after `from` in the dispatch order (as the
    /// last refresh files it) that can take one container of `app` at
    /// `prio`, walking it level by level.
    fn walk(
        &mut self,
        cluster: &Cluster,
        (app, prio, am): (AppId, Priority, bool),
        now: Time,
        mut from: Option<NodeKey>,
    ) -> Option<NodeKey> {
        loop {
            let first = match from {
                None => self.open.first(),
                Some(f) => self.open.range(f..).next(),
            };
            let level = first?.0;
            if self.materialize_level(level) {
                continue; // this level's order changed: read its start again
            }
            let start = from.unwrap_or((level, 0, NodeId(0)));
            let fits = |k: &&NodeKey| self.placeable(cluster, app, prio, k.2, now, am);
            if let Some(k) = self.open.range(start..).take_while(|k| k.0 == level).find(fits) {
                return Some(*k);
            }
            from = Some((level.checked_add(1)?, 0, NodeId(0)));
        }
    }

    /// Reads the room of the open nodes touched since, or whose protection
    /// ended, for [`super::refresh::Refresh::fitting`].
    fn read_rooms(&mut self, cluster: &Cluster, now: Time) {
        for n in self.refresh.rooms_due(now) {
            let room = if self.key_of.contains_key(&n) { self.room_and_until(cluster, n, now) } else { None };
            self.refresh.set_room(n, room);
        }
    }

    fn cap(&self, cluster: &Cluster, node: NodeId) -> u32 {
        self.cores(cluster, node).saturating_add(self.cfg.extra)
    }

    /// Whether one container of `app` at `prio` could start on `node` now,
    /// suspending running tasks if it must (an AM also only where
    /// [`Self::am_leaves_a_core`]).
    fn placeable(&self, cluster: &Cluster, app: AppId, prio: Priority, node: NodeId, now: Time, am: bool) -> bool {
        if am && !self.am_leaves_a_core(cluster, app, prio, node) {
            return false;
        }
        match cluster.can_allocate(app, prio, node) {
            Ok(()) => true,
            Err(Refusal::DoesNotFit) => {
                let Some(need) = cluster.app(app).and_then(|a| a.asks.get(&prio)).map(|s| s.ask.capability) else {
                    return false;
                };
                self.room_if_suspending(cluster, node, now).is_some_and(|room| need.fits_in(&room))
            }
            Err(_) => false,
        }
    }

    /// Whether an AM of `app` at `prio` placed on `node` would still leave
    /// the node's Kairos tasks (running and suspended) the vcores of the
    /// largest of them. AMs are outside LAS (§3.5: never suspended, not
    /// among the N), so vcores an AM holds are lost to the node's tasks until
    /// its job ends; were every core held by AMs, the suspended tasks there
    /// could never resume (K3 and K4 need a core), and the AMs would wait on
    /// them for ever. This keeps the node scheduler's premise that a node
    /// runs at least one of its tasks. A node without tasks takes AMs freely.
    fn am_leaves_a_core(&self, cluster: &Cluster, app: AppId, prio: Priority, node: NodeId) -> bool {
        let Some(need) = cluster.app(app).and_then(|a| a.asks.get(&prio)).map(|s| s.ask.capability.vcores) else {
            return false;
        };
        let tasks = self.on_node.get(&node);
        if need == 0 || tasks.is_none_or(|t| t.is_empty()) {
            return true;
        }
        let Some(n) = cluster.node(node) else { return false };
        let largest = tasks.into_iter().flatten().filter_map(|c| cluster.container(*c)).map(|c| c.resources.vcores);
        let largest = largest.max().unwrap_or(0);
        // Vcores held by AM containers. Only AMs: a task Kairos did not
        // place (one kept across an AM restart, recovered after an RM
        // restart) is still a task that can end or be suspended.
        let held = n
            .containers
            .iter()
            .filter(|c| !self.tasks.contains_key(c))
            .filter_map(|c| cluster.container(*c))
            .filter(|c| c.phase == Phase::Am)
            .map(|c| c.resources.vcores)
            .fold(0u32, u32::saturating_add);
        n.capacity.vcores.saturating_sub(held).saturating_sub(need) >= largest
    }

    /// K2 on `node` and the placement: suspend the victims, allocate, start
    /// the new task's quantum.
    fn start_on(&mut self, ctx: &mut Ctx<'_>, app: AppId, prio: Priority, node: NodeId, am: bool) -> bool {
        let Some(need) = ctx.cluster().app(app).and_then(|a| a.asks.get(&prio)).map(|s| s.ask.capability) else {
            return false;
        };
        let Some(victims) = self.victims_for(ctx.cluster(), node, &need, ctx.now) else { return false };
        for v in victims {
            if !self.suspend(ctx, v) {
                return false;
            }
        }
        match ctx.allocate(app, prio, node) {
            Ok(c) if am => {
                self.others.insert(c, node);
                self.refresh.touch(node);
                self.reindex(ctx, node); // its memory is taken
                true
            }
            Ok(c) => {
                self.track(ctx, c, node);
                true
            }
            Err(_) => false,
        }
    }

    /// Re-files `node` in the dispatch order after its tasks changed.
    pub(crate) fn reindex(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        if let Some(k) = self.key_of.remove(&node) {
            self.open.remove(&k);
        }
        if self.takes_tasks(ctx.cluster(), node) {
            let (k, moving) = self.node_key(ctx, node);
            self.open.insert(k);
            self.key_of.insert(node, k);
            self.refresh.filed(node, true, moving);
        } else {
            self.refresh.filed(node, false, None);
        }
    }

    /// Whether `node` belongs in the dispatch order: some memory free and
    /// fewer than N + Q tasks.
    fn takes_tasks(&self, cluster: &Cluster, node: NodeId) -> bool {
        let has_memory = cluster.node(node).is_some_and(|n| n.available().memory_mb > 0);
        has_memory && self.task_count(node) < self.cap(cluster, node)
    }

    /// Re-reads every node's task count and tie-break figure: the thesis's
    /// central scheduler learns them from heartbeats every Δ
    /// (`stats_interval_ms`); between refreshes only the nodes whose tasks
    /// changed are re-filed. Only touched nodes are read again; moving ones
    /// take their key of this time when it is needed
    /// ([`super::refresh::Refresh`]).
    fn refresh_all(&mut self, ctx: &mut Ctx<'_>) {
        self.stats_at = Some(ctx.now);
        self.refresh.next_epoch(ctx.now);
        if self.refresh.epoch > 1 && !self.refresh.everything && self.cfg.tie_break != TieBreak::Random {
            for n in self.refresh.take_touched() {
                self.reindex(ctx, n);
            }
            return;
        }
        let all: Vec<NodeId> = ctx.cluster().nodes().map(|n| n.id).collect();
        let mut keys = Vec::with_capacity(all.len());
        self.refresh.clear();
        for n in all {
            if self.takes_tasks(ctx.cluster(), n) {
                let (k, moving) = self.node_key(ctx, n);
                keys.push(k);
                self.refresh.filed(n, true, moving);
            }
        }
        // Built whole from the new keys (a bulk build), not node by node.
        self.key_of = keys.iter().map(|k| (k.2, *k)).collect();
        self.open = keys.into_iter().collect();
        self.refresh.materialized = true;
    }

    /// The first open node in the dispatch order that can take one container
    /// of `app` at `prio` now, and whether it was found by walking the order
    /// (from `last`, the node placed on before and its key then, if any).
    fn find(
        &mut self,
        ctx: &Ctx<'_>,
        app: AppId,
        prio: Priority,
        am: bool,
        last: Option<NodeKey>,
    ) -> (Option<NodeKey>, bool) {
        let (cluster, now) = (ctx.cluster(), ctx.now);
        if self.cfg.tie_break != TieBreak::Random {
            self.read_rooms(cluster, now);
            let Some(need) = cluster.app(app).and_then(|a| a.asks.get(&prio)).map(|s| s.ask.capability) else {
                return (None, false);
            };
            // Only a node the ask fits in by room can take it; among those
            // the first in the order is the least key.
            if let Some(nodes) = self.refresh.fitting(&need, FEW_FITTING) {
                let best = nodes
                    .into_iter()
                    .filter_map(|n| self.current_key(n))
                    .filter(|k| self.placeable(cluster, app, prio, k.2, now, am))
                    .min();
                return (best, false);
            }
        }
        if let Some(from) = last {
            let fits = |k: &&NodeKey| self.placeable(cluster, app, prio, k.2, now, am);
            if let Some(moved) = self.key_of.get(&from.2).filter(|k| **k < from).filter(fits).copied() {
                return (Some(moved), true);
            }
        }
        (self.walk(cluster, (app, prio, am), now, last), true)
    }

    /// K6: hands the queued tasks to nodes until the queue is empty or no
    /// node can take the next ones.
    pub(crate) fn dispatch(&mut self, ctx: &mut Ctx<'_>) {
        if self.queue.is_empty() {
            return;
        }
        let stale = self.stats_at.is_none_or(|at| ctx.now.since(at) >= self.cfg.stats_interval_ms);
        if stale {
            self.refresh_all(ctx);
        }
        // The queued asks in FIFO order, shape by shape ([`super::asks`]):
        // a shape no open node could take (a plain ask of it found no node)
        // leaves the round, as placing only uses memory up, so it stays
        // unplaceable for the rest of the round. AM asks are a shape apart:
        // one may be refused where a task is not. A round changes only the
        // ask it places, so the walk meets what a snapshot would.
        let mut walk = Walk::new(&self.asks);
        while let Some((shape, at)) = walk.next() {
            let (_, app, prio) = at;
            let (full, placed) = self.place_ask(ctx, app, prio, shape, &mut walk);
            if placed {
                self.asks.refresh(ctx.cluster(), app, fifo_key);
            }
            walk.advance(&self.asks, shape, at);
            // An app still asking is still queued, so only one left with
            // nothing pending needs the queue re-read.
            if ctx.cluster().app(app).is_none_or(|a| a.pending_containers == 0) {
                self.queue.refresh(ctx.cluster(), app);
            }
            if full {
                return;
            }
        }
    }

    /// Places the containers of one queued ask (of shape id `shape`) one by
    /// one; drops the shape from the round's `walk` if no node could take
    /// it. Returns whether no node is open any more, and whether it placed
    /// any.
    fn place_ask(
        &mut self,
        ctx: &mut Ctx<'_>,
        app: AppId,
        prio: Priority,
        shape: usize,
        walk: &mut Walk,
    ) -> (bool, bool) {
        let am = is_am(ctx.cluster(), app, prio);
        let plain = self.asks.shape(shape).plain;
        // The node last placed on and its key then: every node before
        // that key could not take this ask, and placing changed only
        // that node, so the next search starts there (the node itself
        // may have moved before it, and is looked at first).
        let mut last: Option<NodeKey> = None;
        let mut placed = false;
        loop {
            let outstanding = ctx.cluster().app(app).and_then(|a| a.asks.get(&prio)).map_or(0, |s| s.outstanding);
            if outstanding == 0 {
                return (false, placed);
            }
            if self.open.is_empty() {
                return (true, placed);
            }
            let (found, walked) = self.find(ctx, app, prio, am, last);
            let Some(key) = found else {
                if plain {
                    walk.drop_shape(shape);
                }
                return (false, placed);
            };
            if !self.start_on(ctx, app, prio, key.2, am) {
                // a suspension may have gone through before it failed
                return (false, true);
            }
            placed = true;
            last = walked.then_some(key);
        }
    }
}
