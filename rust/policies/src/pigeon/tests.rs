//! Golden cases for Pigeon (pigeon.md §1.2–§1.5, §3.5 row 9, §5), on tiny
//! clusters of one-slot nodes (1 GB, 1 vcore: a node is a worker), computed
//! by hand.

use super::config::{Weight, WfqMode};
use super::master::{Master, Served, Task};
use super::{split_by_size, split_with, Pigeon};
use crate::test_support::{allocations, config_error, finish, node, node_in_rack, tick};
use sojourn_core::{
    AppId, AppSpec, Ask, ContainerId, CoreConfig, Decision, Event, Harness, NodeId, NodeSpec, Phase, Priority,
    Resources, Rng, Time,
};
use std::collections::BTreeMap;

/// A core running pigeon with `kv` and the core's seed `seed`, on `nodes`
/// one-slot nodes.
fn cluster(nodes: u32, kv: &[(&str, &str)], seed: u64) -> Harness {
    let given: BTreeMap<String, String> = kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let p = crate::build("pigeon", &given).expect("valid parameters");
    let mut c = Harness::new(p, CoreConfig { seed, ..CoreConfig::default() });
    for i in 0..nodes {
        node(&mut c, i, 1024, 1);
    }
    c
}

/// Job `id` at `t` ms: `tasks` map tasks, each estimated at `est_ms`.
fn job(c: &mut Harness, t: u64, id: u32, tasks: u32, est_ms: u64) {
    c.handle(Time(t), Event::AppAdded(AppSpec::new(AppId(id), "default", "u"))).expect("app");
    let mut ask = Ask::new(Priority::MAP, Resources::new(1024, 1), tasks, Phase::Map);
    ask.est_task_ms = Some(est_ms);
    c.handle(Time(t), Event::AsksUpdated { app: AppId(id), asks: vec![ask] }).expect("ask");
}

/// (app, node) of each allocation, sorted.
fn placed(ds: &[Decision]) -> Vec<(u32, u32)> {
    let mut v: Vec<(u32, u32)> = allocations(ds).iter().map(|a| (a.0, a.2)).collect();
    v.sort();
    v
}

fn counter(c: &Harness, name: &str) -> u64 {
    c.metrics().counter(name)
}

/// Runs jobs to completion with d = 0: each allocation of app `a` on a
/// node of group `g` takes the next duration of `durations[(a, g)]`
/// (tasks of one job are interchangeable to the scheduler, so which task
/// is which is the host's choice: the paper deals A's tasks to the groups
/// contiguously, L227). Returns each app's completion time and the group
/// each app's first task ran in.
fn run_to_completion(
    c: &mut Harness,
    group_of: impl Fn(u32) -> u32,
    mut durations: BTreeMap<(u32, u32), Vec<u64>>,
) -> (BTreeMap<u32, u64>, BTreeMap<u32, u32>) {
    let mut running: Vec<(u64, ContainerId, u32)> = Vec::new(); // (end, container, app)
    let mut done: BTreeMap<u32, u64> = BTreeMap::new();
    let mut first_group: BTreeMap<u32, u32> = BTreeMap::new();
    let mut ds = c.drain_decisions();
    let mut now = 0;
    loop {
        for (app, container, n) in allocations(&ds) {
            let g = group_of(n);
            first_group.entry(app).or_insert(g);
            let list = durations.get_mut(&(app, g)).expect("a duration list for the app and group");
            assert!(!list.is_empty(), "app {app} got more tasks in group {g} than it has");
            let d = list.remove(0);
            running.push((now + d, container, app));
        }
        running.sort();
        if running.is_empty() {
            break;
        }
        let (end, container, app) = running.remove(0);
        now = end;
        let e = done.entry(app).or_insert(0);
        *e = (*e).max(end);
        ds = finish(c, end, container);
    }
    (done, first_group)
}

/// pigeon.md §3.5 row 9 (L225–231, Fig 6): 4 workers; job A = 6 tasks
/// (20, 1, 1, 10, 10, 10), then jobs B and C of one task of 2 each, all at
/// time 0 (units of 1 s), d = 0, no reserved workers.
/// - Pigeon, 2 groups of 2: A's tasks split 3 and 3: group 1 gets
///   (20, 1, 1), group 2 (10, 10, 10). When B goes to group 1 and C to group
///   2 (the figure), B waits behind A3 (1–2) and ends at 4, C waits behind
///   A6 (10–20) and ends at 12, A ends at 20: sum 36. The other placements
///   of B and C give 30 (both in group 1), 46 (both in group 2) and 36.
/// - Centralized FIFO (one group of 4): A1–A4 start at 0, A5 and A6 at 1,
///   B at 10 (ends 12), C at 11 (ends 13), A at 20: sum 45, 25 % more.
///
/// Which master gets B and C is random (L90); the seeds below cover every
/// placement, the figure's among them.
#[test]
fn fig6_toy_example_pigeon_36_centralized_45() {
    let kv = [("network_delay_us", "0"), ("reserved_pct", "0"), ("workers_per_group", "2"), ("cutoff_s", "100")];
    let expected = |b: u32, c: u32| match (b, c) {
        (0, 1) | (1, 0) => 36,
        (0, 0) => 30,
        _ => 46,
    };
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..16 {
        let mut c = cluster(4, &kv, seed);
        job(&mut c, 0, 1, 6, 9_000);
        job(&mut c, 0, 2, 1, 2_000);
        job(&mut c, 0, 3, 1, 2_000);
        let durations = BTreeMap::from([
            ((1, 0), vec![20_000, 1_000, 1_000]),
            ((1, 1), vec![10_000, 10_000, 10_000]),
            ((2, 0), vec![2_000]),
            ((2, 1), vec![2_000]),
            ((3, 0), vec![2_000]),
            ((3, 1), vec![2_000]),
        ]);
        let (done, groups) = run_to_completion(&mut c, |n| n / 2, durations);
        let (gb, gc) = (groups[&2], groups[&3]);
        assert_eq!(done[&1], 20_000, "seed {seed}: A ends at 20");
        let sum: u64 = done.values().sum();
        assert_eq!(sum, expected(gb, gc) * 1000, "seed {seed}: B in group {gb}, C in group {gc}: {done:?}");
        if (gb, gc) == (0, 1) {
            assert_eq!((done[&2], done[&3]), (4_000, 12_000), "the figure: B at 4, C at 12");
        }
        seen.insert((gb, gc));
    }
    assert!(seen.contains(&(0, 1)), "the figure's placement (B to group 1, C to group 2) among the seeds: {seen:?}");

    let central = [("network_delay_us", "0"), ("reserved_pct", "0"), ("workers_per_group", "4"), ("cutoff_s", "100")];
    let mut c = cluster(4, &central, 0);
    job(&mut c, 0, 1, 6, 9_000);
    job(&mut c, 0, 2, 1, 2_000);
    job(&mut c, 0, 3, 1, 2_000);
    let durations = BTreeMap::from([
        ((1, 0), vec![20_000, 1_000, 1_000, 10_000, 10_000, 10_000]),
        ((2, 0), vec![2_000]),
        ((3, 0), vec![2_000]),
    ]);
    let (done, _) = run_to_completion(&mut c, |_| 0, durations);
    assert_eq!(done, BTreeMap::from([(1, 20_000), (2, 12_000), (3, 13_000)]));
    assert_eq!(done.values().sum::<u64>(), 45_000);
}

fn task(long: bool, id: u32) -> Task {
    Task { req: (AppId(id), Priority::MAP), long, arrived_us: 0 }
}

/// The classes an idle unreserved worker serves, one idle notice after
/// another, from `highs` short and `lows` long tasks queued.
fn wfq_order(weight: Weight, mode: WfqMode, highs: u32, lows: u32) -> String {
    let mut m = Master::default();
    for i in 0..highs {
        m.htq.push_back(task(false, i));
    }
    for i in 0..lows {
        m.ltq.push_back(task(true, i));
    }
    let mut out = String::new();
    while let Served::Task { task, .. } = m.idle(0, false, weight, mode) {
        out.push(if task.long { 'L' } else { 'H' });
    }
    out
}

/// WFQ (L94, M18–M20, §6.1 A1): out of every W tasks an unreserved worker
/// serves while LTQ is non-empty, one is long: W − 1 short then a long one.
/// W = ∞ is strict priority; W = 1 serves only long tasks while any wait;
/// the authors' simulator (`c ≤ W`) lets W + 1 short tasks go first.
#[test]
fn wfq_serves_one_long_task_per_w_while_ltq_is_non_empty() {
    assert_eq!(wfq_order(Weight::Finite(4), WfqMode::Paper, 9, 2), "HHHLHHHLHHH");
    assert_eq!(
        wfq_order(Weight::Finite(20), WfqMode::Paper, 40, 3),
        format!("{0}L{0}L{1}", "H".repeat(19), "H".repeat(2)) + "L"
    );
    assert_eq!(wfq_order(Weight::Infinite, WfqMode::Paper, 5, 2), "HHHHHLL");
    assert_eq!(wfq_order(Weight::Finite(1), WfqMode::Paper, 2, 2), "LLHH");
    assert_eq!(wfq_order(Weight::Finite(4), WfqMode::PigeonSim, 7, 2), "HHHHHLHHL");
    // c keeps counting while LTQ is empty: a long task that arrives after
    // many short dispatches is served at the next idle notice (A1)
    let mut m = Master::default();
    for i in 0..5 {
        m.htq.push_back(task(false, i));
    }
    for _ in 0..3 {
        assert!(matches!(
            m.idle(0, false, Weight::Finite(3), WfqMode::Paper),
            Served::Task { task: Task { long: false, .. }, .. }
        ));
    }
    m.ltq.push_back(task(true, 9));
    assert!(matches!(
        m.idle(0, false, Weight::Finite(3), WfqMode::Paper),
        Served::Task { task: Task { long: true, .. }, wfq_turn: true }
    ));
}

/// The same rule through the policy: one worker (W = 3, d = 0) busy with a
/// long task; a long job of 2 tasks and a short job of 6 queue at the
/// master. As the worker frees: S S L S S L S S.
#[test]
fn wfq_through_the_policy() {
    let kv = [
        ("network_delay_us", "0"),
        ("reserved_pct", "0"),
        ("workers_per_group", "1"),
        ("wfq_weight", "3"),
        ("cutoff_s", "10"),
    ];
    let mut c = cluster(1, &kv, 0);
    job(&mut c, 0, 1, 1, 100_000);
    let mut cur = allocations(&c.drain_decisions())[0].1;
    job(&mut c, 1, 2, 2, 100_000);
    job(&mut c, 2, 3, 6, 1_000);
    assert!(c.drain_decisions().is_empty());
    let mut order = String::new();
    for t in 0..8 {
        let ds = finish(&mut c, 1_000 + t, cur);
        let a = allocations(&ds);
        assert_eq!(a.len(), 1);
        order.push(if a[0].0 == 2 { 'L' } else { 'S' });
        cur = a[0].1;
    }
    assert_eq!(order, "SSLSSLSS");
    assert_eq!(counter(&c, "wfq_long_turns"), 2);
    assert_eq!((counter(&c, "queued_long"), counter(&c, "queued_short")), (2, 6));
}

/// Reserved workers (§1.3, §1.5, M4–M13): one group of 10, 20 % reserved:
/// nodes 0 and 1. Long tasks never use them; short tasks take an
/// unreserved worker first, then a reserved one, else queue; a reserved
/// worker that frees takes a short task, never a long one.
#[test]
fn reserved_workers_serve_only_short_tasks() {
    let kv = [("network_delay_us", "0"), ("reserved_pct", "20"), ("workers_per_group", "10"), ("cutoff_s", "10")];
    let mut c = cluster(10, &kv, 0);
    // one short task with every worker idle: an unreserved one (LIW first)
    job(&mut c, 0, 1, 1, 1_000);
    let s1 = allocations(&c.drain_decisions());
    assert_eq!(s1.len(), 1);
    assert!(s1[0].2 >= 2, "a short task takes an unreserved worker first, got n{}", s1[0].2);
    // a long job of 10: the 7 other unreserved workers; 3 wait in LTQ
    job(&mut c, 1, 2, 10, 100_000);
    let longs = c.drain_decisions();
    assert_eq!(placed(&longs).len(), 7);
    assert!(placed(&longs).iter().all(|&(_, n)| n >= 2), "no long task on a reserved worker");
    // three short tasks: two reserved workers, one waits in HTQ
    let shorts = c.drain_decisions();
    job(&mut c, 2, 3, 3, 1_000);
    let shorts = [shorts, c.drain_decisions()].concat();
    assert_eq!(placed(&shorts), vec![(3, 0), (3, 1)]);
    assert_eq!(counter(&c, "reserved_starts"), 2);
    let on0 = |ds: &[Decision]| allocations(ds).iter().find(|a| a.2 == 0).map(|a| a.1).expect("on n0");
    let h = c.policy_as::<Pigeon>().expect("pigeon");
    assert_eq!((h.masters[0].htq.len(), h.masters[0].ltq.len()), (1, 3));
    // a reserved worker frees: it takes the waiting short task
    let first = on0(&shorts);
    let ds = finish(&mut c, 10, first);
    assert_eq!(placed(&ds), vec![(3, 0)], "the reserved worker takes the short task");
    // it frees again: only long tasks wait, so it stays idle
    let ds = finish(&mut c, 20, on0(&ds));
    assert!(ds.is_empty(), "a reserved worker never takes a long task: {ds:?}");
    let h = c.policy_as::<Pigeon>().expect("pigeon");
    assert_eq!((h.masters[0].hiw.len(), h.masters[0].ltq.len()), (1, 3));
    // an unreserved worker frees: it takes a long task
    let ds = finish(&mut c, 30, s1[0].1);
    assert_eq!(placed(&ds), vec![(2, s1[0].2)]);
}

/// The split (L90, §1.2, A2): ⌊F/N_g⌋ tasks to every master, the rest to
/// distinct random masters; F < N_g: F distinct masters get one each; over
/// many jobs every master is picked about equally often.
#[test]
fn split_gives_every_master_the_floor_and_the_rest_to_distinct_masters() {
    let mut rng = Rng::seeded(3);
    let s = split_with(&mut rng, 250, 30);
    assert_eq!(s.len(), 30);
    assert_eq!(s.iter().map(|x| x.1).sum::<u32>(), 250);
    assert_eq!(s.iter().filter(|x| x.1 == 9).count(), 10);
    assert!(s.iter().all(|x| x.1 == 8 || x.1 == 9));
    let s = split_with(&mut rng, 7, 30);
    assert_eq!(s.len(), 7, "distinct masters");
    assert!(s.iter().all(|x| x.1 == 1));
    assert_eq!(split_with(&mut rng, 60, 30).iter().map(|x| x.1).collect::<Vec<_>>(), vec![2; 30]);
    assert!(split_with(&mut rng, 0, 30).is_empty());
    let mut hits = [0u32; 10];
    for _ in 0..10_000 {
        for (g, n) in split_with(&mut rng, 3, 10) {
            hits[g] += n;
        }
    }
    // 3,000 expected per master; a fair draw stays within ±10 %
    assert!(hits.iter().all(|&h| (2_700..=3_300).contains(&h)), "{hits:?}");
}

/// Groups of unequal size (whole 64-slot NodeManagers cut into groups of
/// about 100 workers: one node or two): each master gets tasks in
/// proportion to its workers; groups within one worker of each other keep
/// the paper's even split, draw for draw.
#[test]
fn unequal_groups_get_tasks_in_proportion_to_their_workers() {
    let mut rng = Rng::seeded(5);
    let s = split_by_size(&mut rng, 300, &[64, 128, 64, 128]);
    assert_eq!(s.iter().map(|x| x.1).sum::<u32>(), 300);
    assert_eq!(s.iter().map(|x| x.1).collect::<Vec<_>>(), vec![50, 100, 50, 100]);
    let (mut a, mut b) = (Rng::seeded(9), Rng::seeded(9));
    assert_eq!(split_by_size(&mut a, 250, &[100, 101, 100]), split_with(&mut b, 250, 3));
    // Fewer tasks than masters (100 over 640 groups of one or two 64-slot
    // nodes): the draw itself follows the sizes, two-node groups getting
    // twice the tasks of one-node groups over many jobs.
    let sizes: Vec<u32> = (0..640).map(|g| if g % 2 == 0 { 64 } else { 128 }).collect();
    let mut got = [0u64; 2];
    for _ in 0..500 {
        let s = split_by_size(&mut rng, 100, &sizes);
        assert_eq!(s.iter().map(|x| x.1).sum::<u32>(), 100);
        assert!(s.iter().all(|x| x.1 == 1), "distinct masters");
        for (g, n) in s {
            got[g % 2] += u64::from(n);
        }
    }
    // 50,000 tasks: 1/3 to the small groups, 2/3 to the large
    assert!((16_000..=17_400).contains(&got[0]), "{got:?}");
}

/// 50 jobs of 100 one-vcore tasks on 100 NodeManagers of 64 vcores (64
/// groups of one or two nodes): every task starts at once. Split evenly,
/// the one-node groups got as many tasks as the two-node ones and 408
/// tasks queued at full masters while 1,700 workers of other groups idled.
/// Then the RM benchmark's shape scaled down: more masters than a job's
/// tasks (1,000 nodes, 640 groups, 500 jobs of 100).
#[test]
fn on_multi_slot_nodes_every_task_that_fits_starts() {
    on_multi_slot_nodes(100, 50);
    on_multi_slot_nodes(1000, 500);
}

fn on_multi_slot_nodes(nodes: u32, jobs: u32) {
    let p = crate::build("pigeon", &BTreeMap::new()).expect("defaults");
    let mut c = Harness::new(p, CoreConfig::default());
    for i in 0..nodes {
        node(&mut c, i, 64 * 1024, 64);
    }
    let mut placed = 0;
    for a in 1..=jobs {
        c.handle(Time(0), Event::AppAdded(AppSpec::new(AppId(a), "default", "u"))).expect("app");
        let ask = Ask::new(Priority::MAP, Resources::new(1024, 1), 100, Phase::Map);
        c.handle(Time(0), Event::AsksUpdated { app: AppId(a), asks: vec![ask] }).expect("ask");
    }
    for t in [1, 2, 3] {
        c.handle_timeout(Time(t));
        placed += allocations(&c.drain_decisions()).len();
    }
    assert_eq!(placed as u32, jobs * 100, "{}", c.describe());
    assert_eq!(counter(&c, "queued_short"), 0);
}

/// The split through the policy: 4 groups of 2 workers, d = 0; a job of 10
/// tasks gives every master 2, and two distinct masters one more: each
/// group starts 2 tasks at once and 2 groups queue one.
#[test]
fn a_job_is_split_evenly_over_the_masters() {
    let kv = [("network_delay_us", "0"), ("reserved_pct", "0"), ("workers_per_group", "2")];
    let mut c = cluster(8, &kv, 5);
    job(&mut c, 0, 1, 10, 1_000);
    assert_eq!(placed(&c.drain_decisions()).len(), 8);
    let h = c.policy_as::<Pigeon>().expect("pigeon");
    let queued: Vec<usize> = h.masters.iter().map(|m| m.htq.len()).collect();
    assert_eq!(queued.iter().sum::<usize>(), 2);
    assert!(queued.iter().all(|&q| q <= 1), "the remainder goes to distinct masters: {queued:?}");
    assert_eq!(counter(&c, "batches_sent"), 4);
}

/// Delays (§5.4): d = 0.5 ms. A job at 1 s on an idle cluster reaches its
/// master at 1.0005 s and starts at 1.001 s (exactly 2d); a task queued
/// behind it starts 2d after the first ends (idle notice, then launch):
/// 2.001 + 0.001 = 2.002 s.
#[test]
fn network_delay_is_in_the_start_times() {
    let kv = [("reserved_pct", "0"), ("workers_per_group", "1")];
    let mut c = cluster(1, &kv, 0);
    job(&mut c, 1_000, 1, 2, 1_000);
    assert!(c.drain_decisions().is_empty());
    assert!(tick(&mut c, 1_000).is_empty());
    let ds = tick(&mut c, 1_001);
    assert_eq!(placed(&ds), vec![(1, 0)]);
    assert!(finish(&mut c, 2_001, allocations(&ds)[0].1).is_empty());
    assert_eq!(placed(&tick(&mut c, 2_002)), vec![(1, 0)]);
    assert_eq!(c.policy_as::<Pigeon>().expect("pigeon").entries(), 0);
}

/// Long iff the mean task duration is above the cutoff (≤ is short, A7):
/// with the Yahoo default 90.5811 s, a job of 90.581 s tasks is short and
/// one of 90.582 s is long; an ask without an estimate is short unless
/// `unknown_estimate=long`.
#[test]
fn classification_by_the_trace_cutoff() {
    let kv = [("network_delay_us", "0"), ("reserved_pct", "0"), ("workers_per_group", "1")];
    let mut c = cluster(1, &kv, 0);
    job(&mut c, 0, 1, 1, 1_000);
    c.drain_decisions();
    job(&mut c, 0, 2, 1, 90_581);
    job(&mut c, 0, 3, 1, 90_582);
    let h = c.policy_as::<Pigeon>().expect("pigeon");
    assert_eq!((h.masters[0].htq.len(), h.masters[0].ltq.len()), (1, 1));
    assert!(!h.reqs[&(AppId(2), Priority::MAP)].long && h.reqs[&(AppId(3), Priority::MAP)].long);
}

#[test]
fn bad_parameters_are_named() {
    assert!(config_error("pigeon", &[("wfq_weight", "0")]).contains("wfq_weight"));
    assert!(config_error("pigeon", &[("wfq_weight", "many")]).contains("wfq_weight"));
    assert!(config_error("pigeon", &[("wfq_weight", "inf")]).is_empty());
    assert!(config_error("pigeon", &[("workers_per_group", "0")]).contains("workers_per_group"));
    assert!(config_error("pigeon", &[("reserved_pct", "101")]).contains("reserved_pct"));
    assert!(config_error("pigeon", &[("cutoff_s", "-2")]).contains("cutoff_s"));
    assert!(config_error("pigeon", &[("network_delay_us", "-1")]).contains("network_delay_us"));
    assert!(config_error("pigeon", &[("wfq_mode", "eagle")]).contains("wfq_mode"));
}

/// YARN's AMs (not in the paper): with `max_am_share` 0.5 of two workers,
/// one AM may run or wait at a master at a time. App 1's AM starts; app 2's
/// AM waits at its distributor, so app 1's map takes the other worker;
/// when app 1's AM ends, app 2's AM goes.
#[test]
fn ams_hold_at_most_their_share_of_the_workers() {
    let kv = [("network_delay_us", "0"), ("reserved_pct", "0"), ("workers_per_group", "2")];
    let mut c = cluster(2, &kv, 0);
    let am = |c: &mut Harness, id: u32| {
        c.handle(Time(0), Event::AppAdded(AppSpec::new(AppId(id), "default", "u"))).expect("app");
        let ask = Ask::new(Priority::AM, Resources::new(1024, 1), 1, Phase::Am);
        c.handle(Time(0), Event::AsksUpdated { app: AppId(id), asks: vec![ask] }).expect("am ask");
    };
    am(&mut c, 1);
    let am1 = allocations(&c.drain_decisions());
    assert_eq!(am1.len(), 1, "app 1's AM");
    am(&mut c, 2);
    assert!(c.drain_decisions().is_empty(), "a second AM would pass the share");
    let mut ask = Ask::new(Priority::MAP, Resources::new(1024, 1), 1, Phase::Map);
    ask.est_task_ms = Some(1_000);
    c.handle(Time(5), Event::AsksUpdated { app: AppId(1), asks: vec![ask] }).expect("map ask");
    let map = allocations(&c.drain_decisions());
    assert_eq!(map.iter().map(|a| a.0).collect::<Vec<_>>(), vec![1], "app 1's map");
    let ds = finish(&mut c, 10, am1[0].1);
    assert_eq!(allocations(&ds).iter().map(|a| a.0).collect::<Vec<_>>(), vec![2], "app 2's AM once app 1's ended");
}

/// §6.2: groups are partitions of NodeManagers, rack-aligned. Six one-slot
/// nodes registered alternately in racks /a and /b (n0 /a, n1 /b, ...),
/// groups of 3: one group is n0, n2, n4 (/a) and the other n1, n3, n5 (/b),
/// not the registration order's n0–n2 and n3–n5. With one rack (the
/// default-rack case) the groups follow node ids.
#[test]
fn groups_are_rack_aligned_partitions_of_nodes() {
    let kv = [("network_delay_us", "0"), ("reserved_pct", "0"), ("workers_per_group", "3")];
    let groups_of = |racks: [&str; 2]| {
        let given: BTreeMap<String, String> = kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let mut c = Harness::new(crate::build("pigeon", &given).expect("valid"), CoreConfig::default());
        for i in 0..6 {
            node_in_rack(&mut c, i, racks[i as usize % 2], 1024, 1);
        }
        job(&mut c, 0, 1, 6, 1_000);
        c.drain_decisions();
        let h = c.policy_as::<Pigeon>().expect("pigeon");
        let mut g: Vec<Vec<u32>> = vec![Vec::new(); h.masters.len()];
        for w in &h.workers {
            g[w.group].push(w.key.node.0);
        }
        g.iter_mut().for_each(|x| x.sort());
        g.sort();
        g
    };
    assert_eq!(groups_of(["/a", "/b"]), vec![vec![0, 2, 4], vec![1, 3, 5]]);
    assert_eq!(groups_of(["/default-rack", "/default-rack"]), vec![vec![0, 1, 2], vec![3, 4, 5]]);
}

/// §6.2 on multi-slot NodeManagers: a node's slots are never split over
/// groups, and a group's reserved slots are spread over its nodes. Four
/// nodes of 4 vcores (16 workers), N_w = 8: two groups of two nodes each;
/// 25 % reserved = 2 slots per group, slot 0 of each of its two nodes.
#[test]
fn a_node_is_in_one_group_and_reserved_slots_spread_over_nodes() {
    let given: BTreeMap<String, String> =
        [("network_delay_us", "0"), ("reserved_pct", "25"), ("workers_per_group", "8")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    let mut c = Harness::new(crate::build("pigeon", &given).expect("valid"), CoreConfig::default());
    for i in 0..4 {
        node(&mut c, i, 4096, 4);
    }
    job(&mut c, 0, 1, 1, 1_000);
    c.drain_decisions();
    let h = c.policy_as::<Pigeon>().expect("pigeon");
    assert_eq!(h.masters.len(), 2);
    for w in &h.workers {
        assert_eq!(w.group, w.key.node.0 as usize / 2, "node {} whole in one group", w.key.node.0);
        assert_eq!(w.reserved, w.key.slot == 0, "worker {:?}", w.key);
    }
    // one node of 4 slots with N_w = 1: the cuts inside the node are
    // dropped, one group holds it (no master without workers)
    let mut c = cluster(0, &[("network_delay_us", "0"), ("workers_per_group", "1")], 0);
    node(&mut c, 0, 4096, 4);
    job(&mut c, 0, 1, 4, 1_000);
    assert_eq!(placed(&c.drain_decisions()).len(), 4, "every task of the job runs");
    assert_eq!(c.policy_as::<Pigeon>().expect("pigeon").masters.len(), 1);
}

/// §6.2's short/long bit inside the RM, where asks carry no estimate:
/// with `short_queues=short`, task asks of apps in queue `short` (leaf or
/// full path `root.short`) are short, those of any other queue long; an
/// AM ask keeps `unknown_estimate` (short); a trace's estimate still wins.
#[test]
fn the_short_long_bit_from_the_queue() {
    let kv = [("network_delay_us", "0"), ("reserved_pct", "0"), ("workers_per_group", "1"), ("short_queues", "short")];
    let mut c = cluster(0, &kv, 0);
    let app = |c: &mut Harness, id: u32, queue: &str, phase: Phase, est: Option<u64>| {
        c.handle(Time(0), Event::AppAdded(AppSpec::new(AppId(id), queue, "u"))).expect("app");
        let prio = if phase == Phase::Am { Priority::AM } else { Priority::MAP };
        let mut ask = Ask::new(prio, Resources::new(1024, 1), 1, phase);
        ask.est_task_ms = est;
        c.handle(Time(0), Event::AsksUpdated { app: AppId(id), asks: vec![ask] }).expect("ask");
    };
    app(&mut c, 1, "root.short", Phase::Map, None);
    app(&mut c, 2, "short", Phase::Map, None);
    app(&mut c, 3, "root.default", Phase::Map, None);
    app(&mut c, 4, "root.default", Phase::Am, None);
    app(&mut c, 5, "root.default", Phase::Map, Some(1_000));
    app(&mut c, 6, "root.shorter", Phase::Map, None);
    let h = c.policy_as::<Pigeon>().expect("pigeon");
    let long = |id: u32, prio: Priority| h.reqs[&(AppId(id), prio)].long;
    assert!(!long(1, Priority::MAP) && !long(2, Priority::MAP), "queue short, by path and by leaf");
    assert!(long(3, Priority::MAP), "any other queue is long");
    assert!(!long(4, Priority::AM), "an AM keeps unknown_estimate");
    assert!(!long(5, Priority::MAP), "an estimate wins over the queue");
    assert!(long(6, Priority::MAP), "a leaf that only starts with the name is another queue");
    assert!(config_error("pigeon", &[("short_queues", "root..short")]).contains("short_queues"));
    assert!(config_error("pigeon", &[("short_queues", "a b")]).contains("short_queues"));
    assert!(config_error("pigeon", &[("short_queues", "short, root.interactive")]).is_empty());
}

/// A task on its way to a worker whose node left and came back (a new
/// NodeManager under the same id) does not start there on arrival: the
/// message was for the node that left. The distributor sends it again
/// (d = 2.5 ms: batch at 1 002.5 → 1 003, start due 1 005; the node goes
/// and returns at 1 004; sent again at 1 005, it reaches the master at
/// 1 007.5 → 1 008 and starts at 1 010).
#[test]
fn a_task_sent_to_a_node_that_left_and_came_back_is_sent_again() {
    let kv = [("reserved_pct", "0"), ("workers_per_group", "1"), ("network_delay_us", "2500")];
    let mut c = cluster(1, &kv, 0);
    job(&mut c, 1_000, 1, 1, 1_000);
    assert!(tick(&mut c, 1_003).is_empty());
    c.handle(Time(1_004), Event::NodeRemoved { node: NodeId(0) }).expect("remove");
    let spec = NodeSpec {
        node: NodeId(0),
        name: "n0".into(),
        rack: "/r".into(),
        labels: vec![],
        capacity: Resources::new(1024, 1),
    };
    c.handle(Time(1_004), Event::NodeAdded(spec)).expect("add");
    assert!(tick(&mut c, 1_005).is_empty(), "started under a message to the node that left");
    assert!(tick(&mut c, 1_009).is_empty());
    assert_eq!(placed(&tick(&mut c, 1_010)), vec![(1, 0)]);
    assert_eq!(c.policy_as::<Pigeon>().expect("pigeon").entries(), 0);
}
