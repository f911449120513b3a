//! A container's life in the mirror after it is placed: the driver confirms
//! it, reports progress and completion; the core preempts it (kill, which
//! awaits the driver's completion, or suspend, which frees its vcores at
//! once) and resumes it. Each decision the driver may refuse has its
//! rollback here, idempotent, as the driver's rejection arrives later.

use super::Cluster;
use crate::error::{CoreError, Result};
use crate::ids::{AppId, ContainerId, NodeId, Priority};
use crate::protocol::{Locality, Outcome, Phase, PreemptMode};
use crate::resources::Resources;
use crate::time::Time;

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
    pub(super) consumed: Vec<Locality>,
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

impl Cluster {
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
        self.gang_member_ended(id);
        let attained = c.attained_ms(now);
        if let Some(a) = self.app_mut(c.app) {
            a.attained_done_ms += attained;
            a.count_completed(c.phase);
        }
        Ok(c)
    }

    /// Completes each of `ids` with `outcome`, returning them (a node or
    /// app leaving takes its containers with it).
    pub(super) fn complete_all(
        &mut self,
        ids: Vec<ContainerId>,
        outcome: Outcome,
        now: Time,
    ) -> Result<Vec<Container>> {
        ids.into_iter().map(|c| self.complete(c, outcome, now)).collect()
    }

    /// Takes a container out and returns what it held to its node and app.
    pub(super) fn drop_container(&mut self, id: ContainerId) -> Option<Container> {
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
        if c.preempting {
            // Its kill is on the way: a resume the host then refused could
            // not be undone (the mirror cannot suspend it again mid-kill).
            return Err(CoreError::InvalidDecision(format!("{id} is being killed")));
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
        self.hold_part(node, app, extra);
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
                self.hold_part(node, app, extra);
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

    /// Books `extra` more as held on `node` and by `app`: a suspended
    /// container of theirs runs again.
    fn hold_part(&mut self, node: NodeId, app: AppId, extra: Resources) {
        if let Some(n) = self.node_mut(node) {
            n.allocated += extra;
        }
        if let Some(a) = self.app_mut(app) {
            a.allocated += extra;
        }
        self.allocated += extra;
        self.refresh_space(node);
    }

    /// Books `freed` less as held on `node` and by `app`: a container of
    /// theirs was suspended.
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
}
