//! The allocation map (tetrisched.md §4): the paper's proxy scheduler did
//! not start a plan's containers at once, it kept them per node and handed
//! each node its share when that node heartbeated. With
//! `bind_on_heartbeat` the policy does the same, so a plan of thousands of
//! containers costs each NODE_UPDATE only its own node's few instead of one
//! call all of them. The next periodic cycle replaces what is left.

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

#[derive(Debug, Default)]
pub(super) struct AllocationMap {
    by_node: BTreeMap<NodeId, Vec<Bound>>,
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

    /// What `node`'s bindings will take.
    pub fn held(&self, node: NodeId) -> Resources {
        self.held.get(&node).copied().unwrap_or(Resources::ZERO)
    }

    pub fn is_empty(&self) -> bool {
        self.by_node.is_empty()
    }

    /// Containers bound and not yet allocated.
    pub fn containers(&self) -> u64 {
        self.by_node.values().flatten().map(|b| u64::from(b.n)).sum()
    }

    /// What `node` is to start now, in the plan's order.
    pub fn take(&mut self, node: NodeId) -> Vec<Bound> {
        self.held.remove(&node);
        self.by_node.remove(&node).unwrap_or_default()
    }

    /// Everything, node by node (an event-driven pass offers every node at once).
    pub fn take_all(&mut self) -> Vec<(NodeId, Vec<Bound>)> {
        self.held.clear();
        std::mem::take(&mut self.by_node).into_iter().collect()
    }

    /// Drops what is left; returns how many containers that was.
    pub fn clear(&mut self) -> u64 {
        let n = self.containers();
        self.by_node.clear();
        self.held.clear();
        n
    }
}
