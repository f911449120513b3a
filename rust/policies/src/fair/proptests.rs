//! Random operation sequences against several `fair` configurations: the
//! mirror's invariants hold, no app gets more than it asked for, no queue
//! goes over its max share, the same inputs give the same decisions, and
//! (without max shares) no waiting ask fits a free, unreserved node after
//! a scheduling pass.

use super::{build, PARAMS};
use proptest::prelude::*;
use sojourn_core::{
    AppId, AppSpec, Ask, ContainerId, CoreConfig, Decision, Event, Harness, NodeId, NodeSpec, Outcome, Params, Phase,
    PreemptMode, Priority, Resources, Time,
};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum Op {
    AddApp { queue: u8, user: u8 },
    Ask { app: u8, prio: u8, mem_gb: u8, vcores: u8, count: u8 },
    Schedule,
    Heartbeat { node: u8 },
    Complete { pick: u16 },
    RemoveApp { app: u8 },
    Advance { ms: u16 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0u8..4, 0u8..3).prop_map(|(queue, user)| Op::AddApp { queue, user }),
        4 => (0u8..8, 0u8..3, 1u8..4, 1u8..3, 0u8..6)
            .prop_map(|(app, prio, mem_gb, vcores, count)| Op::Ask { app, prio, mem_gb, vcores, count }),
        3 => Just(Op::Schedule),
        3 => (0u8..4).prop_map(|node| Op::Heartbeat { node }),
        3 => any::<u16>().prop_map(|pick| Op::Complete { pick }),
        1 => (0u8..8).prop_map(|app| Op::RemoveApp { app }),
        2 => (1u16..8000).prop_map(|ms| Op::Advance { ms }),
    ]
}

const QUEUES: [&str; 4] = ["default", "root.a", "b.c", "root.b.d"];

const PREEMPTIVE: &[(&str, &str)] = &[
    ("preemption", "true"),
    ("fair_share_preemption_timeout_ms", "0"),
    ("min_share_preemption_timeout_ms", "500"),
    ("fair_share_preemption_threshold", "1"),
    ("starvation_recheck_delay_ms", "1000"),
    ("preemption_utilization_threshold", "0"),
    ("queue.root.b.min_memory_mb", "4096"),
    ("queue.root.a.weight", "2"),
];

const CONFIGS: &[&[(&str, &str)]] = &[
    &[],
    &[("queue.root.a.weight", "3"), ("queue.root.b.min_memory_mb", "4096"), ("assign_multiple", "true")],
    &[("default_policy", "drf"), ("user_as_default_queue", "false")],
    PREEMPTIVE,
    &[("queue.root.a.max_memory_mb", "3072"), ("queue.root.b.max_vcores", "2"), ("assign_multiple", "true")],
];

/// Runs `ops`; with `unit`, every ask is for <1 GB, 1 vcore> containers
/// (starvation then always covers whole containers, so preemption fires).
fn run(cfg: &[(&str, &str)], nodes: &[(u8, u8)], ops: &[Op], unit: bool) -> Result<Vec<Decision>, TestCaseError> {
    let fail = |e: sojourn_core::CoreError| TestCaseError::fail(e.to_string());
    let given: BTreeMap<String, String> = cfg.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let params = Params::validate("fair", PARAMS, &given).map_err(fail)?;
    let mut core = Harness::new(build(&params).map_err(fail)?, CoreConfig::default());
    let capped = cfg.iter().any(|(k, _)| k.contains("max_"));
    let mut now = Time::ZERO;
    for (i, (gb, vc)) in nodes.iter().enumerate() {
        let spec = NodeSpec {
            node: NodeId(i as u32),
            name: format!("n{i}"),
            rack: "/r".into(),
            labels: vec![],
            capacity: Resources::new(*gb as u64 * 1024, *vc as u32),
        };
        core.handle(now, Event::NodeAdded(spec)).map_err(fail)?;
    }
    let (mut apps, mut removed) = (0u32, std::collections::BTreeSet::new());
    let mut wanted: BTreeMap<(AppId, Priority), i64> = BTreeMap::new();
    let mut running: Vec<ContainerId> = Vec::new();
    let mut log = Vec::new();
    for op in ops {
        let mut scheduled = false;
        match op {
            Op::AddApp { queue, user } => {
                let spec = AppSpec::new(AppId(apps), QUEUES[*queue as usize % QUEUES.len()], &format!("user{user}"));
                apps += 1;
                core.handle(now, Event::AppAdded(spec)).map_err(fail)?;
            }
            Op::Ask { app, prio, mem_gb, vcores, count } => {
                let app = AppId(*app as u32);
                if app.0 >= apps || removed.contains(&app) {
                    continue;
                }
                let priority = Priority(*prio as u32 * 10);
                let cap =
                    if unit { Resources::new(1024, 1) } else { Resources::new(*mem_gb as u64 * 1024, *vcores as u32) };
                // Unit asks come in larger numbers, so demand outlasts the space.
                let count = if unit { *count as u32 * 4 } else { *count as u32 };
                let asks = vec![Ask::new(priority, cap, count, Phase::Map)];
                core.handle(now, Event::AsksUpdated { app, asks }).map_err(fail)?;
                wanted.insert((app, priority), count as i64);
            }
            Op::Schedule => {
                core.handle(now, Event::ScheduleAll).map_err(fail)?;
                scheduled = true;
            }
            Op::Heartbeat { node } => {
                let node = NodeId(*node as u32 % nodes.len() as u32);
                core.handle(now, Event::NodeHeartbeat { node }).map_err(fail)?;
            }
            Op::Complete { pick } => {
                if running.is_empty() {
                    continue;
                }
                let c = running.remove(*pick as usize % running.len());
                core.handle(now, Event::ContainerCompleted { container: c, outcome: Outcome::Finished })
                    .map_err(fail)?;
            }
            Op::RemoveApp { app } => {
                let app = AppId(*app as u32);
                if app.0 >= apps || !removed.insert(app) {
                    continue;
                }
                core.handle(now, Event::AppRemoved { app }).map_err(fail)?;
                running.retain(|c| core.cluster().container(*c).is_some());
            }
            Op::Advance { ms } => {
                if unit {
                    // Fill free space first, so starvation needs victims.
                    core.handle(now, Event::ScheduleAll).map_err(fail)?;
                    drain(&mut core, now, &mut wanted, &mut running, &mut log)?;
                }
                now = now.plus(*ms as u64);
                core.handle_timeout(now);
            }
        }
        drain(&mut core, now, &mut wanted, &mut running, &mut log)?;
        let cl = core.cluster();
        cl.check_invariants().map_err(fail)?;
        let state = core.describe();
        check_max_shares(&state["root"])?;
        if scheduled && !capped {
            for a in cl.apps() {
                for st in a.outstanding_asks() {
                    for n in cl.nodes() {
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
    Ok(log)
}

/// Pulls the decisions: allocations are checked against what was asked,
/// kills complete at once (as a driver would report them).
fn drain(
    core: &mut Harness,
    now: Time,
    wanted: &mut BTreeMap<(AppId, Priority), i64>,
    running: &mut Vec<ContainerId>,
    log: &mut Vec<Decision>,
) -> Result<(), TestCaseError> {
    while let Some(d) = core.poll_decision() {
        log.push(d.clone());
        match d {
            Decision::Allocate { container, app, priority, .. } => {
                let w = wanted.entry((app, priority)).or_insert(0);
                *w -= 1;
                prop_assert!(*w >= 0, "{app} got more containers at {priority} than it asked for");
                running.push(container);
            }
            Decision::Preempt { container, mode } => {
                prop_assert_eq!(mode, PreemptMode::Kill);
                core.handle(now, Event::ContainerCompleted { container, outcome: Outcome::Preempted })
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                running.retain(|c| *c != container);
            }
            _ => {}
        }
    }
    Ok(())
}

fn check_max_shares(q: &serde_json::Value) -> Result<(), TestCaseError> {
    let usage = &q["usage"];
    let max = &q["max_share"];
    for k in ["memory_mb", "vcores"] {
        if let (Some(u), Some(m)) = (usage[k].as_u64(), max[k].as_u64()) {
            prop_assert!(u <= m, "queue {} uses {} {k}, over its max {}", q["name"], u, m);
        }
    }
    for c in q["children"].as_array().into_iter().flatten() {
        check_max_shares(c)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn fair_keeps_invariants_and_is_deterministic(
        nodes in proptest::collection::vec((2u8..9, 1u8..5), 1..4),
        ops in proptest::collection::vec(op(), 1..80),
    ) {
        for cfg in CONFIGS {
            let first = run(cfg, &nodes, &ops, false)?;
            let second = run(cfg, &nodes, &ops, false)?;
            prop_assert_eq!(first, second);
        }
    }

    #[test]
    fn fair_preemption_keeps_invariants(
        nodes in proptest::collection::vec((2u8..9, 1u8..9), 1..4),
        ops in proptest::collection::vec(op(), 1..80),
    ) {
        run(PREEMPTIVE, &nodes, &ops, true)?;
    }
}
