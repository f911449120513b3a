//! Preemption through the whole simulator, on hand-computed scenarios: a
//! suspended task keeps its remaining work and resumes on its node; a
//! killed one runs again from scratch and its work is counted lost.

mod common;
use common::job;
use sojourn_core::Resources;
use sojourn_sim::engine::{simulate, SimConfig};
use sojourn_sim::run::RunResult;
use sojourn_sim::workload::{ClusterSpec, JobSpec};
use std::collections::BTreeMap;

/// One node of one vcore and 3 GB (room for two suspended 1 GB tasks).
fn run(policy: &str, params: &[(&str, &str)], jobs: Vec<JobSpec>) -> RunResult {
    let cluster = ClusterSpec::uniform(1, Resources::new(3072, 1), 40);
    let cfg = SimConfig {
        policy: policy.into(),
        params: params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>(),
        heartbeat_ms: 0,
        check_invariants: true,
        ..SimConfig::default()
    };
    let r = simulate(&cluster, Box::new(jobs.into_iter().map(Ok)), "golden", &cfg, None).expect("run");
    assert_eq!(r.unfinished, 0);
    r
}

fn responses(r: &RunResult) -> Vec<(u64, f64)> {
    let mut v: Vec<(u64, f64)> = r.jobs.iter().map(|j| (j.id, j.response_ms() as f64 / 1000.0)).collect();
    v.sort_by_key(|x| x.0);
    v
}

/// Kairos: A (100 s) runs from 0; B (10 s) arrives at 30 s and suspends A
/// (K2); B ends at 40 s and A resumes (K3) with its 70 s left: it ends at
/// 110 s. Nothing is lost. Under fifo B waits for A: 100 and 80 s.
#[test]
fn a_suspended_task_resumes_with_its_remaining_work() {
    let jobs = || vec![job(0, 0, &[100]), job(1, 30, &[10])];
    let k = run("kairos", &[("quantum_ms", "1000000")], jobs());
    assert_eq!(responses(&k), vec![(0, 110.0), (1, 10.0)]);
    assert_eq!((k.preemptions_suspend, k.lost_work_ms), (1, 0));
    let f = run("fifo", &[], jobs());
    assert_eq!(responses(&f), vec![(0, 100.0), (1, 80.0)]);
}

/// The testbed's throttled suspension (`suspended_speed`, delgado.md §3.5):
/// as above, but A keeps 0.1 of its core while B runs 30–40 s, so it does
/// 1 s of work suspended and has 69 s left at 40 s: it ends at 109 s.
#[test]
fn a_throttled_suspended_task_works_on_at_its_share() {
    let jobs = vec![job(0, 0, &[100]), job(1, 30, &[10])];
    let cluster = ClusterSpec::uniform(1, Resources::new(3072, 1), 40);
    let cfg = SimConfig {
        policy: "kairos".into(),
        params: [("quantum_ms".to_string(), "1000000".to_string())].into_iter().collect(),
        heartbeat_ms: 0,
        check_invariants: true,
        suspended_speed: 0.1,
        ..SimConfig::default()
    };
    let r = simulate(&cluster, Box::new(jobs.into_iter().map(Ok)), "golden", &cfg, None).expect("run");
    assert_eq!(responses(&r), vec![(0, 109.0), (1, 10.0)]);
}

/// Kairos's quantum in the simulator: W = 20 s. A (60 s) from 0; B (30 s)
/// at 10 s suspends A (10 s attained). B's quantum ends at 30 s with 20 s
/// ≥ 10 s: A resumes, B is suspended (20 s). A's quantum ends at 50 s
/// (30 s ≥ 20 s): B resumes and finishes its last 10 s at 60 s; A resumes
/// and finishes its last 30 s at 90 s.
#[test]
fn the_quantum_interleaves_tasks_in_the_simulator() {
    let r = run(
        "kairos",
        &[("quantum_ms", "20000"), ("starvation_quanta", "0")],
        vec![job(0, 0, &[60]), job(1, 10, &[30])],
    );
    assert_eq!(responses(&r), vec![(0, 90.0), (1, 50.0)]);
    assert_eq!(r.preemptions_suspend, 3);
}

/// HFSP with KILL: A (one 100 s task) from 0; B (one 10 s task) arrives at
/// 30 s, smaller: A's task is killed, B runs 30–40 s, A runs again from
/// scratch 40–140 s. 30 s of work is lost.
#[test]
fn a_killed_task_runs_again_from_scratch() {
    let params = [
        ("preemption", "kill"),
        ("training_tasks", "0"),
        ("tiny_threshold", "1"),
        ("use_ask_estimates", "true"),
        ("map_share", "1"),
    ];
    let r = run("hfsp", &params, vec![job(0, 0, &[100]), job(1, 30, &[10])]);
    assert_eq!(responses(&r), vec![(0, 140.0), (1, 10.0)]);
    assert_eq!((r.preemptions_kill, r.lost_work_ms), (1, 30_000));
}

/// HFSP's Δ rule needs task progress: with reports, A's training task shows
/// after Δ that A is large (100 s tasks), A's final size overtakes B's
/// initial one, and KILL frees a container for B, which finishes long before
/// A's first tasks end at 100 s. Without reports A's size stays the initial
/// guess, equal to B's, and B waits for A's tasks.
#[test]
fn progress_reports_let_hfsp_learn_a_size_before_tasks_end() {
    let params = [
        ("preemption", "kill"),
        ("training_tasks", "1"),
        ("tiny_threshold", "2"),
        ("delta_ms", "5000"),
        ("training_slots_map", "1"),
        ("map_share", "1"),
        ("map_slot_mb", "1024"),
    ];
    let jobs = || vec![job(0, 0, &[100, 100, 100]), job(1, 0, &[10, 10, 10])];
    let run_with = |progress_ms: u64| {
        let cluster = ClusterSpec::uniform(1, Resources::new(2048, 2), 40);
        let cfg = SimConfig {
            policy: "hfsp".into(),
            params: params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            heartbeat_ms: 0,
            progress_ms,
            check_invariants: true,
            ..SimConfig::default()
        };
        let r = simulate(&cluster, Box::new(jobs().into_iter().map(Ok)), "golden", &cfg, None).expect("run");
        responses(&r)
    };
    let with = run_with(1000);
    let without = run_with(0);
    assert!(with[1].1 < 60.0, "B should overtake A once A's size is known: {with:?}");
    assert!(without[1].1 >= 100.0, "without progress B waits for A's first tasks: {without:?}");
}

/// A reduce that waits for its job's last map (`reduces_wait_for_maps`)
/// under Kairos's defaults (W = 50 s), one vcore: A has maps of 10 s and a
/// 5 s reduce, slowstart 0.5. Both maps arrive at 0; the second starts and
/// suspends the first (K2) and ends at 10 s, so the reduce is asked for and
/// starts at 10 s, suspending the first map (0 s attained) though it can do
/// no work before that map ends. At its quantum's end (60 s) it has attained
/// 50 s and yields to the map, which ends at 70 s; the reduce resumes with
/// its whole 5 s left (held time is not work): A ends at 75 s. Without the
/// wait the reduce's work runs 10..15 and the map 15..25.
#[test]
fn a_held_reduce_keeps_its_work_through_suspension() {
    let run_with = |wait: bool| {
        let cluster = ClusterSpec::uniform(1, Resources::new(3072, 1), 40);
        let cfg = SimConfig {
            policy: "kairos".into(),
            heartbeat_ms: 0,
            slowstart: 0.5,
            reduces_wait_for_maps: wait,
            check_invariants: true,
            ..SimConfig::default()
        };
        let jobs = vec![common::map_reduce_job(0, 0, &[10, 10], &[5])];
        let r = simulate(&cluster, Box::new(jobs.into_iter().map(Ok)), "golden", &cfg, None).expect("run");
        assert_eq!((r.unfinished, r.lost_work_ms), (0, 0));
        responses(&r)
    };
    assert_eq!(run_with(true), vec![(0, 75.0)]);
    assert_eq!(run_with(false), vec![(0, 25.0)]);
}
