//! TetriSched through the whole simulator (tetrisched.md §5): a small SLO
//! mix runs to completion without over-committing a node, under the full
//! policy and its ablations, and meets at least FIFO's SLOs. The
//! §5-anchored experiment and the solver sizing of §8.2 print figures from
//! `cargo bench -p sojourn-sim --bench tetrisched`.

#[path = "common/gs_mix.rs"]
mod gs_mix;
use gs_mix::{
    accepted, figures, gang_job, gr_mix, gr_slo, gs_het, gs_mix, het_cluster, run, run_het, run_mis_estimated, run_on,
    slo_metrics,
};
use sojourn_core::{Resources, Time};
use sojourn_sim::engine::{simulate, SimConfig, SimError};
use sojourn_sim::run::RunResult;
use sojourn_sim::workload::{ClusterSpec, JobSpec, JobStream, NodeShape};

/// Every job finishes and no node is over-committed (the simulator checks
/// the core's invariants after every step), under TetriSched and each
/// ablation.
#[test]
fn a_small_slo_mix_finishes_under_tetrisched_and_its_ablations() {
    let jobs = gs_mix(24, 6, 0.9, 7);
    for params in
        [vec![], vec![("no_global", "true")], vec![("no_plan_ahead", "true")], vec![("no_heterogeneity", "true")]]
    {
        let r = run("tetrisched", &params, 6, &jobs);
        assert_eq!(r.unfinished, 0, "{params:?}");
        assert_eq!(r.jobs.len(), jobs.len(), "{params:?}");
        for j in &r.jobs {
            assert!(j.finish >= j.submit, "{params:?}: job {} ends before it starts", j.id);
        }
    }
}

/// TetriSched meets at least as many SLOs as FIFO on the small mix: the
/// value functions put SLO jobs first.
#[test]
fn tetrisched_meets_more_slos_than_fifo() {
    let jobs = gs_mix(40, 8, 1.0, 3);
    let t = figures(&jobs, &run("tetrisched", &[], 8, &jobs)).0;
    let f = figures(&jobs, &run("fifo", &[], 8, &jobs)).0;
    assert!(t >= f, "tetrisched {t:.1}% vs fifo {f:.1}%");
}

/// The Rayon/CapacityScheduler baseline on the SLO mix (tetrisched.md
/// §4.3, §5.7): its admission is the one the metrics replay (the policy
/// accepts exactly as many jobs); with exact estimates an accepted job
/// meets its deadline far more often than one without reservation; when
/// estimates are half the truth, reservations end before their jobs, which
/// move to the best-effort queue, and accepted-SLO attainment falls.
#[test]
fn rayon_honours_its_reservations_and_loses_them_under_under_estimates() {
    let (nodes, jobs) = (12, gs_mix(80, 12, 1.0, 5));
    let mut attained = Vec::new();
    for factor in [1.0, 0.5] {
        let accepted = accepted(&jobs, nodes, factor);
        let r = run_mis_estimated("rayon", &[], nodes, &jobs, factor);
        assert_eq!(r.unfinished, 0);
        assert_eq!(r.policy_metrics.counter("rayon.accepted"), accepted.len() as u64, "factor {factor}");
        let (acc, _, norez, _) = slo_metrics(&jobs, &r, &accepted);
        let expired = r.policy_metrics.counter("rayon.expired");
        if factor == 1.0 {
            assert_eq!(expired, 0, "exact estimates: no reservation ends before its job");
            assert!(acc > norez + 20.0, "accepted {acc:.1}% vs without reservation {norez:.1}%");
        } else {
            assert!(expired > 0, "half estimates: reservations expire");
        }
        attained.push(acc);
    }
    assert!(attained[1] < attained[0], "accepted-SLO attainment {attained:?}");
}

/// One-slot node `name` in `rack`, with a GPU if `gpu`.
fn node(name: &str, rack: &str, gpu: bool) -> NodeShape {
    let capacity = Resources::new(1024, 1).with_gpus(u32::from(gpu));
    NodeShape { name: name.into(), rack: rack.into(), capacity, labels: Vec::new() }
}

/// Job `id` named `name`, submitted at 0, a gang of `k` one-slot tasks of 10 s.
fn gang(id: u64, name: &str, k: usize) -> JobSpec {
    gang_job(id, name, Time::ZERO, k, 10_000, None)
}

fn fifo(nodes: Vec<NodeShape>, jobs: Vec<JobSpec>, slowdown: Option<f64>) -> Result<RunResult, SimError> {
    let cfg =
        SimConfig { policy: "fifo".into(), heartbeat_ms: 0, placement_slowdown: slowdown, ..SimConfig::default() };
    let stream: JobStream = Box::new(jobs.into_iter().map(Ok));
    simulate(&ClusterSpec { nodes }, stream, "golden", &cfg, None)
}

/// Each job's finish time in ms, by job id.
fn finish_ms(r: &RunResult) -> Vec<(u64, u64)> {
    let mut f: Vec<(u64, u64)> = r.jobs.iter().map(|j| (j.id, j.finish.0)).collect();
    f.sort_unstable();
    f
}

/// The slowdown off preferred nodes, by hand (d = 10 s, σ = 1.5): a GPU
/// job's task takes d on a GPU node and σ·d = 15 s on one without; an MPI
/// gang in one rack ends at d, one split over two racks at σ·d; a job of
/// neither type takes d anywhere; without the slowdown every task takes d.
#[test]
fn tasks_off_their_jobs_preferred_nodes_run_sigma_times_longer() {
    // Two one-task GPU jobs, one GPU node and one without: whichever lands
    // on the GPU node ends at 10 s, the other at 15 s (the name's case
    // does not matter, as in the policy).
    let two = || vec![node("g", "/r0", true), node("c", "/r1", false)];
    let gpu_jobs = || vec![gang(0, "gpu-a", 1), gang(1, "GPU-b", 1)];
    let r = fifo(two(), gpu_jobs(), Some(1.5)).unwrap();
    let mut ends: Vec<u64> = finish_ms(&r).into_iter().map(|(_, f)| f).collect();
    ends.sort_unstable();
    assert_eq!(ends, vec![10_000, 15_000]);
    assert_eq!(finish_ms(&fifo(two(), gpu_jobs(), None).unwrap()), vec![(0, 10_000), (1, 10_000)]);

    // An MPI gang of two over two racks ends at σ·d; in one rack at d; an
    // unconstrained gang over two racks at d.
    let split = fifo(two(), vec![gang(0, "mpi-x", 2)], Some(1.5)).unwrap();
    assert_eq!(finish_ms(&split), vec![(0, 15_000)]);
    let one_rack = vec![node("a", "/r0", false), node("b", "/r0", false)];
    assert_eq!(finish_ms(&fifo(one_rack, vec![gang(0, "mpi-y", 2)], Some(1.5)).unwrap()), vec![(0, 10_000)]);
    assert_eq!(finish_ms(&fifo(two(), vec![gang(0, "be", 2)], Some(1.5)).unwrap()), vec![(0, 10_000)]);

    // σ = 2: an MPI gang of three on 2 + 1 nodes: the first task's rack
    // holds two, the third task runs 20 s.
    let three = vec![node("a", "/r0", false), node("b", "/r0", false), node("c", "/r1", false)];
    assert_eq!(finish_ms(&fifo(three, vec![gang(0, "mpi-z", 3)], Some(2.0)).unwrap()), vec![(0, 20_000)]);
}

/// A slowdown below 1 (a speed-up) is refused, naming the value.
#[test]
fn a_slowdown_below_one_is_refused() {
    let e = fifo(vec![node("a", "/r0", false)], vec![gang(0, "mpi", 1)], Some(0.5)).unwrap_err();
    assert!(e.to_string().contains("placement slowdown 0.5"), "{e}");
}

/// A small GS_HET mix with the slowdown modelled finishes under
/// TetriSched, its NH, NG and NP ablations and the Rayon baseline, without
/// over-committing a node.
#[test]
fn a_small_heterogeneous_mix_finishes_under_tetrisched_its_ablations_and_rayon() {
    let cluster = het_cluster(12, 4, 1);
    let jobs = gs_het(30, 12, 0.9, 7);
    assert!(jobs.iter().any(|j| j.name.starts_with("gpu")) && jobs.iter().any(|j| j.name.starts_with("mpi")));
    for (policy, params) in [
        ("tetrisched", vec![]),
        ("tetrisched", vec![("no_heterogeneity", "true")]),
        ("tetrisched", vec![("no_global", "true")]),
        ("tetrisched", vec![("no_plan_ahead", "true")]),
        ("rayon", vec![]),
    ] {
        let r = run_het(&cluster, policy, &params, &jobs, 1.0, 1.5);
        assert_eq!(r.unfinished, 0, "{policy} {params:?}");
        assert_eq!(r.jobs.len(), jobs.len(), "{policy} {params:?}");
    }
}

/// GR_MIX and GR_SLO (tetrisched.md §5.2): jobs drawn from the shipped
/// traces' jobs that fit (k ≤ 32 tasks, 1 s to 5 min a task), 52% (GR_MIX)
/// or all (GR_SLO) of them SLO jobs with a deadline U[1.5, 3] × their task
/// time after submission; a BE job has none.
#[test]
fn gr_workloads_draw_jobs_that_fit_with_the_papers_slo_share() {
    let mix = gr_mix(2000, 256, 1.0, 1, 32, 300);
    let slo = mix.iter().filter(|j| j.deadline.is_some()).count() as f64 / mix.len() as f64;
    assert!((0.49..=0.55).contains(&slo), "GR_MIX SLO share {slo:.3}");
    assert!(gr_slo(300, 256, 1.0, 1, 32, 300).iter().all(|j| j.deadline.is_some()));
    for j in &mix {
        let g = &j.groups[0];
        let (k, d) = (g.durations_ms.len(), g.durations_ms[0]);
        assert!((1..=32).contains(&k) && (1000..=300_000).contains(&d), "job {}: k {k}, d {d} ms", j.id);
        assert!(g.durations_ms.iter().all(|&x| x == d), "job {}: a rigid gang of equal tasks", j.id);
        if let Some(deadline) = j.deadline {
            let slack = (deadline.0 - j.submit.0) as f64 / d as f64;
            assert!((1.5..=3.0 + 1e-9).contains(&slack), "job {}: slack {slack:.3}", j.id);
        }
    }
    // Both traces feed it: SLO jobs are FB-2009's (mostly 1–2 tasks), BE
    // jobs Yahoo's (12.5 tasks on average).
    let mean_k = |slo: bool| {
        let ks: Vec<usize> =
            mix.iter().filter(|j| j.deadline.is_some() == slo).map(|j| j.groups[0].durations_ms.len()).collect();
        ks.iter().sum::<usize>() as f64 / ks.len() as f64
    };
    assert!(mean_k(false) > 3.0 * mean_k(true), "BE k {:.1} vs SLO k {:.1}", mean_k(false), mean_k(true));
}

/// GR_MIX's under-estimate shape (tetrisched.md §5.6 rows 1–3, 5.7): with
/// every estimate half the truth, Rayon's reservations end before their
/// jobs and most accepted SLO jobs miss, while TetriSched re-plans every
/// cycle around the tasks still running and meets far more of them, with a
/// lower mean best-effort latency. Two racks of 32 one-slot nodes.
#[test]
fn under_half_estimates_tetrisched_meets_more_gr_mix_slos_than_rayon() {
    let nodes = 64;
    let jobs = gr_mix(200, nodes, 1.0, 2, 32, 300);
    let cluster = ClusterSpec::uniform(nodes, Resources::new(1024, 1), 32);
    let acc = accepted(&jobs, nodes, 0.5);
    let [t, r] = ["tetrisched", "rayon"].map(|p| {
        let run = run_on(&cluster, p, &[], &jobs, 0.5, None);
        assert_eq!(run.unfinished, 0, "{p}");
        slo_metrics(&jobs, &run, &acc)
    });
    assert!(t.0 > r.0 + 10.0, "accepted SLO attainment: tetrisched {:.1}% vs rayon {:.1}%", t.0, r.0);
    assert!(t.3 < r.3, "mean BE latency: tetrisched {:.1} s vs rayon {:.1} s", t.3, r.3);
}
