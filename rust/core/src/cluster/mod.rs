//! The mirror of the cluster's state (ARCHITECTURE.md principle 3). YARN's
//! own bookkeeping stays authoritative; this mirror is built from the
//! driver's deltas and from the core's own (assumed) decisions, which a
//! driver's rejection rolls back. Every mutation validates its input and
//! keeps the invariant *no node is over-committed*.

use crate::error::{CoreError, Result};
use crate::ids::{AppId, ContainerId, NodeId, Priority};
use crate::protocol::{AppSpec, Ask, Locality, NodeSpec, Outcome, Phase, PreemptMode};
use crate::resources::Resources;
use crate::time::Time;
use std::collections::{BTreeMap, BTreeSet};

mod recover;
mod slab;
pub use recover::Recovered;
use slab::{IdSlab, DENSE_IDS};

/// Why an allocation cannot be made (see [`Cluster::can_allocate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    UnknownApp,
    UnknownNode,
    NoAsk,
    DoesNotFit,
    Reserved,
    Partition,
    Locality,
}

/// The most containers one node holds, whatever its size: far above what a
/// NodeManager runs, and a bound on what one scheduling pass can allocate
/// (a node that declares 2^64 MB and an ask for 2^32 tiny containers would
/// otherwise take every byte the RM has in one call).
pub const MAX_CONTAINERS_PER_NODE: usize = 1 << 16;

/// Index of a rack in [`Cluster::racks`].
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

/// The containers on one node, in id order: a sorted vector, as a node holds
/// few containers and new ids are the largest (insertion is a push).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContainerSet(Vec<ContainerId>);

impl ContainerSet {
    pub fn iter(&self) -> std::slice::Iter<'_, ContainerId> {
        self.0.iter()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn contains(&self, id: &ContainerId) -> bool {
        self.0.binary_search(id).is_ok()
    }
    fn insert(&mut self, id: ContainerId) {
        match self.0.last() {
            Some(last) if *last >= id => {
                if let Err(i) = self.0.binary_search(&id) {
                    self.0.insert(i, id);
                }
            }
            _ => self.0.push(id),
        }
    }
    fn remove(&mut self, id: &ContainerId) {
        if let Ok(i) = self.0.binary_search(id) {
            self.0.remove(i);
        }
    }
}

impl<'a> IntoIterator for &'a ContainerSet {
    type Item = &'a ContainerId;
    type IntoIter = std::slice::Iter<'a, ContainerId>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Node ids in id order, as a bitset (a node gains and loses free space on
/// nearly every allocation and completion).
#[derive(Clone, Debug, Default)]
struct NodeBits {
    words: Vec<u64>,
    count: usize,
    /// Ids past the dense range (see `slab`), kept apart.
    sparse: BTreeSet<NodeId>,
}

impl NodeBits {
    fn set(&mut self, id: NodeId, on: bool) {
        if id.0 >= DENSE_IDS {
            if on {
                self.sparse.insert(id);
            } else {
                self.sparse.remove(&id);
            }
            return;
        }
        let (w, b) = (id.0 as usize / 64, id.0 % 64);
        if w >= self.words.len() {
            if !on {
                return;
            }
            self.words.resize(w + 1, 0);
        }
        let was = self.words[w] >> b & 1 == 1;
        if was != on {
            self.words[w] ^= 1 << b;
            if on {
                self.count += 1;
            } else {
                self.count -= 1;
            }
        }
    }
    fn iter(&self) -> impl Iterator<Item = NodeId> + '_ {
        let mut left = self.count;
        self.words
            .iter()
            .enumerate()
            .take_while(move |(_, w)| {
                let go = left > 0;
                left = left.saturating_sub(w.count_ones() as usize);
                go
            })
            .flat_map(|(i, &w)| {
                let mut w = w;
                std::iter::from_fn(move || {
                    if w == 0 {
                        return None;
                    }
                    let b = w.trailing_zeros();
                    w &= w - 1;
                    Some(NodeId(i as u32 * 64 + b))
                })
            })
            .chain(self.sparse.iter().copied())
    }
}

/// One ask of an app with what is still outstanding of it.
#[derive(Clone, Debug)]
pub struct AskState {
    pub ask: Ask,
    /// Containers still wanted (the `ANY` count).
    pub outstanding: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainerState {
    Running,
    Suspended,
}

#[derive(Clone, Debug)]
pub struct Container {
    pub id: ContainerId,
    pub app: AppId,
    pub node: NodeId,
    pub priority: Priority,
    pub phase: Phase,
    pub resources: Resources,
    pub state: ContainerState,
    /// When it was allocated.
    pub start: Time,
    /// Service attained in earlier running spells (ms).
    pub attained_before_ms: u64,
    /// Start of the current running spell, if running.
    pub running_since: Option<Time>,
    /// The driver confirmed the allocation.
    pub confirmed: bool,
    /// A kill preemption was decided and awaits the driver's completion.
    pub preempting: bool,
    /// Latest progress the driver reported, in [0, 1].
    pub progress: Option<f64>,
    /// The driver refused to suspend it and said it never will
    /// ([`crate::RefusalKind::Never`], e.g. YARN without a suspend agent):
    /// it is not offered as a suspension victim again.
    pub suspend_refused: bool,
    /// Locality entries this allocation consumed, restored on rollback.
    consumed: Vec<Locality>,
}

impl Container {
    /// Attained service: the time it has spent running (Kairos, LAS).
    pub fn attained_ms(&self, now: Time) -> u64 {
        self.attained_before_ms + self.running_since.map_or(0, |s| now.since(s))
    }
    /// What it holds on its node in its current state.
    pub fn held(&self) -> Resources {
        match self.state {
            ContainerState::Running => self.resources,
            ContainerState::Suspended => self.resources.held_while_suspended(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct App {
    pub spec: AppSpec,
    pub submit: Time,
    pub asks: BTreeMap<Priority, AskState>,
    pub containers: BTreeSet<ContainerId>,
    /// Resources held by its containers.
    pub allocated: Resources,
    /// Sum over outstanding asks of count × capability.
    pub pending: Resources,
    pub pending_containers: u64,
    /// Service of its completed containers (ms).
    pub attained_done_ms: u64,
    /// Containers that completed, by phase.
    pub completed: BTreeMap<Phase, u32>,
    /// Nodes reserved for this app.
    pub reserved_nodes: BTreeSet<NodeId>,
}

impl App {
    pub fn id(&self) -> AppId {
        self.spec.app
    }
    pub fn queue(&self) -> &str {
        &self.spec.queue
    }
    pub fn user(&self) -> &str {
        &self.spec.user
    }
    /// The outstanding asks, most important (lowest priority value) first.
    pub fn outstanding_asks(&self) -> impl Iterator<Item = &AskState> {
        self.asks.values().filter(|a| a.outstanding > 0)
    }
}

/// The cluster as the core sees it. Nodes and apps live in dense slabs
/// indexed by their ids (drivers number them from a counter); a removed app
/// costs one empty box slot. Containers live in a slab whose slots are
/// reused, found through an ordered index by id.
#[derive(Clone, Debug, Default)]
pub struct Cluster {
    nodes: IdSlab<Node>,
    node_count: usize,
    apps: IdSlab<Box<App>>,
    app_count: usize,
    containers: Vec<Option<Container>>,
    free_slots: Vec<u32>,
    container_index: BTreeMap<ContainerId, u32>,
    racks: Vec<String>,
    total: Resources,
    allocated: Resources,
    pending_containers: u64,
    /// Nodes with any memory and vcores left.
    nodes_with_space: NodeBits,
    next_container: u64,
    max_allocation: Option<Resources>,
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
        let slot = *self.container_index.get(&id)?;
        self.containers[slot as usize].as_ref()
    }
    pub fn containers(&self) -> impl Iterator<Item = &Container> {
        self.container_index.values().filter_map(|s| self.containers[*s as usize].as_ref())
    }

    fn node_mut(&mut self, id: NodeId) -> Option<&mut Node> {
        self.nodes.get_mut(id.0)
    }
    fn app_mut(&mut self, id: AppId) -> Option<&mut App> {
        self.apps.get_mut(id.0).map(|a| &mut **a)
    }
    fn container_mut(&mut self, id: ContainerId) -> Option<&mut Container> {
        let slot = *self.container_index.get(&id)?;
        self.containers[slot as usize].as_mut()
    }
    /// Takes a container out of the slab and the index.
    fn take_container(&mut self, id: ContainerId) -> Option<Container> {
        let slot = self.container_index.remove(&id)?;
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
    /// Nodes with some memory and vcores free, in id order.
    pub fn nodes_with_space(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes_with_space.iter()
    }

    /// Whether `app`'s ask at `priority` could be placed on `node` right now
    /// (outstanding, fits, label and strict locality respected). Cheap: the
    /// refusal is a plain value, formatted only when it becomes an error.
    pub fn can_allocate(&self, app: AppId, priority: Priority, node: NodeId) -> std::result::Result<(), Refusal> {
        let a = self.app(app).ok_or(Refusal::UnknownApp)?;
        let n = self.node(node).ok_or(Refusal::UnknownNode)?;
        let ask = a.asks.get(&priority).filter(|s| s.outstanding > 0).ok_or(Refusal::NoAsk)?;
        if !ask.ask.capability.fits_in(&n.available()) || n.containers.len() >= MAX_CONTAINERS_PER_NODE {
            return Err(Refusal::DoesNotFit);
        }
        if let Some((holder, _, _)) = n.reservation {
            if holder != app {
                return Err(Refusal::Reserved);
            }
        }
        if !n.has_label(ask.ask.label.as_deref()) {
            return Err(Refusal::Partition);
        }
        if !ask.ask.relax_locality && !ask.ask.locality.is_empty() && self.locality_level(&ask.ask, n) == 2 {
            return Err(Refusal::Locality);
        }
        Ok(())
    }

    /// The error a refused allocation reports, naming its inputs.
    pub fn refusal_error(&self, r: Refusal, app: AppId, priority: Priority, node: NodeId) -> CoreError {
        match r {
            Refusal::UnknownApp => CoreError::UnknownApp(app),
            Refusal::UnknownNode => CoreError::UnknownNode(node),
            Refusal::NoAsk => CoreError::InvalidDecision(format!("{app} has no outstanding ask at {priority}")),
            Refusal::DoesNotFit => CoreError::InvalidDecision(format!(
                "the ask of {app} at {priority} does not fit on {node} (available {})",
                self.node(node).map(|n| n.available()).unwrap_or_default()
            )),
            Refusal::Reserved => CoreError::InvalidDecision(format!("{node} is reserved for another application")),
            Refusal::Partition => CoreError::InvalidDecision(format!("{node} is not in the partition {app} asks for")),
            Refusal::Locality => CoreError::InvalidDecision(format!("{app} at {priority} is strict about locality")),
        }
    }

    /// 0 node-local, 1 rack-local, 2 off-switch, for an ask with preferences;
    /// an ask without preferences is node-local anywhere.
    pub fn locality_level(&self, ask: &Ask, node: &Node) -> u8 {
        if ask.locality.is_empty() {
            return 0;
        }
        let mut level = 2;
        for l in &ask.locality {
            match l {
                Locality::Node(n, c) if *c > 0 && *n == node.id => return 0,
                Locality::Rack(r, c) if *c > 0 && self.rack_name(node.rack) == r => level = 1,
                _ => {}
            }
        }
        level
    }

    // ---- deltas from the driver ---------------------------------------------

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
        let mut lost = Vec::with_capacity(ids.len());
        for c in ids {
            lost.push(self.complete(c, Outcome::Lost, now)?);
        }
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

    pub fn add_app(&mut self, spec: AppSpec, now: Time) -> Result<()> {
        if self.app(spec.app).is_some() {
            return Err(CoreError::DuplicateApp(spec.app));
        }
        if spec.queue.trim().is_empty() {
            return Err(CoreError::BadEvent(format!("{} has an empty queue name", spec.app)));
        }
        self.app_count += 1;
        self.apps.insert(
            spec.app.0,
            Box::new(App {
                spec,
                submit: now,
                asks: BTreeMap::new(),
                containers: BTreeSet::new(),
                allocated: Resources::ZERO,
                pending: Resources::ZERO,
                pending_containers: 0,
                attained_done_ms: 0,
                completed: BTreeMap::new(),
                reserved_nodes: BTreeSet::new(),
            }),
        );
        Ok(())
    }

    /// Removes an app; containers it still has are removed as killed.
    pub fn remove_app(&mut self, app: AppId, now: Time) -> Result<Vec<Container>> {
        let ids: Vec<ContainerId> =
            self.app(app).ok_or(CoreError::UnknownApp(app))?.containers.iter().copied().collect();
        let mut killed = Vec::with_capacity(ids.len());
        for c in ids {
            killed.push(self.complete(c, Outcome::Killed, now)?);
        }
        let a = self.apps.remove(app.0).ok_or(CoreError::UnknownApp(app))?;
        self.app_count -= 1;
        self.pending_containers -= a.pending_containers;
        for node in &a.reserved_nodes {
            if let Some(n) = self.node_mut(*node) {
                if matches!(n.reservation, Some((holder, _, _)) if holder == app) {
                    n.reservation = None;
                }
            }
        }
        Ok(killed)
    }

    /// Replaces the app's asks at the priorities given.
    pub fn update_asks(&mut self, app: AppId, asks: Vec<Ask>) -> Result<()> {
        let max = self.max_allocation;
        let a = self.apps.get_mut(app.0).map(|a| &mut **a).ok_or(CoreError::UnknownApp(app))?;
        for ask in &asks {
            let what = || format!("ask of {app} at {}", ask.priority);
            if ask.count > 0 && ask.capability.memory_mb == 0 && ask.capability.vcores == 0 {
                return Err(bad_resource(what(), "capability is zero"));
            }
            if let Some(max) = max {
                if !ask.capability.fits_in(&max) {
                    return Err(bad_resource(
                        what(),
                        &format!("{} exceeds the maximum allocation {max}", ask.capability),
                    ));
                }
            }
        }
        for ask in asks {
            let prio = ask.priority;
            if let Some(old) = a.asks.remove(&prio) {
                a.pending = a.pending.saturating_sub(&old.ask.capability.times(old.outstanding as u64));
                a.pending_containers -= old.outstanding as u64;
                self.pending_containers -= old.outstanding as u64;
            }
            if ask.count > 0 {
                a.pending += ask.capability.times(ask.count as u64);
                a.pending_containers += ask.count as u64;
                self.pending_containers += ask.count as u64;
                a.asks.insert(prio, AskState { outstanding: ask.count, ask });
            }
        }
        Ok(())
    }

    // ---- the core's own decisions (assumed until confirmed) ---------------

    /// Places one container of `app`'s ask at `priority` on `node`.
    pub fn allocate(
        &mut self,
        app: AppId,
        priority: Priority,
        node: NodeId,
        now: Time,
    ) -> Result<(ContainerId, Resources)> {
        self.can_allocate(app, priority, node).map_err(|r| self.refusal_error(r, app, priority, node))?;
        let n = self.nodes.get_mut(node.0).ok_or(CoreError::UnknownNode(node))?;
        let a = self.apps.get_mut(app.0).map(|a| &mut **a).ok_or(CoreError::UnknownApp(app))?;
        let st = a.asks.get_mut(&priority).ok_or(CoreError::UnknownApp(app))?;
        let resources = st.ask.capability;
        let phase = st.ask.phase;
        st.outstanding -= 1;
        // Consume one node-local entry, else one rack-local entry (YARN's
        // AppSchedulingInfo decrements the entry the allocation served).
        let mut consumed = Vec::new();
        if !st.ask.locality.is_empty() {
            let rack_name = self.racks.get(n.rack as usize).map_or("", |s| s.as_str());
            let mut hit =
                st.ask.locality.iter().position(|l| matches!(l, Locality::Node(n, c) if *n == node && *c > 0));
            if hit.is_none() {
                hit =
                    st.ask.locality.iter().position(|l| matches!(l, Locality::Rack(r, c) if *r == rack_name && *c > 0));
            }
            if let Some(i) = hit {
                match &mut st.ask.locality[i] {
                    Locality::Node(n, c) => {
                        *c -= 1;
                        consumed.push(Locality::Node(*n, 1));
                    }
                    Locality::Rack(r, c) => {
                        *c -= 1;
                        consumed.push(Locality::Rack(r.clone(), 1));
                    }
                }
            }
        }
        if st.outstanding == 0 {
            a.asks.remove(&priority);
        }
        a.pending = a.pending.saturating_sub(&resources);
        a.pending_containers -= 1;
        self.pending_containers -= 1;
        let id = ContainerId(self.next_container);
        self.next_container += 1;
        a.containers.insert(id);
        a.allocated += resources;
        n.allocated += resources;
        n.containers.insert(id);
        if matches!(n.reservation, Some((holder, p, _)) if holder == app && p == priority) {
            n.reservation = None;
            a.reserved_nodes.remove(&node);
        }
        self.allocated += resources;
        let c = Container {
            id,
            app,
            node,
            priority,
            phase,
            resources,
            state: ContainerState::Running,
            start: now,
            attained_before_ms: 0,
            running_since: Some(now),
            confirmed: false,
            preempting: false,
            progress: None,
            suspend_refused: false,
            consumed,
        };
        self.insert_container(c);
        Ok((id, resources))
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

    /// Undoes an allocation the driver rejected: the container disappears and
    /// its ask is wanted again. Idempotent.
    pub fn rollback_allocation(&mut self, id: ContainerId) {
        let Some(c) = self.drop_container(id) else { return };
        let (app, priority, consumed, resources, phase) = (c.app, c.priority, c.consumed, c.resources, c.phase);
        if let Some(a) = self.app_mut(app) {
            let st = a
                .asks
                .entry(priority)
                .or_insert_with(|| AskState { ask: Ask::new(priority, resources, 0, phase), outstanding: 0 });
            st.ask.count = st.ask.count.max(st.outstanding + 1);
            st.outstanding += 1;
            for l in consumed {
                match l {
                    Locality::Node(n, k) => {
                        match st.ask.locality.iter_mut().find(|x| matches!(x, Locality::Node(m, _) if *m == n)) {
                            Some(Locality::Node(_, c)) => *c += k,
                            _ => st.ask.locality.push(Locality::Node(n, k)),
                        }
                    }
                    Locality::Rack(r, k) => {
                        match st.ask.locality.iter_mut().find(|x| matches!(x, Locality::Rack(q, _) if *q == r)) {
                            Some(Locality::Rack(_, c)) => *c += k,
                            _ => st.ask.locality.push(Locality::Rack(r, k)),
                        }
                    }
                }
            }
            a.pending += resources;
            a.pending_containers += 1;
            self.pending_containers += 1;
        }
    }

    pub fn confirm(&mut self, id: ContainerId) -> Result<()> {
        self.container_mut(id).ok_or(CoreError::UnknownContainer(id))?.confirmed = true;
        Ok(())
    }

    pub fn set_progress(&mut self, id: ContainerId, progress: f64) -> Result<()> {
        if !(0.0..=1.0).contains(&progress) {
            return Err(CoreError::BadEvent(format!("progress {progress} of {id} is outside [0, 1]")));
        }
        self.container_mut(id).ok_or(CoreError::UnknownContainer(id))?.progress = Some(progress);
        Ok(())
    }

    /// A container ended; its resources return to its node.
    pub fn complete(&mut self, id: ContainerId, _outcome: Outcome, now: Time) -> Result<Container> {
        let c = self.drop_container(id).ok_or(CoreError::UnknownContainer(id))?;
        let attained = c.attained_ms(now);
        if let Some(a) = self.app_mut(c.app) {
            a.attained_done_ms += attained;
            *a.completed.entry(c.phase).or_insert(0) += 1;
        }
        Ok(c)
    }

    fn drop_container(&mut self, id: ContainerId) -> Option<Container> {
        let c = self.take_container(id)?;
        let held = c.held();
        if let Some(n) = self.node_mut(c.node) {
            n.allocated = n.allocated.saturating_sub(&held);
            n.containers.remove(&id);
        }
        if let Some(a) = self.app_mut(c.app) {
            a.allocated = a.allocated.saturating_sub(&held);
            a.containers.remove(&id);
        }
        self.allocated = self.allocated.saturating_sub(&held);
        self.refresh_space(c.node);
        Some(c)
    }

    /// Marks a container for preemption. Suspension takes effect at once
    /// (its vcores return to the node); a kill awaits the driver's completion.
    pub fn preempt(&mut self, id: ContainerId, mode: PreemptMode, now: Time) -> Result<()> {
        let c = self.container_mut(id).ok_or(CoreError::UnknownContainer(id))?;
        if c.preempting {
            return Err(CoreError::InvalidDecision(format!("{id} is already being preempted")));
        }
        match mode {
            PreemptMode::Kill => c.preempting = true,
            PreemptMode::Suspend => {
                if c.state != ContainerState::Running {
                    return Err(CoreError::InvalidDecision(format!("{id} is not running")));
                }
                if c.suspend_refused {
                    return Err(CoreError::InvalidDecision(format!("the driver cannot suspend {id}")));
                }
                let before = c.held();
                c.attained_before_ms = c.attained_ms(now);
                c.running_since = None;
                c.state = ContainerState::Suspended;
                let freed = before.saturating_sub(&c.held());
                let (node, app) = (c.node, c.app);
                self.release_part(node, app, freed);
            }
        }
        Ok(())
    }

    /// Resumes a suspended container; its node must have the vcores back.
    pub fn resume(&mut self, id: ContainerId, now: Time) -> Result<()> {
        let c = self.container(id).ok_or(CoreError::UnknownContainer(id))?;
        if c.state != ContainerState::Suspended {
            return Err(CoreError::InvalidDecision(format!("{id} is not suspended")));
        }
        let extra = c.resources.saturating_sub(&c.held());
        let (node, app) = (c.node, c.app);
        let n = self.node(node).ok_or(CoreError::UnknownNode(node))?;
        if !extra.fits_in(&n.available()) {
            return Err(CoreError::InvalidDecision(format!(
                "cannot resume {id}: {node} has {} free, {} needed",
                n.available(),
                extra
            )));
        }
        if let Some(c) = self.container_mut(id) {
            c.state = ContainerState::Running;
            c.running_since = Some(now);
        }
        if let Some(n) = self.node_mut(node) {
            n.allocated += extra;
        }
        if let Some(a) = self.app_mut(app) {
            a.allocated += extra;
        }
        self.allocated += extra;
        self.refresh_space(node);
        Ok(())
    }

    /// Undoes a preemption the driver rejected.
    pub fn rollback_preempt(&mut self, id: ContainerId, mode: PreemptMode, now: Time) {
        match mode {
            PreemptMode::Kill => {
                if let Some(c) = self.container_mut(id) {
                    c.preempting = false;
                }
            }
            PreemptMode::Suspend => {
                // Force it back to running even if the node is now full: the
                // driver says it never stopped, so its resources were in use.
                let Some(c) = self.container_mut(id) else { return };
                if c.state != ContainerState::Suspended {
                    return;
                }
                let extra = c.resources.saturating_sub(&c.held());
                c.state = ContainerState::Running;
                c.running_since = Some(now);
                let (node, app) = (c.node, c.app);
                if let Some(n) = self.node_mut(node) {
                    n.allocated += extra;
                }
                if let Some(a) = self.app_mut(app) {
                    a.allocated += extra;
                }
                self.allocated += extra;
                self.refresh_space(node);
            }
        }
    }

    /// The driver will never suspend this container: it stops being a victim.
    pub fn refuse_suspension(&mut self, id: ContainerId) {
        if let Some(c) = self.container_mut(id) {
            c.suspend_refused = true;
        }
    }

    /// Undoes a resume the driver rejected: the container stays suspended.
    pub fn rollback_resume(&mut self, id: ContainerId, now: Time) {
        if self.container(id).is_some_and(|c| c.state == ContainerState::Running) {
            let _ = self.preempt(id, PreemptMode::Suspend, now);
        }
    }

    fn release_part(&mut self, node: NodeId, app: AppId, freed: Resources) {
        if let Some(n) = self.node_mut(node) {
            n.allocated = n.allocated.saturating_sub(&freed);
        }
        if let Some(a) = self.app_mut(app) {
            a.allocated = a.allocated.saturating_sub(&freed);
        }
        self.allocated = self.allocated.saturating_sub(&freed);
        self.refresh_space(node);
    }

    pub fn reserve(&mut self, app: AppId, priority: Priority, node: NodeId) -> Result<Resources> {
        let res = self
            .app(app)
            .ok_or(CoreError::UnknownApp(app))?
            .asks
            .get(&priority)
            .filter(|s| s.outstanding > 0)
            .ok_or_else(|| {
                CoreError::InvalidDecision(format!("{app} has no outstanding ask at {priority} to reserve for"))
            })?
            .ask
            .capability;
        let n = self.node_mut(node).ok_or(CoreError::UnknownNode(node))?;
        if let Some((holder, _, _)) = n.reservation {
            if holder != app {
                return Err(CoreError::InvalidDecision(format!("{node} is already reserved for {holder}")));
            }
        }
        if !res.fits_in(&n.capacity) {
            return Err(CoreError::InvalidDecision(format!("{res} can never fit on {node}")));
        }
        if let Some((old, _, _)) = n.reservation.replace((app, priority, res)) {
            if let Some(a) = self.app_mut(old) {
                a.reserved_nodes.remove(&node);
            }
        }
        if let Some(a) = self.app_mut(app) {
            a.reserved_nodes.insert(node);
        }
        Ok(res)
    }

    /// Drops the reservation on `node`, returning who held it.
    pub fn unreserve(&mut self, node: NodeId) -> Result<Option<(AppId, Priority, Resources)>> {
        let r = self.node_mut(node).ok_or(CoreError::UnknownNode(node))?.reservation.take();
        if let Some((app, _, _)) = r {
            if let Some(a) = self.app_mut(app) {
                a.reserved_nodes.remove(&node);
            }
        }
        Ok(r)
    }

    fn refresh_space(&mut self, node: NodeId) {
        let has = self.node(node).is_some_and(|n| {
            let a = n.available();
            a.memory_mb > 0 && a.vcores > 0 && n.containers.len() < MAX_CONTAINERS_PER_NODE
        });
        self.nodes_with_space.set(node, has);
    }

    /// Checks the mirror's own invariants: every node's allocation equals the
    /// sum of its containers' holdings and fits its capacity. Used by tests.
    pub fn check_invariants(&self) -> Result<()> {
        for n in self.nodes() {
            let mut sum = Resources::ZERO;
            for c in &n.containers {
                sum += self.container(*c).ok_or(CoreError::UnknownContainer(*c))?.held();
            }
            if sum != n.allocated {
                return Err(CoreError::BadEvent(format!("{} books {} but holds {sum}", n.id, n.allocated)));
            }
            if !n.allocated.fits_in(&n.capacity) {
                return Err(CoreError::BadEvent(format!("{} over-committed: {} > {}", n.id, n.allocated, n.capacity)));
            }
        }
        Ok(())
    }
}
