//! TetriSched through the whole simulator (tetrisched.md §5): a small SLO
//! mix runs to completion without over-committing a node, under the full
//! policy and its ablations, and meets at least FIFO's SLOs. The
//! §5-anchored experiment and the solver sizing of §8.2 print figures from
//! `cargo bench -p sojourn-sim --bench tetrisched`.

#[path = "common/gs_mix.rs"]
mod gs_mix;
use gs_mix::{figures, gs_mix, run};

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
