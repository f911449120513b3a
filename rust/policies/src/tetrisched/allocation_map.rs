//! The allocation map (tetrisched.md §4): the paper's proxy scheduler did
//! not start a plan's containers at once, it kept them per node and handed
//! each node its share when that node heartbeated. With
//! `bind_on_heartbeat` the policy does the same, so a plan of thousands of
//! containers costs each NODE_UPDATE only its own node's few instead of one
//! call all of them. The next periodic cycle replaces what is left.
//!
//! A gang (nCk, all or nothing) is bound to all of its nodes as one entry:
//! the first of them to heartbeat starts the whole gang, on every node, as
//! one atomic group ([`sojourn_core::Ctx::allocate_gang`]); handing each
//! node its share at its own heartbeat would run the gang in part.

use sojourn_core::{AppId, NodeId, Priority, Resources};
use std::collections::BTreeMap;

/// `n` containers of `app`'s ask at `priority`, bound to a node by a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Bound {
    pub app: AppId,
    pub priority: Priority,
    pub n: u32,
    /// The run time the plan gave them (σ × the estimate off their preferred nodes).
    pub est_ms: u64,
    pub width: u32,
}

/// A gang bound by a plan: `n` containers on each of its `(node, n)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct BoundGang {
    pub app: AppId,
    pub priority: Priority,
    pub picks: Vec<(NodeId, u32)>,
    pub est_ms: u64,
    pub width: u32,
    /// One container's size.
    pub capability: Resources,
}

#[derive(Debug, Default)]
pub(super) struct AllocationMap {
    by_node: BTreeMap<NodeId, Vec<Bound>>,
    gangs: Vec<BoundGang>,
    /// What each node's bindings will take: binding the next leaf sees the
    /// node's free resources less these, so two gangs of one plan are never
    /// bound to the same room.
    held: BTreeMap<NodeId, Resources>,
}

impl AllocationMap {
    /// Binds `b` to `node`, its containers `capability` each.
    pub fn add(&mut self, node: NodeId, b: Bound, capability: Resources) {
        self.by_node.entry(node).or_default().push(b);
        let h = self.held.entry(node).or_insert(Resources::ZERO);
        *h += capability.times(u64::from(b.n));
    }

    /// Binds a gang to all of its nodes at once.
    pub fn add_gang(&mut self, g: BoundGang) {
        for (node, n) in &g.picks {
            let h = self.held.entry(*node).or_insert(Resources::ZERO);
            *h += g.capability.times(u64::from(*n));
        }
        self.gangs.push(g);
    }

    /// Takes the gangs bound to `node` (with their other nodes' shares).
    fn take_gangs(&mut self, node: NodeId) -> Vec<BoundGang> {
        if self.gangs.is_empty() {
            return Vec::new();
        }
        let (mine, rest): (Vec<BoundGang>, Vec<BoundGang>) =
            std::mem::take(&mut self.gangs).into_iter().partition(|g| g.picks.iter().any(|(n, _)| *n == node));
        self.gangs = rest;
        for g in &mine {
            for (n, k) in &g.picks {
                if let Some(h) = self.held.get_mut(n) {
                    *h = h.saturating_sub(&g.capability.times(u64::from(*k)));
                }
            }
        }
        mine
    }

    /// What `node`'s bindings will take.
    pub fn held(&self, node: NodeId) -> Resources {
        self.held.get(&node).copied().unwrap_or(Resources::ZERO)
    }

    pub fn is_empty(&self) -> bool {
        self.by_node.is_empty() && self.gangs.is_empty()
    }

    /// Containers bound and not yet allocated.
    pub fn containers(&self) -> u64 {
        let gangs: u64 = self.gangs.iter().flat_map(|g| &g.picks).map(|(_, n)| u64::from(*n)).sum();
        gangs + self.by_node.values().flatten().map(|b| u64::from(b.n)).sum::<u64>()
    }

    /// What `node` is to start now, in the plan's order, and the gangs
    /// bound to it, each to start whole.
    pub fn take(&mut self, node: NodeId) -> (Vec<Bound>, Vec<BoundGang>) {
        let gangs = self.take_gangs(node);
        // All that was held on `node` is taken: its own bindings, and its
        // share of the gangs just taken.
        self.held.remove(&node);
        (self.by_node.remove(&node).unwrap_or_default(), gangs)
    }

    /// Everything, node by node, and every gang (an event-driven pass
    /// offers every node at once).
    pub fn take_all(&mut self) -> (Vec<(NodeId, Vec<Bound>)>, Vec<BoundGang>) {
        self.held.clear();
        (std::mem::take(&mut self.by_node).into_iter().collect(), std::mem::take(&mut self.gangs))
    }

    /// Drops what is left; returns how many containers that was.
    pub fn clear(&mut self) -> u64 {
        let n = self.containers();
        self.by_node.clear();
        self.gangs.clear();
        self.held.clear();
        n
    }
}
