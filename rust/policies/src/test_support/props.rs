//! One property-test driver for every policy. Random operation sequences
//! (apps, asks, heartbeats, scheduling passes, completions, app and node
//! removals, time) run through the core's `Harness`, with kills acted on as
//! a driver would (the container completes). After every operation the
//! driver checks what any policy must keep: the mirror's invariants, and no
//! app given more containers at a priority than it asked for. A policy's
//! test adds its own checks in a closure ([`run`]) and picks the operations'
//! mix ([`OpSpace`]) and the cluster's shape ([`Setup`]); a new policy gets
//! property tests by writing only those.
//!
//! The policies' unit tests use this as `crate::test_support::props`; the
//! integration test `tests/properties.rs` includes this file by path, as
//! code under `cfg(test)` is not in the library integration tests link and a
//! feature would make proptest a dependency of the library. So this file
//! names only `sojourn_core`, `proptest` and `std`.

use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Union};
use sojourn_core::{
    AppId, AppSpec, Ask, Cluster, ContainerId, CoreConfig, Decision, Event, Harness, Locality, NodeId, NodeSpec,
    Outcome, Phase, Policy, PreemptMode, Priority, Resources, Time,
};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// One random operation. Ids are small numbers the driver maps to apps
/// and nodes ([`Setup::lenient`] says how).
#[derive(Clone, Debug)]
pub enum Op {
    AddApp {
        queue: u8,
        user: u8,
        prio: i8,
    },
    Ask {
        app: u8,
        prio: u8,
        mem_gb: u8,
        vcores: u8,
        count: u8,
        local: Option<u8>,
        am: bool,
    },
    Schedule,
    Heartbeat {
        node: u8,
    },
    Complete {
        pick: u16,
    },
    RemoveApp {
        app: u8,
    },
    /// The node leaves (its containers are lost) and comes back empty.
    RemoveNode {
        node: u8,
    },
    Advance {
        ms: u16,
    },
}

/// The mix of random operations: how often each kind comes, and what its
/// fields range over.
#[derive(Clone, Copy, Debug)]
pub struct OpSpace {
    /// Weights of AddApp, Ask, Schedule, Heartbeat, Complete, RemoveApp,
    /// RemoveNode and Advance, in that order; 0 leaves a kind out.
    pub weights: [u32; 8],
    /// Apps go to queue `0..queues` of [`Setup::queues`].
    pub queues: u8,
    /// Apps get priorities -1, 0 and 1 (else all 0).
    pub app_priorities: bool,
    /// An ask is for `0..max_count` containers.
    pub max_count: u8,
    /// Some asks prefer a node and its rack.
    pub locality: bool,
    /// Some asks are for an AM container.
    pub am: bool,
    /// Time advances by `1..max_advance_ms` ms.
    pub max_advance_ms: u16,
}

impl OpSpace {
    /// The mix every policy is tested with: apps in one queue, asks of 0 to
    /// 5 containers anywhere, no node removal, time in steps up to 5 s. A
    /// policy's own test changes what it needs (`..OpSpace::BASIC`).
    pub const BASIC: OpSpace = OpSpace {
        weights: [2, 4, 3, 2, 3, 1, 0, 2],
        queues: 1,
        app_priorities: false,
        max_count: 6,
        locality: false,
        am: false,
        max_advance_ms: 5000,
    };

    /// Random operations of this mix.
    pub fn strategy(&self) -> BoxedStrategy<Op> {
        let s = *self;
        let prio = if s.app_priorities { (-1i8..2).boxed() } else { Just(0i8).boxed() };
        let local = if s.locality { proptest::option::of(0u8..4).boxed() } else { Just(None).boxed() };
        let am = if s.am { any::<bool>().boxed() } else { Just(false).boxed() };
        let kinds: [BoxedStrategy<Op>; 8] = [
            (0..s.queues, 0u8..3, prio).prop_map(|(queue, user, prio)| Op::AddApp { queue, user, prio }).boxed(),
            (0u8..8, 0u8..3, 1u8..4, 1u8..3, 0..s.max_count, local, am)
                .prop_map(|(app, prio, mem_gb, vcores, count, local, am)| Op::Ask {
                    app,
                    prio,
                    mem_gb,
                    vcores,
                    count,
                    local,
                    am,
                })
                .boxed(),
            Just(Op::Schedule).boxed(),
            (0u8..4).prop_map(|node| Op::Heartbeat { node }).boxed(),
            any::<u16>().prop_map(|pick| Op::Complete { pick }).boxed(),
            (0u8..8).prop_map(|app| Op::RemoveApp { app }).boxed(),
            (0u8..4).prop_map(|node| Op::RemoveNode { node }).boxed(),
            (1..s.max_advance_ms).prop_map(|ms| Op::Advance { ms }).boxed(),
        ];
        let weighted = s.weights.into_iter().zip(kinds).filter(|(w, _)| *w > 0).collect::<Vec<_>>();
        Union::new_weighted(weighted).boxed()
    }

    /// Sequences of `lengths` operations of this mix.
    pub fn ops(&self, lengths: Range<usize>) -> impl Strategy<Value = Vec<Op>> {
        proptest::collection::vec(self.strategy(), lengths)
    }
}

/// One to three nodes of 2 to 8 GB, with `vcores` each: `(GB, vcores)`.
pub fn nodes(vcores: Range<u8>) -> impl Strategy<Value = Vec<(u8, u8)>> {
    proptest::collection::vec((2u8..9, vcores), 1..4)
}

/// The cluster and how the driver treats ids.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The queue names apps are submitted to.
    pub queues: &'static [&'static str],
    /// Nodes go round-robin to racks `/r0`, `/r1`, ...
    pub racks: u32,
    /// `false`: only valid operations are sent (asks and removals of live
    /// apps, heartbeats of known nodes), and the core must accept every
    /// event. `true`: ids are taken modulo what exists, so removed apps
    /// and unknown nodes get events too, and what the core refuses is passed
    /// over (the refusals are part of what is tested).
    pub lenient: bool,
    /// Every ask is for <1 GB, 1 vcore> containers, four times as many, and
    /// each advance of time follows a scheduling pass: the cluster stays
    /// full, so starvation covers whole containers and preemption fires.
    pub unit: bool,
    /// The core's seed.
    pub seed: u64,
}

impl Default for Setup {
    fn default() -> Setup {
        Setup { queues: &["default"], racks: 1, lenient: false, unit: false, seed: 0 }
    }
}

/// What one operation did, for a policy's own checks.
pub struct Stepped<'a> {
    pub op: &'a Op,
    /// The operation was a scheduling pass.
    pub scheduled: bool,
    /// The decisions made while it ran (and while its kills completed).
    pub decisions: &'a [Decision],
}

/// A core under random operations.
pub struct Driver {
    name: String,
    setup: Setup,
    h: Harness,
    now: Time,
    nodes: u32,
    apps: u32,
    removed: BTreeSet<AppId>,
    /// Per (app, priority): containers asked for minus allocated.
    wanted: BTreeMap<(AppId, Priority), i64>,
    log: Vec<Decision>,
}

fn fail(e: impl std::fmt::Display) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

impl Driver {
    /// A core running `policy` (called `name` in messages) on `nodes`
    /// (`(GB, vcores)` each).
    pub fn new(
        name: &str,
        policy: Box<dyn Policy>,
        setup: &Setup,
        nodes: &[(u8, u8)],
    ) -> Result<Driver, TestCaseError> {
        let config = CoreConfig { seed: setup.seed, ..CoreConfig::default() };
        let mut d = Driver {
            name: name.to_string(),
            setup: setup.clone(),
            h: Harness::new(policy, config),
            now: Time::ZERO,
            nodes: nodes.len() as u32,
            apps: 0,
            removed: BTreeSet::new(),
            wanted: BTreeMap::new(),
            log: Vec::new(),
        };
        for (i, (gb, vc)) in nodes.iter().enumerate() {
            let node = NodeId(i as u32);
            let spec = NodeSpec {
                node,
                name: format!("n{i}"),
                rack: d.rack(node),
                labels: vec![],
                capacity: Resources::new(*gb as u64 * 1024, *vc as u32),
            };
            d.send(Event::NodeAdded(spec))?;
        }
        Ok(d)
    }

    pub fn harness(&self) -> &Harness {
        &self.h
    }

    /// Every decision so far, in order ([`Driver::apply`] returns where an
    /// operation's own begin).
    pub fn log(&self) -> &[Decision] {
        &self.log
    }

    pub fn cluster(&self) -> &Cluster {
        self.h.cluster()
    }

    fn rack(&self, node: NodeId) -> String {
        format!("/r{}", node.0 % self.setup.racks.max(1))
    }

    /// Sends one event; a refusal fails the case unless the setup is lenient.
    fn send(&mut self, e: Event) -> Result<bool, TestCaseError> {
        match self.h.handle(self.now, e.clone()) {
            Ok(()) => Ok(true),
            Err(_) if self.setup.lenient => Ok(false),
            Err(err) => Err(fail(format!("{}: {e:?} refused: {err}", self.name))),
        }
    }

    /// The app an operation names, if it is to be sent (see [`Setup::lenient`]).
    fn app(&self, app: u8) -> Option<AppId> {
        if self.setup.lenient {
            return Some(AppId(app as u32 % self.apps.max(1)));
        }
        let app = AppId(app as u32);
        (app.0 < self.apps && !self.removed.contains(&app)).then_some(app)
    }

    /// The node an operation names (see [`Setup::lenient`]).
    fn node(&self, node: u8) -> NodeId {
        if self.setup.lenient {
            NodeId(node as u32)
        } else {
            NodeId(node as u32 % self.nodes.max(1))
        }
    }

    /// Runs `op`, acts on the kills it brought, and checks what every
    /// policy keeps. Returns the index in [`Driver::log`] of its first decision.
    pub fn apply(&mut self, op: &Op) -> Result<usize, TestCaseError> {
        let first = self.log.len();
        match op {
            Op::AddApp { queue, user, prio } => {
                let queues = self.setup.queues;
                let queue = queues[*queue as usize % queues.len()];
                let spec =
                    AppSpec { priority: *prio as i32, ..AppSpec::new(AppId(self.apps), queue, &format!("user{user}")) };
                self.apps += 1;
                self.send(Event::AppAdded(spec))?;
            }
            Op::Ask { app, prio, mem_gb, vcores, count, local, am } => {
                if let Some(app) = self.app(*app) {
                    let priority = Priority(*prio as u32 * 10);
                    let (cap, count) = if self.setup.unit {
                        (Resources::new(1024, 1), *count as u32 * 4)
                    } else {
                        (Resources::new(*mem_gb as u64 * 1024, *vcores as u32), *count as u32)
                    };
                    let phase = if *am { Phase::Am } else { Phase::Map };
                    let mut ask = Ask::new(priority, cap, count, phase);
                    if let Some(n) = local {
                        let node = NodeId(*n as u32);
                        ask.locality = vec![Locality::Node(node, 1), Locality::Rack(self.rack(node), 1)];
                    }
                    // An ask replaces what is outstanding at its priority.
                    if self.send(Event::AsksUpdated { app, asks: vec![ask] })? {
                        self.wanted.insert((app, priority), count as i64);
                    }
                }
            }
            Op::Schedule => {
                self.send(Event::ScheduleAll)?;
            }
            Op::Heartbeat { node } => {
                let node = self.node(*node);
                self.send(Event::NodeHeartbeat { node })?;
            }
            Op::Complete { pick } => {
                let running: Vec<ContainerId> = self.cluster().containers().map(|c| c.id).collect();
                if !running.is_empty() {
                    let container = running[*pick as usize % running.len()];
                    self.send(Event::ContainerCompleted { container, outcome: Outcome::Finished })?;
                }
            }
            Op::RemoveApp { app } => {
                if let Some(app) = self.app(*app) {
                    self.removed.insert(app);
                    self.send(Event::AppRemoved { app })?;
                }
            }
            Op::RemoveNode { node } => {
                let id = self.node(*node);
                if let Some(n) = self.cluster().node(id) {
                    let spec = NodeSpec {
                        node: id,
                        name: n.name.clone(),
                        rack: self.cluster().rack_name(n.rack).to_string(),
                        labels: n.labels.clone(),
                        capacity: n.capacity,
                    };
                    self.send(Event::NodeRemoved { node: id })?;
                    self.send(Event::NodeAdded(spec))?;
                }
            }
            Op::Advance { ms } => {
                if self.setup.unit {
                    // Fill free space first, so starvation needs victims.
                    self.send(Event::ScheduleAll)?;
                    self.settle()?;
                }
                self.now = self.now.plus(*ms as u64);
                self.h.handle_timeout(self.now);
            }
        }
        self.settle()?;
        self.cluster().check_invariants().map_err(|e| fail(format!("{} after {op:?}: {e}", self.name)))?;
        Ok(first)
    }

    /// Takes the decisions: allocations are checked against what was asked,
    /// kills complete at once (as a driver reports them), and what those
    /// completions bring is taken too.
    fn settle(&mut self) -> Result<(), TestCaseError> {
        while let Some(d) = self.h.poll_decision() {
            self.log.push(d.clone());
            match d {
                Decision::Allocate { app, priority, .. } => {
                    let w = self.wanted.entry((app, priority)).or_insert(0);
                    *w -= 1;
                    prop_assert!(*w >= 0, "{}: {app} got more containers at {priority} than it asked for", self.name);
                }
                Decision::Preempt { container, mode: PreemptMode::Kill } => {
                    self.send(Event::ContainerCompleted { container, outcome: Outcome::Preempted })?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Runs `ops` against `policy`, calling `check` after each (once the
/// driver's own checks passed); returns every decision, for tests that
/// compare two runs.
pub fn run(
    name: &str,
    policy: Box<dyn Policy>,
    setup: &Setup,
    nodes: &[(u8, u8)],
    ops: &[Op],
    mut check: impl FnMut(&Driver, &Stepped<'_>) -> Result<(), TestCaseError>,
) -> Result<Vec<Decision>, TestCaseError> {
    let mut d = Driver::new(name, policy, setup, nodes)?;
    for op in ops {
        let first = d.apply(op)?;
        let step = Stepped { op, scheduled: matches!(op, Op::Schedule), decisions: &d.log[first..] };
        check(&d, &step)?;
    }
    Ok(d.log)
}

/// Work conservation in its strict form: no outstanding ask fits a node
/// that has the room and no reservation (checked after a scheduling pass).
pub fn no_waiting_ask_fits(cluster: &Cluster, name: &str) -> Result<(), TestCaseError> {
    for a in cluster.apps() {
        for st in a.outstanding_asks() {
            for n in cluster.nodes() {
                prop_assert!(
                    !(st.ask.capability.fits_in(&n.available()) && n.reservation.is_none()),
                    "{name}: {} waits for {} while {} has {} free",
                    a.id(),
                    st.ask.capability,
                    n.id,
                    n.available()
                );
            }
        }
    }
    Ok(())
}
