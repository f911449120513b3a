//! Property test of dormant tasks ([`super::dormant`]): a Kairos that sets
//! no timer for quantum ends that can only start the next quantum decides
//! exactly as one that wakes for every quantum end, and counts the same
//! quantum ends, under random jobs, completions, app removals and time, with
//! every wake-up fired at its time (as the simulator does). After every
//! operation no task is dormant on a node that holds a task to resume, and
//! the count of dormant tasks per node is the tasks' own.

use super::{Config, Kairos, PARAMS};
use proptest::prelude::*;
use sojourn_core::{
    AppId, AppSpec, Ask, ContainerState, CoreConfig, Decision, Event, Harness, NodeId, NodeSpec, Outcome, Params,
    Phase, Priority, Resources, Time,
};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum Op {
    Job { tasks: u32 },
    Finish { pick: usize },
    RemoveApp { pick: usize },
    Advance { ms: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1u32..5).prop_map(|tasks| Op::Job { tasks }),
        3 => (0usize..16).prop_map(|pick| Op::Finish { pick }),
        1 => (0usize..8).prop_map(|pick| Op::RemoveApp { pick }),
        3 => (1u64..4000).prop_map(|ms| Op::Advance { ms }),
        // on the quanta's grid: events at the very time a quantum ends
        3 => (1u64..8).prop_map(|k| Op::Advance { ms: k * 500 }),
    ]
}

fn kairos(kv: &[(String, String)], lazy: bool, nodes: &[(u64, u32)]) -> Result<Harness, TestCaseError> {
    let given: BTreeMap<String, String> = kv.iter().cloned().collect();
    let params = Params::validate("kairos", PARAMS, &given).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut policy = Kairos::new(Config::from_params(&params).map_err(|e| TestCaseError::fail(e.to_string()))?);
    policy.lazy_quanta = lazy;
    let mut h = Harness::new(Box::new(policy), CoreConfig::default());
    for (i, (gb, vcores)) in nodes.iter().enumerate() {
        let spec = NodeSpec {
            node: NodeId(i as u32),
            name: format!("n{i}"),
            rack: "/r".into(),
            labels: vec![],
            capacity: Resources::new(gb * 1024, *vcores),
        };
        h.handle(Time::ZERO, Event::NodeAdded(spec)).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
    Ok(h)
}

/// One host driving a core: fires every wake-up at its time.
struct Run {
    h: Harness,
    now: Time,
    apps: u32,
    log: Vec<Decision>,
}

impl Run {
    fn send(&mut self, event: Event) {
        // a refusal (e.g. a removed app's container) is part of the run
        let _ = self.h.handle(self.now, event);
        self.log.extend(self.h.drain_decisions());
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Job { tasks } => {
                let app = AppId(self.apps);
                self.apps += 1;
                self.send(Event::AppAdded(AppSpec::new(app, "default", "u")));
                let ask = Ask::new(Priority::MAP, Resources::new(1024, 1), *tasks, Phase::Map);
                self.send(Event::AsksUpdated { app, asks: vec![ask] });
            }
            Op::Finish { pick } => {
                let running: Vec<_> = self
                    .h
                    .core()
                    .cluster()
                    .containers()
                    .filter(|c| c.state == ContainerState::Running)
                    .map(|c| c.id)
                    .collect();
                if let Some(c) = running.get(pick % running.len().max(1)) {
                    self.send(Event::ContainerCompleted { container: *c, outcome: Outcome::Finished });
                }
            }
            Op::RemoveApp { pick } => {
                let apps: Vec<AppId> = self.h.core().cluster().apps().map(|a| a.id()).collect();
                if let Some(app) = apps.get(pick % apps.len().max(1)) {
                    self.send(Event::AppRemoved { app: *app });
                }
            }
            Op::Advance { ms } => {
                let until = self.now.plus(*ms);
                while let Some(t) = self.h.poll_timeout().filter(|t| *t <= until) {
                    self.now = t.max(self.now);
                    self.h.handle_timeout(self.now);
                    self.log.extend(self.h.drain_decisions());
                }
                self.now = until;
            }
        }
        self.send(Event::ScheduleAll);
    }

    fn kairos(&self) -> &Kairos {
        self.h.core().policy_as::<Kairos>().expect("kairos")
    }

    /// Quantum ends so far, the dormant tasks' passed ones included.
    fn quantum_ends(&self) -> u64 {
        self.h.core().metrics().counter("quantum_ends") + self.kairos().uncounted_quantum_ends(self.now)
    }
}

fn settings() -> impl Strategy<Value = Vec<(String, String)>> {
    (prop_oneof![Just("waited"), Just("preempted")], 0u32..3, prop_oneof![Just(0u64), Just(400)], 0u32..3).prop_map(
        |(starvation, quanta, hysteresis, extra)| {
            [
                ("quantum_ms", "1000".to_string()),
                ("starvation", starvation.to_string()),
                ("starvation_quanta", quanta.to_string()),
                ("hysteresis_ms", hysteresis.to_string()),
                ("extra_tasks", extra.to_string()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn dormant_tasks_decide_and_count_as_a_wake_up_at_every_quantum_end(
        kv in settings(),
        nodes in proptest::collection::vec((1u64..6, 1u32..3), 1..4),
        ops in proptest::collection::vec(op(), 1..80),
    ) {
        let mut lazy = Run { h: kairos(&kv, true, &nodes)?, now: Time::ZERO, apps: 0, log: Vec::new() };
        let mut eager = Run { h: kairos(&kv, false, &nodes)?, now: Time::ZERO, apps: 0, log: Vec::new() };
        for (i, op) in ops.iter().enumerate() {
            lazy.apply(op);
            eager.apply(op);
            prop_assert_eq!(&lazy.log, &eager.log, "decisions after op {} {:?}", i, op);
            prop_assert_eq!(lazy.quantum_ends(), eager.quantum_ends(), "quantum ends after op {} {:?}", i, op);
            let k = lazy.kairos();
            let cluster = lazy.h.core().cluster();
            let mut dormant_on: BTreeMap<NodeId, u32> = BTreeMap::new();
            for (c, t) in k.tasks.iter().filter(|(_, t)| t.dormant) {
                prop_assert!(!k.has_task_to_resume(cluster, t.node), "{:?} dormant on {:?} after op {} {:?}", c, t.node, i, op);
                *dormant_on.entry(t.node).or_default() += 1;
            }
            let indexed: BTreeMap<NodeId, u32> = k.dormant_on.iter().map(|(n, c)| (*n, *c)).collect();
            prop_assert_eq!(indexed, dormant_on, "dormant tasks per node after op {} {:?}", i, op);
        }
    }
}
