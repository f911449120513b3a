//! Golden cases for Kairos's rules (delgado.md §3.3–§3.4, §5 K2–K6),
//! computed by hand. Tasks are 1 GB / 1 vcore; a node of `v` vcores runs
//! N = v tasks and its memory bounds how many it may hold suspended.

use crate::test_support::{allocations, config_error, core, finish, job_in, node, resumed, schedule, suspended, tick};
use sojourn_core::{ContainerId, Harness, Phase};

fn kairos(kv: &[(&str, &str)]) -> Harness {
    core("kairos", kv)
}

fn job(c: &mut Harness, t: u64, id: u32, tasks: u32) {
    job_in(c, t, id, "default", tasks, Phase::Map);
}

/// Starts job `id` (one task) at `t` and returns its container.
fn start(c: &mut Harness, t: u64, id: u32) -> (ContainerId, Vec<ContainerId>) {
    job(c, t, id, 1);
    let ds = schedule(c, t);
    let a = allocations(&ds);
    assert_eq!(a.len(), 1, "job {id} at {t}: {ds:?}");
    (a[0].1, suspended(&ds))
}

/// K2: a new task starts at once, suspending the running task with the most
/// attained service. Two cores; A runs from 0 s, B from 10 s; C at 20 s
/// suspends A (20 s of service against B's 10 s).
#[test]
fn a_new_task_preempts_the_most_served_running_task() {
    let mut c = kairos(&[]);
    node(&mut c, 0, 4096, 2);
    let (a, s) = start(&mut c, 0, 1);
    assert!(s.is_empty());
    let (_b, s) = start(&mut c, 10_000, 2);
    assert!(s.is_empty(), "a free core needs no preemption");
    let (_c3, s) = start(&mut c, 20_000, 3);
    assert_eq!(s, vec![a]);
}

/// K3: when a task finishes, the suspended task with the least attained
/// service resumes. One core: A runs 0–10 s, B 10–15 s, C arrives at 15 s
/// and finishes at 20 s; B (5 s) resumes before A (10 s).
#[test]
fn a_finish_resumes_the_least_served_suspended_task() {
    let mut c = kairos(&[]);
    node(&mut c, 0, 4096, 1);
    let (a, _) = start(&mut c, 0, 1);
    let (b, s) = start(&mut c, 10_000, 2);
    assert_eq!(s, vec![a]);
    let (c3, s) = start(&mut c, 15_000, 3);
    assert_eq!(s, vec![b]);
    let ds = finish(&mut c, 20_000, c3);
    assert_eq!(resumed(&ds), vec![b], "{ds:?}");
    let ds = finish(&mut c, 30_000, b);
    assert_eq!(resumed(&ds), vec![a], "{ds:?}");
}

/// K4, the quantum: W = 10 s on one core. A runs from 0 s; B arrives at
/// 4 s and suspends A (4 s). At 14 s B's quantum ends with 10 s attained ≥
/// A's 4 s: they swap. At 24 s A has 14 s ≥ B's 10 s: they swap back.
#[test]
fn the_quantum_swaps_in_the_least_served_task() {
    let mut c = kairos(&[("quantum_ms", "10000")]);
    node(&mut c, 0, 4096, 1);
    let (a, _) = start(&mut c, 0, 1);
    let (b, s) = start(&mut c, 4_000, 2);
    assert_eq!(s, vec![a]);
    assert!(tick(&mut c, 13_999).is_empty());
    let ds = tick(&mut c, 14_000);
    assert_eq!((suspended(&ds), resumed(&ds)), (vec![b], vec![a]));
    let ds = tick(&mut c, 24_000);
    assert_eq!((suspended(&ds), resumed(&ds)), (vec![a], vec![b]));
}

/// K4: no swap while the suspended task has more service, and the
/// hysteresis h of the authors' code holds a swap back until the gap is h.
#[test]
fn no_swap_toward_a_more_served_task_and_hysteresis() {
    let mut c = kairos(&[("quantum_ms", "10000"), ("starvation_quanta", "0")]);
    node(&mut c, 0, 4096, 1);
    let (a, _) = start(&mut c, 0, 1);
    let (_b, s) = start(&mut c, 30_000, 2);
    assert_eq!(s, vec![a], "A has 30 s");
    assert!(tick(&mut c, 40_000).is_empty(), "B has 10 s < 30 s: it keeps the core");
    assert!(tick(&mut c, 50_000).is_empty(), "B has 20 s < 30 s");
    let ds = tick(&mut c, 60_000);
    assert_eq!(resumed(&ds), vec![a], "B has 30 s ≥ 30 s: the pseudo-code's ≤ swaps");

    let mut h = kairos(&[("quantum_ms", "10000"), ("hysteresis_ms", "5000"), ("starvation_quanta", "0")]);
    node(&mut h, 0, 4096, 1);
    let (a, _) = start(&mut h, 0, 1);
    start(&mut h, 30_000, 2);
    assert!(tick(&mut h, 60_000).is_empty(), "30 + 5 > 30: no swap yet");
    let ds = tick(&mut h, 70_000);
    assert_eq!(resumed(&ds), vec![a], "30 + 5 ≤ 40");
}

/// The starvation guard (thesis prose, §6.12): W = 10 s, S = 3, M = 2. A
/// has 100 s when B suspends it at 100 s. B keeps the core at its quanta
/// (110, 120 s: 10 and 20 s < 100 s), but at 130 s A has waited S·W = 30 s:
/// it resumes despite its service and runs M·W = 20 s unpreemptible, so C,
/// arriving at 135 s, cannot take the node's only core. Without the guard,
/// A stays suspended.
#[test]
fn the_starvation_guard_resumes_a_long_waiting_task_and_protects_it() {
    let mut c = kairos(&[("quantum_ms", "10000")]);
    node(&mut c, 0, 4096, 1);
    let (a, _) = start(&mut c, 0, 1);
    let (b, s) = start(&mut c, 100_000, 2);
    assert_eq!(s, vec![a]);
    assert!(tick(&mut c, 120_000).is_empty());
    let ds = tick(&mut c, 130_000);
    assert_eq!((suspended(&ds), resumed(&ds)), (vec![b], vec![a]));
    job(&mut c, 135_000, 3, 1);
    let ds = schedule(&mut c, 135_000);
    assert!(ds.is_empty(), "A is protected until 150 s: {ds:?}");
    let ds = schedule(&mut c, 150_000);
    // protection over: the quantum end gives the core to B (30 s < 120 s),
    // then C arrives and suspends B, the only unprotected running task
    assert_eq!(resumed(&ds), vec![b], "{ds:?}");
    assert_eq!(allocations(&ds).len(), 1, "{ds:?}");

    let mut off = kairos(&[("quantum_ms", "10000"), ("starvation_quanta", "0")]);
    node(&mut off, 0, 4096, 1);
    start(&mut off, 0, 1);
    start(&mut off, 100_000, 2);
    assert!(tick(&mut off, 130_000).is_empty(), "no guard: B (30 s) keeps the core");
}

/// The authors' code's guard: a task preempted more than S times keeps its
/// core M·W at its next quantum end. S = 1: A is suspended twice (by B,
/// then by D after C finished) and resumed; at its quantum end it is
/// protected, so E cannot suspend it.
#[test]
fn the_preempted_count_guard_of_the_authors_code() {
    let mut c = kairos(&[("quantum_ms", "10000"), ("starvation", "preempted"), ("starvation_quanta", "1")]);
    node(&mut c, 0, 4096, 1);
    let (a, _) = start(&mut c, 0, 1);
    let (b, s) = start(&mut c, 1_000, 2);
    assert_eq!(s, vec![a]);
    assert_eq!(resumed(&finish(&mut c, 2_000, b)), vec![a]);
    let (d, s) = start(&mut c, 3_000, 3);
    assert_eq!(s, vec![a]);
    assert_eq!(resumed(&finish(&mut c, 4_000, d)), vec![a]);
    assert!(tick(&mut c, 14_000).is_empty(), "A's quantum ends: preempted twice > 1, protected 20 s");
    job(&mut c, 15_000, 4, 1);
    assert!(schedule(&mut c, 15_000).is_empty(), "A is protected");
}

/// K6: each task goes to the node with the fewest tasks, below N + Q, ties
/// to the lowest variance of attained service. Two one-core nodes, Q = 2
/// (cap 3). A → n0 and B → n1 at 0 s; C at 50 s → n0 (tie at one task,
/// variance 0, lowest id), suspending A; D at 60 s → n1 (fewer tasks),
/// suspending B. At 70 s both hold two tasks: n0 has {A 50 s, C 20 s}
/// (variance 225 s²), n1 {B 60 s, D 10 s} (625 s²): E → n0. F → n1 (n0 at
/// its cap); G waits: both nodes hold N + Q = 3 tasks.
#[test]
fn placement_fewest_tasks_capped_at_n_plus_q_ties_to_lowest_variance() {
    let mut c = kairos(&[("extra_tasks", "2")]);
    node(&mut c, 0, 8192, 1);
    node(&mut c, 1, 8192, 1);
    let nodes = |ds: &[_]| allocations(ds).iter().map(|a| a.2).collect::<Vec<_>>();
    job(&mut c, 0, 1, 1);
    job(&mut c, 0, 2, 1);
    assert_eq!(nodes(&schedule(&mut c, 0)), vec![0, 1]);
    job(&mut c, 50_000, 3, 1);
    assert_eq!(nodes(&schedule(&mut c, 50_000)), vec![0]);
    job(&mut c, 60_000, 4, 1);
    assert_eq!(nodes(&schedule(&mut c, 60_000)), vec![1]);
    job(&mut c, 70_000, 5, 1);
    job(&mut c, 70_000, 6, 1);
    job(&mut c, 70_000, 7, 1);
    let ds = schedule(&mut c, 70_000);
    assert_eq!(nodes(&ds), vec![0, 1], "{ds:?}");
    assert_eq!(allocations(&ds).iter().map(|a| a.0).collect::<Vec<_>>(), vec![5, 6]);
    let v = c.describe();
    assert_eq!(v["queued_jobs"], serde_json::json!([7]), "{v}");

    // the Sum alternative: n0 {50 s, 20 s} = 70 s, n1 {60 s, 10 s} = 70 s:
    // a tie on the sum too, so E goes to the lower id either way; with a
    // lower total on n1 it goes there.
    let mut s = kairos(&[("extra_tasks", "2"), ("tie_break", "sum")]);
    node(&mut s, 0, 8192, 1);
    node(&mut s, 1, 8192, 1);
    job(&mut s, 0, 1, 1);
    job(&mut s, 0, 2, 1);
    schedule(&mut s, 0);
    job(&mut s, 50_000, 3, 1);
    assert_eq!(nodes(&schedule(&mut s, 50_000)), vec![0]);
    job(&mut s, 55_000, 4, 1);
    assert_eq!(nodes(&schedule(&mut s, 55_000)), vec![1]);
    // n0 {A 50, C 10} = 60 s; n1 {B 55, D 5} = 60 s... move on 1 s: equal
    // growth keeps them tied; the variance would pick n0 (20² < 25²) too.
    job(&mut s, 60_000, 5, 1);
    assert_eq!(nodes(&schedule(&mut s, 60_000)), vec![0]);
}

/// AM containers are placed but never suspended: a one-core node running
/// an AM cannot take a task.
#[test]
fn an_am_is_never_suspended() {
    let mut c = kairos(&[]);
    node(&mut c, 0, 4096, 1);
    job_in(&mut c, 0, 1, "default", 1, Phase::Am);
    assert_eq!(allocations(&schedule(&mut c, 0)).len(), 1);
    job(&mut c, 10_000, 2, 1);
    let ds = schedule(&mut c, 10_000);
    assert!(ds.is_empty(), "{ds:?}");
}

/// AMs never take a node's last core from its tasks: AMs are never
/// suspended, so a node whose cores all went to AMs could not resume its
/// suspended tasks (K3 and K4 need a core) and the AMs would wait on them
/// for ever. Two cores, W = 100 s: job 1's tasks A and B run from 0 s; at 1 s
/// job 2's AM suspends B (equal service, the younger); at 2 s job 3's AM
/// would have to suspend A and leave no core to any task, so it waits. At
/// 10 s A finishes and B resumes; at 20 s B finishes and job 3's AM goes on
/// the node, now without tasks.
#[test]
fn an_am_does_not_take_the_last_core_of_a_node_with_tasks() {
    let mut c = kairos(&[("quantum_ms", "100000")]);
    node(&mut c, 0, 8192, 2);
    job(&mut c, 0, 1, 2);
    let ds = schedule(&mut c, 0);
    let tasks: Vec<ContainerId> = allocations(&ds).iter().map(|a| a.1).collect();
    let [a, b] = tasks[..] else { panic!("two tasks at 0 s: {ds:?}") };
    job_in(&mut c, 1_000, 2, "default", 1, Phase::Am);
    let ds = schedule(&mut c, 1_000);
    assert_eq!((allocations(&ds).len(), suspended(&ds)), (1, vec![b]), "{ds:?}");
    job_in(&mut c, 2_000, 3, "default", 1, Phase::Am);
    let ds = schedule(&mut c, 2_000);
    assert!(ds.is_empty(), "the last core stays with A: {ds:?}");
    let ds = finish(&mut c, 10_000, a);
    assert_eq!(resumed(&ds), vec![b], "{ds:?}");
    assert!(schedule(&mut c, 10_000).is_empty(), "B holds the core job 3's AM would need");
    finish(&mut c, 20_000, b);
    let ds = schedule(&mut c, 20_000);
    assert_eq!(allocations(&ds).iter().map(|a| a.0).collect::<Vec<_>>(), vec![3], "{ds:?}");
}

/// A node's memory bounds what it holds: suspended tasks keep theirs.
#[test]
fn suspended_tasks_keep_their_memory() {
    let mut c = kairos(&[("extra_tasks", "8")]);
    node(&mut c, 0, 2048, 1);
    start(&mut c, 0, 1);
    start(&mut c, 1_000, 2);
    job(&mut c, 2_000, 3, 1);
    assert!(schedule(&mut c, 2_000).is_empty(), "2 GB hold two suspended-or-running 1 GB tasks");
}

#[test]
fn bad_parameters_are_named() {
    assert!(config_error("kairos", &[("tie_break", "median")]).contains("tie_break"));
    assert!(config_error("kairos", &[("quantum_ms", "0")]).contains("quantum_ms"));
    assert!(config_error("kairos", &[("quantum", "5")]).contains("unknown parameter 'quantum'"));
}

/// K6 with Δ: the tie-break is the variance as of the last refresh, also for
/// a node nothing happened on since (its running task's service moved on).
/// Two one-core nodes, Δ = 20 s. X (n0): A 0–10 s, then C runs (A
/// suspended at 10 s). Y (n1): B 0–25 s, then D runs. Both hold two tasks.
/// At 55 s a refresh reads X's variance as ((10 − 45)/2)² = 306.25 and Y's
/// as ((25 − 30)/2)² = 6.25, so E goes to Y; X's key as filed at 25 s
/// (6.25, lower id) would have taken it.
#[test]
fn the_tie_break_is_read_again_at_each_refresh_on_untouched_nodes() {
    let mut c = kairos(&[("quantum_ms", "1000000"), ("starvation_quanta", "0"), ("stats_interval_ms", "20000")]);
    node(&mut c, 0, 4096, 1);
    node(&mut c, 1, 4096, 1);
    let on = |c: &mut Harness, t: u64, id: u32| {
        job(c, t, id, 1);
        let a = allocations(&schedule(c, t));
        assert_eq!(a.len(), 1, "job {id} at {t}");
        a[0].2
    };
    assert_eq!(on(&mut c, 0, 1), 0);
    assert_eq!(on(&mut c, 0, 2), 1);
    assert_eq!(on(&mut c, 10_000, 3), 0, "equal counts and variances: the lower id");
    assert_eq!(on(&mut c, 25_000, 4), 1, "fewer tasks first");
    assert_eq!(on(&mut c, 55_000, 5), 1, "Y's variance is the lower one at 55 s");
}
