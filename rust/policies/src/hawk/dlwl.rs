//! DLWL+SRPT, Eagle's distributed baseline (delgado.md §2.7, §5 D): every
//! task placed by distributed schedulers with least work left on the
//! waiting times a periodic heartbeat reports, plus noise against herding;
//! nodes order their queues by SRPT ([`super::srpt`], `srpt_all`).

use super::{us, Entry, Hawk};
use sojourn_core::{Ctx, NodeId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
        if self.snapshot_period == Some(period) {
            return;
        }
        self.snapshot_period = Some(period);
        let at_us = period.saturating_mul(self.cfg.heartbeat_us);
        let len = self.nodes.last_id().map_or(0, |n| n.0 as usize + 1);
        self.snapshot.clear();
        self.snapshot.resize(len, 0);
        // (each node's central runs are listed with it: no walk over every
        // container)
        for (n, ns) in self.nodes.iter() {
            let mut w = ns.central_work_us;
            for (_, est_us, start_us) in &ns.central_runs {
                w = w.saturating_add(est_us.saturating_sub(at_us.saturating_sub(*start_us)));
            }
            self.snapshot[n.0 as usize] = w;
        }
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
        let pool = if long && !self.general.is_empty() { &self.general } else { &self.all };
        let hosts = self.hosts(ctx.cluster(), req, pool);
        if hosts.is_empty() || k == 0 {
            return 0;
        }
        let hb = self.cfg.heartbeat_us;
        let whole_s = self.cfg.authors_simulator;
        let mut heap: BinaryHeap<Reverse<(u64, NodeId)>> = hosts
            .iter()
            .map(|n| {
                let noise = if whole_s { ctx.rng.below(hb / 1_000_000 + 1) * 1_000_000 } else { ctx.rng.below(hb) };
                let w = self.snapshot.get(n.0 as usize).copied().unwrap_or(0);
                Reverse((w.saturating_add(noise), *n))
            })
            .collect();
        let mut targets = Vec::with_capacity(k as usize);
        for _ in 0..k {
            let Some(Reverse((w, node))) = heap.pop() else { break };
            targets.push(node);
            heap.push(Reverse((w.saturating_add(est_us), node)));
        }
        if let Some(st) = self.reqs.get_mut(&req) {
            st.live = st.live.saturating_add(k);
        }
        ctx.metrics.count("dlwl_placed", k as u64);
        for node in targets {
            if let Some(ns) = self.nodes.get_mut(&node) {
                ns.central_work_us = ns.central_work_us.saturating_add(est_us);
            }
            if long {
                self.assign_long(node);
            }
            self.send(ctx, node, Entry::new(req, long, false, est_us), at_us);
        }
        k
    }
}
