//! The central scheduler (delgado.md §1.6, H5): least work left over the
//! general partition, on estimates, for long jobs (Hawk) or for every job
//! (the centralized baseline, `central=all`).

use super::{Entry, Hawk, Pool, Req};
use sojourn_core::{Ctx, NodeId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

impl Hawk {
    /// H5 step 1: the waiting time the central scheduler sees at `node`
    /// (µs): the estimates of its central tasks queued there, plus the
    /// remaining estimate of the central tasks it runs, plus 2d while it
    /// runs one (the authors' simulator). Short probes are invisible to it.
    pub(crate) fn waiting_us(&self, node: NodeId, at_us: u64) -> u64 {
        self.nodes.waiting_us(node, at_us, 2 * self.cfg.delay_us)
    }

    /// The nodes the central scheduler places a task on: long ones on the
    /// general partition (when there is one), others anywhere.
    pub(crate) fn central_pool(&self, long: bool) -> &Pool {
        if long && !self.general.is_empty() {
            &self.general
        } else {
            &self.all
        }
    }

    /// H5 step 2: each of `k` tasks of `req` to the node with the least
    /// waiting time (ties to the lowest id), which then waits `est` more.
    /// Returns how many were placed (0 if no node can hold the ask).
    pub(crate) fn place_central(
        &mut self,
        ctx: &mut Ctx<'_>,
        req: Req,
        long: bool,
        k: u32,
        est_us: u64,
        at_us: u64,
    ) -> u32 {
        let hosts = self.hosts(ctx.cluster(), req, self.central_pool(long));
        if hosts.is_empty() || k == 0 {
            return 0;
        }
        let waits = hosts.iter().map(|n| (self.waiting_us(*n, at_us), *n));
        let targets = least_work(waits, k as usize, est_us);
        let view = self.view_of(req);
        if let Some(st) = self.reqs.get_mut(&req) {
            st.live = st.live.saturating_add(k);
        }
        ctx.metrics.count("central_placed", k as u64);
        for node in targets {
            self.nodes.add_central_work(node, est_us);
            if long {
                // SSS (§5 E2 step 1): the node's bit is set at assignment
                self.assign_long(node);
            }
            self.send(ctx, node, Entry::new(req, long, false, est_us).viewed(view), at_us);
        }
        k
    }
}

/// LWL's assignment of `k` tasks of `est_us` each over the candidates'
/// `(waiting time, node)`: each task to the least (ties to the lowest id),
/// which then waits `est_us` more. Returns the `k` targets in order.
///
/// Only the `k` least candidates can ever be picked (before the j-th pick
/// at most j−1 of them have grown, and the others are at most the k-th,
/// which is at most any candidate outside), so the scan keeps those in a
/// bounded heap and the picks run over `k` entries, not over every node.
pub(crate) fn least_work(waits: impl Iterator<Item = (u64, NodeId)>, k: usize, est_us: u64) -> Vec<NodeId> {
    let mut least: BinaryHeap<(u64, NodeId)> = BinaryHeap::with_capacity(k.min(1 << 16) + 1);
    for c in waits {
        if least.len() < k {
            least.push(c);
        } else if let Some(mut top) = least.peek_mut() {
            if c < *top {
                *top = c;
            }
        }
    }
    let mut heap: BinaryHeap<Reverse<(u64, NodeId)>> = least.into_iter().map(Reverse).collect();
    let mut targets = Vec::with_capacity(k);
    for _ in 0..k {
        let Some(Reverse((w, node))) = heap.pop() else { break };
        targets.push(node);
        heap.push(Reverse((w.saturating_add(est_us), node)));
    }
    targets
}

#[cfg(test)]
mod tests {
    use super::least_work;
    use proptest::prelude::*;
    use sojourn_core::NodeId;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// LWL as the thesis states it: every candidate in one heap, `k` pops,
    /// each pushed back `est` later.
    fn every_node_heap(waits: &[(u64, NodeId)], k: usize, est_us: u64) -> Vec<NodeId> {
        let mut heap: BinaryHeap<Reverse<(u64, NodeId)>> = waits.iter().copied().map(Reverse).collect();
        let mut targets = Vec::new();
        for _ in 0..k {
            let Some(Reverse((w, node))) = heap.pop() else { break };
            targets.push(node);
            heap.push(Reverse((w.saturating_add(est_us), node)));
        }
        targets
    }

    proptest! {
        /// Keeping only the `k` least candidates places every task where
        /// the heap over every node would: ties (few distinct waits),
        /// `k` above the node count, zero and saturating estimates.
        #[test]
        fn least_work_places_as_a_heap_over_every_node(
            waits in prop::collection::vec(prop_oneof![0u64..5, Just(u64::MAX - 3), any::<u64>()], 1..40),
            k in 1usize..100,
            est_us in prop_oneof![Just(0u64), 1u64..4, Just(u64::MAX / 2)],
        ) {
            let waits: Vec<(u64, NodeId)> =
                waits.into_iter().enumerate().map(|(i, w)| (w, NodeId(i as u32 * 3))).collect();
            prop_assert_eq!(least_work(waits.iter().copied(), k, est_us), every_node_heap(&waits, k, est_us));
        }
    }
}
