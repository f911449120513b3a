//! Property tests of the Hawk family (Eagle and DLWL+SRPT included) through the shared driver
//! (`test_support::props`): random apps, asks, completions, app and node
//! removals and time, then a drain (every container completes, time runs
//! on) until nothing is left. What must hold:
//! - every task runs exactly once: no app gets more containers than it
//!   asked for (the driver's check), and after the drain no ask waits;
//! - no node is over-committed (the mirror's invariants, after every step);
//! - no probe is lost: after every step each outstanding task of a req is
//!   covered by a live entry, and after the drain no queue, timer or
//!   get-task holds an entry (the probes of finished jobs are gone);
//! - the short partition holds no long task;
//! - the same seed gives the same decisions.

use super::nodes::SlotBits;
use super::views::{AskView, AskViews, NO_VIEW};
use super::{srpt, Hawk};
use crate::test_support::props::{self, Driver, Op, OpSpace, Setup};
use proptest::prelude::*;
use sojourn_core::Decision;
use std::collections::BTreeMap;

/// Every policy of the family, and the ablations, on small clusters: a
/// short partition of half the nodes, every ask long where the test needs
/// long tasks (the driver's asks carry no estimate).
const SETTINGS: &[(&str, &[(&str, &str)])] = &[
    ("sparrow", &[]),
    ("sparrow", &[("network_delay_us", "0")]),
    ("hawk", &[("short_partition_pct", "50")]),
    ("hawk", &[("short_partition_pct", "50"), ("unknown_estimate", "long")]),
    ("hawk", &[("short_partition_pct", "50"), ("unknown_estimate", "long"), ("network_delay_us", "0")]),
    ("hawk", &[("short_partition_pct", "50"), ("unknown_estimate", "long"), ("central", "none")]),
    ("hawk", &[("sampling", "distinct"), ("steal_limit", "1"), ("network_delay_us", "2500")]),
    ("lwl", &[]),
    ("split", &[("short_partition_pct", "50")]),
    ("split", &[("short_partition_pct", "50"), ("unknown_estimate", "long")]),
    ("eagle", &[("short_partition_pct", "50")]),
    ("eagle", &[("short_partition_pct", "50"), ("unknown_estimate", "long")]),
    ("eagle", &[("short_partition_pct", "50"), ("unknown_estimate", "long"), ("authors_simulator", "false")]),
    ("eagle", &[("unknown_estimate", "long"), ("network_delay_us", "0"), ("authors_simulator", "false")]),
    ("eagle", &[("short_partition_pct", "0"), ("unknown_estimate", "long"), ("central", "none")]),
    ("eagle", &[("sss", "false"), ("sticky", "false"), ("queue_order", "fifo"), ("steal_attempts", "10")]),
    ("dlwl_srpt", &[("short_partition_pct", "50"), ("unknown_estimate", "long")]),
    ("dlwl_srpt", &[("authors_simulator", "false"), ("heartbeat_s", "0.01"), ("network_delay_us", "0")]),
];

/// The mix: the basic one plus node removals (a removed node comes back
/// empty at once) and AM asks; with `Setup::unit`, every ask fits every node.
const MIX: OpSpace = OpSpace { weights: [2, 4, 2, 2, 3, 1, 1, 2], am: true, ..OpSpace::BASIC };

fn policy(name: &str, kv: &[(&str, &str)]) -> Box<dyn sojourn_core::Policy> {
    let given: BTreeMap<String, String> = kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    crate::build(name, &given).expect("valid parameters")
}

fn hawk(d: &Driver) -> &Hawk {
    d.harness().policy_as::<Hawk>().expect("a policy of the hawk family")
}

/// The checks after one step: no req short of entries, no long task in
/// the short partition.
/// (The partition is recomputed when nodes come and go, and tasks placed
/// before stay where they are, so the partition is checked only on runs
/// without node removals.)
fn check(d: &Driver, name: &str, kv: &[(&str, &str)], step: &[Decision], fixed: bool) -> Result<(), TestCaseError> {
    let h = hawk(d);
    let uncovered = h.uncovered(d.cluster());
    prop_assert!(uncovered.is_empty(), "{name} {kv:?}: tasks without a probe: {uncovered:?}");
    for dec in step.iter().filter(|_| fixed) {
        if let Decision::Allocate { app, priority, node, .. } = dec {
            let long = h.reqs.get(&(*app, *priority)).is_some_and(|r| r.long);
            prop_assert!(
                !(long && h.short.contains(node)),
                "{name} {kv:?}: a long task of {app} on {node}, in the short partition"
            );
        }
    }
    Ok(())
}

/// Runs `ops`, then drains; returns every decision.
fn run_and_drain(
    name: &str,
    kv: &[(&str, &str)],
    seed: u64,
    nodes: &[(u8, u8)],
    ops: &[Op],
) -> Result<Vec<Decision>, TestCaseError> {
    let setup = Setup { unit: true, seed, ..Setup::default() };
    let mut d = Driver::new(name, policy(name, kv), &setup, nodes)?;
    let fixed = !ops.iter().any(|op| matches!(op, Op::RemoveNode { .. }));
    for op in ops {
        let first = d.apply(op)?;
        check(&d, name, kv, &d.log()[first..], fixed)?;
    }
    // Drain: complete what runs, let time pass, until nothing is left.
    for _ in 0..20_000 {
        let running = d.cluster().containers().count();
        let waiting = d.cluster().pending_containers();
        if running == 0 && waiting == 0 && d.harness().poll_timeout().is_none() {
            break;
        }
        let op = if running > 0 { Op::Complete { pick: 0 } } else { Op::Advance { ms: 10 } };
        let first = d.apply(&op)?;
        d.apply(&Op::Schedule)?;
        check(&d, name, kv, &d.log()[first..], fixed)?;
    }
    prop_assert_eq!(d.cluster().pending_containers(), 0, "{} {:?}: asks still wait after the drain", name, kv);
    prop_assert_eq!(hawk(&d).entries(), 0, "{} {:?}: entries left after the drain", name, kv);
    Ok(d.log().to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_task_once_no_probe_lost_and_deterministic(
        nodes in props::nodes(1..3),
        ops in MIX.ops(1..50),
        seed in 0u64..1000,
    ) {
        for (name, kv) in SETTINGS {
            let a = run_and_drain(name, kv, seed, &nodes, &ops)?;
            let b = run_and_drain(name, kv, seed, &nodes, &ops)?;
            prop_assert!(a == b, "{} {:?}: the same seed gave different decisions", name, kv);
        }
    }
}

/// The SRPT orders (Eagle, DLWL+SRPT) and their variants.
const SRPT_SETTINGS: &[(&str, &[(&str, &str)])] = &[
    ("eagle", &[("short_partition_pct", "50")]),
    ("eagle", &[("short_partition_pct", "50"), ("unknown_estimate", "long"), ("authors_simulator", "false")]),
    ("eagle", &[("unknown_estimate", "long"), ("network_delay_us", "0")]),
    ("dlwl_srpt", &[("short_partition_pct", "50"), ("unknown_estimate", "long")]),
    ("dlwl_srpt", &[("heartbeat_s", "0.01"), ("network_delay_us", "0")]),
];

/// After a step: every queued entry's ask view is the core's ask, and so
/// is what a get-task for it would hold;
/// selection through the views picks and purges, on every node and with
/// the AM share full or not, what selection reading the core does, and
/// passing blocks whole what it does reading every entry (the queues'
/// block summaries hold); and a busy node whose selection `serve` skips
/// would have purged and started nothing.
fn check_views(d: &Driver, name: &str, kv: &[(&str, &str)]) -> Result<(), TestCaseError> {
    let h = hawk(d);
    let cluster = d.cluster();
    for (node, ns) in h.nodes.iter() {
        for e in ns.queue.iter() {
            if let Some(view) = h.views.kept(e.view) {
                prop_assert_eq!(view, AskView::read(cluster, e.req), "{} {:?}: {:?} at {}", name, kv, e.req, node);
            }
            prop_assert_eq!(
                h.views.hold(e.view, cluster, e.req),
                AskViews::hold_read(cluster, e.req),
                "{} {:?}: the hold of {:?} at {}",
                name,
                kv,
                e.req,
                node
            );
        }
        if h.selection_idle(cluster, node, false, 0) {
            prop_assert!(
                h.selection_changes_nothing(cluster, node),
                "{} {:?}: a skipped selection at {} acts",
                name,
                kv,
                node
            );
        }
        let whole = h.cfg.order == super::Order::SrptAll;
        prop_assert!(ns.queue.blocks_hold(h.cfg.starvation_factor), "{} {:?}: the blocks at {}", name, kv, node);
        // (the filter `serve` passes)
        let filter = if h.views.busy_skip { ns.dead.filter(whole) } else { &SlotBits::ALL };
        for (am_full, dead) in [(false, filter), (true, filter), (false, &SlotBits::ALL)] {
            let mut by_block = ns.queue.clone();
            let mut by_entry = ns.queue.clone();
            let (order, factor) = (h.cfg.order, h.cfg.starvation_factor);
            let picked = srpt::select(&mut by_block, order, factor, cluster, &h.views, am_full, dead);
            let read = srpt::select_with(&mut by_entry, order, factor, cluster, &h.views, am_full, dead, false);
            let reqs = |q: &mut dyn Iterator<Item = super::Entry>| q.map(|e| e.req).collect::<Vec<_>>();
            prop_assert_eq!(picked.0, read.0, "{} {:?}: the pick by blocks at {}", name, kv, node);
            prop_assert_eq!(
                reqs(&mut picked.1.into_iter()),
                reqs(&mut read.1.into_iter()),
                "{} {:?}: purged by blocks at {}",
                name,
                kv,
                node
            );
        }
        for am_full in [false, true] {
            let mut viewed = ns.queue.clone();
            let mut read = ns.queue.iter().map(|e| e.viewed(NO_VIEW)).collect();
            let (order, factor) = (h.cfg.order, h.cfg.starvation_factor);
            let (pick, purged) = srpt::select(&mut viewed, order, factor, cluster, &h.views, am_full, &SlotBits::ALL);
            let (pick_read, purged_read) =
                srpt::select(&mut read, order, factor, cluster, &h.views, am_full, &SlotBits::ALL);
            let reqs = |q: &mut dyn Iterator<Item = super::Entry>| q.map(|e| e.req).collect::<Vec<_>>();
            prop_assert_eq!(pick, pick_read, "{} {:?}: the pick at {}", name, kv, node);
            prop_assert_eq!(
                reqs(&mut purged.into_iter()),
                reqs(&mut purged_read.into_iter()),
                "{} {:?}: purged at {}",
                name,
                kv,
                node
            );
            prop_assert_eq!(reqs(&mut viewed.iter()), reqs(&mut read.iter()), "{} {:?}: queue at {}", name, kv, node);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The ask views SRPT reads are the core's asks, through allocations,
    /// ask updates, node and app removals: selection picks as a scan of
    /// the core's asks.
    #[test]
    fn srpt_through_the_ask_views_selects_as_reading_the_core(
        nodes in props::nodes(1..3),
        ops in MIX.ops(1..60),
        seed in 0u64..1000,
    ) {
        for (name, kv) in SRPT_SETTINGS {
            let setup = Setup { unit: true, seed, ..Setup::default() };
            let mut d = Driver::new(name, policy(name, kv), &setup, &nodes)?;
            for op in &ops {
                d.apply(op)?;
                check_views(&d, name, kv)?;
            }
        }
    }
}
