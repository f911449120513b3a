//! Property tests of Pigeon through the shared driver
//! (`test_support::props`): random apps, asks, completions, app and node
//! removals and time, then a drain (every container completes, time runs
//! on) until nothing is left. What must hold:
//! - every task runs exactly once: no app gets more containers than it
//!   asked for (the driver's check), and after the drain no ask waits;
//! - no node is over-committed (the mirror's invariants, after every step);
//! - nothing is lost: after every step each outstanding container of an
//!   ask is covered by a live task, and after the drain (every job done or
//!   gone) no queue, timer or idle notice holds anything and every worker
//!   is on its master's idle lists;
//! - reserved workers run no long task;
//! - the layout (§6.2): nodes on two racks, of one or two slots; groups are
//!   runs of whole nodes in (rack, node) order, no master without workers,
//!   each group's reserved count is round(pct · size);
//! - the same seed gives the same decisions.

use super::{Pigeon, WState};
use crate::test_support::props::{self, Driver, Op, OpSpace, Setup};
use proptest::prelude::*;
use sojourn_core::Decision;
use std::collections::BTreeMap;

/// Small groups so that several masters exist on the driver's small
/// clusters; a high reservation so that reserved workers are exercised;
/// every class, W and delay.
const SETTINGS: &[&[(&str, &str)]] = &[
    &[("workers_per_group", "2"), ("reserved_pct", "50")],
    &[("workers_per_group", "2"), ("reserved_pct", "50"), ("network_delay_us", "0")],
    &[("workers_per_group", "3"), ("reserved_pct", "34"), ("unknown_estimate", "long"), ("wfq_weight", "2")],
    &[("workers_per_group", "1"), ("reserved_pct", "0"), ("wfq_weight", "inf"), ("network_delay_us", "2500")],
    &[("workers_per_group", "4"), ("reserved_pct", "25"), ("wfq_mode", "pigeon_sim"), ("wfq_weight", "1")],
];

const MIX: OpSpace = OpSpace { weights: [2, 4, 2, 2, 3, 1, 1, 2], am: true, ..OpSpace::BASIC };

fn policy(kv: &[(&str, &str)]) -> Box<dyn sojourn_core::Policy> {
    let given: BTreeMap<String, String> = kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    crate::build("pigeon", &given).expect("valid parameters")
}

fn pigeon(d: &Driver) -> &Pigeon {
    d.harness().policy_as::<Pigeon>().expect("pigeon")
}

/// The checks after one step: no outstanding container without a task; no
/// long task on a reserved worker. (The layout is recomputed when nodes
/// come and go, and tasks placed before stay where they are, so the
/// reservation is checked only on runs without node removals.)
fn check(d: &Driver, kv: &[(&str, &str)], step: &[Decision], fixed: bool) -> Result<(), TestCaseError> {
    let p = pigeon(d);
    let uncovered = p.uncovered(d.cluster());
    prop_assert!(uncovered.is_empty(), "{kv:?}: containers without a task: {uncovered:?}");
    for dec in step.iter().filter(|_| fixed) {
        if let Decision::Allocate { app, priority, node, .. } = dec {
            let long = p.reqs.get(&(*app, *priority)).is_some_and(|r| r.long);
            let all_reserved = p.workers.iter().filter(|w| w.key.node == *node).all(|w| w.reserved);
            prop_assert!(!(long && all_reserved), "{kv:?}: a long task of {app} on {node}, whose workers are reserved");
        }
    }
    Ok(())
}

/// §6.2's layout: workers in (rack, node, slot) order; each group a
/// non-empty run of them; a node's workers in one group; round(pct · size)
/// reserved per group.
fn check_layout(d: &Driver, kv: &[(&str, &str)]) -> Result<(), TestCaseError> {
    let p = pigeon(d);
    let pct: f64 = kv.iter().find(|(k, _)| *k == "reserved_pct").map_or(2.0, |(_, v)| v.parse().unwrap_or(2.0));
    let key = |i: usize| {
        let w = p.workers[i].key;
        (d.cluster().node(w.node).map_or(u32::MAX, |n| n.rack), w.node, w.slot)
    };
    for i in 1..p.workers.len() {
        // (a node removed since the layout has no rack: skip its pairs)
        let (a, b) = (key(i - 1), key(i));
        if a.0 != u32::MAX && b.0 != u32::MAX {
            prop_assert!(a < b, "{kv:?}: workers out of (rack, node, slot) order: {a:?} before {b:?}");
        }
        let (ga, gb) = (p.workers[i - 1].group, p.workers[i].group);
        prop_assert!(gb == ga || gb == ga + 1, "{kv:?}: group {gb} after {ga}: not a run");
        if p.workers[i - 1].key.node == p.workers[i].key.node {
            prop_assert_eq!(ga, gb, "{:?}: node {:?} split over groups", kv, p.workers[i].key.node);
        }
    }
    for g in 0..p.masters.len() {
        let members: Vec<_> = p.workers.iter().filter(|w| w.group == g).collect();
        prop_assert!(!members.is_empty(), "{kv:?}: master {g} has no worker");
        let want = ((pct / 100.0) * members.len() as f64).round() as usize;
        prop_assert_eq!(members.iter().filter(|w| w.reserved).count(), want, "{:?}: reserved in group {}", kv, g);
    }
    Ok(())
}

fn run_and_drain(
    kv: &[(&str, &str)],
    seed: u64,
    nodes: &[(u8, u8)],
    ops: &[Op],
) -> Result<Vec<Decision>, TestCaseError> {
    let setup = Setup { unit: true, seed, racks: 2, ..Setup::default() };
    let mut d = Driver::new("pigeon", policy(kv), &setup, nodes)?;
    let fixed = !ops.iter().any(|op| matches!(op, Op::RemoveNode { .. }));
    for op in ops {
        let first = d.apply(op)?;
        check(&d, kv, &d.log()[first..], fixed)?;
        check_layout(&d, kv)?;
    }
    for _ in 0..20_000 {
        let running = d.cluster().containers().count();
        let waiting = d.cluster().pending_containers();
        if running == 0 && waiting == 0 && d.harness().poll_timeout().is_none() {
            break;
        }
        let op = if running > 0 { Op::Complete { pick: 0 } } else { Op::Advance { ms: 10 } };
        let first = d.apply(&op)?;
        d.apply(&Op::Schedule)?;
        check(&d, kv, &d.log()[first..], fixed)?;
    }
    prop_assert_eq!(d.cluster().pending_containers(), 0, "{:?}: asks still wait after the drain", kv);
    let p = pigeon(&d);
    prop_assert_eq!(p.entries(), 0, "{:?}: tasks left after the drain", kv);
    let idle: usize = p.masters.iter().map(|m| m.liw.len() + m.hiw.len()).sum();
    prop_assert!(p.workers.iter().all(|w| w.state == WState::Idle), "{:?}: a worker not idle after the drain", kv);
    prop_assert_eq!(idle, p.workers.len(), "{:?}: idle lists and workers differ", kv);
    Ok(d.log().to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_task_once_nothing_lost_and_deterministic(
        nodes in props::nodes(1..3),
        ops in MIX.ops(1..50),
        seed in 0u64..1000,
    ) {
        for kv in SETTINGS {
            let a = run_and_drain(kv, seed, &nodes, &ops)?;
            let b = run_and_drain(kv, seed, &nodes, &ops)?;
            prop_assert!(a == b, "{:?}: the same seed gave different decisions", kv);
        }
    }
}
