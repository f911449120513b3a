//! A req's classification and weight (H1), the partitions (H2), and keeping
//! every outstanding task covered by a live entry (module doc, "No lost
//! probe"): top-ups, the starved and refill sets, lost entries.

use super::{us, Central, Entry, Hawk, Req};
use sojourn_core::{AppId, Ask, Cluster, Ctx, Phase, Resources};

impl Hawk {
    /// H1: long iff the estimate is above the cutoff. Without an estimate
    /// (inside the RM) the bit is the app's queue when `short_queues` is
    /// set: a task ask of an app in one of them is short, of any other app
    /// long; AMs keep `unknown_estimate`.
    pub(crate) fn is_long(&self, cluster: &Cluster, app: AppId, ask: &Ask) -> bool {
        match ask.est_task_ms {
            Some(ms) => ms.saturating_mul(1000) > self.cfg.cutoff_us,
            None if ask.phase != Phase::Am && !self.cfg.short_queues.is_empty() => {
                !cluster.app(app).is_some_and(|a| self.cfg.is_short_queue(a.queue()))
            }
            None => self.cfg.unknown_is_long,
        }
    }

    /// The estimate (µs) LWL and SRPT weigh a task of `ask` with: its own,
    /// else `unknown_task_s` for a task, 0 for an AM.
    pub(crate) fn est_us(&self, ask: &Ask) -> u64 {
        match ask.est_task_ms {
            Some(ms) => ms.saturating_mul(1000),
            None if ask.phase != Phase::Am => self.cfg.unknown_task_us,
            None => 0,
        }
    }

    /// Whether the central scheduler places a req of this class.
    pub(crate) fn central_places(&self, long: bool) -> bool {
        match self.cfg.central {
            Central::Long => long,
            Central::All | Central::Distributed => true,
            Central::None => false,
        }
    }

    /// H2: the short partition is the lowest `floor(pct · N)` node ids.
    pub(crate) fn layout(&mut self, cluster: &Cluster) {
        if !self.layout_stale {
            return;
        }
        self.layout_stale = false;
        self.all = self.nodes.keys().collect::<Vec<_>>().into();
        let n_short = ((self.cfg.short_partition_pct / 100.0) * self.all.len() as f64).floor() as usize;
        let n_short = n_short.min(self.all.len());
        self.short = self.all[..n_short].into();
        self.general = self.all[n_short..].into();
        for (i, (_, st)) in self.nodes.iter_mut().enumerate() {
            st.short = i < n_short;
        }
        let mut min: Option<Resources> = None;
        let mut window: u32 = 0;
        for id in self.all.iter() {
            if let Some(n) = cluster.node(*id) {
                min = Some(min.map_or(n.capacity, |m| m.min(&n.capacity)));
                window = window.saturating_add(n.capacity.vcores.max(1));
            }
        }
        self.min_capacity = min.unwrap_or(Resources::ZERO);
        self.window = window;
    }

    /// Outstanding tasks of a req, and its ask.
    pub(crate) fn ask_of(cluster: &Cluster, req: Req) -> Option<&sojourn_core::AskState> {
        cluster.app(req.0).and_then(|a| a.asks.get(&req.1))
    }

    /// The tasks of a req that must be covered by live entries: all of
    /// them, up to what the cluster can run at once (an ask of 2^31
    /// containers costs entries for the cluster's slots, not for its
    /// count; the rest are covered as tasks start).
    pub(crate) fn to_cover(&self, outstanding: u32) -> u32 {
        outstanding.min(self.window)
    }

    /// Reqs with fewer live entries than tasks to cover (none, unless no
    /// node can hold them): what the property tests check.
    pub fn uncovered(&self, cluster: &Cluster) -> Vec<Req> {
        self.reqs
            .iter()
            .filter(|(r, st)| Self::ask_of(cluster, **r).is_some_and(|a| self.to_cover(a.outstanding) > st.live))
            .map(|(r, _)| *r)
            .collect()
    }

    /// Entries queued at nodes, in flight or in a get-task.
    pub fn entries(&self) -> usize {
        self.nodes.values().map(|n| n.queue.len()).sum::<usize>() + self.pending.len()
    }

    /// Makes up for a req's missing entries (module doc, "No lost probe").
    pub(crate) fn top_up(&mut self, ctx: &mut Ctx<'_>, req: Req, at_us: u64) {
        let Some(st) = self.reqs.get(&req) else { return };
        let (long, live) = (st.long, st.live);
        let Some((outstanding, est_us)) =
            Self::ask_of(ctx.cluster(), req).map(|a| (a.outstanding, self.est_us(&a.ask)))
        else {
            self.starved.remove(&req);
            return;
        };
        self.layout(ctx.cluster());
        if outstanding > 0 && self.all.is_empty() {
            // no node: wait for one
            self.starved.insert(req);
            return;
        }
        let cover = self.to_cover(outstanding);
        if live >= cover {
            self.starved.remove(&req);
            return;
        }
        let deficit = cover - live;
        let sent = if self.cfg.central == Central::Distributed {
            self.place_dlwl(ctx, req, long, deficit, est_us, at_us)
        } else if self.central_places(long) {
            self.place_central(ctx, req, long, deficit, est_us, at_us)
        } else {
            let mut n = (self.cfg.probe_ratio * deficit as f64).ceil().min(u32::MAX as f64) as u32;
            if !long && live == 0 {
                // Eagle's minimum probe count: a job's first batch is max(K, d·t) (§2.6)
                n = n.max(self.cfg.min_probes);
            }
            self.send_probes(ctx, req, long, n, est_us, at_us)
        };
        // (a req that started tasks while being topped up may be starved
        // again already: it stays so)
        if sent == 0 {
            self.starved.insert(req);
        }
    }

    /// At the end of every call from the core: retries every starved req
    /// once, then tops up the reqs that started tasks until none is short,
    /// so a req is covered when the call returns (without recursion), and
    /// lets the queues held up by the AM share go on once it has room.
    pub(crate) fn settle(&mut self, ctx: &mut Ctx<'_>) {
        let now = us(ctx.now);
        for req in std::mem::take(&mut self.starved) {
            self.top_up(ctx, req, now);
        }
        // (each round starts tasks or AMs, which use slots, or unblocks no
        // node: it ends)
        loop {
            while !self.refill.is_empty() {
                for req in std::mem::take(&mut self.refill) {
                    self.top_up(ctx, req, now);
                }
            }
            if self.ams >= self.am_cap() || self.am_blocked.is_empty() {
                break;
            }
            for node in std::mem::take(&mut self.am_blocked) {
                self.serve(ctx, node, now, false);
            }
        }
    }

    /// An entry that will never be served (its node left): the req's live
    /// count drops, and the caller tops the req up.
    pub(crate) fn lose(&mut self, entry: &Entry) {
        if let Some(st) = self.reqs.get_mut_at(entry.view, &entry.req) {
            st.live = st.live.saturating_sub(1);
        }
    }
}
