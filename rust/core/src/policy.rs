//! The one trait every policy implements (ARCHITECTURE.md principle 4), and
//! the context it acts through. A policy sees a read-only view of the mirror
//! and the event that just changed it; every decision goes through [`Ctx`],
//! which validates it against the mirror and records it as assumed, so a
//! policy can never over-commit a node or allocate beyond an ask.
//!
//! The extension points, in the order a driver meets them:
//! - [`Policy::on_event`]: after the mirror applied a delta (app added, asks
//!   changed, container completed, node lost ...): update own state, and
//!   preempt at once if the policy is preemptive (Kairos, HFSP).
//! - [`Policy::on_node_heartbeat`]: YARN's `NODE_UPDATE`, the scheduling
//!   opportunity: *order* apps, *filter* by fit and locality, *allocate* or
//!   *reserve* on this node.
//! - [`Policy::on_schedule`]: event-driven drivers offer all free nodes at once.
//! - [`Policy::on_wake`]: the time the policy gave in [`Policy::next_wake`]
//!   has come (it keeps its timers in a [`TimerTable`](crate::TimerTable)).
//! - [`Policy::describe`]: a snapshot of its state for operators.
//!
//! Work too slow for the scheduler's path (a MILP solve) can be handed to
//! the host with [`Ctx::offload`]; its answer comes back later as an
//! [`Event::OffloadDone`] through [`Policy::on_event`].

use crate::cluster::{Cluster, Container};
use crate::error::Result;
use crate::ids::{AppId, ContainerId, NodeId, Priority};
use crate::metrics::Metrics;
use crate::protocol::{Decision, Event, PreemptMode};
use crate::rng::Rng;
use crate::time::Time;
use std::collections::VecDeque;

pub trait Policy: Send + std::any::Any {
    /// The policy's registry name (`fifo`, `fair`, ...).
    fn name(&self) -> &'static str;

    /// The mirror has applied `event` (never `NodeHeartbeat`/`ScheduleAll`,
    /// which have their own hooks, nor `ContainerStarted`, which only
    /// settles the mirror: `Container::confirmed`).
    fn on_event(&mut self, _ctx: &mut Ctx<'_>, _event: &Event) {}

    /// A scheduling opportunity on `node`.
    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId);

    /// Every node with free resources gets opportunities, pass after pass,
    /// while demand lasts and the last pass placed something (a policy that
    /// places one container per heartbeat, as FairScheduler does by default,
    /// still fills the cluster in an event-driven run).
    fn on_schedule(&mut self, ctx: &mut Ctx<'_>) {
        loop {
            let before = ctx.cluster().pending_containers();
            let nodes: Vec<NodeId> = ctx.cluster().nodes_with_space().collect();
            for node in nodes {
                if ctx.cluster().pending_containers() == 0 {
                    return;
                }
                self.on_node_heartbeat(ctx, node);
            }
            let after = ctx.cluster().pending_containers();
            if after == 0 || after >= before {
                return;
            }
        }
    }

    /// When the policy next wants to be woken: the first deadline of its
    /// [`TimerTable`](crate::TimerTable), asked after every call.
    fn next_wake(&self) -> Option<Time> {
        None
    }

    /// The time of [`Policy::next_wake`] has come: fire every timer due at
    /// or before `ctx.now` (including ones set while firing), e.g. with
    /// `while let Some(t) = self.timers.pop_due(ctx.now) { ... }`.
    fn on_wake(&mut self, _ctx: &mut Ctx<'_>) {}

    /// A snapshot of the policy's own state for operators (queue tree,
    /// virtual times ...) at `now`: the shim serves it over REST, the
    /// simulator logs it.
    fn describe(&self, _cluster: &Cluster, _now: Time) -> serde_json::Value {
        serde_json::Value::Null
    }
}

/// What a policy may do while it handles one call.
pub struct Ctx<'a> {
    pub now: Time,
    pub rng: &'a mut Rng,
    /// Network delay the driver asked distributed-scheduler emulations to
    /// model (ms); zero inside the RM.
    pub network_delay_ms: u64,
    /// The policy's own counters and distributions ([`Metrics`]), which
    /// the hosts report.
    pub metrics: &'a mut Metrics,
    cluster: &'a mut Cluster,
    out: &'a mut VecDeque<Decision>,
    /// Where offloaded work goes; `None` when the host runs none.
    offloads: Option<&'a mut Vec<Offload>>,
}

/// Work a policy hands the host to run off the scheduler's path (another
/// thread in the ResourceManager). Its answer comes back as
/// [`Event::OffloadDone`] with the same `tag`. The work must be a pure
/// function of what it captured: the core stays deterministic because only
/// the recorded answer enters it.
pub struct Offload {
    pub tag: u64,
    pub work: Box<dyn OffloadWork>,
}

/// What an [`Offload`] runs: a closure, or a value that can also say what it
/// is as data ([`OffloadWork::describe`]).
pub trait OffloadWork: Send {
    /// Runs the work here and returns its answer.
    fn run(self: Box<Self>) -> serde_json::Value;
    /// The same work as data, for a host that runs it in another process
    /// (the ResourceManager does, so that a solver's abort costs one answer,
    /// not the RM); `None`: the work runs only as [`OffloadWork::run`]. Only
    /// such a host calls it, and on its own thread: building the
    /// description costs the scheduler's thread nothing.
    fn describe(&self) -> Option<Described> {
        None
    }
}

impl<F: FnOnce() -> serde_json::Value + Send> OffloadWork for F {
    fn run(self: Box<Self>) -> serde_json::Value {
        (*self)()
    }
}

/// Offloaded work as data: what `kind` names, run on `input`, answers as
/// the closure would (`sojourn_policies::offload::run`).
#[derive(Clone, Debug, PartialEq)]
pub struct Described {
    pub kind: String,
    pub input: serde_json::Value,
    /// How long the work may take by its own budget (a solver's time
    /// limit), in ms: a host gives up on it well after that.
    pub budget_ms: u64,
}

impl std::fmt::Debug for Offload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Offload").field("tag", &self.tag).finish_non_exhaustive()
    }
}

impl Offload {
    /// Runs the work here and now, as the answer's event: what a host that
    /// runs offloaded work inline (a test, a simulator) feeds back.
    pub fn run(self) -> Event {
        Event::OffloadDone { tag: self.tag, result: self.work.run() }
    }
}

impl<'a> Ctx<'a> {
    pub fn new(
        now: Time,
        cluster: &'a mut Cluster,
        out: &'a mut VecDeque<Decision>,
        rng: &'a mut Rng,
        network_delay_ms: u64,
        metrics: &'a mut Metrics,
    ) -> Ctx<'a> {
        Ctx { now, rng, network_delay_ms, metrics, cluster, out, offloads: None }
    }

    /// Lets the policy hand work to the host ([`Ctx::offload`]).
    pub fn with_offloads(mut self, offloads: &'a mut Vec<Offload>) -> Ctx<'a> {
        self.offloads = Some(offloads);
        self
    }

    /// Whether the host runs offloaded work ([`Ctx::offload`]).
    pub fn can_offload(&self) -> bool {
        self.offloads.is_some()
    }

    /// Hands `work` to the host, which runs it off the scheduler's path and
    /// answers with [`Event::OffloadDone`] under `tag`. Returns the work back
    /// when the host runs no offloaded work: the policy then does it inline.
    pub fn offload(&mut self, tag: u64, work: Box<dyn OffloadWork>) -> Option<Offload> {
        let o = Offload { tag, work };
        match &mut self.offloads {
            Some(q) => {
                q.push(o);
                None
            }
            None => Some(o),
        }
    }

    pub fn cluster(&self) -> &Cluster {
        self.cluster
    }

    /// Places one container of `app`'s ask at `priority` on `node`, after
    /// checking that the ask is outstanding and fits.
    pub fn allocate(&mut self, app: AppId, priority: Priority, node: NodeId) -> Result<ContainerId> {
        let (container, resources) = self.cluster.allocate(app, priority, node, self.now)?;
        self.out.push_back(Decision::Allocate { container, app, priority, node, resources, gang: None });
        Ok(container)
    }

    /// Places `app`'s ask at `priority` as a gang, all or nothing: `n`
    /// containers on each `(node, n)`; returns each member and its node. On a refusal nothing is placed and
    /// the error names why. The host applies the members together or
    /// refuses them together; if it starts only some, the core kills them.
    pub fn allocate_gang(
        &mut self,
        app: AppId,
        priority: Priority,
        placements: &[(NodeId, u32)],
    ) -> Result<Vec<(ContainerId, NodeId)>> {
        let (gang, placed) = self.cluster.allocate_gang(app, priority, placements, self.now)?;
        let mut members = Vec::with_capacity(placed.len());
        for (container, node, resources) in placed {
            self.out.push_back(Decision::Allocate { container, app, priority, node, resources, gang: Some(gang) });
            members.push((container, node));
        }
        Ok(members)
    }

    /// Holds `node` for `app`'s ask at `priority` (YARN's reservation of a
    /// node for a container that does not fit yet).
    pub fn reserve(&mut self, app: AppId, priority: Priority, node: NodeId) -> Result<()> {
        let resources = self.cluster.reserve(app, priority, node)?;
        self.out.push_back(Decision::Reserve { app, priority, node, resources });
        Ok(())
    }

    pub fn unreserve(&mut self, node: NodeId) -> Result<()> {
        if let Some((app, priority, _)) = self.cluster.unreserve(node)? {
            self.out.push_back(Decision::Unreserve { app, priority, node });
        }
        Ok(())
    }

    pub fn preempt(&mut self, container: ContainerId, mode: PreemptMode) -> Result<()> {
        self.cluster.preempt(container, mode, self.now)?;
        self.out.push_back(Decision::Preempt { container, mode });
        Ok(())
    }

    pub fn resume(&mut self, container: ContainerId) -> Result<()> {
        self.cluster.resume(container, self.now)?;
        self.out.push_back(Decision::Resume { container });
        Ok(())
    }

    /// Containers of `app`, running or suspended.
    pub fn containers_of(&self, app: AppId) -> Vec<&Container> {
        self.cluster
            .app(app)
            .map(|a| a.containers.iter().filter_map(|c| self.cluster.container(*c)).collect())
            .unwrap_or_default()
    }
}
