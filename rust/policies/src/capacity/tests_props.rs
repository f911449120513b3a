//! Random operation sequences driven through the shared harness, with the
//! policy's own books inspected (`Core::policy_as`):
//! after every step the mirror's invariants hold and the policy's usage,
//! waiting and reservation books equal a recomputation from the mirror.
//! With the default tree and asks without locality, a scheduling pass
//! leaves no app whose head ask on a node (its most important ask, see
//! [`head_ask`]) fits that node unreserved, unless some ask is larger than
//! all that is free and not reserved: that ask exceeds the queue's headroom
//! and, as in YARN (QUEUE_SKIPPED), stops its leaf until room appears. This is
//! CapacityScheduler's work conservation: weaker than "no waiting ask fits
//! anywhere", since an app's less important asks wait behind its head ask.

use super::tests::params;
use super::Capacity;
use proptest::prelude::*;
use sojourn_core::{
    AppId, AppSpec, Ask, Cluster, ContainerId, CoreConfig, Decision, Event, Harness, Locality, NodeId, NodeSpec,
    Outcome, Phase, PreemptMode, Priority, Resources, Time,
};

/// The shared harness, with the policy's own books in reach.
struct Direct {
    h: Harness,
    now: Time,
}

impl Direct {
    fn new(kv: &[(&str, &str)]) -> Direct {
        let p = params(kv).expect("valid parameters");
        let policy = Box::new(Capacity::new(&p).expect("valid tree"));
        Direct { h: Harness::new(policy, CoreConfig { seed: 7, ..CoreConfig::default() }), now: Time::ZERO }
    }

    fn cluster(&self) -> &Cluster {
        self.h.cluster()
    }

    fn policy(&self) -> &Capacity {
        self.h.policy_as::<Capacity>().expect("a capacity policy")
    }

    /// Random operations may be refused (an unknown app ...): that is fine.
    fn handle(&mut self, e: Event) {
        let _ = self.h.handle(self.now, e);
    }

    fn advance(&mut self, ms: u64) {
        self.now = self.now.plus(ms);
        self.h.handle_timeout(self.now);
    }

    /// Acts on kills as a driver would: the container completes.
    fn settle(&mut self) {
        loop {
            let kills: Vec<ContainerId> = self
                .h
                .drain_decisions()
                .into_iter()
                .filter_map(|d| match d {
                    Decision::Preempt { container, mode: PreemptMode::Kill } => Some(container),
                    _ => None,
                })
                .collect();
            if kills.is_empty() {
                return;
            }
            for container in kills {
                self.handle(Event::ContainerCompleted { container, outcome: Outcome::Preempted });
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    AddApp { queue: u8, user: u8, prio: i8 },
    Ask { app: u8, prio: u8, mem_gb: u8, vcores: u8, count: u8, local: Option<u8>, am: bool },
    Schedule,
    Heartbeat { node: u8 },
    Complete { pick: u16 },
    RemoveApp { app: u8 },
    RemoveNode { node: u8 },
    Advance { ms: u16 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0u8..5, 0u8..3, -1i8..2).prop_map(|(queue, user, prio)| Op::AddApp { queue, user, prio }),
        4 => (0u8..8, 0u8..3, 1u8..4, 1u8..3, 0u8..10, proptest::option::of(0u8..4), any::<bool>()).prop_map(
            |(app, prio, mem_gb, vcores, count, local, am)| Op::Ask { app, prio, mem_gb, vcores, count, local, am }
        ),
        3 => Just(Op::Schedule),
        3 => (0u8..4).prop_map(|node| Op::Heartbeat { node }),
        2 => any::<u16>().prop_map(|pick| Op::Complete { pick }),
        1 => (0u8..8).prop_map(|app| Op::RemoveApp { app }),

        1 => (0u8..4).prop_map(|node| Op::RemoveNode { node }),
        3 => (1u16..5000).prop_map(|ms| Op::Advance { ms }),
    ]
}

/// The ask of `a` that CapacityScheduler tries on `n`: its most important
/// one, passing over asks that fit `n` by memory but never by vcores (the
/// core does not over-commit them); none if that ask's memory exceeds the
/// node (YARN then skips the app on this node).
fn head_ask<'a>(a: &'a sojourn_core::App, n: &sojourn_core::Node) -> Option<&'a sojourn_core::AskState> {
    for st in a.outstanding_asks() {
        if st.ask.capability.memory_mb > n.capacity.memory_mb {
            return None;
        }
        if st.ask.capability.fits_in(&n.capacity) {
            return Some(st);
        }
    }
    None
}

const QUEUES: [&str; 5] = ["default", "a", "root.b.b1", "b2", "nowhere"];

fn run(kv: &[(&str, &str)], nodes: &[(u8, u8)], ops: &[Op], conserving: bool) -> Result<(), TestCaseError> {
    let mut d = Direct::new(kv);
    for (i, (gb, vc)) in nodes.iter().enumerate() {
        d.handle(Event::NodeAdded(NodeSpec {
            node: NodeId(i as u32),
            name: format!("n{i}"),
            rack: format!("/r{}", i % 2),
            labels: vec![],
            capacity: Resources::new(*gb as u64 * 1024, *vc as u32),
        }));
    }
    let mut apps = 0u32;
    for op in ops {
        let mut scheduled = false;
        match op {
            Op::AddApp { queue, user, prio } => {
                d.handle(Event::AppAdded(AppSpec {
                    priority: *prio as i32,
                    ..AppSpec::new(AppId(apps), QUEUES[*queue as usize % QUEUES.len()], &format!("u{user}"))
                }));
                apps += 1;
            }
            Op::Ask { app, prio, mem_gb, vcores, count, local, am } => {
                let phase = if *am { Phase::Am } else { Phase::Map };
                let mut ask = Ask::new(
                    Priority(*prio as u32 * 10),
                    Resources::new(*mem_gb as u64 * 1024, *vcores as u32),
                    *count as u32,
                    phase,
                );
                if let Some(n) = local {
                    ask.locality =
                        vec![Locality::Node(NodeId(*n as u32), 1), Locality::Rack(format!("/r{}", n % 2), 1)];
                }
                let app = AppId(*app as u32 % apps.max(1));
                d.handle(Event::AsksUpdated { app, asks: vec![ask] });
            }
            Op::Schedule => {
                d.handle(Event::ScheduleAll);
                scheduled = true;
            }
            Op::Heartbeat { node } => d.handle(Event::NodeHeartbeat { node: NodeId(*node as u32) }),
            Op::Complete { pick } => {
                let cs: Vec<ContainerId> = d.cluster().containers().map(|c| c.id).collect();
                if !cs.is_empty() {
                    let c = cs[*pick as usize % cs.len()];
                    d.handle(Event::ContainerCompleted { container: c, outcome: Outcome::Finished });
                }
            }
            Op::RemoveApp { app } => d.handle(Event::AppRemoved { app: AppId(*app as u32 % apps.max(1)) }),
            Op::RemoveNode { node } => {
                let id = NodeId(*node as u32);
                if let Some(n) = d.cluster().node(id) {
                    let spec = NodeSpec {
                        node: id,
                        name: n.name.clone(),
                        rack: d.cluster().rack_name(n.rack).to_string(),
                        labels: vec![],
                        capacity: n.capacity,
                    };
                    d.handle(Event::NodeRemoved { node: id });
                    d.handle(Event::NodeAdded(spec));
                }
            }
            Op::Advance { ms } => d.advance(*ms as u64),
        }
        d.settle();
        d.cluster().check_invariants().map_err(|e| TestCaseError::fail(e.to_string()))?;
        d.policy().check(d.cluster()).map_err(|e| TestCaseError::fail(format!("after {op:?}: {e}")))?;
        // YARN's head-of-line rule: an ask larger than the queue's headroom
        // (for the default tree, what is free and not reserved) stops the leaf.
        let free: u64 = d
            .cluster()
            .nodes()
            .map(|n| n.available().memory_mb)
            .sum::<u64>()
            .saturating_sub(d.cluster().nodes().filter_map(|n| n.reservation.map(|r| r.2.memory_mb)).sum::<u64>());
        let blocked = d.cluster().apps().flat_map(|a| a.outstanding_asks()).any(|s| s.ask.capability.memory_mb > free);
        if scheduled && conserving && !blocked {
            for a in d.cluster().apps() {
                if d.policy().state.unplaced.contains_key(&a.id()) {
                    continue;
                }
                for n in d.cluster().nodes() {
                    if let Some(st) = head_ask(a, n) {
                        prop_assert!(
                            !(st.ask.capability.fits_in(&n.available()) && n.reservation.is_none()),
                            "{} waits for {} while {} has {} free",
                            a.id(),
                            st.ask.capability,
                            n.id,
                            n.available()
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn books_match_the_mirror_under_random_operations(
        nodes in proptest::collection::vec((2u8..9, 1u8..5), 1..4),
        ops in proptest::collection::vec(op(), 1..80),
    ) {
        run(
            &[("node_locality_delay", "-1"), ("rack_locality_additional_delay", "0"), ("resource_calculator", "dominant")],
            &nodes,
            &ops,
            false,
        )?;
        run(&[], &nodes, &ops, false)?;
        run(
            &[
                ("queue.root.queues", "a,b"),
                ("queue.root.a.capacity", "40"),
                ("queue.root.a.maximum_capacity", "60"),
                ("queue.root.b.capacity", "60"),
                ("queue.root.b.queues", "b1,b2"),
                ("queue.root.b.b1.capacity", "50"),
                ("queue.root.b.b1.minimum_user_limit_percent", "50"),
                ("queue.root.b.b2.capacity", "50"),
                ("queue.root.a.user_limit_factor", "-1"),
                ("queue.root.b.b2.user_limit_factor", "3"),
                ("preemption.enabled", "true"),
                ("preemption.max_wait_before_kill_ms", "0"),
                ("preemption.natural_termination_factor", "1"),
                ("preemption.total_preemption_per_round", "1"),
            ],
            &nodes,
            &ops,
            false,
        )?;
    }

    #[test]
    fn default_tree_conserves_work_for_asks_without_locality(
        nodes in proptest::collection::vec((2u8..9, 1u8..5), 1..4),
        ops in proptest::collection::vec(op(), 1..80),
    ) {
        let ops: Vec<Op> = ops
            .into_iter()
            .map(|o| match o {
                Op::Ask { app, prio, mem_gb, vcores, count, .. } => {
                    Op::Ask { app, prio, mem_gb, vcores, count, local: None, am: false }
                }
                other => other,
            })
            .collect();
        run(&[], &nodes, &ops, true)?;
    }
}
