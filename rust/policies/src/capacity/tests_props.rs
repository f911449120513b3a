//! Random operation sequences driven through the shared property driver
//! (`test_support::props`: the mirror's invariants, no app given more than
//! it asked for), with the policy's own books inspected (`Core::policy_as`):
//! after every step the policy's usage,
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
use crate::test_support::props::{self, OpSpace, Setup};
use proptest::prelude::*;

/// Every kind of operation, node removal too, more heartbeats and advances
/// of time; apps of priorities -1 to 1 in five queues; asks of 0 to 9
/// containers, some for AMs, some preferring a node and its rack.
const OPS: OpSpace = OpSpace {
    weights: [2, 4, 3, 3, 2, 1, 1, 3],
    queues: QUEUES.len() as u8,
    app_priorities: true,
    max_count: 10,
    locality: true,
    am: true,
    ..OpSpace::BASIC
};

/// [`OPS`] with asks for tasks anywhere (no AM, no locality).
const OPS_ANYWHERE: OpSpace = OpSpace { locality: false, am: false, ..OPS };

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

/// `root.u.x` and `root.u.y` are leaves an auto-create parent makes (when
/// the tree has one): x with the template's capacity, y with 0.
const QUEUES: [&str; 7] = ["default", "a", "root.b.b1", "b2", "nowhere", "root.u.x", "root.u.y"];

/// Two racks, the core seeded, and operations on any id: what the core
/// refuses (a removed app, an unknown node) is passed over.
const SETUP: Setup = Setup { queues: &QUEUES, racks: 2, lenient: true, unit: false, seed: 7 };

fn run(kv: &[(&str, &str)], nodes: &[(u8, u8)], ops: &[props::Op], conserving: bool) -> Result<(), TestCaseError> {
    let p = params(kv).expect("valid parameters");
    let policy = Box::new(Capacity::new(&p).expect("valid tree"));
    props::run("capacity", policy, &SETUP, nodes, ops, |d, step| {
        let policy = d.harness().policy_as::<Capacity>().expect("a capacity policy");
        let cluster = d.cluster();
        policy.check(cluster).map_err(|e| TestCaseError::fail(format!("after {:?}: {e}", step.op)))?;
        // YARN's head-of-line rule: an ask larger than the queue's headroom
        // (for the default tree, what is free and not reserved) stops the leaf.
        let free: u64 = cluster
            .nodes()
            .map(|n| n.available().memory_mb)
            .sum::<u64>()
            .saturating_sub(cluster.nodes().filter_map(|n| n.reservation.map(|r| r.2.memory_mb)).sum::<u64>());
        let blocked = cluster.apps().flat_map(|a| a.outstanding_asks()).any(|s| s.ask.capability.memory_mb > free);
        if step.scheduled && conserving && !blocked {
            for a in cluster.apps() {
                if policy.state.unplaced.contains_key(&a.id()) {
                    continue;
                }
                for n in cluster.nodes() {
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
        Ok(())
    })?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn books_match_the_mirror_under_random_operations(nodes in props::nodes(1..5), ops in OPS.ops(1..80)) {
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
        run(
            &[
                ("queue.root.queues", "a,u"),
                ("queue.root.a.capacity", "50"),
                ("queue.root.u.capacity", "50"),
                ("queue.root.u.auto_create_child_queue_enabled", "true"),
                ("queue.root.u.leaf_queue_template_capacity", "60"),
                ("queue.root.u.leaf_queue_template_maximum_capacity", "80"),
                ("preemption.enabled", "true"),
                ("preemption.max_wait_before_kill_ms", "0"),
            ],
            &nodes,
            &ops,
            false,
        )?;
    }

    #[test]
    fn default_tree_conserves_work_for_asks_without_locality(
        nodes in props::nodes(1..5),
        ops in OPS_ANYWHERE.ops(1..80),
    ) {
        run(&[], &nodes, &ops, true)?;
    }
}
