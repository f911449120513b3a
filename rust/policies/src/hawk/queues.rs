//! The distributed half (delgado.md §1.4, §1.5; H3, H4, H6, H7): batch
//! probing, the node queues with late binding, and randomized stealing;
//! with Eagle's SSS routing ([`super::sss`]), SBP and the SRPT order
//! ([`super::srpt`]) where the configuration asks for them.

use super::nodes::SlotBits;
use super::{srpt, Config, Entry, Hawk, Order, Pending, Pool, Req, Run};
use sojourn_core::{Cluster, Ctx, NodeId, Refusal, Resources, Rng};

impl Hawk {
    /// How many AM containers (running or being fetched) `max_am_share`
    /// allows: at least one.
    pub(crate) fn am_cap(&self) -> u32 {
        ((self.cfg.max_am_share * self.window as f64).floor() as u32).max(1)
    }

    /// Early binding (every task placed on one node: lwl, dlwl_srpt) also
    /// caps each node's AMs, else a node full of AMs can hold the very
    /// tasks they wait for; 0 (no cap) otherwise and on one-slot nodes.
    fn node_am_cap(&self, cluster: &Cluster, node: NodeId) -> u32 {
        if !self.central_places(false) {
            return 0;
        }
        cluster.node(node).map_or(0, |n| (self.cfg.max_am_share * n.capacity.vcores as f64).floor() as u32)
    }
}

/// What a get-task holds of a node when its job has nothing left to give:
/// the slot (one vcore) for the round trip.
pub(crate) const NO_TASK_HOLD: Resources = Resources::new(0, 1);

impl Hawk {
    /// Whether a node could ever serve a req: capacity, label, strict
    /// locality.
    fn can_host(cluster: &Cluster, req: Req, node: NodeId) -> bool {
        let (Some(n), Some(a)) = (cluster.node(node), Self::ask_of(cluster, req)) else { return false };
        a.ask.capability.fits_in(&n.capacity)
            && n.has_label(a.ask.label.as_deref())
            && (a.ask.relax_locality || a.ask.locality.is_empty() || cluster.locality_level(&a.ask, n) < 2)
    }

    /// The nodes a req may be sent to: `pool`, less those that cannot host
    /// it (a copy only when some cannot).
    pub(crate) fn hosts(&self, cluster: &Cluster, req: Req, pool: &Pool) -> Pool {
        let plain = Self::ask_of(cluster, req).is_some_and(|a| {
            a.ask.capability.fits_in(&self.min_capacity)
                && a.ask.label.is_none()
                && (a.ask.relax_locality || a.ask.locality.is_empty())
        });
        if plain {
            pool.clone()
        } else {
            pool.iter().copied().filter(|n| Self::can_host(cluster, req, *n)).collect()
        }
    }

    /// The pool a req's probes are drawn from (H3; split cluster, no-central
    /// ablation of §1.8).
    fn probe_pool(&self, long: bool) -> &Pool {
        let pick = if long {
            &self.general
        } else if self.cfg.short_in_partition {
            &self.short
        } else {
            &self.all
        };
        if pick.is_empty() {
            &self.all
        } else {
            pick
        }
    }

    /// H3: `n` probes for `req` to random nodes; returns how many were sent.
    pub(crate) fn send_probes(
        &mut self,
        ctx: &mut Ctx<'_>,
        req: Req,
        long: bool,
        n: u32,
        est_us: u64,
        at_us: u64,
    ) -> u32 {
        let hosts = self.hosts(ctx.cluster(), req, self.probe_pool(long));
        if hosts.is_empty() || n == 0 {
            return 0;
        }
        let targets = draw(ctx.rng, &hosts, n as usize, self.cfg.distinct);
        if let Some(st) = self.reqs.get_mut(&req) {
            st.live = st.live.saturating_add(n);
        }
        ctx.metrics.count("probes_sent", n as u64);
        let view = self.view_of(req);
        let sss = self.cfg.sss && !long;
        if sss && self.cfg.authors_simulator {
            // SSS decided at send time, as the authors' simulator (§6.5)
            for (node, extra_us) in self.sss_route(ctx, &hosts, targets) {
                self.send(ctx, node, Entry::new(req, long, true, est_us).viewed(view), at_us + extra_us);
            }
        } else {
            for node in targets {
                let mut entry = Entry::new(req, long, true, est_us).viewed(view);
                entry.round = u8::from(sss);
                self.send(ctx, node, entry, at_us);
            }
        }
        n
    }

    /// An entry leaves for `node`, arriving after d.
    pub(crate) fn send(&mut self, ctx: &mut Ctx<'_>, node: NodeId, entry: Entry, at_us: u64) {
        if self.cfg.delay_us == 0 {
            self.arrive(ctx, node, entry, at_us);
        } else {
            let epoch = self.nodes.get(&node).map_or(0, |n| n.epoch);
            let due_us = at_us + self.cfg.delay_us;
            if let Some(arrival) = self.pending.join(self.seq, due_us, (node, epoch, entry)) {
                self.after(ctx, due_us, Pending::Arrive(vec![arrival]));
            }
        }
    }

    /// An entry reaches `node`'s queue (FIFO, §1.1).
    pub(crate) fn arrive(&mut self, ctx: &mut Ctx<'_>, node: NodeId, mut entry: Entry, at_us: u64) {
        let Some(ns) = self.nodes.get_mut(&node) else {
            self.lose(&entry);
            self.top_up(ctx, entry.req, at_us);
            return;
        };
        if (entry.round == 1 || entry.round == 2) && (ns.running_long > 0 || ns.queued_long > 0) {
            // SSS step 4 (authors_simulator=false): the node runs or holds a
            // long task; it rejects the probe with its stored bit vector
            let bits = ns.sss.clone();
            ctx.metrics.count("sss_rejections", 1);
            if self.cfg.delay_us == 0 {
                self.rejected(ctx, entry, bits, at_us);
            } else {
                self.after(ctx, at_us + self.cfg.delay_us, Pending::Rejected { entry, bits });
            }
            return;
        }
        if self.cfg.sss && entry.long && !entry.probe {
            // SSS step 2: a long task comes with the central bit vector
            ns.sss = Some((self.bits_version, self.bits.clone()));
        }
        entry.arrived_us = at_us;
        if entry.probe && !entry.long && (ns.running_long > 0 || ns.queued_long > 0) {
            entry.behind_long = true;
            ctx.metrics.count("probes_behind_long", 1);
        }
        if entry.long {
            ns.queued_long += 1;
        }
        ns.queue.push_back(entry.clone());
        self.queued(ctx.cluster(), node, &entry);
        self.serve(ctx, node, at_us, false);
    }

    /// H4: while the selected entry's container fits, pop it and ask its
    /// job's scheduler for a task (a round trip of 2d, the container's size
    /// set aside meanwhile). The entry is the head (FIFO) or the one SRPT
    /// selects (Algorithm 1, [`srpt::select`]). `freed`: a slot just freed,
    /// so an empty queue steals (H6).
    pub(crate) fn serve(&mut self, ctx: &mut Ctx<'_>, node: NodeId, at_us: u64, freed: bool) {
        let mut may_steal = freed && self.cfg.steal_attempts > 0;
        loop {
            let cluster = ctx.cluster();
            let am_full = self.ams >= self.am_cap();
            let node_am_cap = self.node_am_cap(cluster, node);
            let Config { order, starvation_factor, .. } = self.cfg;
            if self.selection_idle(cluster, node, am_full, node_am_cap) {
                return;
            }
            let Some(ns) = self.nodes.get_mut(&node) else { return };
            let node_full = node_am_cap > 0 && ns.ams >= node_am_cap;
            // (the filter holds only while the views see every req's end)
            let whole = order == Order::SrptAll;
            let dead = if self.views.busy_skip { ns.dead.filter(whole) } else { &SlotBits::ALL };
            let (pick, purged) =
                srpt::select(&mut ns.queue, order, starvation_factor, cluster, &self.views, am_full || node_full, dead);
            ns.dead.purged(whole || ns.queued_long == 0);
            let empty = ns.queue.is_empty();
            if !purged.is_empty() {
                ctx.metrics.count("probes_purged", purged.len() as u64);
                for e in &purged {
                    self.lose(e);
                }
            }
            let Some(at) = pick else {
                if empty {
                    if may_steal && self.nodes.get(&node).is_some_and(|ns| ns.fetching == 0) && self.steal(ctx, node) {
                        may_steal = false;
                        continue;
                    }
                } else if !node_full {
                    // every entry is an AM held back by the share
                    self.am_blocked.insert(node);
                } else if !am_full {
                    // held back by the node's own cap only: they move
                    self.rebind_held_ams(ctx, node, at_us);
                }
                return;
            };
            let cluster = ctx.cluster();
            let (Some(ns), Some(n)) = (self.nodes.get(&node), cluster.node(node)) else { return };
            let (Some(picked), Some(req)) = (ns.queue.hot().get(at), ns.queue.req(at)) else { return };
            let (need, am) = self.views.hold(picked.view(), cluster, req);
            if !need.fits_in(&n.capacity) {
                // Only after an ask grew or a steal across node sizes: this
                // node can never run it; the req is topped up elsewhere.
                if !picked.probe() {
                    self.freeze_snapshot(node);
                }
                let Some(e) = self.withdraw(node, at) else { return };
                self.lose(&e);
                self.starved.insert(e.req);
                continue;
            }
            if !need.fits_in(&n.available().saturating_sub(&ns.held)) {
                return;
            }
            let gets_task = need != NO_TASK_HOLD;
            let Some(ns) = self.nodes.get_mut(&node) else { return };
            let Some(e) = ns.queue.remove(at) else { return };
            if e.long {
                ns.queued_long = ns.queued_long.saturating_sub(1);
                ns.dead.exposed();
            }
            if order != Order::Fifo && gets_task {
                // §2.5: the task bypasses every entry in front of its own
                ns.queue.add_bypass(at, e.est_us);
            }
            ns.fetching += 1;
            ns.held += need;
            let epoch = ns.epoch;
            if am {
                ns.ams += 1;
                self.ams += 1;
            }
            if self.cfg.delay_us == 0 {
                // (inside the loop, not through `serve` again: no recursion)
                if self.fetched(ctx, node, e, need, am, at, at_us) {
                    may_steal = self.cfg.steal_attempts > 0;
                }
            } else {
                self.after(
                    ctx,
                    at_us + 2 * self.cfg.delay_us,
                    Pending::Fetched { node, epoch, entry: e, hold: need, am, index: at },
                );
            }
        }
    }

    /// Takes the entry at `at` out of `node`'s queue without serving it:
    /// a central task no longer waits there (nor holds the node's SSS bit
    /// if long).
    fn withdraw(&mut self, node: NodeId, at: usize) -> Option<Entry> {
        let ns = self.nodes.get_mut(&node)?;
        let e = ns.queue.remove(at)?;
        if e.long {
            // (probes behind it are now scanned: some may be dead)
            ns.queued_long = ns.queued_long.saturating_sub(1);
            ns.dead.exposed();
        }
        if !e.probe {
            self.nodes.sub_central_work(node, e.est_us);
            if e.long {
                self.unassign_long(node);
            }
        }
        Some(e)
    }

    /// Early binding's AMs held at `node`, which is at its own AM cap
    /// while the cluster's share has room, each go to the lowest-id other
    /// node of the central scheduler's pool for it (a long AM stays out of
    /// the short partition) that is below its cap and could start it now
    /// (one per node).
    /// Else they wait for one of this node's AMs to end, which in an RM
    /// whose jobs run for hours (or a benchmark whose tasks never end) may
    /// be never, while the rest of the cluster is free: DLWL binds the AMs
    /// of one snapshot period to the same least-loaded nodes (an AM weighs
    /// 0). Found by the RM benchmark (1,000 nodes of 64 vcores, 500 AMs).
    fn rebind_held_ams(&mut self, ctx: &mut Ctx<'_>, node: NodeId, at_us: u64) {
        let cluster = ctx.cluster();
        let Some(ns) = self.nodes.get(&node) else { return };
        let held: Vec<usize> = (0..ns.queue.len())
            .filter(|&at| {
                let (Some(h), Some(req)) = (ns.queue.hot().get(at), ns.queue.req(at)) else { return false };
                self.views.get(h.view(), cluster, req).am
            })
            .collect();
        let mut moving: Vec<(NodeId, usize)> = Vec::new();
        for at in held {
            let (Some(h), Some(req)) = (ns.queue.hot().get(at), ns.queue.req(at)) else { continue };
            let (need, _) = self.views.hold(h.view(), cluster, req);
            let target = self.central_pool(h.long()).iter().copied().find(|&n| {
                let (Some(t), Some(c)) = (self.nodes.get(&n), cluster.node(n)) else { return false };
                n != node
                    && t.ams < self.node_am_cap(cluster, n)
                    && !moving.iter().any(|(m, _)| *m == n)
                    && need.fits_in(&c.available().saturating_sub(&t.held))
                    && Self::can_host(cluster, req, n)
            });
            if let Some(target) = target {
                moving.push((target, at));
            }
        }
        if moving.is_empty() {
            return;
        }
        ctx.metrics.count("ams_rebound", moving.len() as u64);
        self.freeze_snapshot(node);
        // (last first, so the positions noted stay right)
        let mut entries = Vec::with_capacity(moving.len());
        for &(target, at) in moving.iter().rev() {
            let Some(e) = self.withdraw(node, at) else { continue };
            entries.push((target, e));
        }
        for (target, e) in entries.into_iter().rev() {
            self.freeze_snapshot(target);
            if !e.probe {
                self.nodes.add_central_work(target, e.est_us);
                if e.long {
                    self.assign_long(target);
                }
            }
            self.send(ctx, target, e, at_us);
        }
    }

    /// The job's scheduler answers `node`'s get-task (H4 step 3): a task if
    /// it has one left, else nothing. With SBP (§2.4) a short probe that got
    /// a task goes back where it was in the queue (`index`). `at_us`: the
    /// answer's arrival, a round trip (2d) after the get-task left. Returns
    /// whether the slot is free again at once (nothing was started).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fetched(
        &mut self,
        ctx: &mut Ctx<'_>,
        node: NodeId,
        mut e: Entry,
        hold: Resources,
        am: bool,
        index: usize,
        at_us: u64,
    ) -> bool {
        if let Some(st) = self.reqs.get_mut_at(e.view, &e.req) {
            st.live = st.live.saturating_sub(1);
        }
        // an AM get-task counts against the share until it is answered; a
        // started AM then counts while it runs
        if am {
            self.ams = self.ams.saturating_sub(1);
        }
        if !e.probe {
            self.freeze_snapshot(node);
        }
        let Some(ns) = self.nodes.get_mut(&node) else {
            self.top_up(ctx, e.req, at_us);
            return false;
        };
        ns.fetching = ns.fetching.saturating_sub(1);
        ns.held = ns.held.saturating_sub(&hold);
        if am {
            ns.ams = ns.ams.saturating_sub(1);
        }
        if !e.probe {
            self.nodes.sub_central_work(node, e.est_us);
        }
        // a central long task that does not start leaves the node (SSS bit)
        let central_long = !e.probe && e.long;
        let (app, prio) = e.req;
        match ctx.cluster().can_allocate(app, prio, node) {
            Ok(()) => {
                let allocated = ctx.allocate(app, prio, node);
                // the ask lost a container (or is gone): SRPT reads it through the view
                self.ask_changed(ctx.cluster(), e.req, e.view);
                let Ok(container) = allocated else {
                    if central_long {
                        self.unassign_long(node);
                    }
                    self.starved.insert(e.req);
                    return true;
                };
                if am {
                    self.ams += 1;
                }
                let run = Run { app, node, long: e.long, central: !e.probe, am, est_us: e.est_us, start_us: at_us };
                self.record(container, run);
                // a req above the window gets its next entries as tasks start
                let live = self.reqs.get_at(e.view, &e.req).map_or(u32::MAX, |r| r.live);
                if Self::ask_of(ctx.cluster(), e.req).is_some_and(|a| self.to_cover(a.outstanding) > live) {
                    self.refill.insert(e.req);
                }
                // it reached the head of the queue when its get-task left, one
                // round trip ago (not kept in the entry: selection's scan reads
                // every queued entry, and a smaller one costs it less memory)
                let head_us = at_us.saturating_sub(2 * self.cfg.delay_us);
                let wait_ms = head_us.saturating_sub(e.arrived_us) as f64 / 1000.0;
                ctx.metrics.observe("queue_delay_ms", wait_ms);
                if e.long {
                    ctx.metrics.count("long_tasks", 1);
                    ctx.metrics.observe("queue_delay_long_ms", wait_ms);
                } else {
                    ctx.metrics.count("short_tasks", 1);
                    ctx.metrics.observe("queue_delay_short_ms", wait_ms);
                    if e.behind_long {
                        ctx.metrics.count("short_after_long", 1);
                    }
                }
                if self.cfg.sticky && e.probe && !e.long {
                    // SBP (§2.4): the probe stays in the queue for the job's next task
                    e.served += 1;
                    if e.served >= 2 {
                        ctx.metrics.count("sticky_tasks", 1);
                        if e.served == 2 {
                            ctx.metrics.count("sticky_probes", 1);
                        }
                    }
                    if let (Some(ns), Some(st)) = (self.nodes.get_mut(&node), self.reqs.get_mut_at(e.view, &e.req)) {
                        st.live = st.live.saturating_add(1);
                        e.arrived_us = at_us;
                        let at = index.min(ns.queue.len());
                        ns.queue.insert(at, e.clone());
                        self.queued(ctx.cluster(), node, &e);
                    }
                }
                false
            }
            Err(Refusal::NoAsk | Refusal::UnknownApp) => {
                // late binding's "cancel": the job has no task left here
                if central_long {
                    self.unassign_long(node);
                }
                ctx.metrics.count("probes_dropped", 1);
                true
            }
            Err(_) => {
                if central_long {
                    self.unassign_long(node);
                }
                // the ask changed under the get-task: try again elsewhere at
                // the next scheduling opportunity
                self.starved.insert(e.req);
                true
            }
        }
    }

    /// H6: up to `steal_attempts` random general-partition victims; the
    /// first with a stealable run gives it to `thief`. Returns whether
    /// anything was stolen.
    fn steal(&mut self, ctx: &mut Ctx<'_>, thief: NodeId) -> bool {
        self.layout(ctx.cluster());
        if self.general.is_empty() {
            return false;
        }
        for _ in 0..self.cfg.steal_attempts {
            let victim = self.general[ctx.rng.below(self.general.len() as u64) as usize];
            let taken = self.steal_from(victim);
            if taken.is_empty() {
                continue;
            }
            ctx.metrics.count("steals", 1);
            // (the thief's capacity may not fit what it took: selection must see)
            self.views.busy_skip = false;
            ctx.metrics.count("rescheduled_probes", taken.len() as u64);
            if let Some(ns) = self.nodes.get_mut(&thief) {
                for mut e in taken {
                    e.behind_long = false;
                    ns.queue.push_back(e);
                }
            }
            return true;
        }
        false
    }

    /// H7 (Fig 2.3): the first consecutive run of short probes after a long
    /// entry in `victim`'s queue, or after the long task it runs.
    pub(crate) fn steal_from(&mut self, victim: NodeId) -> Vec<Entry> {
        let limit = self.cfg.steal_limit as usize;
        let Some(ns) = self.nodes.get_mut(&victim) else { return Vec::new() };
        debug_assert_eq!(ns.queued_long as usize, ns.queue.hot().iter().filter(|h| h.long()).count(), "{victim}");
        if ns.running_long == 0 && ns.queued_long == 0 {
            // nothing long to steal from behind (and no queue to walk)
            return Vec::new();
        }
        let q = ns.queue.hot();
        let mut i = 0;
        if ns.running_long == 0 {
            while i < q.len() && !q[i].long() {
                i += 1;
            }
        }
        while i < q.len() && q[i].long() {
            i += 1;
        }
        let start = i;
        while i < q.len() && !q[i].long() && q[i].probe() && (limit == 0 || i - start < limit) {
            i += 1;
        }
        ns.queue.drain(start..i)
    }
}

/// `n` targets from `pool` (non-empty): with replacement, or distinct nodes
/// while there are enough (every node once per full round, §6.3).
pub(crate) fn draw(rng: &mut Rng, pool: &[NodeId], n: usize, distinct: bool) -> Vec<NodeId> {
    let len = pool.len() as u64;
    if !distinct {
        return (0..n).map(|_| pool[rng.below(len) as usize]).collect();
    }
    let mut out = Vec::with_capacity(n);
    let mut left = n;
    while left > 0 {
        let k = left.min(pool.len());
        let mut copy = pool.to_vec();
        // partial Fisher-Yates: the first k are a uniform distinct sample
        for i in 0..k {
            let j = i + rng.below((copy.len() - i) as u64) as usize;
            copy.swap(i, j);
        }
        out.extend_from_slice(&copy[..k]);
        left -= k;
    }
    out
}
