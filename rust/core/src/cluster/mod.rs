//! The mirror of the cluster's state (ARCHITECTURE.md principle 3). YARN's
//! own bookkeeping stays authoritative; this mirror is built from the
//! driver's deltas and from the core's own (assumed) decisions, which a
//! driver's rejection rolls back. Every mutation validates its input and
//! keeps the invariant *no node is over-committed*.
//!
//! This file holds the [`Cluster`] itself (its storage and read-only view);
//! each kind of change has a file of its own:
//!
//! - `nodes`: nodes join, leave and change size; which have room;
//! - `apps`: apps come and go, and their asks;
//! - `placement`: the core's own allocations, assumed until
//!   the driver confirms them, and their rollback;
//! - `containers`: a container's life after placement:
//!   confirm, progress, complete, preempt (kill or suspend), resume, and the
//!   rollbacks of those the driver refused;
//! - `reservations`: nodes held for a large ask;
//! - `gangs`: containers placed all or nothing, and their undoing;
//! - `recover`: containers the host has and the mirror lacks;
//! - `invariants`: the books' self-check for tests;
//! - `slab`, `node_bits`, `container_set`: the dense storage by id, the
//!   bitset of nodes with room, a node's containers.

use crate::error::CoreError;
use crate::ids::{AppId, ContainerId, NodeId};
use crate::resources::Resources;

mod apps;
mod ask_book;
mod container_index;
mod container_set;
mod containers;
mod gangs;
mod invariants;
mod node_bits;
mod nodes;
mod placement;
mod recover;
mod reservations;
mod slab;

pub use apps::{App, AskState};
pub use ask_book::AskBook;
pub use container_set::ContainerSet;
pub use containers::{Container, ContainerState};
pub use nodes::{Node, RackId};
pub use placement::Refusal;
pub use recover::Recovered;

use container_index::ContainerIndex;
use node_bits::NodeBits;
use slab::IdSlab;

/// The most containers one node holds, whatever its size: far above what a
/// NodeManager runs, and a bound on what one scheduling pass can allocate
/// (a node that declares 2^64 MB and an ask for 2^32 tiny containers would
/// otherwise take every byte the RM has in one call).
pub const MAX_CONTAINERS_PER_NODE: usize = 1 << 16;

/// The cluster as the core sees it. Nodes and apps live in dense slabs
/// indexed by their ids (drivers number them from a counter); a removed app
/// costs one empty box slot. Containers live in a slab whose slots are
/// reused, found through an index by id (`container_index`: a window of pages
/// over the id space, iterated in id order).
#[derive(Clone, Debug, Default)]
pub struct Cluster {
    nodes: IdSlab<Node>,
    node_count: usize,
    apps: IdSlab<Box<App>>,
    app_count: usize,
    containers: Vec<Option<Container>>,
    free_slots: Vec<u32>,
    container_index: ContainerIndex,
    racks: Vec<String>,
    total: Resources,
    allocated: Resources,
    pending_containers: u64,
    /// Nodes with any memory and vcores left.
    nodes_with_space: NodeBits,
    next_container: u64,
    max_allocation: Option<Resources>,
    /// The containers the node heartbeat being handled may still place;
    /// `None` outside a heartbeat, or when the host sets no limit.
    assignment_budget: Option<AssignmentBudget>,
    /// Gangs whose members' placements the host has not all settled.
    gangs: gangs::Gangs,
}

/// A limit on the containers one node heartbeat places, and what is left
/// of it (see [`Cluster::limit_assignments`]).
#[derive(Clone, Copy, Debug)]
struct AssignmentBudget {
    limit: u32,
    left: u32,
}

fn bad_resource(what: String, why: &str) -> CoreError {
    CoreError::BadResource { what, why: why.to_string() }
}

impl Cluster {
    pub fn new(max_allocation: Option<Resources>) -> Cluster {
        Cluster { max_allocation, next_container: 1, ..Cluster::default() }
    }

    // ---- read-only view ----------------------------------------------------

    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.0)
    }
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.values()
    }
    pub fn node_count(&self) -> usize {
        self.node_count
    }
    pub fn app(&self, id: AppId) -> Option<&App> {
        self.apps.get(id.0).map(|a| &**a)
    }
    pub fn apps(&self) -> impl Iterator<Item = &App> {
        self.apps.values().map(|a| &**a)
    }
    pub fn container(&self, id: ContainerId) -> Option<&Container> {
        let slot = self.container_index.get(id)?;
        self.containers[slot as usize].as_ref()
    }
    pub fn containers(&self) -> impl Iterator<Item = &Container> {
        self.container_index.iter().filter_map(|(_, s)| self.containers[s as usize].as_ref())
    }

    fn node_mut(&mut self, id: NodeId) -> Option<&mut Node> {
        self.nodes.get_mut(id.0)
    }
    fn app_mut(&mut self, id: AppId) -> Option<&mut App> {
        self.apps.get_mut(id.0).map(|a| &mut **a)
    }
    fn container_mut(&mut self, id: ContainerId) -> Option<&mut Container> {
        let slot = self.container_index.get(id)?;
        self.containers[slot as usize].as_mut()
    }
    /// Takes a container out of the slab and the index.
    fn take_container(&mut self, id: ContainerId) -> Option<Container> {
        let slot = self.container_index.remove(id)?;
        self.free_slots.push(slot);
        self.containers[slot as usize].take()
    }
    pub fn rack_name(&self, rack: RackId) -> &str {
        self.racks.get(rack as usize).map_or("", |s| s.as_str())
    }
    /// Total capacity of all nodes.
    pub fn total(&self) -> Resources {
        self.total
    }
    /// What all containers hold.
    pub fn allocated(&self) -> Resources {
        self.allocated
    }
    /// Containers wanted by all apps and not yet allocated.
    pub fn pending_containers(&self) -> u64 {
        self.pending_containers
    }
    /// How many more containers the node heartbeat being handled may place
    /// (YARN's per-node-heartbeat maximum-container-assignments, set by the
    /// host); `None`: no limit. At zero, [`Cluster::can_allocate`] refuses
    /// every placement with [`Refusal::AssignmentLimit`], so a policy that
    /// asks before placing stops without deciding anything it must drop.
    pub fn assignments_left(&self) -> Option<u32> {
        self.assignment_budget.map(|b| b.left)
    }

    /// Allows at most `limit` placements from now on (`None`: no limit),
    /// until called again: the engine sets it around each node heartbeat.
    pub(crate) fn limit_assignments(&mut self, limit: Option<u32>) {
        self.assignment_budget = limit.map(|limit| AssignmentBudget { limit, left: limit });
    }

    /// Nodes with some memory and vcores free, in id order.
    pub fn nodes_with_space(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes_with_space.iter()
    }
    /// The first node with space at or after `from`, in id order: a cursor
    /// over [`Cluster::nodes_with_space`] for a policy that allocates as it
    /// walks (a node only loses space by being allocated on, so the walk
    /// sees what a snapshot taken at its start would, without building one).
    pub fn next_node_with_space(&self, from: NodeId) -> Option<NodeId> {
        self.nodes_with_space.next_from(from)
    }

    /// Puts a container in the slab and the index.
    fn insert_container(&mut self, c: Container) {
        let (id, node) = (c.id, c.node);
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.containers[s as usize] = Some(c);
                s
            }
            None => {
                self.containers.push(Some(c));
                (self.containers.len() - 1) as u32
            }
        };
        self.container_index.insert(id, slot);
        self.refresh_space(node);
    }
}
