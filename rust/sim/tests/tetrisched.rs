//! TetriSched through the whole simulator (tetrisched.md §5): a small SLO
//! mix runs to completion without over-committing a node, under the full
//! policy and its ablations, and meets at least FIFO's SLOs. The
//! §5-anchored experiment and the solver sizing of §8.2 print figures from
//! `cargo bench -p sojourn-sim --bench tetrisched`.

#[path = "common/gs_mix.rs"]
mod gs_mix;
use gs_mix::{accepted, figures, gs_mix, run, run_mis_estimated, slo_metrics};

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
