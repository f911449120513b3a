//! Golden cases for Eagle and DLWL+SRPT (delgado.md §2.3–§2.7, §5 E and D),
//! on tiny clusters of one-slot nodes (1 GB, 1 vcore), computed by hand.
//! `sampling=distinct` with as many probes as nodes puts one probe on each.

use super::Hawk;
use crate::test_support::{allocations, config_error, core, finish, node, tick};
use sojourn_core::{
    AppId, AppSpec, Ask, ContainerId, Decision, Event, Harness, NodeId, Phase, Priority, Resources, Time,
};

fn cluster(policy: &str, nodes: u32, kv: &[(&str, &str)]) -> Harness {
    let mut c = core(policy, kv);
    for i in 0..nodes {
        node(&mut c, i, 1024, 1);
    }
    c
}

/// Job `id` at `t` ms: `tasks` map tasks of 1 GB / 1 vcore, each estimated
/// at `est_ms`.
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

fn container_on(ds: &[Decision], node: u32) -> ContainerId {
    allocations(ds).iter().find(|a| a.2 == node).map(|a| a.1).expect("an allocation on the node")
}

fn counter(c: &Harness, name: &str) -> u64 {
    c.metrics().counter(name)
}

fn hawk(c: &Harness) -> &Hawk {
    c.policy_as::<Hawk>().expect("hawk family")
}

/// Short probes queued at `node` (not counting one in a get-task).
fn short_probes_at(c: &Harness, node: u32) -> usize {
    hawk(c).nodes.get(&NodeId(node)).map_or(0, |n| n.queue.iter().filter(|e| e.probe && !e.long).count())
}

/// SSS (§2.3, §5 E4), d = 1 ms, 3 general nodes, no short partition. Long
/// job A (2 tasks, est 100 s) goes by LWL to n0 and n1 at 0, whose bits
/// are set then; each stores the vector {n0, n1} when its task arrives at
/// 1 ms. Short job B (3 tasks, 1 s) at 10 ms probes n0, n1, n2 (one each).
/// As the authors' simulator: n0 and n1 reject at send time; both probes
/// are redrawn among the nodes the freshest vector shows free, {n2}, and
/// arrive there after 2d (12 ms). n2's own probe arrives at 11 ms and gets
/// B1 at 13 ms; B2 and B3 follow on n2, and no probe ever waits behind a
/// long task. With `authors_simulator=false` the probes reach n0 and n1 at
/// 11 ms, are rejected there, the rejections are back at 12 ms and the
/// redrawn probes reach n2 at 13 ms.
#[test]
fn sss_rejects_a_probe_at_a_node_with_a_long_task_and_reprobes_on_the_bit_vector() {
    for authors in ["true", "false"] {
        let kv = [
            ("network_delay_us", "1000"),
            ("short_partition_pct", "0"),
            ("cutoff_s", "10"),
            ("probe_ratio", "1"),
            ("min_probes", "0"),
            ("sampling", "distinct"),
            ("sticky", "false"),
            ("authors_simulator", authors),
        ];
        let mut c = cluster("eagle", 3, &kv);
        job(&mut c, 0, 1, 2, 100_000);
        assert_eq!(placed(&tick(&mut c, 3)), vec![(1, 0), (1, 1)], "authors_simulator={authors}");
        job(&mut c, 10, 2, 3, 1_000);
        assert!(tick(&mut c, 11).is_empty());
        let (rejections, queued_at_12) = if authors == "true" { (2, 2) } else { (2, 0) };
        assert_eq!(counter(&c, "sss_rejections"), rejections, "authors_simulator={authors}");
        assert!(tick(&mut c, 12).is_empty());
        assert_eq!(short_probes_at(&c, 2), queued_at_12, "authors_simulator={authors}: redrawn probes at n2 at 12 ms");
        let ds = tick(&mut c, 13);
        assert_eq!(placed(&ds), vec![(2, 2)], "authors_simulator={authors}: B1 on n2 at 13 ms");
        assert_eq!(short_probes_at(&c, 2), 2);
        assert_eq!((short_probes_at(&c, 0), short_probes_at(&c, 1)), (0, 0), "no short probe behind a long task");
        let ds = finish(&mut c, 1_013, container_on(&ds, 2));
        assert!(ds.is_empty());
        let ds = tick(&mut c, 1_015);
        assert_eq!(placed(&ds), vec![(2, 2)], "B2 after the round trip");
        finish(&mut c, 2_015, container_on(&ds, 2));
        let ds = tick(&mut c, 2_017);
        assert_eq!(placed(&ds), vec![(2, 2)], "B3");
        assert_eq!(counter(&c, "rescheduled_probes"), 2);
        assert_eq!(counter(&c, "probes_behind_long"), 0);
        assert_eq!(counter(&c, "short_after_long"), 0);
        assert_eq!(hawk(&c).entries(), 0, "every probe used");
    }
}

/// SSS's redraw uses the freshest vector among the job's targets (§2.3
/// step 5). 3 nodes, d = 0, short partition {n0}. Long job A (1 task) goes
/// to n1, which stores the vector {n1}; long job C (1 task) to n2 (n1
/// waits 100 s), which stores {n1, n2}. Short job B (3 tasks, ratio 1, no
/// SBP) probes every node once: n0 takes B1, n1 and n2 reject, and the
/// freshest vector, n2's, leaves only n0 free: both redraws queue at n0.
/// Without SSS the two probes wait behind the long tasks.
#[test]
fn sss_redraws_land_in_the_free_nodes_of_the_freshest_vector() {
    let kv = [
        ("network_delay_us", "0"),
        ("short_partition_pct", "34"),
        ("cutoff_s", "10"),
        ("probe_ratio", "1"),
        ("min_probes", "0"),
        ("sampling", "distinct"),
        ("sticky", "false"),
    ];
    let mut c = cluster("eagle", 3, &kv);
    job(&mut c, 0, 1, 1, 100_000);
    job(&mut c, 0, 3, 1, 100_000);
    assert_eq!(placed(&c.drain_decisions()), vec![(1, 1), (3, 2)]);
    // B: 3 probes, one per node; n1 and n2 reject, n0 takes B1
    job(&mut c, 10, 2, 3, 1_000);
    assert_eq!(placed(&c.drain_decisions()), vec![(2, 0)]);
    assert_eq!(counter(&c, "sss_rejections"), 2);
    assert_eq!(short_probes_at(&c, 0), 2, "both redraws at n0, the only node the vector shows free");
    assert_eq!((short_probes_at(&c, 1), short_probes_at(&c, 2)), (0, 0));

    let mut off = cluster("eagle", 3, &[&kv[..], &[("sss", "false")][..]].concat());
    job(&mut off, 0, 1, 1, 100_000);
    job(&mut off, 0, 3, 1, 100_000);
    off.drain_decisions();
    job(&mut off, 10, 2, 3, 1_000);
    assert_eq!(placed(&off.drain_decisions()), vec![(2, 0)]);
    assert_eq!(counter(&off, "probes_behind_long"), 2, "without SSS the probes wait behind the long tasks");
    assert_eq!(counter(&off, "sss_rejections"), 0);
}

/// SBP (§2.4) on the thesis's example (L812), scaled: four nodes whose
/// queues hold 100, 100, 10, 10 s of work (long jobs L and S by LWL, cutoff
/// 5 s) and a job X of 4 tasks of 4 s probing each node once (d = 0, no
/// SSS so that the probes stay). With SBP, n2 and n3 take X1, X2 at 10 s
/// and, their probes staying, X3, X4 at 14 s: X is done at 18 s, and n2's
/// and n3's probes are purged then, X having no task left; those at n0 and
/// n1 when those nodes free at 100 s. Without
/// SBP, X3 and X4 wait for n0 and n1: X is done at 104 s.
#[test]
fn a_sticky_probe_keeps_taking_its_jobs_tasks() {
    for sticky in ["true", "false"] {
        let kv = [
            ("network_delay_us", "0"),
            ("short_partition_pct", "0"),
            ("cutoff_s", "5"),
            ("sss", "false"),
            ("probe_ratio", "1"),
            ("min_probes", "0"),
            ("sampling", "distinct"),
            ("sticky", sticky),
        ];
        let mut c = cluster("eagle", 4, &kv);
        job(&mut c, 0, 1, 2, 100_000);
        job(&mut c, 0, 2, 2, 10_000);
        let ds = c.drain_decisions();
        assert_eq!(placed(&ds), vec![(1, 0), (1, 1), (2, 2), (2, 3)]);
        job(&mut c, 1_000, 3, 4, 4_000);
        assert!(c.drain_decisions().is_empty(), "every node busy: X's probes queue");
        let x2 = container_on(&finish(&mut c, 10_000, container_on(&ds, 2)), 2);
        let x3 = container_on(&finish(&mut c, 10_000, container_on(&ds, 3)), 3);
        let a = finish(&mut c, 14_000, x2);
        let b = finish(&mut c, 14_000, x3);
        if sticky == "true" {
            assert_eq!((placed(&a), placed(&b)), (vec![(3, 2)], vec![(3, 3)]), "the probes stayed");
            assert_eq!((counter(&c, "sticky_tasks"), counter(&c, "sticky_probes")), (2, 2));
            assert!(finish(&mut c, 18_000, container_on(&a, 2)).is_empty());
            assert!(finish(&mut c, 18_000, container_on(&b, 3)).is_empty(), "X is done at 18 s");
            assert_eq!(counter(&c, "probes_purged"), 2, "the sticky probes at n2 and n3");
            assert!(finish(&mut c, 100_000, container_on(&ds, 0)).is_empty());
            assert!(finish(&mut c, 100_000, container_on(&ds, 1)).is_empty());
            assert_eq!(counter(&c, "probes_purged"), 4, "and those at n0 and n1");
        } else {
            assert!(a.is_empty() && b.is_empty(), "each probe brought one task");
            assert_eq!(counter(&c, "sticky_tasks"), 0);
            assert_eq!(placed(&finish(&mut c, 100_000, container_on(&ds, 0))), vec![(3, 0)]);
            assert_eq!(placed(&finish(&mut c, 100_000, container_on(&ds, 1))), vec![(3, 1)], "X is done at 104 s");
        }
        assert_eq!(hawk(&c).entries(), 0);
    }
}

/// SRPT with the starvation bound (§2.5, §5 E3), one node, d = 0, no SBP.
/// Z (1 task, 1 s) runs; P (3 tasks, est 1 s: remaining 3 s) queues a
/// probe (a one-slot cluster covers one task at a time: P's next probe is
/// sent when a task of P starts), then Q1..Q4 (1 task of 2 s each:
/// remaining 2 s) one each. When Z ends, Q1 bypasses P's probe (its counter
/// 0 + 2 ≤ 5 × 1 s), then Q2 (2 + 2 ≤ 5); Q3 may not (4 + 2 > 5): P runs.
/// Its next probe queues behind Q4, so Q3 and Q4 (2 s, no more than P's 2
/// s left, ties to the front) go next, then P twice. With an unbounded
/// factor P waits for every Q.
#[test]
fn srpt_bypasses_a_probe_at_most_up_to_the_starvation_bound() {
    for (factor, order) in
        [("5", vec![9, 11, 12, 10, 13, 14, 10, 10]), ("1000000", vec![9, 11, 12, 13, 14, 10, 10, 10])]
    {
        let kv = [
            ("network_delay_us", "0"),
            ("cutoff_s", "1000"),
            ("sss", "false"),
            ("sticky", "false"),
            ("probe_ratio", "1"),
            ("min_probes", "0"),
            ("starvation_factor", factor),
        ];
        let mut c = cluster("eagle", 1, &kv);
        job(&mut c, 0, 9, 1, 1_000);
        let mut ds = c.drain_decisions();
        job(&mut c, 10, 10, 3, 1_000);
        for q in 11..=14 {
            job(&mut c, 20, q, 1, 2_000);
        }
        assert!(c.drain_decisions().is_empty());
        let mut ran = vec![allocations(&ds)[0].0];
        let mut t = 1_000;
        for _ in 1..order.len() {
            ds = finish(&mut c, t, allocations(&ds)[0].1);
            let a = allocations(&ds);
            assert_eq!(a.len(), 1, "factor {factor}: one task at a time");
            ran.push(a[0].0);
            t += if a[0].0 == 10 { 1_000 } else { 2_000 };
        }
        assert_eq!(ran, order, "starvation_factor {factor}");
    }
}

/// DLWL+SRPT (§2.7, §5 D), d = 0, heartbeat 0.9 s, noise a whole number of
/// seconds below 0.9 s (0, as the authors' simulator), 3 nodes, short
/// partition {n0}, cutoff 30 s. At 0 the snapshot is all idle: long A (1 task, 100 s)
/// goes to n1 (the general partition, ties to the lowest id); short B (2
/// tasks, 20 s), seeing the same stale snapshot, puts B1 on n0 and B2 on
/// n1 (0 s before B1's 20 s), behind A. At 1 s the snapshot of 0.9 s shows
/// n0 19.1 s, n1 99.1 + 20 s, n2 idle: short C (1 task, 5 s) goes to n2, and
/// long D (2 tasks, 50 s) to n2 twice (0, then 50 s < 119.1 s: C is not in
/// the snapshot), where they wait behind C. A short E (1 task of 1 s) sent
/// to n2 by the same snapshot goes before D's tasks when C ends (SRPT over
/// every entry: 1 s < 100 s remaining).
#[test]
fn dlwl_places_every_task_on_the_least_work_of_the_last_snapshot() {
    let kv = [
        ("network_delay_us", "0"),
        ("short_partition_pct", "34"),
        ("cutoff_s", "30"),
        ("heartbeat_s", "0.9"),
        ("authors_simulator", "true"),
    ];
    let mut c = cluster("dlwl_srpt", 3, &kv);
    job(&mut c, 0, 1, 1, 100_000);
    job(&mut c, 0, 2, 2, 20_000);
    assert_eq!(placed(&c.drain_decisions()), vec![(1, 1), (2, 0)], "B2 queues behind A on n1");
    assert_eq!(hawk(&c).nodes[&NodeId(1)].queue.len(), 1);
    job(&mut c, 1_000, 3, 1, 5_000);
    let ds = c.drain_decisions();
    assert_eq!(placed(&ds), vec![(3, 2)]);
    job(&mut c, 1_000, 4, 2, 50_000);
    job(&mut c, 1_000, 5, 1, 1_000);
    assert!(c.drain_decisions().is_empty());
    assert_eq!(hawk(&c).nodes[&NodeId(2)].queue.len(), 3, "D1, D2 and E wait behind C on n2");
    assert_eq!(placed(&finish(&mut c, 6_000, container_on(&ds, 2))), vec![(5, 2)], "E bypasses D");
    assert_eq!(counter(&c, "dlwl_placed"), 7, "A, B1, B2, C, D1, D2, E");
}

#[test]
fn bad_eagle_parameters_are_named() {
    assert!(config_error("eagle", &[("queue_order", "lifo")]).contains("queue_order"));
    assert!(config_error("eagle", &[("min_probes", "-1")]).contains("min_probes"));
    assert!(config_error("eagle", &[("starvation_factor", "-1")]).contains("starvation_factor"));
    assert!(config_error("dlwl_srpt", &[("heartbeat_s", "0")]).contains("heartbeat_s"));
    assert!(config_error("dlwl_srpt", &[("authors_simulator", "maybe")]).contains("authors_simulator"));
}

/// Job `id` at `t` ms in `queue`, `tasks` map tasks without an estimate
/// (as inside the RM).
fn rm_job(c: &mut Harness, t: u64, id: u32, queue: &str, tasks: u32) {
    c.handle(Time(t), Event::AppAdded(AppSpec::new(AppId(id), queue, "u"))).expect("app");
    let ask = Ask::new(Priority::MAP, Resources::new(1024, 1), tasks, Phase::Map);
    c.handle(Time(t), Event::AsksUpdated { app: AppId(id), asks: vec![ask] }).expect("ask");
}

/// The short/long bit inside the RM: d = 0, 4 one-slot nodes, the short
/// partition n0 and n1 (50 %), `short_queues=short`. Job A in `default`
/// (4 tasks, no estimate) is long: LWL weighs each task at
/// `unknown_task_s` = 1 s, so the tasks alternate n2, n3, n2, n3 and two
/// start at once, none on the partition. Job B in `root.short` (2 tasks)
/// is short: probes at n2 or n3 are turned away by SSS (long tasks
/// assigned) and redrawn into the free nodes: B starts on n0 or n1 and
/// none of its probes waits behind a long task.
/// With `unknown_task_s=0` LWL sees no work anywhere and ties send all
/// four of A's tasks to n2: one runs.
#[test]
fn inside_the_rm_the_queue_is_the_short_long_bit_and_lwl_weighs_unknown_tasks() {
    let kv = [
        ("network_delay_us", "0"),
        ("short_partition_pct", "50"),
        ("short_queues", "short"),
        ("probe_ratio", "1"),
        ("min_probes", "0"),
    ];
    let mut c = cluster("eagle", 4, &kv);
    rm_job(&mut c, 0, 1, "default", 4);
    assert_eq!(placed(&tick(&mut c, 1)), vec![(1, 2), (1, 3)]);
    rm_job(&mut c, 10, 2, "root.short", 2);
    // SSS redraws are with replacement: both may land on one partition node
    let b = placed(&tick(&mut c, 11));
    assert!(!b.is_empty() && b.iter().all(|&(app, n)| app == 2 && n < 2), "{b:?}");
    assert_eq!((short_probes_at(&c, 2), short_probes_at(&c, 3)), (0, 0), "no short probe behind a long task");
    assert_eq!(hawk(&c).nodes.get(&NodeId(2)).map(|n| n.queue.len()), Some(1));

    let mut c = cluster("eagle", 4, &[kv[0], kv[1], kv[2], ("unknown_task_s", "0")]);
    rm_job(&mut c, 0, 1, "default", 4);
    assert_eq!(placed(&tick(&mut c, 1)), vec![(1, 2)]);
    assert_eq!(hawk(&c).nodes.get(&NodeId(2)).map(|n| n.queue.len()), Some(3));
}

/// `short_queues` names queues; a blank or a path with an empty element is
/// refused, naming it.
#[test]
fn a_malformed_short_queue_is_refused() {
    let e = config_error("eagle", &[("short_queues", "short,root..x")]);
    assert!(e.contains("short_queues") && e.contains("root..x"), "{e}");
}

/// Early binding and the per-node AM cap in an RM (d = 0, 20 nodes of 64
/// vcores, cap 32 AMs each): 300 jobs arrive one at a time, each with its
/// AM ask, and a node heartbeats after each. DLWL binds the AMs of one
/// snapshot period to the same few nodes (an AM weighs 0), which reach
/// their cap; the AMs held there go to other nodes with room instead of
/// waiting for an AM to end (before the fix 13 of the 300 waited while
/// the cluster had room for all). No node runs more than its 32.
#[test]
fn dlwl_rebinds_the_ams_held_at_a_node_at_its_am_cap() {
    let mut c = core("dlwl_srpt", &[("network_delay_us", "0")]);
    for i in 0..20 {
        node(&mut c, i, 64 * 1024, 64);
    }
    let mut per_node = [0u32; 20];
    for a in 0..300u32 {
        let t = 10 + a as u64 * 10;
        c.handle(Time(t), Event::AppAdded(AppSpec::new(AppId(a), "default", "u"))).expect("app");
        let ask = Ask::new(Priority(0), Resources::new(1024, 1), 1, Phase::Am);
        c.handle(Time(t), Event::AsksUpdated { app: AppId(a), asks: vec![ask] }).expect("ask");
        c.handle(Time(t), Event::NodeHeartbeat { node: NodeId(a % 20) }).expect("heartbeat");
        for (_, _, n) in allocations(&c.drain_decisions()) {
            per_node[n as usize] += 1;
        }
    }
    assert_eq!(per_node.iter().sum::<u32>(), 300, "AMs per node: {per_node:?}");
    assert!(per_node.iter().all(|&k| k <= 32), "a node above its AM cap: {per_node:?}");
    assert!(counter(&c, "ams_rebound") > 0, "the AMs never reached a node's cap: the test tests nothing");
}
