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
    /// not, or the node already holds [`super::MAX_CONTAINERS_PER_NODE`]. A
    /// container past the node's free room is booked all the same (the host
    /// has it running): the node is over-committed, as after a capacity
    /// shrink, and takes nothing new until its books fit again.
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
        if node.containers.len() >= super::MAX_CONTAINERS_PER_NODE {
            return Err(CoreError::BadEvent(format!(
                "recovered {id} would be container {} on {}, over {}",
                node.containers.len() + 1,
                r.node,
                super::MAX_CONTAINERS_PER_NODE
            )));
        }
        // Booked past the node's room, but never past what the books can
        // count: a container near the top of a resource's range (no host
        // has one) would saturate the sums and leave them unequal to the
        // holdings once it ends.
        let app_held = self.app(r.app).map_or(Resources::ZERO, |a| a.allocated);
        let overflows = |sum: Resources| {
            sum.memory_mb.checked_add(held.memory_mb).is_none()
                || sum.vcores.checked_add(held.vcores).is_none()
                || sum.gpus.checked_add(held.gpus).is_none()
        };
        if overflows(node.allocated) || overflows(app_held) || overflows(self.allocated) {
            return Err(CoreError::BadResource {
                what: format!("recovered {id} ({held})"),
                why: format!("the books of {} or of its app cannot count that much", r.node),
            });
        }
        if !held.fits_in(&node.available()) {
            // A fact of the host's books, not a decision: YARN recovers what
            // its NodeManagers run even past the node's capacity (e.g. a
            // container its agent held suspended comes back running after an
            // RM restart, since the new RM's suspended list is empty). The
            // node is over-committed until enough of its containers end; it
            // has no room for new ones meanwhile.
            log::warn!(
                "recovered {id} ({held}) over-commits {} ({} free): booked as the host reports it",
                r.node,
                node.available()
            );
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
    fn duplicates_and_unknown_ids_are_refused_without_change() {
        let mut c = cluster();
        c.recover_container(rec(7, 1024, false), Time(0)).expect("recover");
        let before = c.allocated();
        assert!(c.recover_container(rec(7, 1024, false), Time(0)).is_err(), "duplicate id");
        assert!(c.recover_container(Recovered { app: AppId(9), ..rec(8, 1024, false) }, Time(0)).is_err());
        assert!(c.recover_container(Recovered { node: NodeId(9), ..rec(8, 1024, false) }, Time(0)).is_err());
        assert_eq!(c.allocated(), before);
        c.check_invariants().expect("invariants");
    }

    /// The MiniYARNCluster RM restart (RmRestartMiniClusterTest): two tasks
    /// fill a node's vcores and a third, placed on the vcore a suspension
    /// freed, comes back running after the restart. YARN books all three;
    /// the mirror did not (it refused the third), and drifted from YARN.
    #[test]
    fn a_recovered_container_past_the_node_s_room_is_booked_and_the_node_takes_nothing_new() {
        let mut c = cluster(); // 4096 MB, 4 vcores
        for id in 1..=4 {
            c.recover_container(rec(id, 512, false), Time(0)).expect("fits");
        }
        c.recover_container(rec(5, 512, false), Time(0)).expect("over-commits the vcores, as YARN books it");
        assert_eq!(c.node(NodeId(1)).map(|n| n.allocated), Some(Resources::new(2560, 5)));
        assert_eq!(c.containers().count(), 5);
        assert_eq!(c.allocated(), Resources::new(2560, 5));
        assert_eq!(c.node(NodeId(1)).map(|n| n.available()), Some(Resources::new(1536, 0)));
        // Nothing new is placed on it until a container ends.
        c.update_asks(AppId(1), vec![crate::protocol::Ask::new(Priority::MAP, Resources::new(512, 1), 1, Phase::Map)])
            .expect("ask");
        assert!(c.allocate(AppId(1), Priority::MAP, NodeId(1), Time(1)).is_err(), "no vcore is free");
        c.complete(ContainerId(5), crate::protocol::Outcome::Finished, Time(2)).expect("complete");
        c.complete(ContainerId(4), crate::protocol::Outcome::Finished, Time(2)).expect("complete");
        c.check_invariants().expect("fits again");
        assert!(c.allocate(AppId(1), Priority::MAP, NodeId(1), Time(3)).is_ok());
    }

    /// Found by the bridge fuzzer: a container of u32::MAX vcores after
    /// another saturated the node's books, which then no longer matched its
    /// containers once one ended. It is refused; the books stay exact.
    #[test]
    fn a_recovered_container_the_books_cannot_count_is_refused() {
        let mut c = cluster();
        c.recover_container(rec(1, 512, false), Time(0)).expect("recover");
        let huge = Recovered { resources: Resources::new(512, u32::MAX), ..rec(2, 512, false) };
        let e = c.recover_container(huge, Time(0)).expect_err("overflows the vcores");
        assert!(e.to_string().contains("cannot count"), "{e}");
        let huge = Recovered { resources: Resources::new(u64::MAX, 1), ..rec(3, 512, false) };
        assert!(c.recover_container(huge, Time(0)).is_err(), "overflows the memory");
        assert_eq!(c.node(NodeId(1)).map(|n| n.allocated), Some(Resources::new(512, 1)));
        c.complete(ContainerId(1), crate::protocol::Outcome::Finished, Time(1)).expect("complete");
        assert_eq!(c.allocated(), Resources::ZERO);
        c.check_invariants().expect("invariants");
    }
}
