//! Property tests of Kairos's indexes. The central queue's asks by shape
//! ([`super::asks`]): after every random operation (apps, asks anywhere or
//! node-local, AM asks, scheduling, completions, app and node removals,
//! time), the index holds exactly the outstanding asks of the jobs with
//! demand, each under its shape, as a re-read of the mirror finds them. The
//! quantum timers ([`super::timers`]) give what one heap would.

use super::asks::AskIndex;
use super::{fifo_key, Kairos};
use crate::test_support::props::{self, OpSpace, Setup};
use proptest::prelude::*;
use sojourn_core::Params;
use std::collections::BTreeMap;

const MIX: OpSpace = OpSpace {
    weights: [2, 5, 3, 2, 3, 1, 1, 2],
    locality: true,
    am: true,
    max_count: 5,
    max_advance_ms: 3000,
    ..OpSpace::BASIC
};

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn the_ask_index_is_the_mirrors_outstanding_asks(
        nodes in props::nodes(1..3),
        ops in MIX.ops(1..60),
        seed in 0u64..1000,
    ) {
        let given: BTreeMap<String, String> =
            [("quantum_ms", "1000"), ("extra_tasks", "1")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let params = Params::validate("kairos", super::PARAMS, &given).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let policy = super::build(&params).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let setup = Setup { racks: 2, seed, ..Setup::default() };
        props::run("kairos", policy, &setup, &nodes, &ops, |d, step| {
            let kairos = d.harness().policy_as::<Kairos>().expect("kairos");
            let want = AskIndex::recompute(d.cluster(), fifo_key);
            prop_assert_eq!(kairos.asks.all(), want, "after {:?}", step.op);
            Ok(())
        })?;
    }
}

proptest! {
    /// The quantum timers' lanes give the wake-ups in the order one heap of
    /// (time, container) would, and the same next wake-up, whatever lengths
    /// the quanta have and whatever is forgotten on the way.
    #[test]
    fn quantum_timers_pop_as_one_heap(
        steps in proptest::collection::vec((0u64..4, prop_oneof![Just(50u64), Just(100), 1u64..300], 0u32..20, any::<bool>()), 1..300),
    ) {
        use super::timers::QuantumTimers;
        use sojourn_core::{ContainerId, Time};
        use std::cmp::Reverse;
        use std::collections::{BTreeSet, BinaryHeap};
        let mut timers = QuantumTimers::default();
        let mut heap: BinaryHeap<Reverse<(Time, ContainerId)>> = BinaryHeap::new();
        let mut forgotten: BTreeSet<ContainerId> = BTreeSet::new();
        let mut now = Time(0);
        for (advance, len, id, pop) in steps {
            now = now.plus(advance * 10);
            let c = ContainerId(u64::from(id));
            if pop {
                loop {
                    let want = match heap.peek() {
                        Some(Reverse((t, _))) if *t <= now => heap.pop().map(|Reverse((_, c))| c),
                        _ => None,
                    };
                    prop_assert_eq!(timers.pop_due(now), want);
                    if want.is_none() {
                        break;
                    }
                }
                forgotten.insert(c);
                while heap.peek().is_some_and(|Reverse((_, c))| forgotten.contains(c)) {
                    heap.pop();
                }
                timers.drop_forgotten(|c| !forgotten.contains(&c));
            } else {
                forgotten.remove(&c);
                timers.set(now, now.plus(len), c);
                heap.push(Reverse((now.plus(len), c)));
            }
            prop_assert_eq!(timers.next(), heap.peek().map(|Reverse((t, _))| *t));
        }
    }
}
