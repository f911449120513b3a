//! Whole-simulator properties, for every policy in the catalog: every job of
//! a fault-free trace finishes, in heartbeat and event-driven mode, with and
//! without AM containers, and no node is ever over-committed (the engine
//! checks the mirror after every event in these runs).

use proptest::prelude::*;
use sojourn_core::{Phase, Priority, Resources, Time};
use sojourn_sim::engine::{simulate, SimConfig};
use sojourn_sim::workload::{ClusterSpec, JobSpec, TaskGroup};

fn job_strategy() -> impl Strategy<Value = (u64, Vec<u64>, Vec<u64>, u8, u8)> {
    (
        0u64..20_000,
        proptest::collection::vec(1u64..8_000, 1..6),
        proptest::collection::vec(1u64..8_000, 0..3),
        1u8..3,
        0u8..3,
    )
}

/// A generated job: submit time, map durations, reduce durations, GB per task, user.
type RawJob = (u64, Vec<u64>, Vec<u64>, u8, u8);

fn build(raw: &[RawJob]) -> Vec<JobSpec> {
    let mut jobs: Vec<JobSpec> = raw
        .iter()
        .enumerate()
        .map(|(i, (submit, maps, reduces, gb, user))| JobSpec {
            id: i as u64,
            name: format!("j{i}"),
            submit: Time(*submit),
            queue: "default".into(),
            user: format!("user{user}"),
            priority: 0,
            groups: vec![
                TaskGroup {
                    phase: Phase::Map,
                    priority: Priority::MAP,
                    resources: Resources::new(*gb as u64 * 1024, 1),
                    durations_ms: maps.clone(),
                    hosts: vec![],
                },
                TaskGroup {
                    phase: Phase::Reduce,
                    priority: Priority::REDUCE,
                    resources: Resources::new(2048, 1),
                    durations_ms: reduces.clone(),
                    hosts: vec![],
                },
            ],
            deadline: None,
            value: None,
            dag: None,
        })
        .collect();
    jobs.sort_by_key(|j| j.submit);
    jobs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_job_of_a_fault_free_trace_finishes(
        raw in proptest::collection::vec(job_strategy(), 1..25),
        nodes in 1usize..5,
        heartbeat in prop_oneof![Just(0u64), Just(1000u64)],
        with_am in any::<bool>(),
    ) {
        let jobs = build(&raw);
        // With one AM per job, AMs alone can fill a small cluster and leave
        // every job waiting for task room: a real deadlock that YARN's
        // FifoScheduler has too (Capacity and Fair bound the AM share). Size
        // the cluster so that all AMs plus the largest task always fit.
        let cluster = if with_am {
            ClusterSpec::uniform(nodes.max(4), Resources::new(8192, 8), 2)
        } else {
            ClusterSpec::uniform(nodes, Resources::new(4096, 4), 2)
        };
        for info in sojourn_policies::catalog() {
            let cfg = SimConfig {
                policy: info.name.to_string(),
                heartbeat_ms: heartbeat,
                am_container: with_am.then_some(Resources::new(1024, 1)),
                check_invariants: true,
                ..SimConfig::default()
            };
            let stream = Box::new(jobs.clone().into_iter().map(Ok));
            let r = simulate(&cluster, stream, "prop", &cfg, None)
                .map_err(|e| TestCaseError::fail(format!("{}: {e}", info.name)))?;
            prop_assert_eq!(r.unfinished, 0, "{}: unfinished jobs", info.name);
            prop_assert_eq!(r.jobs.len(), jobs.len(), "{}", info.name);
            for j in &r.jobs {
                // No job can beat its critical path.
                prop_assert!(j.response_ms() >= j.ideal_ms, "{}: job {} faster than possible", info.name, j.id);
            }
        }
    }
}
