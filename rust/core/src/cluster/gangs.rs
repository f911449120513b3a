//! Gangs: containers placed all or nothing (tetrisched.md §3, "gangs placed
//! all or nothing"). [`Cluster::allocate_gang`] places every member or none;
//! the book kept here, until each member's placement is settled, lets the
//! engine undo a gang the host carried out only in part: a member the host
//! refused makes the gang fail, and each member it started is then killed.
//!
//! Nothing is kept for a cluster without gangs: the per-event hooks cost
//! other policies one lookup in an empty map.

use super::{AssignmentBudget, Cluster, Refusal};
use crate::error::{CoreError, Result};
use crate::ids::{AppId, ContainerId, GangId, NodeId, Priority};
use crate::resources::Resources;
use crate::time::Time;
use std::collections::BTreeMap;

/// A member placed: its container, node and size.
pub type Member = (ContainerId, NodeId, Resources);

/// A node's reservation as it was before a gang was tried (restored if the
/// gang is undone).
type HeldBefore = (NodeId, Option<(AppId, Priority, Resources)>);

/// A gang whose members' placements are not all settled yet.
#[derive(Clone, Debug, Default)]
pub(super) struct GangBook {
    /// Placed, not yet confirmed or refused by the host.
    pending: Vec<ContainerId>,
    /// Confirmed by the host.
    started: Vec<ContainerId>,
    /// The host refused a member: the rest must not run.
    failed: bool,
}

/// The gangs being settled and which gang each of their members is in.
#[derive(Clone, Debug, Default)]
pub(super) struct Gangs {
    books: BTreeMap<GangId, GangBook>,
    member_of: BTreeMap<ContainerId, GangId>,
}

impl Cluster {
    /// Places `app`'s ask at `priority` as one gang: `n` containers on each
    /// `(node, n)`, all of them or none. On any refusal (a member that does
    /// not fit, an ask with fewer outstanding, a heartbeat with no
    /// assignment left) the members placed so far are undone and the error
    /// names the member that failed; the mirror is then as it was.
    ///
    /// The heartbeat's assignment limit cannot split a gang, so it is not
    /// counted member by member: a gang starts while the heartbeat has any
    /// assignment left, and its members then use up what is left (a gang
    /// larger than the limit would otherwise never start at a heartbeat).
    pub fn allocate_gang(
        &mut self,
        app: AppId,
        priority: Priority,
        placements: &[(NodeId, u32)],
        now: Time,
    ) -> Result<(GangId, Vec<Member>)> {
        let budget = self.assignment_budget;
        if self.assignments_left() == Some(0) {
            let node = placements.first().map_or(NodeId(0), |(n, _)| *n);
            return Err(self.refusal_error(Refusal::AssignmentLimit, app, priority, node));
        }
        self.assignment_budget = None;
        let reservations: Vec<HeldBefore> =
            placements.iter().map(|(node, _)| (*node, self.node(*node).and_then(|n| n.reservation))).collect();
        let mut placed: Vec<Member> = Vec::new();
        for (node, n) in placements {
            for _ in 0..*n {
                match self.allocate(app, priority, *node, now) {
                    Ok((id, resources)) => placed.push((id, *node, resources)),
                    Err(e) => {
                        self.undo_gang(&placed, budget, &reservations);
                        return Err(e);
                    }
                }
            }
        }
        let Some(first) = placed.first() else {
            self.assignment_budget = budget;
            return Err(CoreError::InvalidDecision(format!("an empty gang for {app} at {priority}")));
        };
        self.assignment_budget = budget.map(|b| AssignmentBudget {
            left: b.left.saturating_sub(u32::try_from(placed.len()).unwrap_or(u32::MAX)),
            ..b
        });
        let gang = GangId(first.0 .0);
        let book = GangBook { pending: placed.iter().map(|p| p.0).collect(), ..GangBook::default() };
        for (id, _, _) in &placed {
            self.gangs.member_of.insert(*id, gang);
        }
        self.gangs.books.insert(gang, book);
        Ok((gang, placed))
    }

    /// Undoes a gang's members placed before one failed: their allocations,
    /// the heartbeat's budget they took, and the reservations they cleared.
    fn undo_gang(&mut self, placed: &[Member], budget: Option<AssignmentBudget>, reservations: &[HeldBefore]) {
        for (id, _, _) in placed.iter().rev() {
            self.rollback_allocation(*id);
        }
        self.assignment_budget = budget;
        for (node, held) in reservations {
            let Some((holder, _, _)) = held else { continue };
            if self.node(*node).is_some_and(|n| n.reservation.is_none()) {
                if let Some(n) = self.node_mut(*node) {
                    n.reservation = *held;
                }
                if let Some(a) = self.app_mut(*holder) {
                    a.reserved_nodes.insert(*node);
                }
            }
        }
    }

    /// The gang `container` is a member of, while its placement is unsettled.
    pub fn gang_of(&self, container: ContainerId) -> Option<GangId> {
        self.gangs.member_of.get(&container).copied()
    }

    /// The host confirmed `container`. Returns true when it is a member of a
    /// gang that has failed: it must be killed.
    pub(crate) fn gang_member_started(&mut self, container: ContainerId) -> bool {
        let Some(gang) = self.gangs.member_of.remove(&container) else { return false };
        let Some(book) = self.gangs.books.get_mut(&gang) else { return false };
        book.pending.retain(|c| *c != container);
        let kill = book.failed;
        if !kill {
            book.started.push(container);
        }
        self.settle_gang(gang);
        kill
    }

    /// The host refused `container` (already rolled back). Returns the
    /// members the host started, which must now be killed.
    pub(crate) fn gang_member_refused(&mut self, container: ContainerId) -> Vec<ContainerId> {
        let Some(gang) = self.gangs.member_of.remove(&container) else { return Vec::new() };
        let Some(book) = self.gangs.books.get_mut(&gang) else { return Vec::new() };
        book.pending.retain(|c| *c != container);
        book.failed = true;
        let started = std::mem::take(&mut book.started);
        self.settle_gang(gang);
        started.into_iter().filter(|c| self.container(*c).is_some_and(|c| !c.preempting)).collect()
    }

    /// `container` ended (completed, its node or app gone: every member of
    /// a leaving app's gangs ends this way, so no book outlives its app).
    pub(crate) fn gang_member_ended(&mut self, container: ContainerId) {
        let Some(gang) = self.gangs.member_of.remove(&container) else { return };
        if let Some(book) = self.gangs.books.get_mut(&gang) {
            book.pending.retain(|c| *c != container);
        }
        self.settle_gang(gang);
    }

    /// Gangs with members not yet confirmed or refused.
    pub fn unsettled_gangs(&self) -> usize {
        self.gangs.books.len()
    }

    /// A gang is settled, and forgotten, once no member awaits the host.
    fn settle_gang(&mut self, gang: GangId) {
        if self.gangs.books.get(&gang).is_some_and(|b| b.pending.is_empty()) {
            self.gangs.books.remove(&gang);
        }
    }
}
