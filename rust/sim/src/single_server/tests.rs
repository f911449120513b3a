//! Hand-computed cases per discipline, the thesis's worked examples
//! (hfsp.md §5.5) and the Table 3.1 default setting.

use super::schedulers::{Fsp, LatePolicy, Scheduler};
use super::workload::{gamma, weibull_workload, WeibullSpec};
use super::*;

fn exact(jobs: &[(f64, f64)]) -> Vec<Job> {
    jobs.iter().map(|&(a, s)| Job::new(a, s, s)).collect()
}

fn close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-9, "got {got:?}, want {want:?}");
    }
}

fn mean_response(jobs: &[Job], d: Discipline) -> f64 {
    let c = run(jobs, d);
    jobs.iter().zip(&c).map(|(j, c)| c - j.arrival).sum::<f64>() / jobs.len() as f64
}

/// j1 (arrival 0, size 4), j2 (arrival 1, size 2): hfsp.md §5.5, first rows.
fn srpt_example() -> Vec<Job> {
    exact(&[(0.0, 4.0), (1.0, 2.0)])
}

#[test]
fn srpt_preempts_for_the_shorter_job_l396() {
    close(&run(&srpt_example(), Discipline::Srpt), &[6.0, 3.0]);
    assert!((mean_response(&srpt_example(), Discipline::Srpt) - 4.0).abs() < 1e-9);
}

#[test]
fn fsp_matches_srpt_on_the_example_l410() {
    close(&run(&srpt_example(), Discipline::Fsp), &[6.0, 3.0]);
}

#[test]
fn ps_shares_equally() {
    // 0-1 j1 alone (3 left); then halves: j2 needs 4 more time units -> 5; j1 has 1 left -> 6.
    close(&run(&srpt_example(), Discipline::Ps), &[6.0, 5.0]);
}

#[test]
fn fifo_runs_in_arrival_order() {
    close(&run(&srpt_example(), Discipline::Fifo), &[4.0, 6.0]);
}

#[test]
fn las_serves_least_attained_then_shares() {
    // j2 alone 1-2 (catches up to attained 1), then both share: j2 done at 4, j1 at 6.
    close(&run(&srpt_example(), Discipline::Las), &[6.0, 4.0]);
}

#[test]
fn las_merges_three_levels() {
    // a: size 3 at 0; b: size 1 at 1; c: size 1 at 1.5.
    // 0-1 a (att 1). 1-1.5 b alone (0.5). 1.5-2.5 c catches up to b (c 0.5 at 2.0),
    // then b and c share from 2.0: each needs 0.5 more at rate 1/2 -> done at 3.0.
    // a alone from 3.0 with 2 left -> 5.0.
    let jobs = exact(&[(0.0, 3.0), (1.0, 1.0), (1.5, 1.0)]);
    close(&run(&jobs, Discipline::Las), &[5.0, 3.0, 3.0]);
}

#[test]
fn srpte_late_job_cannot_be_preempted() {
    // a: size 4, estimated 1 (late at t=1); b arrives at 2 with size 1 (estimate 1)
    // and must wait for a: a done at 4, b at 5. With exact sizes SRPT serves b first.
    let jobs = vec![Job::new(0.0, 4.0, 1.0), Job::new(2.0, 1.0, 1.0)];
    close(&run(&jobs, Discipline::Srpte), &[4.0, 5.0]);
    close(&run(&jobs, Discipline::Srpt), &[5.0, 3.0]);
}

#[test]
fn fspe_serves_late_jobs_one_at_a_time_fspe_ps_shares_them() {
    // Both size 4, estimated 1, at 0: virtually done at t = 2 (each 1/2).
    // Really j0 ran 0-2 (2 left). FSPE: j0 done at 4, j1 at 8.
    // FSPE+PS: at 2 both late and share: j0 done at 6, j1 at 8.
    let jobs = vec![Job::new(0.0, 4.0, 1.0), Job::new(0.0, 4.0, 1.0)];
    close(&run(&jobs, Discipline::Fspe), &[4.0, 8.0]);
    close(&run(&jobs, Discipline::FspePs), &[6.0, 8.0]);
    close(&run(&jobs, Discipline::Psbs), &[6.0, 8.0]);
}

#[test]
fn psbs_weights_split_late_jobs() {
    // As above, weights 3 and 1: both tags = 1/w: j0 tag 1/3, j1 tag 1. g
    // advances at 1/4: j0 virtually done at t = 4/3, j1 at 4/3 + (1-1/3)*1 = 2.
    // Real: j0 served 0-4/3 (late at 4/3, alone -> served to completion at 4);
    // j1 becomes late at 2 and shares 3:1 with j0 from 2: j0 has 2 - 0.0? left.
    // j0 at t=2 has 4 - 2 = 2 left, gets 3/4 -> done at 2 + 8/3; j1 gets 1/4
    // over 8/3 (2/3 done), then alone: 4 - 2/3 left -> 14/3 + 10/3 = 8.
    let mut jobs = vec![Job::new(0.0, 4.0, 1.0), Job::new(0.0, 4.0, 1.0)];
    jobs[0].weight = 3.0;
    close(&run(&jobs, Discipline::Psbs), &[2.0 + 8.0 / 3.0, 8.0]);
}

#[test]
fn psbs_equals_fspe_ps_with_unit_weights() {
    let jobs = weibull_workload(&WeibullSpec { njobs: 2_000, seed: 7, ..WeibullSpec::default() }).unwrap();
    let a = run(&jobs, Discipline::FspePs);
    let b = run(&jobs, Discipline::Psbs);
    assert_eq!(a, b);
}

/// Fig. 4.1 [L902–904]: J1 = 3, J2 = 2 at 0. Correct order (SRPT) 3.5; one
/// inversion (estimates swapped, SRPTE) 4.0; flapping, the limit of swapping
/// priority at every instant, is PS: 4.5.
#[test]
fn flapping_example_fig_4_1() {
    let correct = exact(&[(0.0, 3.0), (0.0, 2.0)]);
    assert!((mean_response(&correct, Discipline::Srpt) - 3.5).abs() < 1e-9);
    let inverted = vec![Job::new(0.0, 3.0, 2.0), Job::new(0.0, 2.0, 3.0)];
    assert!((mean_response(&inverted, Discipline::Srpte) - 4.0).abs() < 1e-9);
    assert!((mean_response(&inverted, Discipline::Fspe) - 4.0).abs() < 1e-9);
    assert!((mean_response(&correct, Discipline::Ps) - 4.5).abs() < 1e-9);
}

/// Fig. 4.4 [L1016–1022]: sizes 1 and 2 (2 / 2.5 / 2.5), 1 and 10 (6 / 10.5 / 6.5).
#[test]
fn inversion_examples_fig_4_4() {
    for (small, big, correct, swapped, ps) in [(1.0, 2.0, 2.0, 2.5, 2.5), (1.0, 10.0, 6.0, 10.5, 6.5)] {
        let jobs = exact(&[(0.0, small), (0.0, big)]);
        assert!((mean_response(&jobs, Discipline::Srpt) - correct).abs() < 1e-9);
        assert!((mean_response(&jobs, Discipline::Ps) - ps).abs() < 1e-9);
        let inv = vec![Job::new(0.0, small, big), Job::new(0.0, big, small)];
        assert!((mean_response(&inv, Discipline::Srpte) - swapped).abs() < 1e-9);
    }
}

/// Fig. 4.2 [L913], aging on one slot: J1 = 3, J2 = 4 at 0; J3 = 3 arrives
/// at 3. At t = 3 the virtual PS has served 1.5 each: V(J2) = 2.5 < V(J3) = 3,
/// so J2 runs before J3 although J3 is smaller. J1 done@3, J2@7, J3@10; J1
/// stays in the virtual system until 7.5.
#[test]
fn aging_example_fig_4_2() {
    let jobs = exact(&[(0.0, 3.0), (0.0, 4.0), (3.0, 3.0)]);
    close(&run(&jobs, Discipline::Fsp), &[3.0, 7.0, 10.0]);
    let mut f = Fsp::new(LatePolicy::Serial);
    f.enqueue(0.0, 0, 3.0, 1.0);
    f.enqueue(0.0, 1, 4.0, 1.0);
    f.advance(3.0);
    f.dequeue(3.0, 0);
    f.enqueue(3.0, 2, 3.0, 1.0);
    let v = f.virtual_system();
    assert!((v.remaining(0) - 1.5).abs() < 1e-12 && (v.remaining(1) - 2.5).abs() < 1e-12);
    assert_eq!(f.schedule(3.0), vec![(1, 1.0)]);
    assert!((f.next_internal().unwrap() - 7.5).abs() < 1e-12);
    // SRPT would have served J3 first.
    close(&run(&jobs, Discipline::Srpt), &[3.0, 10.0, 6.0]);
}

#[test]
fn gamma_matches_known_values() {
    assert!((gamma(5.0) - 24.0).abs() < 1e-10);
    assert!((gamma(0.5) - std::f64::consts::PI.sqrt()).abs() < 1e-12);
    assert!((gamma(9.0) - 40320.0).abs() < 1e-7);
}

#[test]
fn weibull_workload_has_the_target_load_and_unit_mean() {
    let spec = WeibullSpec { njobs: 20_000, shape: 1.0, ..WeibullSpec::default() };
    let jobs = weibull_workload(&spec).unwrap();
    let total: f64 = jobs.iter().map(|j| j.size).sum();
    assert!((total / jobs.last().unwrap().arrival - 0.9).abs() < 1e-9);
    assert!((total / jobs.len() as f64 - 1.0).abs() < 0.03);
    assert!(jobs.windows(2).all(|w| w[0].arrival <= w[1].arrival));
    // Median of LogNormal(0, 0.5) error is 1.
    let mut e: Vec<f64> = jobs.iter().map(|j| j.estimate / j.size).collect();
    e.sort_by(f64::total_cmp);
    assert!((e[e.len() / 2] - 1.0).abs() < 0.03);
}

#[test]
fn every_discipline_finishes_every_job_and_conserves_work() {
    let jobs = weibull_workload(&WeibullSpec { njobs: 3_000, seed: 3, ..WeibullSpec::default() }).unwrap();
    let total: f64 = jobs.iter().map(|j| j.size).sum();
    for d in Discipline::ALL {
        let c = run(&jobs, d);
        assert!(c.iter().zip(&jobs).all(|(c, j)| c.is_finite() && *c >= j.arrival + j.size * (1.0 - 1e-6)), "{d}");
        // Work-conserving: the server is never idle while jobs wait, so the
        // last completion is the same for every discipline.
        let last = c.iter().copied().fold(0.0, f64::max);
        let fifo_last = run(&jobs, Discipline::Fifo).into_iter().fold(0.0, f64::max);
        assert!((last - fifo_last).abs() < 1e-6 * fifo_last, "{d}: {last} vs {fifo_last}");
        assert!(last >= total);
    }
}

#[test]
fn srpt_is_optimal_and_fsp_never_later_than_ps() {
    let jobs = weibull_workload(&WeibullSpec { njobs: 3_000, seed: 5, ..WeibullSpec::default() }).unwrap();
    let r = compare(&jobs, &Discipline::ALL);
    let srpt = r.iter().find(|s| s.discipline == "SRPT").unwrap().mean_sojourn;
    assert!(r.iter().all(|s| s.mean_sojourn >= srpt * (1.0 - 1e-9)));
    let ps = run(&jobs, Discipline::Ps);
    let fsp = run(&jobs, Discipline::Fsp);
    assert!(fsp.iter().zip(&ps).all(|(f, p)| *f <= p + 1e-6 * p.abs().max(1.0)));
}

#[test]
fn discipline_names_parse() {
    assert_eq!("fspe+ps".parse::<Discipline>().unwrap(), Discipline::FspePs);
    assert_eq!("FSPE_PS".parse::<Discipline>().unwrap(), Discipline::FspePs);
    assert_eq!("srpte".parse::<Discipline>().unwrap(), Discipline::Srpte);
    assert!("sjf".parse::<Discipline>().unwrap_err().contains("FSPE+PS"));
}

/// Table 3.1 defaults (σ 0.5, shape 0.25, 10,000 jobs, load 0.9), over
/// three seeds: FSPE+PS no worse than PS on mean sojourn (summed over the
/// seeds), and its slowdown tail far below FSPE's and SRPTE's.
#[test]
fn table_3_1_default_setting() {
    let (mut fspe_ps, mut ps) = (0.0, 0.0);
    let (mut tail_fspe_ps, mut tail_fspe, mut tail_srpte) = (0.0, 0.0, 0.0);
    for seed in 1..=3 {
        let jobs = weibull_workload(&WeibullSpec { seed, ..WeibullSpec::default() }).unwrap();
        let r = compare(&jobs, &[Discipline::Ps, Discipline::FspePs, Discipline::Fspe, Discipline::Srpte]);
        ps += r[0].mean_sojourn;
        fspe_ps += r[1].mean_sojourn;
        tail_fspe_ps += r[1].slowdown_p999;
        tail_fspe += r[2].slowdown_p999;
        tail_srpte += r[3].slowdown_p999;
        assert_eq!(r[1].frac_slowdown_over_100, 0.0, "seed {seed}: {:?}", r[1]);
    }
    assert!(fspe_ps <= ps, "FSPE+PS {fspe_ps} vs PS {ps}");
    assert!(tail_fspe_ps * 5.0 < tail_fspe, "p99.9 slowdown: FSPE+PS {tail_fspe_ps} vs FSPE {tail_fspe}");
    assert!(tail_fspe_ps * 5.0 < tail_srpte, "p99.9 slowdown: FSPE+PS {tail_fspe_ps} vs SRPTE {tail_srpte}");
}
