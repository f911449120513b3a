//! Golden tests: Algorithm 1 on hand-computed instances (tetrisched.md
//! §1.4.4 and small cases), the evaluator against the MILP objective, the
//! greedy plan, and the policy on tiny clusters.

use super::compile::{self, Backend, Plan, SolverOptions, Supply, Window};
use super::greedy;
use super::strl::{EqSets, Leaf, Partitioning, Strl};
use crate::test_support::{allocations, config_error, core, finish, node_in_rack, schedule};
use sojourn_core::{AppId, AppSpec, Ask, Event, Harness, Phase, Priority, Resources, Time};
use std::collections::{BTreeMap, BTreeSet};

fn exact() -> SolverOptions {
    exact_on(Backend::Cbc)
}

fn exact_on(backend: Backend) -> SolverOptions {
    SolverOptions { backend, mip_gap: 0.0, time_limit_s: 60.0, defer_penalty: 0.0 }
}

/// Every backend this build has (`cbc` by default; `--features highs,microlp`
/// adds the others, as CI's solver step builds them): each golden MILP
/// instance below is solved on each, and must give the hand-computed plan.
fn backends() -> Vec<Backend> {
    Backend::available().into_iter().filter_map(Backend::parse).collect()
}

fn leaf(job: u64, set: usize, k: u32, start: u64, dur: u32, value: f64) -> Leaf {
    Leaf { job, set, k, start, dur, value, width: 1 }
}

fn nck(job: u64, set: usize, k: u32, start: u64, dur: u32, value: f64) -> Strl {
    Strl::NCk(leaf(job, set, k, start, dur, value))
}

fn lnck(job: u64, set: usize, k: u32, start: u64, dur: u32, value: f64) -> Strl {
    Strl::LnCk(leaf(job, set, k, start, dur, value))
}

/// Sets over `nodes` node ids and their atoms.
fn space(sets: &[&[u32]]) -> (EqSets, Partitioning) {
    let mut e = EqSets::new();
    for s in sets {
        e.intern(s.to_vec());
    }
    let all = (0..e.len()).collect();
    let p = Partitioning::atoms(&e, &all);
    (e, p)
}

/// Every partition has `free[x]` units free over the whole window.
fn flat(free: &[u32], len: u32) -> Supply {
    Supply { avail: free.iter().map(|f| vec![*f; len as usize]).collect() }
}

fn solve(b: Backend, root: &Strl, p: &Partitioning, s: &Supply, w: Window) -> compile::Solved {
    match compile::solve(root, p, s, w, &exact_on(b), &BTreeMap::new()) {
        Ok(solved) => solved,
        Err(e) => panic!("{b:?}: {e}"),
    }
}

fn value_of(root: &Strl, plan: &Plan) -> f64 {
    root.value(&|id| plan.units(id))
}

/// §1.4.4, the paper's worked example [L214–L237]: only global scheduling
/// with plan-ahead meets all three deadlines. Job 1 at 0, job 3 at 10 s,
/// job 2 at 20 s; objective 3; and the model has exactly 6 integer and 9
/// binary variables and 13 constraints (the [bench] counts).
#[test]
fn worked_example_of_the_paper() {
    for b in backends() {
        eprintln!("backend {b:?}"); // a failure's output ends with its backend
        let (_, p) = space(&[&[1, 2, 3]]);
        let w = Window { now: 0, len: 4 };
        let job2 = Strl::Max((0..3).map(|s| nck(2, 0, 1, s, 2, 1.0)).collect());
        let job3 = Strl::Max((0..2).map(|s| nck(3, 0, 3, s, 1, 1.0)).collect());
        let root = Strl::Sum(vec![nck(1, 0, 2, 0, 1, 1.0), job2, job3]);
        let s = solve(b, &root, &p, &flat(&[3], 4), w);
        assert!((s.objective - 3.0).abs() < 1e-6, "objective {}", s.objective);
        assert_eq!((s.size.int_vars, s.size.bin_vars, s.size.cont_vars, s.size.constraints), (6, 9, 0, 13));
        // Leaves: 0 job 1; 1..=3 job 2 at 0, 10, 20 s; 4..=5 job 3 at 0, 10 s.
        let chosen: Vec<usize> = s.plan.grants.keys().copied().collect();
        assert_eq!(chosen, vec![0, 3, 5]);
        assert!((value_of(&root, &s.plan) - s.objective).abs() < 1e-6);
        // NG, job by job in order, cannot: job 2 takes start 0 and job 3 finds
        // no slice with 3 free nodes.
        let g = greedy(&root, &p, &flat(&[3], 4), w, 0.0);
        assert_eq!(g.grants.keys().copied().collect::<Vec<_>>(), vec![0, 1]);
        assert!((value_of(&root, &g) - 2.0).abs() < 1e-9);
    }
}

/// `max` realises one child, the better one (the second here).
#[test]
fn max_picks_the_better_alternative() {
    for b in backends() {
        eprintln!("backend {b:?}"); // a failure's output ends with its backend
        let (_, p) = space(&[&[0, 1]]);
        let w = Window { now: 5, len: 3 };
        let root = Strl::Max(vec![nck(1, 0, 1, 5, 1, 1.0), nck(1, 0, 2, 6, 1, 5.0)]);
        let s = solve(b, &root, &p, &flat(&[2], 3), w);
        assert!((s.objective - 5.0).abs() < 1e-6);
        assert_eq!(s.plan.grants.get(&1), Some(&vec![(0, 2)]));
        assert_eq!(s.plan.units(0), 0, "only one child of a max is realised");
    }
}

/// Dynamic partitioning: GPU = {0, 1} inside ALL = {0..3} gives the atoms
/// {0, 1} and {2, 3}. An nCk over ALL draws from both partitions within
/// their supply; one asking more than is free gets nothing.
#[test]
fn nck_over_partitions_with_limited_supply() {
    for b in backends() {
        eprintln!("backend {b:?}"); // a failure's output ends with its backend
        let (e, p) = space(&[&[0, 1, 2, 3], &[0, 1]]);
        assert_eq!(p.parts, vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(p.parts_of(0), &[0, 1]);
        assert_eq!(p.parts_of(1), &[0]);
        assert_eq!(e.nodes(1), &[0, 1]);
        let w = Window { now: 0, len: 1 };
        let supply = flat(&[1, 2], 1); // one GPU node and two others free
        let s = solve(b, &nck(1, 0, 3, 0, 1, 10.0), &p, &supply, w);
        assert!((s.objective - 10.0).abs() < 1e-6);
        assert_eq!(s.plan.grants.get(&0), Some(&vec![(0, 1), (1, 2)]));
        let s = solve(b, &nck(1, 0, 4, 0, 1, 10.0), &p, &supply, w);
        assert_eq!(s.objective, 0.0);
        assert!(s.plan.grants.is_empty(), "a gang is all or nothing");
        // Two GPU units are not free: the GPU leaf loses to the slower ALL one.
        let root = Strl::Max(vec![nck(1, 1, 2, 0, 1, 10.0), nck(1, 0, 2, 0, 1, 6.0)]);
        let s = solve(b, &root, &p, &supply, w);
        assert!((s.objective - 6.0).abs() < 1e-6);
    }
}

/// Two jobs compete for the same two nodes: the sum takes the pair of
/// small jobs (2 + 2) over the big one (3).
#[test]
fn sum_of_jobs_competing_for_nodes() {
    for b in backends() {
        eprintln!("backend {b:?}"); // a failure's output ends with its backend
        let (_, p) = space(&[&[0, 1]]);
        let w = Window { now: 0, len: 1 };
        let root = Strl::Sum(vec![nck(1, 0, 2, 0, 1, 3.0), nck(2, 0, 1, 0, 1, 2.0), nck(3, 0, 1, 0, 1, 2.0)]);
        let s = solve(b, &root, &p, &flat(&[2], 1), w);
        assert!((s.objective - 4.0).abs() < 1e-6);
        assert_eq!(s.plan.grants.keys().copied().collect::<Vec<_>>(), vec![1, 2]);
        assert!((value_of(&root, &s.plan) - 4.0).abs() < 1e-9);
    }
}

/// LnCk is worth v·n/k for n of its k units.
#[test]
fn lnck_is_linear_in_what_it_gets() {
    for b in backends() {
        eprintln!("backend {b:?}"); // a failure's output ends with its backend
        let (_, p) = space(&[&[0, 1, 2, 3]]);
        let w = Window { now: 0, len: 2 };
        let s = solve(b, &lnck(1, 0, 4, 0, 2, 8.0), &p, &flat(&[3], 2), w);
        assert!((s.objective - 6.0).abs() < 1e-6);
        assert_eq!(s.plan.units(0), 3);
        assert!((value_of(&lnck(1, 0, 4, 0, 2, 8.0), &s.plan) - 6.0).abs() < 1e-9);
    }
}

/// "≤ k′ per failure domain, k in all" (§3.3): barrier over a sum of LnCk
/// per domain. Two domains of 3 nodes, k = 4, k′ = 2: met with 2 + 2; with
/// one node free in domain 2 the barrier cannot be reached and it is 0.
#[test]
fn barrier_over_failure_domains() {
    for b in backends() {
        eprintln!("backend {b:?}"); // a failure's output ends with its backend
        let (_, p) = space(&[&[0, 1, 2], &[3, 4, 5]]);
        let w = Window { now: 0, len: 1 };
        let root = Strl::Barrier(Box::new(Strl::Sum(vec![lnck(1, 0, 2, 0, 1, 2.0), lnck(1, 1, 2, 0, 1, 2.0)])), 4.0);
        let s = solve(b, &root, &p, &flat(&[3, 3], 1), w);
        assert!((s.objective - 4.0).abs() < 1e-6);
        assert_eq!((s.plan.units(0), s.plan.units(1)), (2, 2), "k′ caps each domain");
        assert!((value_of(&root, &s.plan) - 4.0).abs() < 1e-9);
        let s = solve(b, &root, &p, &flat(&[3, 1], 1), w);
        assert!(s.objective.abs() < 1e-6, "{}", s.objective);
        assert_eq!(value_of(&root, &s.plan), 0.0);
    }
}

/// min realises every child and is worth the worst; scale multiplies.
#[test]
fn min_and_scale() {
    for b in backends() {
        eprintln!("backend {b:?}"); // a failure's output ends with its backend
        let (_, p) = space(&[&[0], &[1]]);
        let w = Window { now: 0, len: 1 };
        let root = Strl::Scale(Box::new(Strl::Min(vec![nck(1, 0, 1, 0, 1, 3.0), nck(1, 1, 1, 0, 1, 5.0)])), 2.0);
        let s = solve(b, &root, &p, &flat(&[1, 1], 1), w);
        assert!((s.objective - 6.0).abs() < 1e-6);
        assert_eq!((s.plan.units(0), s.plan.units(1)), (1, 1));
        assert!((value_of(&root, &s.plan) - 6.0).abs() < 1e-9);
    }
}

/// Leaves outside the window are pruned (§1.4.3 (4)); usage is clipped to
/// the window: a leaf running past its end only needs supply inside it.
#[test]
fn window_clipping() {
    for b in backends() {
        eprintln!("backend {b:?}"); // a failure's output ends with its backend
        let (_, p) = space(&[&[0]]);
        let w = Window { now: 10, len: 2 };
        let root = Strl::Max(vec![nck(1, 0, 1, 9, 1, 9.0), nck(1, 0, 1, 12, 1, 9.0), nck(1, 0, 1, 11, 5, 1.0)]);
        let supply = Supply { avail: vec![vec![0, 1]] };
        let s = solve(b, &root, &p, &supply, w);
        assert!((s.objective - 1.0).abs() < 1e-6);
        assert_eq!(s.plan.grants.keys().copied().collect::<Vec<_>>(), vec![2]);
    }
}

/// The evaluator's value of the decoded plan equals the MILP objective on
/// a mixed expression (max, min, sum, scale, barrier, both leaf kinds).
#[test]
fn evaluator_matches_the_objective() {
    for b in backends() {
        eprintln!("backend {b:?}"); // a failure's output ends with its backend
        let (_, p) = space(&[&[0, 1, 2, 3], &[0, 1], &[2, 3]]);
        let w = Window { now: 0, len: 3 };
        let job_a = Strl::Max(vec![nck(1, 1, 2, 0, 2, 7.0), nck(1, 0, 2, 1, 2, 5.0)]);
        let job_b = Strl::Min(vec![nck(2, 1, 1, 0, 1, 4.0), nck(2, 2, 1, 0, 1, 6.0)]);
        let job_c = Strl::Scale(Box::new(lnck(3, 0, 3, 0, 3, 3.0)), 0.5);
        let job_d = Strl::Barrier(Box::new(Strl::Sum(vec![lnck(4, 1, 1, 1, 1, 1.0), lnck(4, 2, 1, 1, 1, 1.0)])), 2.0);
        let root = Strl::Sum(vec![job_a, job_b, job_c, job_d]);
        let s = solve(b, &root, &p, &flat(&[2, 2], 3), w);
        let v = value_of(&root, &s.plan);
        assert!((v - s.objective).abs() < 1e-6, "evaluator {v} vs objective {}", s.objective);
        compile::check(&root, &s.plan, &flat(&[2, 2], 3), w).expect("feasible");
        // The optimum by hand: A on GPU at 0 (7) and B (4 ∧ 6 = 4) cannot both
        // hold node set {0,1} at slice 0 (2 + 1 > 2); A on ALL at 1 (5) + B (4)
        // + D at 1 needs {0,1}: A takes 2 of ALL at 1..3 ... the solver's value
        // must at least beat A-on-GPU alone plus C's share.
        assert!(s.objective >= 7.0 + 0.5 - 1e-6, "{}", s.objective);
    }
}

// ---- the policy ----------------------------------------------------------

fn app(c: &mut Harness, t: u64, id: u32, queue: &str, name: &str, tasks: u32, est_ms: u64) {
    let spec = AppSpec { name: name.into(), ..AppSpec::new(AppId(id), queue, "u") };
    c.handle(Time(t), Event::AppAdded(spec)).expect("app");
    let mut ask = Ask::new(Priority::MAP, Resources::new(1024, 1), tasks, Phase::Map);
    ask.est_task_ms = Some(est_ms);
    c.handle(Time(t), Event::AsksUpdated { app: AppId(id), asks: vec![ask] }).expect("ask");
}

/// One-slot nodes (1 GB, 1 vcore): the paper's whole-node unit.
fn cluster(params: &[(&str, &str)], racks: &[(&str, u32)]) -> Harness {
    let mut c = core("tetrisched", params);
    let mut id = 0;
    for (rack, n) in racks {
        for _ in 0..*n {
            node_in_rack(&mut c, id, rack, 1024, 1);
            id += 1;
        }
    }
    c
}

fn placed(ds: &[sojourn_core::Decision]) -> Vec<(u32, u32)> {
    allocations(ds).iter().map(|a| (a.0, a.2)).collect()
}

/// An SLO job (value 1000) goes before an earlier best-effort one (value
/// ≈ 1) on the two nodes, and the BE job follows when they free up.
#[test]
fn slo_job_first() {
    let mut c = cluster(&[], &[("/r0", 2)]);
    app(&mut c, 0, 1, "default", "be", 2, 40_000);
    app(&mut c, 0, 2, "slo", "slo", 2, 8_000);
    assert_eq!(placed(&schedule(&mut c, 0)), vec![(2, 0), (2, 1)]);
    let ids: Vec<_> = c.cluster().app(AppId(2)).map(|a| a.containers.iter().copied().collect()).unwrap_or_default();
    for id in ids {
        finish(&mut c, 8_000, id);
    }
    assert_eq!(placed(&schedule(&mut c, 8_000)), vec![(1, 0), (1, 1)], "the BE gang once both nodes are free");
    assert!(c.cluster().check_invariants().is_ok());
}

/// A gang is all or nothing: with one of two nodes busy, a gang of two
/// waits; when the node frees, both its containers start in one pass.
#[test]
fn gang_is_all_or_nothing() {
    let mut c = cluster(&[], &[("/r0", 2)]);
    app(&mut c, 0, 1, "default", "a", 1, 20_000);
    assert_eq!(placed(&schedule(&mut c, 0)), vec![(1, 0)]);
    app(&mut c, 1_000, 2, "default", "b", 2, 8_000);
    assert!(placed(&schedule(&mut c, 1_000)).is_empty(), "half a gang is no gang");
    assert!(placed(&schedule(&mut c, 4_000)).is_empty());
    let held: Vec<_> = c.cluster().app(AppId(1)).map(|a| a.containers.iter().copied().collect()).unwrap_or_default();
    let mut got = Vec::new();
    for id in held {
        got.extend(placed(&finish(&mut c, 20_000, id)));
    }
    got.extend(placed(&schedule(&mut c, 20_000)));
    assert_eq!(got, vec![(2, 0), (2, 1)]);
}

/// With `elastic_asks` the same ask of two is linear: it takes the one
/// free node now and the other when it frees.
#[test]
fn an_elastic_ask_takes_what_is_free() {
    let mut c = cluster(&[("elastic_asks", "true")], &[("/r0", 2)]);
    app(&mut c, 0, 1, "default", "a", 1, 20_000);
    assert_eq!(placed(&schedule(&mut c, 0)), vec![(1, 0)]);
    app(&mut c, 1_000, 2, "default", "b", 2, 8_000);
    assert_eq!(placed(&schedule(&mut c, 4_000)), vec![(2, 1)], "half the ask now");
}

/// A GPU job takes the GPU rack (§3.3) though a lower-numbered other node
/// is free; under NH it takes the lowest free node of the whole cluster.
#[test]
fn gpu_job_prefers_gpu_nodes_unless_nh() {
    for (nh, want) in [("false", 2), ("true", 0)] {
        let mut c = cluster(&[("gpu_racks", "/gpu"), ("no_heterogeneity", nh)], &[("/r0", 2), ("/gpu", 2)]);
        app(&mut c, 0, 1, "slo", "gpu-train", 1, 8_000);
        assert_eq!(placed(&schedule(&mut c, 0)), vec![(1, want)], "NH {nh}");
    }
}

/// An MPI gang takes one whole rack rather than spreading: node 0 is busy,
/// so rack /r0 has one free node and the gang of two goes to /r1.
#[test]
fn mpi_gang_stays_in_one_rack() {
    let mut c = cluster(&[], &[("/r0", 2), ("/r1", 2)]);
    app(&mut c, 0, 1, "default", "x", 1, 60_000);
    assert_eq!(placed(&schedule(&mut c, 0)), vec![(1, 0)]);
    app(&mut c, 0, 2, "slo", "mpi", 2, 8_000);
    assert_eq!(placed(&schedule(&mut c, 0)), vec![(2, 2), (2, 3)]);
}

/// Plan-ahead: a 3-node SLO gang due soon and a 1-node best-effort job.
/// With the window the BE job is deferred past the gang (both done); NP
/// starts the BE job now (it sees only start = now, where the gang cannot
/// run anyway) and the gang misses the slice it needed.
#[test]
fn plan_ahead_defers_what_would_block_a_gang() {
    for (np, be_now) in [("false", false), ("true", true)] {
        let mut c = cluster(&[("no_plan_ahead", np)], &[("/r0", 3)]);
        app(&mut c, 0, 1, "default", "hold", 1, 4_000);
        assert_eq!(placed(&schedule(&mut c, 0)).len(), 1);
        app(&mut c, 0, 2, "slo", "gang", 3, 8_000); // deadline 16 s: must start by 8 s
        app(&mut c, 0, 3, "default", "be", 1, 40_000);
        let now = placed(&schedule(&mut c, 0));
        assert_eq!(now.iter().any(|a| a.0 == 3), be_now, "NP {np}: {now:?}");
    }
}

/// The NG ablation and a tiny time limit still place work; bad parameters
/// are errors naming the key.
#[test]
fn parameters() {
    let mut c = cluster(&[("no_global", "true")], &[("/r0", 2)]);
    app(&mut c, 0, 1, "default", "a", 2, 8_000);
    assert_eq!(placed(&schedule(&mut c, 0)).len(), 2);
    for (k, v) in [("mip_gap", "2"), ("quantum_ms", "0"), ("slowdown", "0.5"), ("plan_ahead_ms", "-1")] {
        let e = config_error("tetrisched", &[(k, v)]);
        assert!(e.contains(k), "{k}={v}: {e}");
    }
    if !cfg!(feature = "microlp") {
        let e = config_error("tetrisched", &[("solver", "microlp")]);
        assert!(e.contains("'solver'") && e.contains("not compiled in"), "{e}");
    }
    let e = config_error("tetrisched", &[("plan_ahead_ms", "100000000")]);
    assert!(e.contains("plan_ahead_ms"), "{e}");
}

/// `describe` reports the last cycle's model.
#[test]
fn describe_reports_the_cycle() {
    let mut c = cluster(&[], &[("/r0", 2)]);
    app(&mut c, 0, 1, "slo", "a", 2, 8_000);
    schedule(&mut c, 0);
    let d = c.describe();
    assert_eq!(d["last_cycle"]["planner"], "milp", "{d}");
    assert_eq!(d["last_cycle"]["launched_containers"], 2, "{d}");
    assert!(d["last_cycle"]["int_vars"].as_u64().unwrap_or(0) > 0, "{d}");
}

/// A cycle on a full cluster plans nothing (`full`): nothing could start.
/// When a slot frees, the next pass plans and starts the waiting job at
/// once, as it would have without the skip; with `skip_full_cycles=false`
/// the full cycle solves the MILP (and still starts nothing).
#[test]
fn a_full_cluster_skips_the_solve_and_a_freed_slot_plans_at_once() {
    for skip in ["true", "false"] {
        let mut c = cluster(&[("skip_full_cycles", skip)], &[("/r0", 2)]);
        app(&mut c, 0, 1, "default", "a", 2, 20_000);
        assert_eq!(placed(&schedule(&mut c, 0)), vec![(1, 0), (1, 1)]);
        app(&mut c, 1_000, 2, "slo", "b", 1, 8_000);
        assert!(placed(&schedule(&mut c, 4_000)).is_empty(), "skip={skip}: both nodes are busy");
        let d = c.describe();
        let want = if skip == "true" { "full" } else { "milp" };
        assert_eq!(d["last_cycle"]["planner"], want, "skip={skip}: {d}");
        let held: Vec<_> =
            c.cluster().app(AppId(1)).map(|a| a.containers.iter().copied().collect()).unwrap_or_default();
        let mut got = placed(&finish(&mut c, 20_000, held[0]));
        got.extend(placed(&schedule(&mut c, 20_000)));
        assert_eq!(got, vec![(2, 0)], "skip={skip}: the freed node goes to the waiting job at once");
        assert_eq!(c.describe()["last_cycle"]["planner"], "milp", "skip={skip}");
    }
}

/// A warm start CBC 2.10.8 once aborted on (an assertion in
/// `OsiClpSolverInterface::crunch`), found by the property test: a linear
/// job over 25 starts, one unit warm at start 15.
#[test]
fn warm_start_regression() {
    let (_, p) = space(&[&[0]]);
    let w = Window { now: 1, len: 25 };
    let root = Strl::Sum(vec![Strl::Sum(
        (1..26).map(|s| Strl::LnCk(Leaf { width: 2, ..leaf(10, 0, 1, s, 15, 0.99 - s as f64 * 0.001) })).collect(),
    )]);
    let mut avail = vec![1; 14];
    avail.extend(vec![2; 11]);
    let supply = Supply { avail: vec![avail] };
    let warm: BTreeMap<usize, u32> = [(14, 1)].into_iter().collect();
    let s = compile::solve(&root, &p, &supply, w, &SolverOptions::default(), &warm).expect("solves");
    assert_eq!(s.plan.units(14), 1);
}

/// With `max_milp_jobs = 1` the second job is planned greedily on what the
/// MILP left (§2.8 (6)): both start, and the cycle says so.
#[test]
fn jobs_beyond_the_milp_batch_are_planned_greedily() {
    let mut c = cluster(&[("max_milp_jobs", "1")], &[("/r0", 3)]);
    app(&mut c, 0, 1, "slo", "a", 2, 8_000);
    app(&mut c, 0, 2, "default", "b", 1, 8_000);
    assert_eq!(placed(&schedule(&mut c, 0)), vec![(1, 0), (1, 1), (2, 2)]);
    assert_eq!(c.describe()["last_cycle"]["planner"], "milp+greedy");
}

/// A19's defer penalty only breaks ties: a long, wide job whose value has
/// decayed to the A7 floor (0.001) is still scheduled, now, by NG and by
/// the MILP. Uncapped, its penalty 1e-6 · (0 + 2500) · 10 = 0.025 exceeded
/// its value in every option and it waited forever (the FB-2009 day's job
/// 388). Its worth is value − min(penalty, value / 2) = 0.0005 at start 0
/// and at start 1 alike (both capped), so the earlier start wins on order.
#[test]
fn defer_penalty_never_starves_a_floored_job() {
    let (_, p) = space(&[&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]]);
    let w = Window { now: 0, len: 2 };
    let root = Strl::Sum(vec![Strl::Max((0..2).map(|s| nck(1, 0, 10, s, 2500, 0.001)).collect())]);
    let g = greedy(&root, &p, &flat(&[10], 2), w, 1e-6);
    assert_eq!(g.grants.keys().copied().collect::<Vec<_>>(), vec![0]);
    let opts = SolverOptions { defer_penalty: 1e-6, ..exact() };
    let s = compile::solve(&root, &p, &flat(&[10], 2), w, &opts, &BTreeMap::new()).expect("solves");
    assert_eq!(s.plan.units(0) + s.plan.units(1), 10, "the job is planned whole");
    assert!((s.objective - 0.0005).abs() < 1e-9, "objective {}", s.objective);
    // An uncapped penalty keeps a positive worth where it is below half.
    let cheap = leaf(1, 0, 1, 0, 1, 1.0);
    assert!((compile::leaf_worth(&cheap, 0, 1e-6) - (1.0 - 1e-6)).abs() < 1e-12);
}

// ---- the solve off the scheduler's thread (cycle.rs) ----------------------

/// How a test host answers offloaded solves.
#[derive(Clone, Copy, Debug, PartialEq)]
enum SolveHost {
    /// No offloading: the policy solves inside its cycle (the simulator).
    Inline,
    /// Offloaded, answered this many ms later (0: within the same time).
    After(u64),
    /// Offloaded and answered at once from the work's description, sent
    /// and answered as JSON text, as the RM's child process does; each
    /// answer is checked against the closure's.
    AsData,
}

/// The test's host: feeds the core one event a step, records each step as
/// a flight recorder would, and answers offloaded solves as `host` says.
struct TraceHost {
    c: Harness,
    host: SolveHost,
    records: Vec<sojourn_core::Record>,
    answers: BTreeMap<u64, Vec<Event>>,
    /// Solves answered from their description (`AsData`).
    described_solves: usize,
}

impl TraceHost {
    /// One step at `t` (`None`: timers only); then the work it offloaded.
    fn step(&mut self, t: u64, e: Option<Event>) {
        self.records.push(sojourn_core::Record::step(Time(t), e.iter().cloned().collect()));
        match e {
            Some(e) => self.c.handle(Time(t), e).expect("event"),
            None => self.c.handle_timeout(Time(t)),
        }
        for w in self.c.take_offloads() {
            match self.host {
                SolveHost::After(0) => self.step(t, Some(w.run())),
                SolveHost::After(ms) => self.answers.entry(t + ms).or_default().push(w.run()),
                SolveHost::AsData => {
                    let d = w.work.describe().expect("a solve is described");
                    assert_eq!(d.kind, "tetrisched.solve");
                    let input = serde_json::from_str(&d.input.to_string()).expect("the input parses");
                    let answer = crate::offload::run(&d.kind, input).expect("a described solve runs");
                    let answer: serde_json::Value = serde_json::from_str(&answer.to_string()).expect("parses");
                    let Event::OffloadDone { tag, result } = w.run() else { panic!("not an answer") };
                    assert_eq!(result, answer, "the closure and the description answer alike");
                    self.described_solves += 1;
                    self.step(t, Some(Event::OffloadDone { tag, result: answer }));
                }
                SolveHost::Inline => panic!("a host that runs no offloaded work was handed some"),
            }
        }
    }
}

/// A small trace on three one-slot nodes: best-effort and SLO gangs
/// arriving over time, each container ending at its estimate. Returns
/// every decision with its time, the records a flight recorder would have
/// kept, and each app's finish time.
/// Decisions with their times, the recorded steps, each app's finish time.
type TraceRun = (Vec<(u64, sojourn_core::Decision)>, Vec<sojourn_core::Record>, BTreeMap<u32, u64>);

fn trace_run(host: SolveHost) -> TraceRun {
    use sojourn_core::{ContainerId, CoreConfig, Decision, Outcome};
    let p = crate::build("tetrisched", &BTreeMap::new()).expect("defaults");
    let c = Harness::new(p, CoreConfig { offload: host != SolveHost::Inline, ..CoreConfig::default() });
    let mut h = TraceHost { c, host, records: Vec::new(), answers: BTreeMap::new(), described_solves: 0 };
    for n in 0..3 {
        let spec = sojourn_core::NodeSpec {
            node: sojourn_core::NodeId(n),
            name: format!("n{n}"),
            rack: "/r0".into(),
            labels: vec![],
            capacity: Resources::new(1024, 1),
        };
        h.step(0, Some(Event::NodeAdded(spec)));
    }
    // (time, app, queue, tasks, estimate ms)
    let arrivals = [
        (0, 1, "default", 2, 12_000),
        (0, 2, "slo", 2, 8_000),
        (3_000, 3, "slo", 1, 4_000),
        (5_000, 4, "default", 3, 6_000),
    ];
    let est: BTreeMap<u32, u64> = arrivals.iter().map(|a| (a.1, a.4)).collect();
    let mut ends: BTreeMap<u64, Vec<(ContainerId, u32)>> = BTreeMap::new();
    let mut decisions = Vec::new();
    let mut finished: BTreeMap<u32, u64> = BTreeMap::new();
    for t in (0..=120_000u64).step_by(500) {
        for (at, id, queue, tasks, e) in arrivals {
            if at == t {
                h.step(t, Some(Event::AppAdded(AppSpec::new(AppId(id), queue, "u"))));
                let mut ask = Ask::new(Priority::MAP, Resources::new(1024, 1), tasks, Phase::Map);
                ask.est_task_ms = Some(e);
                h.step(t, Some(Event::AsksUpdated { app: AppId(id), asks: vec![ask] }));
            }
        }
        for (container, app) in ends.remove(&t).unwrap_or_default() {
            h.step(t, Some(Event::ContainerCompleted { container, outcome: Outcome::Finished }));
            finished.insert(app, t);
        }
        for e in h.answers.remove(&t).unwrap_or_default() {
            h.step(t, Some(e));
        }
        h.step(t, None);
        h.step(t, Some(Event::ScheduleAll));
        for d in h.c.drain_decisions() {
            if let Decision::Allocate { container, app, .. } = &d {
                let end = t + est[&app.0].div_ceil(500) * 500;
                ends.entry(end).or_default().push((*container, app.0));
            }
            decisions.push((t, d));
        }
        assert!(h.c.cluster().check_invariants().is_ok(), "at {t}");
    }
    if host == SolveHost::AsData {
        assert!(h.described_solves > 5, "solves ran from their description: {}", h.described_solves);
    }
    (decisions, h.records, finished)
}

/// A solve answered at once gives exactly the decisions of the inline
/// solve (the simulator's), at the same times: offloading changes where the
/// solve runs, not what the policy decides.
#[test]
fn an_offloaded_solve_answered_at_once_decides_as_the_inline_one() {
    let (inline, _, done) = trace_run(SolveHost::Inline);
    let (offloaded, _, _) = trace_run(SolveHost::After(0));
    assert_eq!(done.len(), 4, "every app finishes: {done:?}");
    assert_eq!(inline, offloaded);
}

/// A solve run from its description, through JSON text (the RM's child
/// process, `sojourn-offload`), answers exactly as its closure (checked at
/// each solve in `TraceHost::step`), so the decisions are the inline ones.
#[test]
fn a_described_solve_answers_as_its_closure() {
    let (inline, _, _) = trace_run(SolveHost::Inline);
    let (described, _, done) = trace_run(SolveHost::AsData);
    assert_eq!(done.len(), 4, "every app finishes: {done:?}");
    assert_eq!(inline, described);
}

/// A described input that is not a solve's is an error naming it, not a panic.
#[test]
fn a_bad_description_is_an_error_naming_it() {
    let e = crate::offload::run("tetrisched.solve", serde_json::json!({"window": {"now": 0, "len": 4}}))
        .expect_err("bad input");
    assert!(e.contains("tetrisched.solve") && e.contains("root"), "{e}");
    let e = crate::offload::run("no.such", serde_json::json!({})).expect_err("unknown kind");
    assert!(e.contains("'no.such'"), "{e}");
}

/// A solve that takes 1.5 s launches when its answer arrives, not before;
/// cycles due meanwhile wait for it (one solve at a time); every job still
/// finishes, the SLO gang first; and a replay of the recorded events,
/// answers included, makes the same decisions without being handed any work.
#[test]
fn a_slow_solve_launches_on_its_answer_and_replays_from_the_recording() {
    let (decisions, records, done) = trace_run(SolveHost::After(1_500));
    assert_eq!(done.len(), 4, "every app finishes: {done:?}");
    let first = decisions.iter().find(|(_, d)| matches!(d, sojourn_core::Decision::Allocate { .. }));
    assert!(matches!(first, Some((1_500, sojourn_core::Decision::Allocate { app: AppId(2), .. }))), "{first:?}");
    assert!(done[&2] < done[&1], "the SLO gang ends before the earlier best-effort one: {done:?}");
    let p = crate::build("tetrisched", &BTreeMap::new()).expect("defaults");
    let mut replay =
        sojourn_core::Core::new(p, sojourn_core::CoreConfig { offload: true, ..sojourn_core::CoreConfig::default() });
    let replayed = replay.replay(records).expect("replays").decisions;
    let recorded: Vec<_> = decisions.into_iter().map(|(_, d)| d).collect();
    assert_eq!(replayed, recorded);
}

/// Heartbeats from `node`, as a NodeManager's NODE_UPDATE.
fn heartbeat(c: &mut Harness, t: u64, node: u32) -> Vec<sojourn_core::Decision> {
    c.handle_timeout(Time(t));
    c.handle(Time(t), Event::NodeHeartbeat { node: sojourn_core::NodeId(node) }).expect("heartbeat");
    c.drain_decisions()
}

/// With `bind_on_heartbeat` a plan's containers start node by node as the
/// nodes heartbeat (the paper's allocation map), not all in the call that
/// planned them; without it the same plan starts at once. A gang (nCk)
/// starts whole, as one atomic group, at the first of its nodes' heartbeats.
#[test]
fn a_bound_plan_starts_on_each_node_at_its_heartbeat() {
    let mut c = cluster(&[("bind_on_heartbeat", "true"), ("elastic_asks", "true")], &[("/r0", 3)]);
    app(&mut c, 0, 1, "default", "elastic", 3, 8_000);
    // node 0's heartbeat runs the cycle: the ask is bound to all three
    // nodes, and node 0 takes its own share in the same call
    assert_eq!(placed(&heartbeat(&mut c, 0, 0)), vec![(1, 0)]);
    assert_eq!(c.cluster().containers().count(), 1);
    assert_eq!(placed(&heartbeat(&mut c, 100, 2)), vec![(1, 2)]);
    assert!(placed(&heartbeat(&mut c, 200, 2)).is_empty(), "node 2 had one");
    assert_eq!(placed(&heartbeat(&mut c, 300, 1)), vec![(1, 1)]);
    assert!(c.cluster().check_invariants().is_ok());

    let mut gang = cluster(&[("bind_on_heartbeat", "true")], &[("/r0", 3)]);
    app(&mut gang, 0, 1, "default", "gang", 3, 8_000);
    let ds = heartbeat(&mut gang, 0, 0);
    assert_eq!(placed(&ds), vec![(1, 0), (1, 1), (1, 2)]);
    let gangs: BTreeSet<_> = ds
        .iter()
        .filter_map(|d| match d {
            sojourn_core::Decision::Allocate { gang, .. } => Some(*gang),
            _ => None,
        })
        .collect();
    assert!(gangs.len() == 1 && gangs.iter().all(Option::is_some), "one gang: {gangs:?}");
    assert!(placed(&heartbeat(&mut gang, 100, 1)).is_empty(), "nothing is left bound");

    let mut at_once = cluster(&[], &[("/r0", 3)]);
    app(&mut at_once, 0, 1, "default", "gang", 3, 8_000);
    assert_eq!(placed(&heartbeat(&mut at_once, 0, 0)), vec![(1, 0), (1, 1), (1, 2)]);
}

/// Bindings wait for their nodes through event-triggered cycles (which
/// would replan them); the next periodic cycle replaces what is left, and
/// what it drops is counted.
#[test]
fn a_due_cycle_replaces_bindings_whose_node_never_heartbeated() {
    let mut c = cluster(&[("bind_on_heartbeat", "true"), ("elastic_asks", "true")], &[("/r0", 2)]);
    app(&mut c, 0, 1, "default", "a", 2, 60_000);
    assert_eq!(placed(&heartbeat(&mut c, 0, 0)), vec![(1, 0)]);
    // a new job arrives: with a binding waiting, no event cycle runs
    app(&mut c, 500, 2, "slo", "b", 1, 8_000);
    assert!(placed(&heartbeat(&mut c, 600, 0)).is_empty());
    assert_eq!(c.describe().get("bound_containers").and_then(|v| v.as_u64()), Some(1));
    // node 1 stays silent past the 4 s cycle: the next plan replaces the
    // binding, and the SLO job (value 1000) takes node 1 when it heartbeats
    assert!(placed(&heartbeat(&mut c, 4_000, 0)).is_empty());
    assert_eq!(placed(&heartbeat(&mut c, 4_100, 1)), vec![(2, 1)]);
    assert_eq!(c.metrics().counter("tetrisched.unapplied_bindings"), 1);
}

/// A node's whole share starts at its heartbeat, several apps' containers
/// together (RmBench: 200 nodes of 64 slots, 100 apps × 20).
#[test]
fn a_node_starts_its_whole_share_at_one_heartbeat() {
    let mut c = core("tetrisched", &[("bind_on_heartbeat", "true"), ("elastic_asks", "true")]);
    node_in_rack(&mut c, 0, "/r0", 4096, 4);
    node_in_rack(&mut c, 1, "/r0", 4096, 4);
    app(&mut c, 0, 1, "default", "a", 3, 8_000);
    app(&mut c, 0, 2, "default", "b", 3, 8_000);
    let mut got = placed(&heartbeat(&mut c, 0, 0));
    got.extend(placed(&heartbeat(&mut c, 10, 1)));
    got.sort();
    assert_eq!(got.len(), 6, "{got:?}");
}
