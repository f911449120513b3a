//! FIFO on tiny hand-computed scenarios, through the whole simulator.

mod common;
use common::{job, map_reduce_job};
use sojourn_core::{Resources, Time};
use sojourn_sim::engine::{simulate, LaunchModel, NodeFailure, SimConfig};
use sojourn_sim::workload::{ClusterSpec, JobSpec, JobStream};

fn stream(jobs: Vec<JobSpec>) -> JobStream {
    Box::new(jobs.into_iter().map(Ok))
}

/// Response time in seconds of each job, by id.
fn responses(cfg: &SimConfig, nodes: usize, jobs: Vec<JobSpec>) -> Vec<(u64, f64)> {
    let cluster = ClusterSpec::uniform(nodes, Resources::new(3072, 3), 40);
    let r = simulate(&cluster, stream(jobs), "golden", cfg, None).expect("run");
    assert_eq!(r.unfinished, 0);
    let mut v: Vec<(u64, f64)> = r.jobs.iter().map(|j| (j.id, j.response_ms() as f64 / 1000.0)).collect();
    v.sort_by_key(|x| x.0);
    v
}

fn three_jobs() -> Vec<JobSpec> {
    vec![job(0, 0, &[10, 10, 10]), job(1, 1, &[5, 5]), job(2, 2, &[1])]
}

#[test]
fn fifo_three_jobs_one_node_event_driven() {
    // A fills the 3 slots at 0 and ends at 10; then B's two tasks and C's
    // one start together: C ends at 11, B at 15.
    let cfg = SimConfig { heartbeat_ms: 0, check_invariants: true, ..SimConfig::default() };
    assert_eq!(responses(&cfg, 1, three_jobs()), vec![(0, 10.0), (1, 14.0), (2, 9.0)]);
}

/// Container start-up (`LaunchModel`): 1 s, plus 0.5 s for every other
/// container starting on the node. A's three tasks start at 0 and take 1,
/// 1.5 and 2 s to start: they end at 11, 11.5 and 12 s. At 11 s B's first
/// task starts alone (A's start-ups ended at 2 s): 1 s, it ends at 17 s. At
/// 11.5 s B's second starts while B's first is starting (to 12 s): 1.5 s,
/// it ends at 18 s. C starts at 12 s while B's second is starting (to
/// 13 s): 1.5 s, it ends at 14.5 s.
#[test]
fn fifo_three_jobs_one_node_with_container_start_up() {
    let launch = LaunchModel { base_ms: 1000, per_concurrent_ms: 500, per_node: true };
    let cfg = SimConfig { heartbeat_ms: 0, check_invariants: true, launch, ..SimConfig::default() };
    assert_eq!(responses(&cfg, 1, three_jobs()), vec![(0, 12.0), (1, 17.0), (2, 12.5)]);
}

#[test]
fn fifo_three_jobs_one_node_with_heartbeats() {
    // Heartbeats every second from t=0: A is placed at the 1 s heartbeat
    // and reported done at 11 s; B and C start at that heartbeat.
    let cfg = SimConfig { heartbeat_ms: 1000, check_invariants: true, ..SimConfig::default() };
    assert_eq!(responses(&cfg, 1, three_jobs()), vec![(0, 11.0), (1, 15.0), (2, 10.0)]);
}

/// YARN's per-node-heartbeat maximum-container-assignments
/// (`SimConfig::max_assignments`, the shim's default 8). With 1: A's three
/// tasks start at the 1, 2 and 3 s heartbeats and end at 11, 12 and 13 s.
/// At 11 s one slot is free: B's first task (ends 16 s); at 12 s B's second
/// (ends 17 s); at 13 s C's (ends 14 s). With 2: A at 1, 1, 2 s (ends 11, 11,
/// 12 s); at 11 s both of B's (end 16 s); at 12 s C (ends 13 s). With 3 it is
/// the unlimited run above.
#[test]
fn fifo_three_jobs_one_node_with_a_heartbeat_limit() {
    let limited =
        |n| SimConfig { heartbeat_ms: 1000, max_assignments: Some(n), check_invariants: true, ..SimConfig::default() };
    assert_eq!(responses(&limited(1), 1, three_jobs()), vec![(0, 13.0), (1, 16.0), (2, 12.0)]);
    assert_eq!(responses(&limited(2), 1, three_jobs()), vec![(0, 12.0), (1, 15.0), (2, 11.0)]);
    assert_eq!(responses(&limited(3), 1, three_jobs()), vec![(0, 11.0), (1, 15.0), (2, 10.0)]);
}

/// A limit needs heartbeats: event-driven runs offer new demand to every
/// node at once, which no per-heartbeat limit applies to, so it is refused
/// rather than silently not applied.
#[test]
fn a_heartbeat_limit_without_heartbeats_is_refused() {
    let cluster = ClusterSpec::uniform(1, Resources::new(3072, 3), 40);
    for (hb, n, expected) in [(0, 2, "needs node heartbeats"), (1000, 0, "expected at least 1")] {
        let cfg = SimConfig { heartbeat_ms: hb, max_assignments: Some(n), ..SimConfig::default() };
        let Err(e) = simulate(&cluster, stream(three_jobs()), "golden", &cfg, None) else {
            panic!("a limit of {n} with heartbeats every {hb} ms was accepted")
        };
        assert!(e.to_string().contains(expected), "{e}");
    }
}

#[test]
fn am_container_takes_a_slot_first() {
    // With an AM per job, job 0's AM takes one slot, leaving 2 for its
    // 3 tasks: 10 + 10 = 20 s; its AM is released at 20.
    let cfg = SimConfig {
        heartbeat_ms: 0,
        am_container: Some(Resources::new(1024, 1)),
        check_invariants: true,
        ..SimConfig::default()
    };
    assert_eq!(responses(&cfg, 1, vec![job(0, 0, &[10, 10, 10])]), vec![(0, 20.0)]);
}

#[test]
fn am_heartbeats_delay_launch_and_end() {
    // One 10 s task, 1 s NM heartbeats from t=0, an AM container. AMs that
    // act at once: AM at 1, task placed at 2, done at 12. With 1 s AM
    // heartbeats (ticks at 1, 2, ...): the AM registers at 1 and asks at its
    // 2 s tick; the task is placed at the 3 s NM heartbeat, reaches the AM at
    // 4 and is launched then (MapReduce) or at 5 (SLS, lag 1); it is reported
    // done at 14 (15) and the AM learns it at 15 (17).
    let base = SimConfig {
        heartbeat_ms: 1000,
        am_container: Some(Resources::new(1024, 1)),
        check_invariants: true,
        ..SimConfig::default()
    };
    let run = |am_heartbeat_ms, am_response_lag| {
        let cfg = SimConfig { am_heartbeat_ms, am_response_lag, ..base.clone() };
        responses(&cfg, 1, vec![job(0, 0, &[10])])
    };
    assert_eq!(run(0, 0), vec![(0, 12.0)]);
    assert_eq!(run(1000, 0), vec![(0, 15.0)]);
    assert_eq!(run(1000, 1), vec![(0, 17.0)]);
}

#[test]
fn reduces_start_at_the_slowstart_share_of_maps() {
    // One node with 3 slots, event-driven; maps of 2, 4 and 10 s, one 9 s
    // reduce. After the last map (slowstart 1) the reduce runs 10..19. At
    // slowstart 0.5 it is asked for when 2 of 3 maps are done and runs 4..13;
    // at 0.3 one map is enough: it runs 2..11.
    let run = |slowstart| {
        let cfg = SimConfig { heartbeat_ms: 0, slowstart, check_invariants: true, ..SimConfig::default() };
        responses(&cfg, 1, vec![map_reduce_job(0, 0, &[2, 4, 10], &[9])])
    };
    assert_eq!(run(1.0), vec![(0, 19.0)]);
    assert_eq!(run(0.5), vec![(0, 13.0)]);
    assert_eq!(run(0.3), vec![(0, 11.0)]);
}

#[test]
fn early_reduces_wait_for_the_last_map_when_asked() {
    // The scenario above with `reduces_wait_for_maps`: the reduce still gets
    // its container early (at 4 s, or 2 s), but it holds it idle until the
    // last map ends at 10 and only then runs its 9 s: 19 s at every
    // slowstart (without the wait, 11 s at 0.3).
    let run = |slowstart, wait| {
        let cfg = SimConfig {
            heartbeat_ms: 0,
            slowstart,
            reduces_wait_for_maps: wait,
            check_invariants: true,
            ..SimConfig::default()
        };
        responses(&cfg, 1, vec![map_reduce_job(0, 0, &[2, 4, 10], &[9])])
    };
    assert_eq!(run(1.0, true), vec![(0, 19.0)]);
    assert_eq!(run(0.5, true), vec![(0, 19.0)]);
    assert_eq!(run(0.3, true), vec![(0, 19.0)]);
    assert_eq!(run(0.3, false), vec![(0, 11.0)]);
}

#[test]
fn priority_then_submission_order() {
    // One slot. Job 1 arrives later with a higher application priority and
    // overtakes job 2, which arrived before it.
    let mut hi = job(2, 2, &[5]);
    hi.priority = 5;
    let cfg = SimConfig { heartbeat_ms: 0, ..SimConfig::default() };
    let cluster = ClusterSpec::uniform(1, Resources::new(1024, 1), 1);
    let r = simulate(&cluster, stream(vec![job(0, 0, &[10]), job(1, 1, &[5]), hi]), "p", &cfg, None).unwrap();
    let finish = |id| r.jobs.iter().find(|j| j.id == id).unwrap().finish.0 / 1000;
    assert_eq!((finish(0), finish(2), finish(1)), (10, 15, 20));
}

#[test]
fn node_failure_reruns_lost_tasks() {
    // Two one-slot nodes, one 10 s task each; node 1 fails at 4 s and never
    // recovers: its task re-runs from scratch on node 0 after 10 s.
    let cfg = SimConfig {
        heartbeat_ms: 0,
        failures: vec![NodeFailure { at: Time(4000), node: 1, recover_after_ms: None }],
        check_invariants: true,
        ..SimConfig::default()
    };
    let cluster = ClusterSpec::uniform(2, Resources::new(1024, 1), 2);
    let r = simulate(&cluster, stream(vec![job(0, 0, &[10, 10])]), "f", &cfg, None).unwrap();
    assert_eq!(r.jobs[0].finish, Time(20_000));
    assert_eq!(r.lost_work_ms, 4000);
}

#[test]
fn ams_filling_the_cluster_stall_and_are_reported_unfinished() {
    // One 4 GB node, three jobs with 1 GB AMs whose remaining tasks need
    // 2 GB: once the three AMs and a 1 GB task hold the node, no task can
    // ever start. YARN's FifoScheduler deadlocks the same way; the simulator
    // must stop and report the jobs unfinished rather than run forever.
    let big = |id, submit_s| {
        let mut j = job(id, submit_s, &[100]);
        j.groups[0].resources = Resources::new(2048, 1);
        j
    };
    let jobs = [job(0, 0, &[10]), big(1, 0), big(2, 0), big(3, 0)];
    let mut first = jobs[0].clone();
    first.groups.push(big(9, 0).groups[0].clone());
    let jobs = vec![first, jobs[1].clone(), jobs[2].clone(), jobs[3].clone()];
    let cfg = SimConfig { heartbeat_ms: 0, am_container: Some(Resources::new(1024, 1)), ..SimConfig::default() };
    let cluster = ClusterSpec::uniform(1, Resources::new(4096, 4), 1);
    let r = simulate(&cluster, stream(jobs), "deadlock", &cfg, None).unwrap();
    assert_eq!(r.unfinished, 4);
}

#[test]
fn fairness_index_sees_the_waiting_job() {
    // One slot, two jobs: while job 0 runs job 1 waits with nothing, so
    // Jain's index over the two open jobs' shares (1, 0) is 1/2.
    let cfg = SimConfig { heartbeat_ms: 0, sample_ms: 1000, ..SimConfig::default() };
    let cluster = ClusterSpec::uniform(1, Resources::new(1024, 1), 1);
    let r = simulate(&cluster, stream(vec![job(0, 0, &[10]), job(1, 0, &[10])]), "j", &cfg, None).unwrap();
    // The sample at 0 s comes before the first placement: all shares are
    // zero, hence equal (index 1).
    assert_eq!(r.fairness.first(), Some(&1.0));
    assert!(r.fairness.len() > 5);
    assert!(r.fairness[1..].iter().all(|f| (f - 0.5).abs() < 1e-9), "{:?}", r.fairness);
}
