//! Property test of the central queue's index of asks by shape
//! ([`super::asks`]): after every random operation (apps, asks anywhere or
//! node-local, AM asks, scheduling, completions, app and node removals,
//! time), the index holds exactly the outstanding asks of the jobs with
//! demand, each under its shape, as a re-read of the mirror finds them.

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
