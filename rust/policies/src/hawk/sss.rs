//! Eagle's Succinct State Sharing (delgado.md §2.3, §5 E2, E4): the central
//! scheduler's bit vector of the nodes with a long task assigned, the copy
//! each long task carries to its node, and the routing of short probes
//! around those nodes: a random first round, a redraw on the freshest
//! vector the job's probes met, then the short partition.

use super::{bit, Bits, Entry, Hawk, Pool};
use sojourn_core::{Ctx, NodeId, Rng};
use std::sync::Arc;

/// Redraws that may hit a set bit before the free nodes are listed.
const REDRAW_TRIES: u32 = 64;

impl Hawk {
    /// Sets or clears `node`'s bit (only with SSS: nobody reads it else).
    pub(crate) fn set_bit(&mut self, node: NodeId, on: bool) {
        if !self.cfg.sss || bit(&self.bits, node) == on {
            return;
        }
        let (word, mask) = (node.0 as usize / 64, 1u64 << (node.0 % 64));
        let v = Arc::make_mut(&mut self.bits);
        if v.len() <= word {
            v.resize(word + 1, 0);
        }
        if on {
            v[word] |= mask;
        } else {
            v[word] &= !mask;
        }
        self.bits_version += 1;
    }

    /// §5 E2 step 1: the central scheduler assigns a long task to `node`.
    pub(crate) fn assign_long(&mut self, node: NodeId) {
        let Some(ns) = self.nodes.get_mut(&node) else { return };
        ns.assigned_long += 1;
        if ns.assigned_long == 1 {
            self.set_bit(node, true);
        }
    }

    /// §5 E2 step 4 (§6.6): one of `node`'s long tasks ended (or never
    /// started); the bit clears with the last.
    pub(crate) fn unassign_long(&mut self, node: NodeId) {
        let Some(ns) = self.nodes.get_mut(&node) else { return };
        if ns.assigned_long == 0 {
            return;
        }
        ns.assigned_long -= 1;
        if ns.assigned_long == 0 {
            self.set_bit(node, false);
        }
    }

    /// The node's true state, as the authors' simulator checks it when a
    /// probe is sent: a long task assigned (in flight, queued or running).
    fn has_long(&self, node: NodeId) -> bool {
        self.nodes.get(&node).is_some_and(|n| n.assigned_long > 0 || n.running_long > 0 || n.queued_long > 0)
    }

    /// `authors_simulator=true` (§6.5): each first-round target accepts iff
    /// it has no long task; a rejected probe is redrawn on the freshest
    /// vector stored at any of the job's targets (step 3), and if rejected
    /// again goes to the short partition (step 6). Returns each probe's
    /// node and its extra delay (a redrawn probe arrives after 2d).
    pub(crate) fn sss_route(&mut self, ctx: &mut Ctx<'_>, hosts: &Pool, targets: Vec<NodeId>) -> Vec<(NodeId, u64)> {
        let fresh: Option<Bits> = targets
            .iter()
            .filter_map(|t| self.nodes.get(t).and_then(|n| n.sss.as_ref()))
            .max_by_key(|(version, _)| *version)
            .map(|(_, b)| b.clone());
        let d = self.cfg.delay_us;
        let mut rejected = 0u64;
        let mut out = Vec::with_capacity(targets.len());
        // the hosts the vector shows free, listed once per job
        let mut free: Option<Vec<NodeId>> = None;
        for t in targets {
            if !self.has_long(t) {
                out.push((t, 0));
                continue;
            }
            rejected += 1;
            let free = free.get_or_insert_with(|| match fresh.as_deref() {
                Some(bits) => hosts.iter().copied().filter(|n| !bit(bits, *n)).collect(),
                None => hosts.to_vec(),
            });
            let second = (!free.is_empty()).then(|| free[ctx.rng.below(free.len() as u64) as usize]);
            match second {
                Some(second) if !self.has_long(second) => out.push((second, d)),
                second => {
                    rejected += u64::from(second.is_some());
                    out.push((self.fallback(ctx.rng, hosts), d));
                }
            }
        }
        if rejected > 0 {
            ctx.metrics.count("sss_rejections", rejected);
            ctx.metrics.count("rescheduled_probes", rejected);
        }
        out
    }

    /// `authors_simulator=false`: a rejection reaches the job's scheduler
    /// with the rejecting node's vector; the scheduler keeps the freshest
    /// of the job's and redraws the probe on it (round 2), or sends it to
    /// the short partition (round 3, never rejected).
    pub(crate) fn rejected(&mut self, ctx: &mut Ctx<'_>, mut entry: Entry, bits: Option<(u64, Bits)>, at_us: u64) {
        let Some(st) = self.reqs.get_mut_at(entry.view, &entry.req) else { return };
        if let Some((version, b)) = bits {
            if st.fresh.as_ref().is_none_or(|(v, _)| *v < version) {
                st.fresh = Some((version, b));
            }
        }
        let fresh = st.fresh.as_ref().map(|(_, b)| b.clone());
        self.layout(ctx.cluster());
        let hosts = self.hosts(ctx.cluster(), entry.req, &self.all);
        if hosts.is_empty() {
            self.lose(&entry);
            self.top_up(ctx, entry.req, at_us);
            return;
        }
        ctx.metrics.count("rescheduled_probes", 1);
        let second =
            if entry.round == 1 { redraw(ctx.rng, &hosts, fresh.as_deref().map(|v| v.as_slice())) } else { None };
        let target = match second {
            Some(n) => {
                entry.round = 2;
                n
            }
            None => {
                entry.round = 3;
                self.fallback(ctx.rng, &hosts)
            }
        };
        self.send(ctx, target, entry, at_us);
    }

    /// Step 6: a node of the short partition that can host the probe, at
    /// random (any host when the partition has none).
    fn fallback(&self, rng: &mut Rng, hosts: &Pool) -> NodeId {
        // (every node hosts a plain ask: the partition as it is, no filter)
        let short: Pool = if Arc::ptr_eq(hosts, &self.all) {
            self.short.clone()
        } else {
            self.short.iter().copied().filter(|n| hosts.binary_search(n).is_ok()).collect()
        };
        let pool = if short.is_empty() { hosts } else { &short };
        pool[rng.below(pool.len() as u64) as usize]
    }
}

/// Step 5: a host, uniformly among those whose bit is clear in `bits` (all
/// of them without a vector); `None` if every bit is set. With replacement,
/// as the authors' simulator.
fn redraw(rng: &mut Rng, hosts: &[NodeId], bits: Option<&[u64]>) -> Option<NodeId> {
    let Some(bits) = bits else {
        return Some(hosts[rng.below(hosts.len() as u64) as usize]);
    };
    for _ in 0..REDRAW_TRIES {
        let n = hosts[rng.below(hosts.len() as u64) as usize];
        if !bit(bits, n) {
            return Some(n);
        }
    }
    let free: Vec<NodeId> = hosts.iter().copied().filter(|n| !bit(bits, *n)).collect();
    (!free.is_empty()).then(|| free[rng.below(free.len() as u64) as usize])
}
