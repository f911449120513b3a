//! Property test of the order index (order.rs): through random apps, asks,
//! heartbeats, completions, departures, node removals and time (which ages
//! the virtual cluster, so phases turn late and leave), the index is the
//! one filed afresh from every phase, and the order read from it, and the
//! walk a scheduling opportunity takes over it, are always the order a full
//! re-sort of every phase gives; a placement walk's, the same without
//! some phases that have nothing to place. The training phases that want
//! a training task started are, likewise, the ones refiled from scratch.

use super::Hfsp;
use crate::test_support::props::{self, OpSpace, Setup};
use proptest::prelude::*;
use sojourn_core::Cluster;
use std::collections::BTreeMap;

/// Tiny, training, late (FSPE and FSPE+PS), sized and size-based phases,
/// under each preemption mode and both size-based keys; short initial
/// sizes and fast aging, so phases turn virtually done within a run.
const SETTINGS: &[&[(&str, &str)]] = &[
    &[("tiny_threshold", "2"), ("training_tasks", "1"), ("initial_task_ms", "2000")],
    &[("tiny_threshold", "3"), ("training_tasks", "2"), ("initial_task_ms", "500"), ("late_policy", "ps")],
    &[("tiny_threshold", "2"), ("training_tasks", "0"), ("aging_speed", "4"), ("preemption", "suspend")],
    &[("tiny_threshold", "2"), ("training_tasks", "1"), ("order", "virtual_finish"), ("preemption", "kill")],
    &[("training_tasks", "1"), ("initial_task_ms", "1000"), ("late_policy", "ps"), ("preemption", "suspend")],
    &[("tiny_threshold", "1"), ("training_tasks", "1"), ("keep_aging", "true"), ("aging_speed", "3")],
    // Pools of no virtual slots (nodes of 2-8 GB: 4 GB slots, 8 GB maps),
    // or of some, as nodes come and go: the ranks of their size-based
    // phases hold, then move.
    &[("tiny_threshold", "2"), ("training_tasks", "1"), ("map_slot_mb", "4096"), ("reduce_slot_mb", "4096")],
    &[("training_tasks", "1"), ("map_slot_mb", "8192"), ("preemption", "suspend"), ("initial_task_ms", "500")],
];

/// Many apps and asks, so that several phases wait at once; node removals
/// and AM asks in the mix, time in steps up to 3 s.
const MIX: OpSpace = OpSpace { weights: [3, 6, 2, 3, 3, 1, 1, 3], am: true, max_advance_ms: 3000, ..OpSpace::BASIC };

fn check(h: &Hfsp, cluster: &Cluster, kv: &[(&str, &str)]) -> Result<(), TestCaseError> {
    prop_assert_eq!(&h.order_index, &h.order_index_from_scratch(), "{:?}: a phase is filed stale", kv);
    let wanting = h.train_wanting_from_scratch();
    prop_assert_eq!(&h.train_wanting, &wanting, "{:?}: a training phase is filed stale", kv);
    let resorted = h.order_by_full_sort();
    prop_assert_eq!(&h.order(), &resorted, "{:?}: the index's order is not the full re-sort", kv);
    let walk_all = |placeable_in: Option<&Cluster>| {
        let mut walk = h.order_walk(placeable_in);
        let mut walked = Vec::new();
        while let Some((_, key)) = walk.next(h, cluster) {
            walked.push(key);
        }
        walked
    };
    prop_assert_eq!(&walk_all(None), &resorted, "{:?}: a scheduling opportunity walks another order", kv);
    // A placement walk leaves phases out, never the ones that can place.
    let placeable: Vec<_> = resorted.iter().copied().filter(|k| h.may_place(cluster, *k)).collect();
    let placement_walk: Vec<_> = walk_all(Some(cluster)).into_iter().filter(|k| h.may_place(cluster, *k)).collect();
    prop_assert_eq!(&placement_walk, &placeable, "{:?}: a placement walk passes over phases that can place", kv);
    // Phases of fixed ranks are left out of placement walks only once
    // found with nothing to place, and come back with anything to place.
    for key in &placeable {
        let filed = h.order_index_from_scratch().fixed_rank_of(*key).map(|r| (r, *key));
        prop_assert!(filed.is_none_or(|f| h.placeable.contains(&f)), "{:?}: {:?} may place, left out", kv, key);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn the_indexed_order_is_the_full_resort(nodes in props::nodes(1..4), ops in MIX.ops(1..90), seed in 0u64..1000) {
        for kv in SETTINGS {
            let given: BTreeMap<String, String> = kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            let policy = crate::build("hfsp", &given).expect("valid parameters");
            let setup = Setup { unit: true, seed, ..Setup::default() };
            props::run("hfsp", policy, &setup, &nodes, &ops, |d, _| {
                check(d.harness().policy_as::<Hfsp>().expect("hfsp"), d.cluster(), kv)
            })?;
        }
    }
}
