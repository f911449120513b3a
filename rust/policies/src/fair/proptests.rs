//! Random operation sequences against several `fair` configurations,
//! through the shared driver (`test_support::props`), which checks the
//! mirror's invariants and that no app gets more than it asked for. Here:
//! no queue goes over its max share, fair preempts only by kill, the same
//! inputs give the same decisions, and (without max shares) no waiting ask
//! fits a free, unreserved node after a scheduling pass.

use super::{build, PARAMS};
use crate::test_support::props::{self, OpSpace, Setup};
use proptest::prelude::*;
use sojourn_core::{Decision, Params, Phase, PreemptMode};
use std::collections::BTreeMap;

/// The basic mix with more heartbeats, four queues and time in steps up to 8 s.
const OPS: OpSpace =
    OpSpace { weights: [2, 4, 3, 3, 3, 1, 0, 2], queues: QUEUES.len() as u8, max_advance_ms: 8000, ..OpSpace::BASIC };

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
fn run(
    cfg: &[(&str, &str)],
    nodes: &[(u8, u8)],
    ops: &[props::Op],
    unit: bool,
) -> Result<Vec<Decision>, TestCaseError> {
    let fail = |e: sojourn_core::CoreError| TestCaseError::fail(e.to_string());
    let given: BTreeMap<String, String> = cfg.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let params = Params::validate("fair", PARAMS, &given).map_err(fail)?;
    let capped = cfg.iter().any(|(k, _)| k.contains("max_"));
    let setup = Setup { queues: &QUEUES, unit, ..Setup::default() };
    props::run("fair", build(&params).map_err(fail)?, &setup, nodes, ops, |d, step| {
        for dec in step.decisions {
            if let Decision::Preempt { mode, .. } = dec {
                prop_assert_eq!(*mode, PreemptMode::Kill);
            }
        }
        check_max_shares(&d.harness().describe()["root"])?;
        if step.scheduled && !capped {
            props::no_waiting_ask_fits(d.cluster(), "fair")?;
        }
        Ok(())
    })
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

/// Asks may be AMs: the AM share holds some back, so work conservation is
/// not checked; instead every app's first AM placed either is its leaf's
/// only one or keeps the leaf's AMs within the leaf's AM memory limit. The
/// limit is checked when an app's AM is admitted, as FSLeafQueue.canRunAppAM
/// is: a further AM container of an admitted app (the generator may ask for
/// several) is not a new admission, and the limit may have shrunk since, as
/// other queues became active.
const OPS_AM: OpSpace = OpSpace { am: true, ..OPS };

fn run_am(cfg: &[(&str, &str)], nodes: &[(u8, u8)], ops: &[props::Op]) -> Result<(), TestCaseError> {
    let fail = |e: sojourn_core::CoreError| TestCaseError::fail(e.to_string());
    let given: BTreeMap<String, String> = cfg.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let params = Params::validate("fair", PARAMS, &given).map_err(fail)?;
    let setup = Setup { queues: &QUEUES, ..Setup::default() };
    let mut admitted = std::collections::BTreeSet::new();
    props::run("fair", build(&params).map_err(fail)?, &setup, nodes, ops, |d, step| {
        let root = d.harness().describe()["root"].clone();
        for dec in step.decisions {
            let Decision::Allocate { app, container, .. } = dec else { continue };
            if d.cluster().container(*container).map(|c| c.phase) != Some(Phase::Am) || !admitted.insert(*app) {
                continue;
            }
            let Some(leaf) = leaf_of(&root, app.0 as u64) else { continue };
            let used = leaf["am_usage"]["memory_mb"].as_u64().unwrap_or(0);
            let own = leaf["apps"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|a| a["app"] == app.0)
                .and_then(|a| a["am"]["memory_mb"].as_u64())
                .unwrap_or(0);
            let max = leaf["max_am_resource"]["memory_mb"].as_u64().unwrap_or(u64::MAX);
            prop_assert!(
                used <= max || used == own,
                "{}: AMs hold {used} MB, over the AM share {max} MB, after {app}'s AM",
                leaf["name"]
            );
        }
        Ok(())
    })?;
    Ok(())
}

fn leaf_of(q: &serde_json::Value, app: u64) -> Option<&serde_json::Value> {
    if q["apps"].as_array().is_some_and(|a| a.iter().any(|x| x["app"] == app)) {
        return Some(q);
    }
    q["children"].as_array()?.iter().find_map(|c| leaf_of(c, app))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn fair_keeps_ams_within_their_share(nodes in props::nodes(1..5), ops in OPS_AM.ops(1..80)) {
        run_am(&[], &nodes, &ops)?;
        run_am(&[("max_am_share", "0.2"), ("queue.root.a.weight", "3")], &nodes, &ops)?;
    }

    #[test]
    fn fair_keeps_invariants_and_is_deterministic(nodes in props::nodes(1..5), ops in OPS.ops(1..80)) {
        for cfg in CONFIGS {
            let first = run(cfg, &nodes, &ops, false)?;
            let second = run(cfg, &nodes, &ops, false)?;
            prop_assert_eq!(first, second);
        }
    }

    #[test]
    fn fair_preemption_keeps_invariants(nodes in props::nodes(1..9), ops in OPS.ops(1..80)) {
        run(PREEMPTIVE, &nodes, &ops, true)?;
    }
}
