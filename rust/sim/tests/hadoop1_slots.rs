//! Hadoop 1 slot-typed nodes (`--slots`, `workload::slots`): a reduce that
//! waits for its job's maps holds a reduce slot, never a map's room; a node
//! never runs more maps or reduces than it has slots, under every policy;
//! and the flag refuses what it cannot model.

mod common;
use clap::Parser;
use common::map_reduce_job;
use proptest::prelude::*;
use sojourn_core::Resources;
use sojourn_sim::cli::{run, Cli};
use sojourn_sim::engine::{simulate, SimConfig};
use sojourn_sim::workload::slots::Hadoop1Slots;
use sojourn_sim::workload::{ClusterSpec, JobSpec};

/// Response time (s) of each job, by id, on one node of `node`.
fn responses(policy: &str, node: Resources, jobs: Vec<JobSpec>) -> Vec<(u64, f64)> {
    let (policy, params) = match policy.split_once(' ') {
        Some((p, kv)) => (p, kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())).into_iter().collect()),
        None => (policy, Default::default()),
    };
    let cfg = SimConfig {
        policy: policy.into(),
        params,
        heartbeat_ms: 0,
        slowstart: 0.5,
        reduces_wait_for_maps: true,
        check_invariants: true,
        ..SimConfig::default()
    };
    let cluster = ClusterSpec::uniform(1, node, 40);
    let r = simulate(&cluster, Box::new(jobs.into_iter().map(Ok)), "slots", &cfg, None).expect("run");
    assert_eq!(r.unfinished, 0);
    let mut v: Vec<(u64, f64)> = r.jobs.iter().map(|j| (j.id, j.response_ms() as f64 / 1000.0)).collect();
    v.sort_by_key(|x| x.0);
    v
}

/// A: maps of 1 and 100 s, two reduces of 5 s that start once half its
/// maps are done and then wait for the last one. B (at 2 s): one 10 s map.
fn a_and_b() -> Vec<JobSpec> {
    vec![map_reduce_job(0, 0, &[1, 100], &[5, 5]), map_reduce_job(1, 2, &[10], &[])]
}

/// Pooled node of three 1 GB containers: at 1 s A's first map ends and its
/// two reduces take the two free containers, idle until A's last map ends
/// at 100 s; B's map waits for that container too: it runs 100-110 s
/// (response 108 s), A's reduces 100-105 s.
///
/// The same room as slots, 2 map slots + 1 reduce slot of 1 GB: at 1 s one
/// reduce takes the reduce slot and the other waits (a reduce cannot take a
/// map slot), so B's map takes the free map slot at 2 s (response 10 s);
/// A's reduces run one after the other, 100-105 and 105-110 s.
#[test]
fn a_waiting_reduce_blocks_a_map_only_without_slots() {
    let pooled = responses("fifo", Resources::new(3072, 3), a_and_b());
    assert_eq!(pooled, vec![(0, 105.0), (1, 108.0)]);
    let slots = Hadoop1Slots { maps: 2, map_mb: 1024, reduces: 1, reduce_mb: 1024 };
    let mut jobs = a_and_b();
    for j in &mut jobs {
        slots.apply(j).expect("a MapReduce job");
    }
    assert_eq!(responses("fifo", slots.node(), jobs.clone()), vec![(0, 110.0), (1, 10.0)]);
    assert_eq!(responses("hfsp", slots.node(), jobs.clone()), vec![(0, 110.0), (1, 10.0)]);
    // Fair (YARN's FairScheduler) reserves the node for A's second reduce
    // at 1 s, and a reserved node takes nothing else: B's map waits until
    // that reduce is placed (105 s) and the node is offered again at the
    // next event (110 s): response 118 s. Hadoop 1's Fair Scheduler had no
    // reservations; without them fair gives the slots' 10 s.
    assert_eq!(responses("fair", slots.node(), jobs.clone()), vec![(0, 110.0), (1, 118.0)]);
    assert_eq!(responses("fair reservable_nodes=0", slots.node(), jobs), vec![(0, 110.0), (1, 10.0)]);
}

/// Maps and reduces running at each utilization sample of a one-node run:
/// maps from the vcores in use (two each), reduces from the memory left.
fn occupancy(policy: &str, params: &[(&str, &str)], slots: &Hadoop1Slots, mut jobs: Vec<JobSpec>) -> Vec<(u64, u64)> {
    let node = slots.node();
    for j in &mut jobs {
        slots.apply(j).expect("a MapReduce job");
    }
    let cfg = SimConfig {
        policy: policy.into(),
        params: params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        heartbeat_ms: 1000,
        until: Some(sojourn_core::Time(3_600_000)),
        slowstart: 0.05,
        reduces_wait_for_maps: true,
        sample_ms: 1000,
        check_invariants: true,
        ..SimConfig::default()
    };
    let cluster = ClusterSpec::uniform(1, node, 40);
    let r = simulate(&cluster, Box::new(jobs.into_iter().map(Ok)), "slots", &cfg, None).expect("run");
    assert_eq!(r.unfinished, 0, "{policy}");
    r.utilization
        .iter()
        .map(|u| {
            let maps = (u.vcores * node.vcores as f64 / 2.0).round() as u64;
            let mb = (u.memory * node.memory_mb as f64).round() as u64;
            (maps, (mb - maps * slots.map_mb) / slots.reduce_mb)
        })
        .collect()
}

/// A node runs at most M maps and R reduces at once, whatever the policy,
/// and both kinds fill their slots at some point (so the bound is met, not
/// just never approached). Reduces start at 5% of their maps and wait for
/// the last one, the setting in which they would otherwise crowd maps out.
/// (Every sample also passes the core's invariants, each node's allocation
/// within its capacity, which the fit test turns into the slot bound.)
#[test]
fn a_node_never_runs_more_tasks_of_a_kind_than_its_slots() {
    let slots = Hadoop1Slots { maps: 2, map_mb: 1024, reduces: 1, reduce_mb: 2048 };
    for policy in ["fifo", "fair", "hfsp"] {
        // Eight jobs 2 s apart, of 1-6 maps of 3-9 s and 1-3 reduces of 4-8 s.
        let jobs = (0..8u64)
            .map(|i| {
                let maps: Vec<u64> = (0..1 + i % 6).map(|t| 3 + (i + t) % 7).collect();
                let reduces: Vec<u64> = (0..1 + i % 3).map(|t| 4 + (i * t) % 5).collect();
                map_reduce_job(i, 2 * i, &maps, &reduces)
            })
            .collect();
        // Fair reserves a node for an ask that does not fit (YARN's
        // FairScheduler; Hadoop 1's did not): on this one node, a
        // reservation for a reduce while the reduce slot is held by a reduce
        // waiting for maps keeps those maps out for good. Without
        // reservations it runs to the end.
        let params: &[(&str, &str)] = if policy == "fair" { &[("reservable_nodes", "0")] } else { &[] };
        let seen = occupancy(policy, params, &slots, jobs);
        for &(maps, reduces) in &seen {
            assert!(maps <= 2 && reduces <= 1, "{policy}: {maps} maps and {reduces} reduces on a 2+1 node");
        }
        assert!(seen.iter().any(|s| s.0 == 2), "{policy}: map slots never both used");
        assert!(seen.iter().any(|s| s.1 == 1), "{policy}: the reduce slot never used");
    }
}

proptest! {
    /// The fit test the core places with admits exactly the slot box: k
    /// maps and l reduces fit on a node iff k <= M and l <= R.
    #[test]
    fn the_fit_test_admits_exactly_the_slots(
        maps in 1u32..6, reduces in 1u32..6, map_mb in 1u64..5000, reduce_mb in 1u64..5000,
        k in 0u64..9, l in 0u64..9,
    ) {
        let s = Hadoop1Slots { maps, map_mb, reduces, reduce_mb };
        let used = s.map_task().times(k) + s.reduce_task().times(l);
        prop_assert_eq!(used.fits_in(&s.node()), k <= maps as u64 && l <= reduces as u64);
    }
}

fn cli_error(args: &str) -> String {
    let argv: Vec<&str> = ["sojourn"].into_iter().chain(args.split_whitespace()).collect();
    run(Cli::try_parse_from(argv).expect("parses")).expect_err("refused").to_string()
}

#[test]
fn refusals_name_the_flag_and_why() {
    let w = "simulate --workload pigmix:dev:jobs=3 --nodes 2 -q";
    for (extra, says) in [
        ("--slots 2:1024", "--slots '2:1024' is not MAPS:MAP_MB,REDUCES:REDUCE_MB"),
        ("--slots 0:1024,1:2048", "0 map slots per node"),
        ("--slots 2:1024,1:2048 --am-mb 1024", "cannot go with --am-mb: Hadoop 1 has no AM containers"),
        ("--slots 2:1024,1:2048 --sls-timing", "cannot go with --sls-timing"),
        ("--slots 2:1024,1:2048 --placement-slowdown 2", "cannot go with --placement-slowdown"),
        ("--slots 2:1024,1:2048 --nodes-file nodes.json", "cannot go with --nodes-file"),
    ] {
        let e = cli_error(&format!("{w} {extra}"));
        assert!(e.contains(says), "{extra}: {e}");
    }
    // compare checks the same flags.
    let e = cli_error("compare --policies fair,hfsp --baseline fair --workload pigmix:dev:jobs=3 --nodes 2 -q --slots 2:1024,1:2048 --am-mb 512");
    assert!(e.contains("cannot go with --am-mb"), "{e}");
    // A workload whose tasks are neither maps nor reduces has no slot to run in.
    let dir = std::env::temp_dir().join(format!("sojourn-slots-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let trace = dir.join("spark.json");
    std::fs::write(
        &trace,
        r#"{"job.start.ms":0,"job.id":"spark_1","job.tasks":[{"container.duration.ms":1000,"container.type":"executor"}]}"#,
    )
    .expect("trace");
    let e = cli_error(&format!("simulate --workload {} --nodes 2 -q --slots 2:1024,1:2048", trace.display()));
    assert!(e.contains("--slots: job 0 ('spark_1') has a Other task group"), "{e}");
    assert!(e.contains("Hadoop 1 slots hold only map and reduce tasks"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
