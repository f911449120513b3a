//! DLWL+SRPT, Eagle's distributed baseline (delgado.md §2.7, §5 D): every
//! task placed by distributed schedulers with least work left on the
//! waiting times a periodic heartbeat reports, plus noise against herding;
//! nodes order their queues by SRPT ([`super::srpt`], `srpt_all`).
//!
//! The snapshot is taken lazily, node by node: a node's value is its state
//! at the period's start, which is its current state until something
//! changes its central work or runs; [`Hawk::freeze_snapshot`] stores the
//! value just before such a change, and the period's first placement
//! keeps every node's. Periods where nobody places a task then cost
//! nothing, instead of a walk over every node.

use super::{central::least_work, us, Entry, Hawk, NodeState};
use sojourn_core::{Ctx, NodeId};

impl Hawk {
    /// §5 D2: at the first call of each heartbeat period the snapshot is
    /// taken, before that call changes anything, so it is the state at the
    /// period's start: per node, the estimates of its queued tasks plus the
    /// remaining estimates of those it runs (D1).
    pub(crate) fn heartbeat(&mut self, ctx: &Ctx<'_>) {
        if self.cfg.central != super::Central::Distributed {
            return;
        }
        let period = us(ctx.now) / self.cfg.heartbeat_us;
        if self.snapshot_period != Some(period) {
            self.snapshot_period = Some(period);
        }
    }

    /// `node`'s waiting time in the current period's snapshot (0 for a node
    /// that was not there at the period's start).
    fn snapshot_of(&self, node: NodeId) -> u64 {
        let Some(period) = self.snapshot_period else { return 0 };
        match self.snapshot.get(node.0 as usize) {
            Some((stamp, w)) if *stamp == period + 1 => *w,
            _ => self.waiting_now(node, period.saturating_mul(self.cfg.heartbeat_us)),
        }
    }

    /// D1 from `node`'s current state, at `at_us`.
    fn waiting_now(&self, node: NodeId, at_us: u64) -> u64 {
        self.nodes.get(&node).map_or(0, |ns| d1_us(ns, at_us))
    }

    /// Keeps every node's value of the current period (once per period).
    fn freeze_all(&mut self) {
        let Some(period) = self.snapshot_period else { return };
        if self.snapshot_full == Some(period) {
            return;
        }
        self.snapshot_full = Some(period);
        let at_us = period.saturating_mul(self.cfg.heartbeat_us);
        let len = self.nodes.last_id().map_or(0, |n| n.0 as usize + 1);
        if self.snapshot.len() < len {
            self.snapshot.resize(len, (0, 0));
        }
        for (n, ns) in self.nodes.iter() {
            let kept = &mut self.snapshot[n.0 as usize];
            if kept.0 != period + 1 {
                *kept = (period + 1, d1_us(ns, at_us));
            }
        }
    }

    /// Called before `node`'s central work or runs change (or the node
    /// comes or goes): keeps its value at the period's start if not kept
    /// yet this period.
    pub(crate) fn freeze_snapshot(&mut self, node: NodeId) {
        if self.cfg.central != super::Central::Distributed {
            return;
        }
        let Some(period) = self.snapshot_period else { return };
        let i = node.0 as usize;
        if self.snapshot.get(i).is_some_and(|(stamp, _)| *stamp == period + 1) {
            return;
        }
        let w = self.waiting_now(node, period.saturating_mul(self.cfg.heartbeat_us));
        if i >= self.snapshot.len() {
            self.snapshot.resize(i + 1, (0, 0));
        }
        self.snapshot[i] = (period + 1, w);
    }

    /// §5 D3–D6: candidates are every node for a short job and the general
    /// partition for a long one; each gets the snapshot's waiting time plus
    /// noise drawn once per job (§6.9: a whole number of seconds in [0, HB]
    /// as the authors' simulator, else uniform in [0, HB) µs); each of `k`
    /// tasks goes to the least (ties to the lowest id), which then waits
    /// `est` more. Returns how many were placed.
    pub(crate) fn place_dlwl(
        &mut self,
        ctx: &mut Ctx<'_>,
        req: super::Req,
        long: bool,
        k: u32,
        est_us: u64,
        at_us: u64,
    ) -> u32 {
        let hosts = self.hosts(ctx.cluster(), req, self.central_pool(long));
        if hosts.is_empty() || k == 0 {
            return 0;
        }
        self.freeze_all();
        let hb = self.cfg.heartbeat_us;
        let whole_s = self.cfg.authors_simulator;
        let rng = &mut *ctx.rng;
        let waits = hosts.iter().map(|n| {
            let noise = if whole_s { rng.below(hb / 1_000_000 + 1) * 1_000_000 } else { rng.below(hb) };
            (self.snapshot_of(*n).saturating_add(noise), *n)
        });
        let targets = least_work(waits, k as usize, est_us);
        let view = self.view_of(req);
        if let Some(st) = self.reqs.get_mut(&req) {
            st.live = st.live.saturating_add(k);
        }
        ctx.metrics.count("dlwl_placed", k as u64);
        for node in targets {
            self.freeze_snapshot(node);
            self.nodes.add_central_work(node, est_us);
            if long {
                self.assign_long(node);
            }
            self.send(ctx, node, Entry::new(req, long, false, est_us).viewed(view), at_us);
        }
        k
    }
}

/// D1: a node's queued central estimates plus the remaining estimates of
/// the central tasks it runs, at `at_us` (H5's waiting time without 2d).
fn d1_us(ns: &NodeState, at_us: u64) -> u64 {
    super::nodes::waiting_us(ns, at_us, 0)
}
