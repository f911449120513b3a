//! Golden cases computed by hand, driving a `Core` with events.

use super::{build, PARAMS};
use crate::test_support::node;
use serde_json::Value;
use sojourn_core::{
    AppId, AppSpec, Ask, ContainerId, CoreConfig, Decision, Event, Harness, Locality, NodeId, Outcome, Params, Phase,
    PreemptMode, Priority, Resources, Time,
};
use std::collections::BTreeMap;

/// Simple setting: no training, phases of one task or more are not tiny,
/// sizes from the asks' estimates, virtual MAP slots = node memory / 1 GB.
const SIMPLE: &[(&str, &str)] =
    &[("training_tasks", "0"), ("tiny_threshold", "1"), ("use_ask_estimates", "true"), ("map_share", "1")];

fn core(extra: &[(&str, &str)]) -> Harness {
    let given: BTreeMap<String, String> =
        SIMPLE.iter().chain(extra).map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let p = Params::validate("hfsp", PARAMS, &given).expect("valid parameters");
    Harness::new(build(&p).expect("valid configuration"), CoreConfig::default())
}

/// App `id` submitted at `t` with `tasks` map tasks of 1 GB, 1 vcore, each
/// estimated at `est_ms`.
fn job(c: &mut Harness, t: u64, id: u32, tasks: u32, est_ms: u64) {
    job_of(c, t, id, tasks, est_ms, Phase::Map);
}

/// The same with `phase` tasks at that phase's MapReduce priority.
fn job_of(c: &mut Harness, t: u64, id: u32, tasks: u32, est_ms: u64, phase: Phase) {
    let prio = if phase == Phase::Reduce { Priority::REDUCE } else { Priority::MAP };
    let mut ask = Ask::new(prio, Resources::new(1024, 1), tasks, phase);
    ask.est_task_ms = Some(est_ms);
    submit(c, t, id, ask);
}

/// App `id` submitted at `t` with `ask`.
fn submit(c: &mut Harness, t: u64, id: u32, ask: Ask) {
    let spec = AppSpec::new(AppId(id), "q", "u");
    c.handle(Time(t), Event::AppAdded(spec)).expect("app");
    c.handle(Time(t), Event::AsksUpdated { app: AppId(id), asks: vec![ask] }).expect("ask");
}

fn heartbeat(c: &mut Harness, t: u64, n: u32) -> Vec<Decision> {
    c.handle(Time(t), Event::NodeHeartbeat { node: NodeId(n) }).expect("heartbeat");
    c.drain_decisions()
}

fn allocations(ds: &[Decision]) -> Vec<(u32, ContainerId)> {
    ds.iter()
        .filter_map(
            |d| if let Decision::Allocate { app, container, .. } = d { Some((app.0, *container)) } else { None },
        )
        .collect()
}

/// The apps of the containers a heartbeat of node `n` at `t` places.
fn apps_placed(c: &mut Harness, t: u64, n: u32) -> Vec<u32> {
    allocations(&heartbeat(c, t, n)).iter().map(|a| a.0).collect()
}

fn finish(c: &mut Harness, t: u64, container: ContainerId) -> Vec<Decision> {
    c.handle(Time(t), Event::ContainerCompleted { container, outcome: Outcome::Finished }).expect("complete");
    c.drain_decisions()
}

/// With training: t = 2, tiny below 2 tasks, sizes learned (s0 = 60 s).
fn training_core(extra: &[(&str, &str)]) -> Harness {
    let mut params = vec![("training_tasks", "2"), ("tiny_threshold", "2"), ("use_ask_estimates", "false")];
    params.extend_from_slice(extra);
    core(&params)
}

fn describe(c: &Harness) -> Value {
    c.describe()
}

/// A number `field` of app `app`'s (first) phase in `describe`.
fn phase_number(c: &Harness, app: u32, field: &str) -> f64 {
    describe(c)["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["app"] == app)
        .and_then(|p| p[field].as_f64())
        .unwrap_or(f64::NAN)
}

fn virtual_size(c: &Harness, app: u32) -> f64 {
    phase_number(c, app, "virtual_size_ms")
}

/// Aging on a two-job case (hfsp.md §1.5, computed by hand). Two virtual
/// and two real map slots. At 0: A = 2 tasks × 4 s (V 8 s), B = 2 × 5 s
/// (V 10 s); max-min gives each one virtual slot. A runs really on both
/// containers and finishes at 4 s; virtually, A's first task is done and
/// V(A) = 4 s, V(B) = 1 + 5 = 6 s. C = 2 × 3.5 s (V 7 s) arrives at 4 s: C
/// is smaller than B was (7 < 10), but B has aged to 6 < 7, so B gets the
/// freed containers.
#[test]
fn aging_two_job_case() {
    let mut c = core(&[]);
    node(&mut c, 0, 2048, 2);
    job(&mut c, 0, 1, 2, 4000);
    job(&mut c, 0, 2, 2, 5000);
    let a = allocations(&heartbeat(&mut c, 0, 0));
    assert_eq!(a.iter().map(|x| x.0).collect::<Vec<_>>(), vec![1, 1]);
    for (_, cid) in &a {
        finish(&mut c, 4000, *cid);
    }
    job(&mut c, 4000, 3, 2, 3500);
    assert!((virtual_size(&c, 1) - 4000.0).abs() < 1e-6, "{}", describe(&c));
    assert!((virtual_size(&c, 2) - 6000.0).abs() < 1e-6, "{}", describe(&c));
    assert!((virtual_size(&c, 3) - 7000.0).abs() < 1e-6, "{}", describe(&c));
    let b = allocations(&heartbeat(&mut c, 4000, 0));
    assert_eq!(b.iter().map(|x| x.0).collect::<Vec<_>>(), vec![2, 2]);
}

/// A small job submitted behind a large one gets the first freed container
/// (WAIT: nothing is preempted) and finishes first.
#[test]
fn small_job_behind_large_one_finishes_first() {
    let mut c = core(&[]);
    node(&mut c, 0, 2048, 2);
    job(&mut c, 0, 1, 10, 10_000);
    let a = allocations(&heartbeat(&mut c, 0, 0));
    assert_eq!(a.len(), 2);
    job(&mut c, 1000, 2, 2, 1000);
    let ds = heartbeat(&mut c, 1000, 0);
    assert!(ds.is_empty(), "WAIT never preempts: {ds:?}");
    let ds = finish(&mut c, 10_000, a[0].1);
    assert!(ds.is_empty());
    let b = allocations(&heartbeat(&mut c, 10_000, 0));
    assert_eq!(b.iter().map(|x| x.0).collect::<Vec<_>>(), vec![2]);
    let ds = finish(&mut c, 10_000, a[1].1);
    assert!(ds.is_empty());
    let b2 = allocations(&heartbeat(&mut c, 10_000, 0));
    assert_eq!(b2.iter().map(|x| x.0).collect::<Vec<_>>(), vec![2]);
    finish(&mut c, 11_000, b[0].1);
    finish(&mut c, 11_000, b2[0].1);
    // B is done (really and, at V ≤ 2 s, soon virtually); A takes the node.
    let rest = allocations(&heartbeat(&mut c, 11_000, 0));
    assert_eq!(rest.iter().map(|x| x.0).collect::<Vec<_>>(), vec![1, 1]);
}

/// KILL takes the youngest task of the lower-ranked phase, and only as many
/// as the waiting job needs.
#[test]
fn kill_picks_the_youngest() {
    let mut c = core(&[("preemption", "kill")]);
    for n in 0..3 {
        node(&mut c, n, 1024, 1);
    }
    job(&mut c, 0, 1, 10, 10_000);
    let mut started = Vec::new();
    for (t, n) in [(0, 0), (1000, 1), (2000, 2)] {
        started.extend(allocations(&heartbeat(&mut c, t, n)));
    }
    assert_eq!(started.len(), 3);
    job(&mut c, 3000, 2, 1, 1000);
    let ds = c.drain_decisions();
    assert_eq!(ds, vec![Decision::Preempt { container: started[2].1, mode: PreemptMode::Kill }]);
    c.handle(Time(3000), Event::ContainerCompleted { container: started[2].1, outcome: Outcome::Preempted }).unwrap();
    let mut ask = Ask::new(Priority::MAP, Resources::new(1024, 1), 8, Phase::Map);
    ask.est_task_ms = Some(10_000);
    c.handle(Time(3000), Event::AsksUpdated { app: AppId(1), asks: vec![ask] }).unwrap();
    assert!(c.drain_decisions().is_empty(), "no second victim");
    let b = allocations(&heartbeat(&mut c, 3000, 2));
    assert_eq!(b.iter().map(|x| x.0).collect::<Vec<_>>(), vec![2]);
}

/// SUSPEND frees the vcores of the big job's task (its memory stays), the
/// small job runs there, and the suspended task resumes when it is done.
/// While the small job still waits, a heartbeat does not resume the task.
#[test]
fn suspend_then_resume() {
    let mut c = core(&[("preemption", "suspend"), ("map_slot_mb", "4096")]);
    node(&mut c, 0, 4096, 1);
    job(&mut c, 0, 1, 1, 10_000);
    let a = allocations(&heartbeat(&mut c, 0, 0));
    assert_eq!(a.len(), 1);
    job(&mut c, 1000, 2, 1, 1000);
    let ds = c.drain_decisions();
    assert_eq!(ds, vec![Decision::Preempt { container: a[0].1, mode: PreemptMode::Suspend }]);
    let b = allocations(&heartbeat(&mut c, 1000, 0));
    assert_eq!(b.iter().map(|x| x.0).collect::<Vec<_>>(), vec![2]);
    // Nothing waits any more: the suspended task resumes at once, without
    // waiting for a heartbeat (drivers offer nodes only while asks wait).
    let ds = finish(&mut c, 2000, b[0].1);
    assert_eq!(ds, vec![Decision::Resume { container: a[0].1 }]);
    // 1 s attained before the suspension, 1 s since the resume.
    assert_eq!(c.cluster().container(a[0].1).unwrap().attained_ms(Time(3000)), 2000);
}

/// Training: the first t tasks are training tasks; S_f comes from their
/// attained service once they complete, and replaces the virtual size once.
#[test]
fn training_sets_the_final_size_once() {
    let mut c = training_core(&[]);
    node(&mut c, 0, 2048, 2);
    job(&mut c, 0, 1, 6, 99_999);
    let d = describe(&c);
    assert_eq!(d["phases"][0]["initial_size_ms"], 6.0 * 60_000.0, "S_i = n·ξ·s0: {d}");
    let a = allocations(&heartbeat(&mut c, 0, 0));
    assert_eq!(a.len(), 2);
    assert_eq!(describe(&c)["training_running"]["map"], 2);
    finish(&mut c, 3000, a[0].1);
    assert_eq!(describe(&c)["phases"][0]["training"], true);
    finish(&mut c, 5000, a[1].1);
    let d = describe(&c);
    // s̃ = (3 + 5)/2 = 4 s; 4 tasks unstarted: S_f = 16 s = V.
    assert_eq!(d["phases"][0]["training"], false, "{d}");
    assert_eq!(d["phases"][0]["final_size_ms"], 16_000.0, "{d}");
    assert!((virtual_size(&c, 1) - 16_000.0).abs() < 1e-6);
    // Later completions do not change it (no flapping).
    let b = allocations(&heartbeat(&mut c, 5000, 0));
    finish(&mut c, 5100, b[0].1);
    assert_eq!(describe(&c)["phases"][0]["final_size_ms"], 16_000.0);
}

#[test]
fn tiny_phases_go_first() {
    let mut c = core(&[("tiny_threshold", "5")]);
    node(&mut c, 0, 1024, 1);
    job(&mut c, 0, 1, 10, 1000);
    job(&mut c, 0, 2, 3, 50_000);
    let a = allocations(&heartbeat(&mut c, 0, 0));
    assert_eq!(a.iter().map(|x| x.0).collect::<Vec<_>>(), vec![2]);
}

#[test]
fn bad_parameters_are_rejected() {
    let given: BTreeMap<String, String> = [("xi".to_string(), "0.5".to_string())].into();
    let p = Params::validate("hfsp", PARAMS, &given).unwrap();
    assert!(build(&p).err().unwrap().to_string().contains("xi"));
    let given: BTreeMap<String, String> = [("preemption".to_string(), "pause".to_string())].into();
    assert!(Params::validate("hfsp", PARAMS, &given).is_err());
}

/// Hybrid SUSPEND (A6 step 4): the big job's task, 10% done when the small
/// job arrives, is killed rather than suspended under
/// `kill_below_progress = 0.5`; with `wait_below_remaining_ms` above its
/// 9 s left it is left to finish; with neither it is suspended.
#[test]
fn hybrid_suspend_kills_young_victims_and_waits_for_nearly_done_ones() {
    let run = |extra: &[(&str, &str)]| {
        let mut params = vec![("preemption", "suspend"), ("map_slot_mb", "4096")];
        params.extend_from_slice(extra);
        let mut c = core(&params);
        node(&mut c, 0, 4096, 1);
        job(&mut c, 0, 1, 1, 10_000);
        let a = allocations(&heartbeat(&mut c, 0, 0));
        job(&mut c, 1000, 2, 1, 1000);
        (a[0].1, c.drain_decisions())
    };
    let (a, ds) = run(&[("kill_below_progress", "0.5")]);
    assert_eq!(ds, vec![Decision::Preempt { container: a, mode: PreemptMode::Kill }]);
    let (_, ds) = run(&[("wait_below_remaining_ms", "9500")]);
    assert!(ds.is_empty(), "9 s left < 9.5 s: WAIT: {ds:?}");
    let (a, ds) = run(&[("kill_below_progress", "0.05"), ("wait_below_remaining_ms", "8000")]);
    assert_eq!(ds, vec![Decision::Preempt { container: a, mode: PreemptMode::Suspend }]);
}

/// At most `max_suspended_per_node` suspended tasks on a node: B suspends
/// A; C, smaller still, would suspend B's task, but the node already holds
/// one suspended task.
#[test]
fn the_suspended_task_cap_per_node() {
    let run = |cap: &str| {
        let mut c = core(&[("preemption", "suspend"), ("map_slot_mb", "4096"), ("max_suspended_per_node", cap)]);
        node(&mut c, 0, 4096, 1);
        job(&mut c, 0, 1, 1, 10_000);
        allocations(&heartbeat(&mut c, 0, 0));
        job(&mut c, 1000, 2, 1, 5000);
        assert_eq!(c.drain_decisions().len(), 1, "B suspends A");
        let b = allocations(&heartbeat(&mut c, 1000, 0));
        job(&mut c, 1500, 3, 1, 500);
        (b[0].1, c.drain_decisions())
    };
    let (_, capped) = run("1");
    assert!(capped.is_empty(), "{capped:?}");
    let (b, free) = run("0");
    assert_eq!(free, vec![Decision::Preempt { container: b, mode: PreemptMode::Suspend }]);
}

/// `preempt_maps = false` (the authors' code): maps are never victims.
#[test]
fn the_codes_reduce_only_preemption() {
    let mut c = core(&[("preemption", "kill"), ("preempt_maps", "false")]);
    node(&mut c, 0, 1024, 1);
    job(&mut c, 0, 1, 1, 10_000);
    assert_eq!(allocations(&heartbeat(&mut c, 0, 0)).len(), 1);
    job(&mut c, 1000, 2, 1, 1000);
    assert!(c.drain_decisions().is_empty(), "a map is never preempted");
}

/// D11 (`reserve_training_slots`): one node of 3 slots, T = 1. A tiny job
/// (4 tasks, tiny below 5) and a large one (10 tasks, in training) arrive
/// together. Without the reservation the tiny job, served first, takes all
/// 3 slots; with it, other phases may use at most 3 − 1 = 2 while a
/// training task waits, so the large job's training task starts at once.
#[test]
fn reserved_training_slots() {
    let run = |reserve: &str| {
        let mut c = core(&[
            ("training_tasks", "1"),
            ("tiny_threshold", "5"),
            ("training_slots_map", "1"),
            ("reserve_training_slots", reserve),
        ]);
        node(&mut c, 0, 3072, 3);
        job(&mut c, 0, 1, 4, 10_000);
        job(&mut c, 0, 2, 10, 10_000);
        let mut apps = apps_placed(&mut c, 0, 0);
        apps.sort();
        apps
    };
    assert_eq!(run("false"), vec![1, 1, 1]);
    assert_eq!(run("true"), vec![1, 1, 2]);
}

/// D2 (`initial_mean`): A (1 task, tiny) completes in 1 s; B (6 tasks) then
/// trains on 3 s and 5 s, so s̃(B) = 4 s, and B stays queued. C (6 tasks)
/// arrives: from completed phases s̄ = 1 s and S_i = 6 s (thesis); from the
/// trained phases in the queue s̄ = 4 s and S_i = 24 s (code).
#[test]
fn initial_mean_from_completed_or_queued_phases() {
    let run = |mean: &str| {
        let mut c = training_core(&[("initial_mean", mean)]);
        node(&mut c, 0, 2048, 2);
        job(&mut c, 0, 1, 1, 0);
        let a = allocations(&heartbeat(&mut c, 0, 0));
        finish(&mut c, 1000, a[0].1);
        job(&mut c, 1000, 2, 6, 0);
        let b = allocations(&heartbeat(&mut c, 1000, 0));
        assert_eq!(b.len(), 2);
        finish(&mut c, 4000, b[0].1);
        finish(&mut c, 6000, b[1].1);
        job(&mut c, 6000, 3, 6, 0);
        phase_number(&c, 3, "initial_size_ms")
    };
    assert_eq!(run("completed"), 6000.0);
    assert_eq!(run("queued"), 24_000.0);
}

/// D3 (`map_final=completed_mean`): one node of 3 slots, t = 2, a job of 6
/// maps: two training tasks and one ordinary task start at 0. The first
/// training task completes at 3 s, the ordinary one at 4 s. The code's
/// estimator has its 2 completed maps then: s̃ = 3.5 s over all 6 tasks,
/// S_f = V = 21 s (the work done is counted again). The thesis waits for
/// the second training task.
#[test]
fn map_final_size_from_completed_maps() {
    let run = |map_final: &str| {
        let mut c = training_core(&[("map_final", map_final)]);
        node(&mut c, 0, 3072, 3);
        job(&mut c, 0, 1, 6, 0);
        let a = allocations(&heartbeat(&mut c, 0, 0));
        assert_eq!(a.len(), 3);
        finish(&mut c, 3000, a[0].1);
        finish(&mut c, 4000, a[2].1);
        (describe(&c)["phases"][0]["training"].clone(), virtual_size(&c, 1))
    };
    assert_eq!(run("completed_mean"), (Value::Bool(false), 21_000.0));
    assert_eq!(run("thesis").0, Value::Bool(true));
}

/// D4 (`reduce_final=sort_finish`), Δ = 1 s: one node of 3 slots, t = 2,
/// a job of 6 reduces; training tasks a0, a1 and ordinary task a2 start at
/// 0. At 2 s a0 reports progress 0.4 and a2 5/6, and a1 completes. The
/// code's samples: a1's 2 s and a2's 2/((5/6 − 2/3)·3) = 4 s (a0 is still
/// in its copy and sort thirds), s̃ = 3 s over the 5 unfinished tasks:
/// S_f = 15 s. The thesis's: a1's 2 s and a0's 2/0.4 = 5 s, s̃ = 3.5 s
/// over 3 unstarted tasks and the live ones' 0.6 + 1/6: S_f ≈ 13.2 s.
#[test]
fn reduce_final_size_from_rescaled_progress() {
    let run = |reduce_final: &str| {
        let mut c = training_core(&[("reduce_final", reduce_final), ("delta_ms", "1000"), ("map_share", "0")]);
        node(&mut c, 0, 3072, 3);
        job_of(&mut c, 0, 1, 6, 0, Phase::Reduce);
        let a = allocations(&heartbeat(&mut c, 0, 0));
        assert_eq!(a.len(), 3);
        for (i, progress) in [(0, 0.4), (2, 5.0 / 6.0)] {
            c.handle(Time(2000), Event::ContainerProgress { container: a[i].1, progress, sort_finished: None })
                .unwrap();
        }
        assert_eq!(describe(&c)["phases"][0]["training"], true);
        finish(&mut c, 2000, a[1].1);
        phase_number(&c, 1, "final_size_ms")
    };
    assert!((run("sort_finish") - 15_000.0).abs() < 1e-6);
    assert!((run("thesis") - 3500.0 * (3.6 + 1.0 / 6.0)).abs() < 1e-6);
}

/// D4 with the sort finish reported (as the YARN shim reads it from
/// MapReduce AMs): the same job; a1 reports its sort finished at 1 s and
/// completes at 1.8 s, a2 reports at 2 s progress 5/6 and a sort finish at
/// 0.5 s. The code's samples run from the sort finish: a1's 0.8 s and a2's
/// 1.5/((5/6 − 2/3)·3) = 3 s, s̃ = 1.9 s over 5 unfinished tasks: S_f =
/// 9.5 s (timed from launch, as without the reports: (1.8 + 4)/2 × 5 =
/// 14.5 s).
#[test]
fn reduce_final_times_reduces_from_their_sort_finish() {
    let mut c = training_core(&[("reduce_final", "sort_finish"), ("delta_ms", "1000"), ("map_share", "0")]);
    node(&mut c, 0, 3072, 3);
    job_of(&mut c, 0, 1, 6, 0, Phase::Reduce);
    let a = allocations(&heartbeat(&mut c, 0, 0));
    let report = |c: &mut Harness, at, i: usize, progress, sorted| {
        let e = Event::ContainerProgress { container: a[i].1, progress, sort_finished: Some(Time(sorted)) };
        c.handle(Time(at), e).unwrap();
    };
    report(&mut c, 1000, 1, 0.7, 1000);
    finish(&mut c, 1800, a[1].1);
    assert_eq!(describe(&c)["phases"][0]["training"], true);
    report(&mut c, 2000, 2, 5.0 / 6.0, 500);
    let got = phase_number(&c, 1, "final_size_ms");
    assert!((got - 9_500.0).abs() < 1e-6, "{got}");
}

/// §7.10 (`order=virtual_finish`): 4 virtual slots (4 GB), 1 real one
/// (1 vcore). A = 1 task × 6 s (V 6 s), B = 4 tasks × 2 s (V 8 s). Max-min
/// gives A 1 virtual slot and B 3, so B finishes virtually at 4 s and A at
/// 6 s: by V the container goes to A, by virtual finish time to B.
#[test]
fn order_by_virtual_finish_time() {
    let run = |order: &str| {
        let mut c = core(&[("order", order)]);
        node(&mut c, 0, 4096, 1);
        job(&mut c, 0, 1, 1, 6000);
        job(&mut c, 0, 2, 4, 2000);
        apps_placed(&mut c, 0, 0)
    };
    assert_eq!(run("remaining"), vec![1]);
    assert_eq!(run("virtual_finish"), vec![2]);
}

/// D8 (`victims=heartbeat_node`), KILL: A's tasks run on n0 (since 0) and
/// n1 (since 1 s); B (1 task) arrives at 2 s. Any node: A's youngest task,
/// on n1, is killed at once. The code: nothing at B's arrival; n0's
/// heartbeat claims n1's task without killing it (and kills nothing on
/// n0); n1's heartbeat kills it.
#[test]
fn victims_only_on_the_heartbeating_node() {
    let setup = |victims: &str| {
        let mut c = core(&[("preemption", "kill"), ("victims", victims)]);
        node(&mut c, 0, 1024, 1);
        node(&mut c, 1, 1024, 1);
        job(&mut c, 0, 1, 10, 10_000);
        let mut a = allocations(&heartbeat(&mut c, 0, 0));
        a.extend(allocations(&heartbeat(&mut c, 1000, 1)));
        assert_eq!(a.len(), 2);
        job(&mut c, 2000, 2, 1, 1000);
        (c, a[1].1)
    };
    let kill = |cid| vec![Decision::Preempt { container: cid, mode: PreemptMode::Kill }];
    let (mut c, young) = setup("any_node");
    assert_eq!(c.drain_decisions(), kill(young));
    let (mut c, young) = setup("heartbeat_node");
    assert!(c.drain_decisions().is_empty());
    assert!(heartbeat(&mut c, 2000, 0).is_empty());
    assert_eq!(heartbeat(&mut c, 2000, 1), kill(young));
}

/// 1 map of 1 GB (est. 1 s) that prefers n1 and, with `rack`, its rack.
fn prefers_n1(rack: bool) -> Ask {
    let mut ask = Ask::new(Priority::MAP, Resources::new(1024, 1), 1, Phase::Map);
    ask.est_task_ms = Some(1000);
    ask.locality = vec![Locality::Node(NodeId(1), 1)];
    if rack {
        ask.locality.push(Locality::Rack("/r".into(), 1));
    }
    ask
}

/// Delay scheduling (§7.18), D = 1 s, nodes n0 and n1 on one rack. A asks
/// 1 map (est. 1 s) that prefers n1 (and, in one case, the rack). Offered
/// n0 only, A waits: with a rack entry it takes n0 from D on, without one
/// (off-switch) from 2D on; with D = 0 at once. The timer at D makes a pass
/// of its own (event-driven drivers offer no node again).
#[test]
fn delay_scheduling_relaxes_with_time() {
    // n1 is busy with B (smaller, placed first), so A is offered only n0,
    // by its heartbeats and by the passes of the wake-ups at D and 2D.
    let first_on_n0 = |delay: &str, rack: bool| {
        let mut c = core(&[("locality_delay_ms", delay)]);
        node(&mut c, 0, 1024, 1);
        node(&mut c, 1, 1024, 1);
        submit(&mut c, 0, 1, prefers_n1(rack));
        job(&mut c, 0, 2, 1, 500);
        assert_eq!(apps_placed(&mut c, 0, 1), vec![2]);
        [0, 999, 1000, 1999, 2000].into_iter().find(|t| !allocations(&heartbeat(&mut c, *t, 0)).is_empty())
    };
    assert_eq!(first_on_n0("0", false), Some(0));
    assert_eq!(first_on_n0("1000", true), Some(1000));
    assert_eq!(first_on_n0("1000", false), Some(2000));
    // The wake-up at D places it without any heartbeat.
    let mut c = core(&[("locality_delay_ms", "1000")]);
    node(&mut c, 0, 1024, 1);
    node(&mut c, 1, 1024, 1);
    submit(&mut c, 0, 1, prefers_n1(true));
    // n1 is busy with B (smaller), so A is offered only n0.
    job(&mut c, 0, 2, 1, 500);
    assert_eq!(apps_placed(&mut c, 0, 1), vec![2]);
    assert!(heartbeat(&mut c, 0, 0).is_empty());
    c.handle_timeout(Time(1000));
    let a = allocations(&c.drain_decisions());
    assert_eq!(a.iter().map(|a| a.0).collect::<Vec<_>>(), vec![1]);
}

/// A new wave of asks waits afresh: A's only map goes off-switch at 2D;
/// its next ask, at 3 s, waits again until 3 s + 2D.
#[test]
fn delay_scheduling_restarts_for_a_new_wave() {
    let mut c = core(&[("locality_delay_ms", "1000")]);
    node(&mut c, 0, 2048, 2);
    node(&mut c, 1, 1024, 1);
    submit(&mut c, 0, 1, prefers_n1(false));
    // n1 is busy with B (smaller, placed first): A is offered only n0.
    job(&mut c, 0, 2, 1, 500);
    assert_eq!(apps_placed(&mut c, 0, 1), vec![2]);
    assert!(heartbeat(&mut c, 0, 0).is_empty());
    assert_eq!(apps_placed(&mut c, 2000, 0), vec![1]);
    c.handle(Time(3000), Event::AsksUpdated { app: AppId(1), asks: vec![prefers_n1(false)] }).unwrap();
    assert!(heartbeat(&mut c, 3000, 0).is_empty() && heartbeat(&mut c, 4999, 0).is_empty());
    assert_eq!(apps_placed(&mut c, 5000, 0), vec![1]);
}

/// While the head of the queue waits for locality, the next phase gets the
/// node: A (1 task × 1 s, prefers n1) outranks B (10 × 10 s, no
/// preference), but n0's container goes to B under delay scheduling.
#[test]
fn delay_scheduling_serves_the_next_phase_meanwhile() {
    let run = |delay: &str| {
        let mut c = core(&[("locality_delay_ms", delay)]);
        node(&mut c, 0, 1024, 1);
        node(&mut c, 1, 1024, 1);
        submit(&mut c, 0, 1, prefers_n1(false));
        job(&mut c, 0, 2, 10, 10_000);
        apps_placed(&mut c, 0, 0)
    };
    assert_eq!(run("0"), vec![1]);
    assert_eq!(run("1000"), vec![2]);
}

/// §7.1 (`pool_quotas`): one node of 4 GB and 4 vcores, half of it the MAP
/// pool: 2 map slots of 1 GB, 1 reduce slot of 2 GB. A (4 maps × 1 s, V 4
/// s) outranks B (4 reduces × 10 s, V 40 s). Without quotas A takes the
/// whole node; with them, while both wait, A gets its 2 slots and B its 1,
/// and the fourth container stays free.
#[test]
fn pool_quotas_split_the_real_cluster() {
    let run = |quotas: &str| {
        let mut c = core(&[("pool_quotas", quotas), ("map_share", "0.5")]);
        node(&mut c, 0, 4096, 4);
        job(&mut c, 0, 1, 4, 1000);
        job_of(&mut c, 0, 2, 4, 10_000, Phase::Reduce);
        apps_placed(&mut c, 0, 0)
    };
    assert_eq!(run("false"), vec![1, 1, 1, 1]);
    assert_eq!(run("true"), vec![1, 1, 2]);
}

/// §7.1: with no reduce waiting, A's 4 maps borrow the reduce pool's room
/// (2 beyond their 2 slots). B (1 reduce, V 100 s) arrives, ranked below A:
/// KILL never preempts a higher-ranked phase, but under pool quotas A's
/// youngest borrowed container is reclaimed for B.
#[test]
fn borrowed_containers_are_the_first_victims() {
    let run = |quotas: &str| {
        let mut c = core(&[("pool_quotas", quotas), ("map_share", "0.5"), ("preemption", "kill")]);
        node(&mut c, 0, 4096, 4);
        job(&mut c, 0, 1, 4, 10_000);
        let a = allocations(&heartbeat(&mut c, 0, 0));
        assert_eq!(a.len(), 4);
        job_of(&mut c, 1000, 2, 1, 100_000, Phase::Reduce);
        (a[3].1, c.drain_decisions())
    };
    assert!(run("false").1.is_empty());
    let (youngest, ds) = run("true");
    assert_eq!(ds, vec![Decision::Preempt { container: youngest, mode: PreemptMode::Kill }]);
}

/// Delay scheduling and KILL, D = 1 s: B runs on n1 (since 0) and n0
/// (since 1 s); A (1 map, prefers n1 only) arrives at 2 s and B's youngest
/// task, on n0, is killed. A skips n0, which B takes again. Until 2D after
/// the skip A preempts nothing more (it would not use n0); then it may.
#[test]
fn a_phase_waiting_for_locality_does_not_preempt() {
    let mut c = core(&[("locality_delay_ms", "1000"), ("preemption", "kill")]);
    node(&mut c, 0, 1024, 1);
    node(&mut c, 1, 1024, 1);
    job(&mut c, 0, 2, 10, 10_000);
    let on_n1 = allocations(&heartbeat(&mut c, 0, 1));
    let on_n0 = allocations(&heartbeat(&mut c, 1000, 0));
    submit(&mut c, 2000, 1, prefers_n1(false));
    let kill = |cid| vec![Decision::Preempt { container: cid, mode: PreemptMode::Kill }];
    assert_eq!(c.drain_decisions(), kill(on_n0[0].1));
    c.handle(Time(2000), Event::ContainerCompleted { container: on_n0[0].1, outcome: Outcome::Preempted }).unwrap();
    let again = allocations(&heartbeat(&mut c, 2000, 0));
    assert_eq!(again.iter().map(|a| a.0).collect::<Vec<_>>(), vec![2]);
    let progress = |c: &mut Harness, t| {
        c.handle(Time(t), Event::ContainerProgress { container: on_n1[0].1, progress: 0.5, sort_finished: None })
            .unwrap();
        c.drain_decisions()
    };
    assert!(progress(&mut c, 2500).is_empty());
    assert_eq!(progress(&mut c, 4000), kill(again[0].1));
}

/// An ask of `count` containers of `mb` MB and `vcores` at `phase`'s
/// MapReduce priority, each estimated at `est_ms`.
fn sized(phase: Phase, mb: u64, vcores: u32, est_ms: u64) -> Ask {
    let prio = match phase {
        Phase::Am => Priority::AM,
        Phase::Reduce => Priority::REDUCE,
        _ => Priority::MAP,
    };
    let mut ask = Ask::new(prio, Resources::new(mb, vcores), 1, phase);
    ask.est_task_ms = Some(est_ms);
    ask
}

/// The decisions of a container's completion at `t`.
fn resumed(ds: &[Decision]) -> Vec<ContainerId> {
    ds.iter().filter_map(|d| if let Decision::Resume { container } = d { Some(*container) } else { None }).collect()
}

/// SUSPEND never leaves a node's room idle under suspended work (module
/// doc), which used to deadlock a node filled by AMs and suspended tasks.
/// One node of 4 GB and 3 vcores, heartbeats. At 0: A's reduce (2 GB, 1
/// vcore, 100 s) and B's map (1 GB, 2 vcores, 50 s): 1 GB free, no
/// vcore. At 1 s C's map (1 GB, 1 vcore, 1 s) arrives: A's reduce is
/// suspended (it keeps its 2 GB), but D's AM (1 GB, 1 vcore), asked at the
/// same time, goes first and takes the room. At 50 s B ends and E's AM
/// takes its 1 GB: the node holds two AMs and the suspended reduce, all its
/// memory, with 1 vcore free and nothing running; C (1 GB) cannot be
/// placed. Before, nothing ever ran again (the reduce waited for C, C for
/// memory, the AMs for their tasks). Now the reduce resumes in the idle
/// vcore at 50 s, ends at 149 s (1 s + 99 s), and C runs 149–150 s.
#[test]
fn suspended_work_resumes_on_a_node_full_of_ams() {
    let mut c = core(&[("preemption", "suspend"), ("map_slot_mb", "1024")]);
    node(&mut c, 0, 4096, 3);
    submit(&mut c, 0, 1, sized(Phase::Reduce, 2048, 1, 100_000));
    submit(&mut c, 0, 2, sized(Phase::Map, 1024, 2, 50_000));
    let ab = allocations(&heartbeat(&mut c, 0, 0));
    assert_eq!(ab.iter().map(|a| a.0).collect::<Vec<_>>(), vec![2, 1], "B is smaller");
    let (b, reduce) = (ab[0].1, ab[1].1);
    submit(&mut c, 1000, 3, sized(Phase::Map, 1024, 1, 1000));
    assert_eq!(c.drain_decisions(), vec![Decision::Preempt { container: reduce, mode: PreemptMode::Suspend }]);
    submit(&mut c, 1000, 4, sized(Phase::Am, 1024, 1, 0));
    assert!(c.drain_decisions().is_empty(), "C could use the room: the reduce stays suspended");
    assert_eq!(apps_placed(&mut c, 1000, 0), vec![4], "AMs go first");
    assert!(finish(&mut c, 50_000, b).is_empty(), "C could use B's room");
    submit(&mut c, 50_000, 5, sized(Phase::Am, 1024, 1, 0));
    let ds = heartbeat(&mut c, 50_000, 0);
    assert_eq!(allocations(&ds).iter().map(|a| a.0).collect::<Vec<_>>(), vec![5]);
    let avail = c.cluster().node(NodeId(0)).unwrap().available();
    assert_eq!((avail.memory_mb, avail.vcores), (0, 0), "the reduce took the idle vcore");
    assert_eq!(resumed(&ds), vec![reduce]);
    assert_eq!(c.cluster().container(reduce).unwrap().attained_ms(Time(149_000)), 100_000);
    finish(&mut c, 149_000, reduce);
    let last = allocations(&heartbeat(&mut c, 149_000, 0));
    assert_eq!(last.iter().map(|a| a.0).collect::<Vec<_>>(), vec![3]);
    finish(&mut c, 150_000, last[0].1);
    assert_eq!(c.cluster().pending_containers(), 0);
}

/// AM containers are never victims: one node of 2 GB and 1 vcore holds
/// A's AM; A's map (1 GB, 10 s, smaller than nothing else) waits for the
/// vcore, and B's map (1 s) as well: nothing is preempted.
#[test]
fn am_containers_are_never_victims() {
    for mode in ["kill", "suspend"] {
        let mut c = core(&[("preemption", mode)]);
        node(&mut c, 0, 2048, 1);
        submit(&mut c, 0, 1, sized(Phase::Am, 1024, 1, 0));
        assert_eq!(apps_placed(&mut c, 0, 0), vec![1]);
        submit(&mut c, 1000, 2, sized(Phase::Map, 1024, 1, 1000));
        assert!(c.drain_decisions().is_empty(), "{mode}");
        assert!(heartbeat(&mut c, 1000, 0).is_empty(), "{mode}");
    }
}

/// A kill the driver has not reported done yet frees its room as far as
/// the demand goes: B (10 long tasks) fills both nodes, A (1 short map)
/// arrives and one of B's tasks is killed; events before the kill completes
/// (a progress report, a heartbeat) kill nothing more. Before, each such
/// event chose another victim, as YARN's grace period leaves many of them.
#[test]
fn a_kill_in_flight_is_not_doubled_by_the_next_events() {
    let mut c = core(&[("preemption", "kill")]);
    node(&mut c, 0, 1024, 1);
    node(&mut c, 1, 1024, 1);
    job(&mut c, 0, 2, 10, 100_000);
    let b = allocations(&crate::test_support::schedule(&mut c, 0));
    assert_eq!(b.len(), 2);
    job(&mut c, 1000, 1, 1, 1_000);
    let first = c.drain_decisions();
    assert_eq!(first.len(), 1, "{first:?}");
    for t in [1100, 1200] {
        c.handle(Time(t), Event::ContainerProgress { container: b[0].1, progress: 0.1, sort_finished: None }).unwrap();
        c.handle(Time(t), Event::NodeHeartbeat { node: NodeId(0) }).unwrap();
        assert!(c.drain_decisions().is_empty(), "a second victim at {t}");
    }
}

/// The apps of the phases in the real order, as `describe` lists them.
fn order_of_apps(c: &Harness) -> Vec<u64> {
    describe(c)["phases"].as_array().unwrap().iter().filter_map(|p| p["app"].as_u64()).collect()
}

/// On nodes too small for a virtual slot (4 GB slots) nothing ages: the
/// waiting phases keep their initial order, C (3 × 6 s, V 18 s) before B
/// (1 × 20 s, V 20 s). An 8 GB node brings 2 virtual slots, which max-min
/// gives to the one-task phases A and B: 5 s later V(B) = 15 s, and B goes
/// ahead of C. Without slots again, the order holds where aging left it.
#[test]
fn a_cluster_that_gains_virtual_slots_starts_aging() {
    let mut c = core(&[("map_slot_mb", "4096")]);
    node(&mut c, 0, 2048, 1);
    job(&mut c, 0, 1, 1, 100_000);
    assert_eq!(apps_placed(&mut c, 0, 0), vec![1]);
    job(&mut c, 0, 2, 1, 20_000);
    job(&mut c, 0, 3, 3, 6_000);
    heartbeat(&mut c, 1000, 0);
    assert_eq!(order_of_apps(&c), vec![3, 2, 1]);
    let big = sojourn_core::NodeSpec {
        node: NodeId(1),
        name: "n1".into(),
        rack: "/r".into(),
        labels: vec![],
        capacity: Resources::new(8192, 1),
    };
    c.handle(Time(1000), Event::NodeAdded(big)).expect("node added");
    heartbeat(&mut c, 6000, 0);
    assert_eq!(virtual_size(&c, 2), 15_000.0);
    assert_eq!(order_of_apps(&c), vec![2, 3, 1]);
    c.handle(Time(7000), Event::NodeRemoved { node: NodeId(1) }).expect("node removed");
    heartbeat(&mut c, 60_000, 0);
    assert_eq!(virtual_size(&c, 2), 15_000.0);
    assert_eq!(order_of_apps(&c), vec![2, 3, 1]);
}

/// The kept order of the size-based queue (order.rs, `KeptOrder`) holds
/// until two phases meet, and no longer. Three virtual and real slots; B
/// (10 × 10.8 s, V 108 s) comes before A (10 × 10 s, V 100 s), so max-min
/// gives B the remainder slot: V(B) = 108 − 2t, V(A) = 100 − t, which meet
/// at t = 8 s, before any virtual task completes (10 s). A fills the node at
/// 0. A container freed at 5 s goes to A (95 < 98) from the order kept at 0;
/// one freed at 9 s goes to B (90 < 91), ranked afresh.
#[test]
fn a_kept_order_holds_until_two_phases_meet() {
    let mut c = core(&[]);
    node(&mut c, 0, 3072, 3);
    job(&mut c, 0, 1, 10, 10_800);
    job(&mut c, 0, 2, 10, 10_000);
    let first = allocations(&heartbeat(&mut c, 0, 0));
    assert_eq!(first.iter().map(|a| a.0).collect::<Vec<_>>(), vec![2, 2, 2]);
    let kept_at = |c: &Harness| {
        let h = c.policy_as::<super::Hfsp>().expect("hfsp");
        h.kept.as_ref().map(|k| k.ranked_at())
    };
    assert_eq!(kept_at(&c), Some(0.0), "the order is kept from the first heartbeat");

    finish(&mut c, 5000, first[0].1);
    assert_eq!(apps_placed(&mut c, 5000, 0), vec![2]);
    assert_eq!(kept_at(&c), Some(0.0), "at 5 s the order kept at 0 still holds");
    assert_eq!(virtual_size(&c, 1), 98_000.0);
    assert_eq!(virtual_size(&c, 2), 95_000.0);

    finish(&mut c, 9000, first[1].1);
    assert_eq!(apps_placed(&mut c, 9000, 0), vec![1]);
    assert_eq!(kept_at(&c), Some(9000.0), "past 8 s the order is ranked afresh");
    assert_eq!(virtual_size(&c, 1), 90_000.0);
    assert_eq!(virtual_size(&c, 2), 91_000.0);
}
