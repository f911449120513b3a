//! The core's own allocations: whether an ask can be placed on a node, the
//! placement itself (assumed until the driver confirms it: Kubernetes'
//! reserve, then confirm or forget), and its rollback when the driver
//! refuses it, which returns the node's and app's books to what they were.

use super::{AskState, Cluster, Container, ContainerState, Node, MAX_CONTAINERS_PER_NODE};
use crate::error::{CoreError, Result};
use crate::ids::{AppId, ContainerId, NodeId, Priority};
use crate::protocol::{Ask, Locality};
use crate::resources::Resources;
use crate::time::Time;

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
    /// The node heartbeat being handled placed as many containers as the
    /// host allows one heartbeat ([`Cluster::assignments_left`]).
    AssignmentLimit,
}

impl Cluster {
    /// Whether `app`'s ask at `priority` could be placed on `node` right now
    /// (outstanding, fits, label and strict locality respected). Cheap: the
    /// refusal is a plain value, formatted only when it becomes an error.
    pub fn can_allocate(&self, app: AppId, priority: Priority, node: NodeId) -> std::result::Result<(), Refusal> {
        // First: once the heartbeat's limit is spent nothing else matters,
        // and a policy's walk over its apps then costs a check each.
        if self.assignments_left() == Some(0) {
            return Err(Refusal::AssignmentLimit);
        }
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
            Refusal::AssignmentLimit => {
                CoreError::AssignmentLimit { limit: self.assignment_budget.map_or(0, |b| b.limit), app, node }
            }
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

    /// Places one container of `app`'s ask at `priority` on `node`.
    pub fn allocate(
        &mut self,
        app: AppId,
        priority: Priority,
        node: NodeId,
        now: Time,
    ) -> Result<(ContainerId, Resources)> {
        self.can_allocate(app, priority, node).map_err(|r| self.refusal_error(r, app, priority, node))?;
        if let Some(b) = &mut self.assignment_budget {
            b.left -= 1; // can_allocate saw it above zero
        }
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

    /// Undoes an allocation the driver rejected: the container disappears and
    /// its ask is wanted again. Idempotent.
    pub fn rollback_allocation(&mut self, id: ContainerId) {
        let Some(c) = self.drop_container(id) else { return };
        let (app, priority, consumed, resources, phase) = (c.app, c.priority, c.consumed, c.resources, c.phase);
        if let Some(a) = self.app_mut(app) {
            let st = a.asks.get_or_insert_with(priority, || AskState {
                ask: Ask::new(priority, resources, 0, phase),
                outstanding: 0,
            });
            st.ask.count = st.ask.count.max(st.outstanding + 1);
            st.outstanding += 1;
            // Pending is outstanding x the ask's size now: the app may have
            // asked again at this priority with another size meanwhile.
            let size = st.ask.capability;
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
            a.pending += size;
            a.pending_containers += 1;
            self.pending_containers += 1;
        }
    }
}
