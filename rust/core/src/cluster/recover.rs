//! Containers that the host has and the mirror lacks: recovered by YARN
//! after a ResourceManager restart or fail-over, kept by a restarted
//! ApplicationMaster, or re-sent when the host rebuilds the mirror from its
//! own books (ARCHITECTURE.md principle 3: YARN stays authoritative).

use super::{Cluster, Container, ContainerState};
use crate::error::{CoreError, Result};
use crate::ids::{AppId, ContainerId, NodeId, Priority};
use crate::protocol::Phase;
use crate::resources::Resources;
use crate::time::Time;

/// A container as the host knows it, for [`Cluster::recover_container`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recovered {
    pub container: ContainerId,
    pub app: AppId,
    pub node: NodeId,
    pub priority: Priority,
    pub phase: Phase,
    pub resources: Resources,
    pub suspended: bool,
}

impl Cluster {
    /// Adds a running (or suspended) container the host already has. It is
    /// confirmed at once, counts as started `now` (its service before the
    /// restart is not known to the host), and serves no outstanding ask:
    /// YARN's recovered asks are what the AM asks for afterwards. Refused,
    /// leaving the mirror unchanged, if the id is known, the app or node is
    /// not, or the node has no room for it.
    pub fn recover_container(&mut self, r: Recovered, now: Time) -> Result<()> {
        let id = r.container;
        if self.container(id).is_some() {
            return Err(CoreError::BadEvent(format!("recovered {id} is already known")));
        }
        if r.resources.is_zero() {
            return Err(CoreError::BadResource { what: format!("recovered {id}"), why: "resources are zero".into() });
        }
        self.app(r.app).ok_or(CoreError::UnknownApp(r.app))?;
        let node = self.node(r.node).ok_or(CoreError::UnknownNode(r.node))?;
        let state = if r.suspended { ContainerState::Suspended } else { ContainerState::Running };
        let c = Container {
            id,
            app: r.app,
            node: r.node,
            priority: r.priority,
            phase: r.phase,
            resources: r.resources,
            state,
            start: now,
            attained_before_ms: 0,
            running_since: (!r.suspended).then_some(now),
            confirmed: true,
            preempting: false,
            progress: None,
            suspend_refused: false,
            consumed: Vec::new(),
        };
        let held = c.held();
        if !held.fits_in(&node.available()) || node.containers.len() >= super::MAX_CONTAINERS_PER_NODE {
            return Err(CoreError::BadEvent(format!(
                "recovered {id} ({held}) does not fit on {} ({} free)",
                r.node,
                node.available()
            )));
        }
        self.next_container = self.next_container.max(id.0.saturating_add(1));
        if let Some(n) = self.node_mut(r.node) {
            n.allocated += held;
            n.containers.insert(id);
        }
        if let Some(a) = self.app_mut(r.app) {
            a.allocated += held;
            a.containers.insert(id);
        }
        self.allocated += held;
        self.insert_container(c);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AppSpec, NodeSpec};

    fn cluster() -> Cluster {
        let mut c = Cluster::new(None);
        c.add_node(NodeSpec {
            node: NodeId(1),
            name: "n1".into(),
            rack: "/r".into(),
            labels: vec![],
            capacity: Resources::new(4096, 4),
        })
        .expect("node");
        let spec = AppSpec::new(AppId(1), "default", "u");
        c.add_app(spec, Time(0)).expect("app");
        c
    }

    fn rec(id: u64, mb: u64, suspended: bool) -> Recovered {
        Recovered {
            container: ContainerId(id),
            app: AppId(1),
            node: NodeId(1),
            priority: Priority::MAP,
            phase: Phase::Map,
            resources: Resources::new(mb, 1),
            suspended,
        }
    }

    #[test]
    fn a_recovered_container_is_booked_and_later_ids_pass_it() {
        let mut c = cluster();
        c.recover_container(rec(40, 1024, false), Time(5)).expect("recover");
        assert_eq!(c.node(NodeId(1)).map(|n| n.allocated), Some(Resources::new(1024, 1)));
        assert_eq!(c.allocated(), Resources::new(1024, 1));
        assert!(c.container(ContainerId(40)).is_some_and(|k| k.confirmed));
        c.check_invariants().expect("invariants");
        // The core's next own id is past the host's.
        c.update_asks(AppId(1), vec![crate::protocol::Ask::new(Priority::MAP, Resources::new(1024, 1), 1, Phase::Map)])
            .expect("ask");
        let (id, _) = c.allocate(AppId(1), Priority::MAP, NodeId(1), Time(6)).expect("allocate");
        assert_eq!(id, ContainerId(41));
    }

    #[test]
    fn a_suspended_recovered_container_holds_memory_only() {
        let mut c = cluster();
        c.recover_container(rec(7, 2048, true), Time(0)).expect("recover");
        let held = c.node(NodeId(1)).map(|n| n.allocated).unwrap_or_default();
        assert_eq!(held.memory_mb, 2048);
        assert_eq!(held.vcores, 0);
        c.check_invariants().expect("invariants");
    }

    #[test]
    fn duplicates_unknown_ids_and_overflow_are_refused_without_change() {
        let mut c = cluster();
        c.recover_container(rec(7, 1024, false), Time(0)).expect("recover");
        let before = c.allocated();
        assert!(c.recover_container(rec(7, 1024, false), Time(0)).is_err(), "duplicate id");
        assert!(c.recover_container(Recovered { app: AppId(9), ..rec(8, 1024, false) }, Time(0)).is_err());
        assert!(c.recover_container(Recovered { node: NodeId(9), ..rec(8, 1024, false) }, Time(0)).is_err());
        let err = c.recover_container(rec(8, 8192, false), Time(0)).expect_err("too big");
        assert!(err.to_string().contains("does not fit"), "{err}");
        assert_eq!(c.allocated(), before);
        c.check_invariants().expect("invariants");
    }
}
