//! The core a driver holds: the mirror plus one policy, driven raft-style.
//! `handle(now, event)` applies an input; `poll_decision()` pulls outputs in
//! order; `poll_timeout()` says when the policy next wants to be woken and
//! `handle_timeout(now)` wakes it. No clock, no threads, no I/O: the same
//! inputs give the same decisions.

use crate::cluster::{Cluster, Recovered};
use crate::error::{CoreError, Result};
use crate::ids::TimerToken;
use crate::policy::{Ctx, Policy};
use crate::protocol::{Decision, Event, PreemptMode, RefusalKind};
use crate::resources::Resources;
use crate::rng::Rng;
use crate::time::Time;
use std::collections::{BTreeSet, VecDeque};

/// Settings of the core itself, shared by every policy.
#[derive(Clone, Debug, Default)]
pub struct CoreConfig {
    pub seed: u64,
    /// Largest container an app may ask for (YARN's maximum-allocation).
    pub max_allocation: Option<Resources>,
    /// Network delay for distributed-scheduler emulations (ms).
    pub network_delay_ms: u64,
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
    timers: BTreeSet<(Time, TimerToken)>,
    rng: Rng,
    network_delay_ms: u64,
    stats: CoreStats,
    last_now: Time,
}

impl Core {
    pub fn new(policy: Box<dyn Policy>, config: CoreConfig) -> Core {
        Core {
            cluster: Cluster::new(config.max_allocation),
            policy,
            out: VecDeque::new(),
            timers: BTreeSet::new(),
            rng: Rng::seeded(config.seed),
            network_delay_ms: config.network_delay_ms,
            stats: CoreStats::default(),
            last_now: Time::ZERO,
        }
    }

    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }
    pub fn policy(&self) -> &dyn Policy {
        self.policy.as_ref()
    }
    pub fn stats(&self) -> &CoreStats {
        &self.stats
    }

    /// Applies one input. An error leaves the mirror as it was before the
    /// event (each mutation validates before it changes anything).
    pub fn handle(&mut self, now: Time, event: Event) -> Result<()> {
        let now = now.max(self.last_now); // time never runs backwards
        self.last_now = now;
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
                self.with_ctx(now, |p, ctx| p.on_node_heartbeat(ctx, node));
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
            Event::ContainerStarted { container } => self.cluster.confirm(*container)?,
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
        }
        self.with_ctx(now, |p, ctx| p.on_event(ctx, &event));
        Ok(())
    }

    fn rollback(&mut self, decision: &Decision, kind: RefusalKind, now: Time) {
        match decision {
            Decision::Allocate { container, .. } => self.cluster.rollback_allocation(*container),
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

    /// When the policy next wants to be woken.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.timers.first().map(|(t, _)| *t)
    }

    /// Fires every timer due at or before `now`, in (time, token) order.
    pub fn handle_timeout(&mut self, now: Time) {
        let now = now.max(self.last_now);
        self.last_now = now;
        while let Some(&(t, token)) = self.timers.first() {
            if t > now {
                break;
            }
            self.timers.pop_first();
            self.with_ctx(now, |p, ctx| p.on_timer(ctx, token));
        }
    }

    /// The next decision, in the order the policy made them.
    pub fn poll_decision(&mut self) -> Option<Decision> {
        self.out.pop_front()
    }

    /// All pending decisions at once.
    pub fn drain_decisions(&mut self) -> Vec<Decision> {
        self.out.drain(..).collect()
    }

    fn with_ctx(&mut self, now: Time, f: impl FnOnce(&mut dyn Policy, &mut Ctx<'_>)) {
        let before = self.out.len();
        let mut ctx =
            Ctx::new(now, &mut self.cluster, &mut self.out, &mut self.timers, &mut self.rng, self.network_delay_ms);
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
