//! The core a host holds: the mirror plus one policy, driven by one cycle.
//!
//! # The cycle
//!
//! A host (the simulator, the YARN shim through JNI, a replay) calls
//! [`Core::step`]`(now, events)` and gets a [`Step`] back, as raft-rs hosts
//! call `ready()` and `advance()`:
//!
//! 1. the clock moves to `now` (a host whose clock went backwards gets
//!    [`CoreError::ClockBackwards`] and nothing is applied);
//! 2. the policy's timers due at or before `now` fire
//!    ([`Policy::on_wake`]);
//! 3. the events apply in order; one the core refuses is reported in
//!    [`Step::refused`] with its index and [`RefusalKind`], and the rest
//!    still apply;
//! 4. the step returns every decision made, and when the policy next wants
//!    to be woken ([`Step::next_wake`]).
//!
//! The host carries the decisions out. What that brings back (a
//! confirmation, a rejection, a completion of a killed container, a new ask
//! from an AM) goes into the host's *next* step, never into the middle of
//! this one. A host with nothing to send calls `step(now, [])` once
//! `next_wake` has passed.
//!
//! No clock, no threads, no I/O: the same steps give the same decisions.

use crate::cluster::{Cluster, Recovered};
use crate::error::{CoreError, Result};
use crate::ids::ContainerId;
use crate::metrics::Metrics;
use crate::policy::{Ctx, Offload, Policy};
use crate::protocol::{Decision, Event, PreemptMode, Record, RefusalKind};
use crate::resources::Resources;
use crate::rng::Rng;
use crate::time::Time;
use std::collections::VecDeque;

/// What one [`Core::step`] produced.
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct Step {
    /// Every decision, in the order the policy made them.
    pub decisions: Vec<Decision>,
    /// The events the core refused, by their index in the step's input.
    pub refused: Vec<RefusedEvent>,
    /// When the policy next wants a step, if ever.
    pub next_wake: Option<Time>,
}

/// An event of a step the core did not apply (the mirror is as it was);
/// `error.kind()` says whether it could succeed later, never, or shows a bug.
#[derive(Clone, Debug, PartialEq)]
pub struct RefusedEvent {
    pub index: usize,
    pub error: CoreError,
}

/// What a replay produced: every decision, and each refused event with the
/// index of its record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplayOutcome {
    pub decisions: Vec<Decision>,
    pub refused: Vec<(usize, RefusedEvent)>,
}

impl Step {
    /// The first refusal as an error, for hosts to which any refusal is a bug
    /// (the simulator, which generates its own events).
    pub fn check(self) -> Result<Step> {
        match self.refused.first() {
            Some(r) => Err(r.error.clone()),
            None => Ok(self),
        }
    }
}

/// Settings of the core itself, shared by every policy.
#[derive(Clone, Debug, Default)]
pub struct CoreConfig {
    pub seed: u64,
    /// Largest container an app may ask for (YARN's maximum-allocation).
    pub max_allocation: Option<Resources>,
    /// Network delay for distributed-scheduler emulations (ms).
    pub network_delay_ms: u64,
    /// The host runs offloaded work ([`Ctx::offload`]): it takes it with
    /// [`Core::take_offloads`] after each step and answers with
    /// [`Event::OffloadDone`]. Off, policies do such work inline.
    pub offload: bool,
    /// At most this many containers placed while one node heartbeat is
    /// handled (YARN's per-node-heartbeat maximum-container-assignments);
    /// `None`: no limit. Enforced by the mirror
    /// ([`Cluster::assignments_left`]): a placement past it is refused
    /// before anything is decided, so what waits is placed at later
    /// heartbeats. `ScheduleAll` (all nodes at once) is not limited.
    pub max_assignments: Option<u32>,
}

/// Counters a host can report (decisions by kind, rejections).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreStats {
    pub events: u64,
    pub allocations: u64,
    pub preemptions: u64,
    pub resumes: u64,
    pub rejections: u64,
}

pub struct Core {
    cluster: Cluster,
    policy: Box<dyn Policy>,
    out: VecDeque<Decision>,
    rng: Rng,
    network_delay_ms: u64,
    stats: CoreStats,
    metrics: Metrics,
    last_now: Time,
    offload: bool,
    offloads: Vec<Offload>,
    max_assignments: Option<u32>,
}

impl Core {
    pub fn new(policy: Box<dyn Policy>, config: CoreConfig) -> Core {
        Core {
            cluster: Cluster::new(config.max_allocation),
            policy,
            out: VecDeque::new(),
            rng: Rng::seeded(config.seed),
            network_delay_ms: config.network_delay_ms,
            stats: CoreStats::default(),
            metrics: Metrics::default(),
            last_now: Time::ZERO,
            offload: config.offload,
            offloads: Vec::new(),
            max_assignments: config.max_assignments,
        }
    }

    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }
    pub fn policy(&self) -> &dyn Policy {
        self.policy.as_ref()
    }
    /// The policy as its own type, for tests that check its books.
    pub fn policy_as<P: Policy>(&self) -> Option<&P> {
        let any: &dyn std::any::Any = self.policy.as_ref();
        any.downcast_ref::<P>()
    }
    /// The policy as its own type, for tests that steer it between steps.
    pub fn policy_as_mut<P: Policy>(&mut self) -> Option<&mut P> {
        let any: &mut dyn std::any::Any = self.policy.as_mut();
        any.downcast_mut::<P>()
    }
    pub fn stats(&self) -> &CoreStats {
        &self.stats
    }
    /// What the policy published about its own work (see [`Metrics`]).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// One cycle: fire the policy's due timers, apply `events` in order,
    /// return the decisions (see the module docs). Only a clock that went
    /// backwards fails the whole step; a refused event is reported in
    /// [`Step::refused`] and the others still apply.
    pub fn step(&mut self, now: Time, events: impl IntoIterator<Item = Event>) -> Result<Step> {
        if now < self.last_now {
            return Err(CoreError::ClockBackwards { now, last: self.last_now });
        }
        self.last_now = now;
        self.wake(now);
        let mut refused = Vec::new();
        for (index, event) in events.into_iter().enumerate() {
            if let Err(e) = self.apply(now, event) {
                refused.push(RefusedEvent { index, error: e });
            }
        }
        // The buffer itself is handed over (no copy); a host may give it
        // back with `recycle`.
        Ok(Step { decisions: Vec::from(std::mem::take(&mut self.out)), refused, next_wake: self.next_wake() })
    }

    /// Gives a step's decision buffer back, so the next step fills it
    /// instead of allocating one: a simulator steps millions of times.
    /// Whatever it still holds is dropped.
    pub fn recycle(&mut self, mut buffer: Vec<Decision>) {
        if self.out.is_empty() && buffer.capacity() > self.out.capacity() {
            buffer.clear();
            self.out = VecDeque::from(buffer);
        }
    }

    /// Replays a recording into this core, step by step as it was recorded
    /// (the one replay loop: `sojourn replay` and the bridge use it).
    pub fn replay(&mut self, records: impl IntoIterator<Item = Record>) -> Result<ReplayOutcome> {
        let mut out = ReplayOutcome::default();
        for (i, r) in records.into_iter().enumerate() {
            let now = r.now;
            let step = self.step(now, r.into_events())?;
            // The recording holds the answers to offloaded work.
            self.offloads.clear();
            out.decisions.extend(step.decisions);
            out.refused.extend(step.refused.into_iter().map(|e| (i, e)));
        }
        Ok(out)
    }

    /// The work the policy offloaded since the last call (only with
    /// [`CoreConfig::offload`]); the host answers each with
    /// [`Event::OffloadDone`] in a later step. A replay drops it: the
    /// recording holds the answers.
    pub fn take_offloads(&mut self) -> Vec<Offload> {
        std::mem::take(&mut self.offloads)
    }

    /// When the policy next wants a step.
    pub fn next_wake(&self) -> Option<Time> {
        self.policy.next_wake()
    }

    /// The time of the last step.
    pub fn now(&self) -> Time {
        self.last_now
    }

    /// Fires every timer due at or before `now`.
    fn wake(&mut self, now: Time) {
        if self.policy.next_wake().is_some_and(|t| t <= now) {
            self.with_ctx(now, |p, ctx| p.on_wake(ctx));
        }
    }

    /// Applies one event. An error leaves the mirror as it was before the
    /// event (each mutation validates before it changes anything).
    fn apply(&mut self, now: Time, event: Event) -> Result<()> {
        self.stats.events += 1;
        match &event {
            Event::NodeAdded(spec) => self.cluster.add_node(spec.clone())?,
            Event::NodeRemoved { node } => {
                self.cluster.remove_node(*node, now)?;
            }
            Event::NodeResourceUpdated { node, capacity } => self.cluster.update_node_capacity(*node, *capacity)?,
            Event::NodeHeartbeat { node } => {
                if self.cluster.node(*node).is_none() {
                    return Err(CoreError::UnknownNode(*node));
                }
                let node = *node;
                self.cluster.limit_assignments(self.max_assignments);
                self.with_ctx(now, |p, ctx| p.on_node_heartbeat(ctx, node));
                self.cluster.limit_assignments(None);
                return Ok(());
            }
            Event::ScheduleAll => {
                self.with_ctx(now, |p, ctx| p.on_schedule(ctx));
                return Ok(());
            }
            Event::AppAdded(spec) => self.cluster.add_app(spec.clone(), now)?,
            Event::AppRemoved { app } => {
                self.cluster.remove_app(*app, now)?;
            }
            Event::AsksUpdated { app, asks } => self.cluster.update_asks(*app, asks.clone())?,
            Event::ContainerStarted { container } => {
                // A confirmation only settles the mirror (the policy has
                // seen the container since its allocation): no hook runs, so
                // that one event per container costs policies nothing.
                self.cluster.confirm(*container)?;
                if self.cluster.gang_member_started(*container) {
                    // A member of a gang the host refused in part: undone.
                    self.kill_gang_member(*container, now);
                }
                return Ok(());
            }
            Event::ContainerCompleted { container, outcome } => {
                self.cluster.complete(*container, *outcome, now)?;
            }
            Event::ContainerProgress { container, progress, .. } => self.cluster.set_progress(*container, *progress)?,
            Event::ContainerRecovered { container, app, node, priority, resources, phase, suspended } => {
                let r = Recovered {
                    container: *container,
                    app: *app,
                    node: *node,
                    priority: *priority,
                    phase: *phase,
                    resources: *resources,
                    suspended: *suspended,
                };
                self.cluster.recover_container(r, now)?;
            }
            Event::Rejected { decision, kind, .. } => {
                self.stats.rejections += 1;
                self.rollback(decision, *kind, now);
            }
            Event::OffloadDone { .. } => {}
        }
        self.with_ctx(now, |p, ctx| p.on_event(ctx, &event));
        Ok(())
    }

    fn rollback(&mut self, decision: &Decision, kind: RefusalKind, now: Time) {
        match decision {
            Decision::Allocate { container, .. } => {
                self.cluster.rollback_allocation(*container);
                for sibling in self.cluster.gang_member_refused(*container) {
                    self.kill_gang_member(sibling, now);
                }
            }
            Decision::Reserve { node, .. } => {
                let _ = self.cluster.unreserve(*node);
            }
            Decision::Unreserve { .. } => {}
            Decision::Preempt { container, mode } => {
                self.cluster.rollback_preempt(*container, *mode, now);
                if *mode == PreemptMode::Suspend && kind == RefusalKind::Never {
                    self.cluster.refuse_suspension(*container);
                }
            }
            Decision::Resume { container } => self.cluster.rollback_resume(*container, now),
        }
    }

    /// Kills a started member of a gang the host refused in part, so that
    /// no gang runs in part (the core's own decision: no policy made it).
    fn kill_gang_member(&mut self, container: ContainerId, now: Time) {
        if self.cluster.preempt(container, PreemptMode::Kill, now).is_ok() {
            self.out.push_back(Decision::Preempt { container, mode: PreemptMode::Kill });
            self.stats.preemptions += 1;
        }
    }

    /// A snapshot for operators: the policy's own view at the last step's time.
    pub fn describe(&self) -> serde_json::Value {
        self.policy.describe(&self.cluster, self.last_now)
    }

    fn with_ctx(&mut self, now: Time, f: impl FnOnce(&mut dyn Policy, &mut Ctx<'_>)) {
        let before = self.out.len();
        let mut ctx =
            Ctx::new(now, &mut self.cluster, &mut self.out, &mut self.rng, self.network_delay_ms, &mut self.metrics);
        if self.offload {
            ctx = ctx.with_offloads(&mut self.offloads);
        }
        f(self.policy.as_mut(), &mut ctx);
        for d in self.out.iter().skip(before) {
            match d {
                Decision::Allocate { .. } => self.stats.allocations += 1,
                Decision::Preempt { .. } => self.stats.preemptions += 1,
                Decision::Resume { .. } => self.stats.resumes += 1,
                _ => {}
            }
        }
    }
}
