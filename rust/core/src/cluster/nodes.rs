//! Nodes in the mirror: what a node is and holds, and the driver's deltas
//! that add, remove and resize one. A node's containers are kept in id
//! order, and the set of nodes with room is refreshed on every change of
//! what a node holds.

use super::{bad_resource, Cluster, Container, ContainerSet, MAX_CONTAINERS_PER_NODE};
use crate::error::{CoreError, Result};
use crate::ids::{AppId, ContainerId, NodeId, Priority};
use crate::protocol::{NodeSpec, Outcome};
use crate::resources::Resources;
use crate::time::Time;

/// Index of a rack among the cluster's racks ([`Cluster::rack_name`] gives its name).
pub type RackId = u32;

#[derive(Clone, Debug)]
pub struct Node {
    pub id: NodeId,
    pub name: String,
    pub rack: RackId,
    pub labels: Vec<String>,
    pub capacity: Resources,
    /// What the node's containers hold: running ones all their resources,
    /// suspended ones [`Resources::held_while_suspended`].
    pub allocated: Resources,
    pub containers: ContainerSet,
    /// A reservation for a large ask: (app, priority, resources).
    pub reservation: Option<(AppId, Priority, Resources)>,
    /// Counts the changes of what the node holds or can hold (a container
    /// placed, gone, suspended or resumed; a new capacity): a policy may keep
    /// what it derived from the node while this stays the same.
    pub changes: u64,
}

impl Node {
    pub fn available(&self) -> Resources {
        self.capacity.saturating_sub(&self.allocated)
    }
    /// Whether the node serves asks with this label expression.
    pub fn has_label(&self, label: Option<&str>) -> bool {
        match label {
            None | Some("") => self.labels.is_empty(),
            Some(l) => self.labels.iter().any(|x| x == l),
        }
    }
}

impl Cluster {
    pub fn add_node(&mut self, spec: NodeSpec) -> Result<()> {
        if self.node(spec.node).is_some() {
            return Err(CoreError::DuplicateNode(spec.node));
        }
        if spec.capacity.is_zero() {
            return Err(bad_resource(format!("{} ({})", spec.node, spec.name), "capacity is zero"));
        }
        let rack = match self.racks.iter().position(|r| *r == spec.rack) {
            Some(i) => i as RackId,
            None => {
                self.racks.push(spec.rack.clone());
                (self.racks.len() - 1) as RackId
            }
        };
        self.total += spec.capacity;
        self.node_count += 1;
        self.nodes.insert(
            spec.node.0,
            Node {
                id: spec.node,
                name: spec.name,
                rack,
                labels: spec.labels,
                capacity: spec.capacity,
                allocated: Resources::ZERO,
                containers: ContainerSet::default(),
                reservation: None,
                changes: 0,
            },
        );
        self.refresh_space(spec.node);
        Ok(())
    }

    /// Removes a node and every container on it (they are lost). Returns
    /// the lost containers.
    pub fn remove_node(&mut self, node: NodeId, now: Time) -> Result<Vec<Container>> {
        let ids: Vec<ContainerId> =
            self.node(node).ok_or(CoreError::UnknownNode(node))?.containers.iter().copied().collect();
        let lost = self.complete_all(ids, Outcome::Lost, now)?;
        if let Some(n) = self.nodes.remove(node.0) {
            self.node_count -= 1;
            self.total = self.total.saturating_sub(&n.capacity);
        }
        self.nodes_with_space.set(node, false);
        Ok(lost)
    }

    pub fn update_node_capacity(&mut self, node: NodeId, capacity: Resources) -> Result<()> {
        let n = self.nodes.get_mut(node.0).ok_or(CoreError::UnknownNode(node))?;
        self.total = self.total.saturating_sub(&n.capacity) + capacity;
        n.capacity = capacity;
        self.refresh_space(node);
        Ok(())
    }

    /// Marks `node` as having room or not (some memory and vcores free and
    /// fewer than [`MAX_CONTAINERS_PER_NODE`] containers).
    pub(super) fn refresh_space(&mut self, node: NodeId) {
        if let Some(n) = self.nodes.get_mut(node.0) {
            n.changes = n.changes.wrapping_add(1);
        }
        let has = self.node(node).is_some_and(|n| {
            let a = n.available();
            a.memory_mb > 0 && a.vcores > 0 && n.containers.len() < MAX_CONTAINERS_PER_NODE
        });
        self.nodes_with_space.set(node, has);
    }
}
