//! Simulation against Pigeon's queueing model (pigeon.md §2, Figs 3–4,
//! L158–160): Poisson job arrivals, F exponential tasks of mean T_e = 100
//! ms, d = 0.5 ms one way, every group an M/M/N_w queue at load ρ. The
//! fraction of zero-wait jobs (completion − longest task ≤ 2d: the batch to
//! the master and the task to the worker; the host ends a job when its last
//! container does, without the paper's third delay back to the
//! distributor) is compared with eq. (6), and the mean job wait (completion
//! − longest task) with T_q + 2d (L158: wait = queueing + communication).
//!
//! **Smaller than the paper's setting**: N_c = 30,000, F = 100 there; here
//! N_g = 20 groups of N_w ∈ {50, 100, 200} (N_c = 1,000–4,000) and F = 20,
//! so that, as in the paper, a job sends at most one task to a master
//! (F ≤ N_g) and each master sees Poisson task arrivals; eq. (6) does not
//! depend on F or N_g. 20,000 jobs per case, the first 2,000 left out as
//! warm-up; about 15 s in release on a shared 2-core machine (F = 100 on
//! 100 groups, 5,000 jobs a case, took 80 s and was noisier). Durations are
//! whole milliseconds (the simulator's clock). The model is evaluated at
//! the load the sample offered (its task time over N_c × its span), which
//! a finite Poisson sample puts up to ~1.5 % off the target.
//!
//! **The paper's full setting** (N_c = 30,000 for every N_w, F = 100) runs
//! with the same test and the same bounds:
//!
//! ```text
//! PIGEON_MODEL=full cargo test --release -p sojourn-sim --test pigeon_model -- --nocapture
//! ```
//!
//! `PIGEON_MODEL_JOBS=n` (default 20,000; a tenth is warm-up) and
//! `PIGEON_MODEL_POINTS=50:0.8,200:0.9` (N_w:load; default all six) narrow
//! it; integration/results/pigeon.md has its figures and run time.

use sojourn_core::{Phase, Priority, Resources, Rng, Time};
use sojourn_policies::pigeon::analysis::{mean_queueing, p_job_exponential};
use sojourn_sim::engine::{simulate, SimConfig};
use sojourn_sim::workload::{ClusterSpec, JobSpec, TaskGroup};
use std::collections::BTreeMap;

const T_E_MS: f64 = 100.0;

/// One simulation setting: the CI one or the paper's (`PIGEON_MODEL`).
#[derive(Clone, Debug)]
struct Setting {
    /// `Some(n)`: N_c = n for every N_w; `None`: 20 groups of N_w.
    cluster: Option<u32>,
    fanout: usize,
    jobs: usize,
    warm_up: usize,
    points: Vec<(u32, f64)>,
}

const POINTS: [(u32, f64); 6] = [(50, 0.8), (100, 0.8), (200, 0.8), (50, 0.9), (100, 0.9), (200, 0.9)];

/// The setting from the environment; a malformed variable is an error
/// naming it.
fn setting() -> Result<Setting, String> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let full = match var("PIGEON_MODEL").as_deref() {
        None | Some("ci") => false,
        Some("full") => true,
        Some(v) => return Err(format!("PIGEON_MODEL={v}: expected ci or full")),
    };
    let jobs = match var("PIGEON_MODEL_JOBS") {
        None => 20_000,
        Some(v) => v
            .parse::<usize>()
            .ok()
            .filter(|n| *n >= 100)
            .ok_or(format!("PIGEON_MODEL_JOBS={v}: expected a job count of at least 100"))?,
    };
    let points = match var("PIGEON_MODEL_POINTS") {
        None => POINTS.to_vec(),
        Some(v) => v
            .split(',')
            .map(|pt| {
                let (n, r) = pt.split_once(':')?;
                let (n, r) = (n.trim().parse::<u32>().ok()?, r.trim().parse::<f64>().ok()?);
                (n >= 1 && r > 0.0 && r < 1.0).then_some((n, r))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or(format!("PIGEON_MODEL_POINTS={v}: expected N_w:load pairs such as 50:0.8,200:0.9"))?,
    };
    Ok(Setting {
        cluster: full.then_some(30_000),
        fanout: if full { 100 } else { 20 },
        jobs,
        warm_up: jobs / 10,
        points,
    })
}
/// Largest gap allowed between simulated and modelled P_job(0) (absolute;
/// measured: at most 0.036, at N_w = 50 and 90 %; the paper: < 1 %).
const P_TOL: f64 = 0.04;

/// Largest relative gap allowed on the mean wait (measured: ≤ 15 % from
/// N_w = 100 on, +17 % and +42 % at N_w = 50, where the paper saw its
/// largest gap, ~12 %, also with the simulation higher). A job waits for
/// the latest of its F tasks, not one task, so the job's wait is above
/// T_q (L141 takes them as equal); the gap grows with the share of tasks
/// that queue, largest for small groups at high load.
fn wait_tol(n_w: u32) -> f64 {
    if n_w >= 100 {
        0.2
    } else {
        0.5
    }
}

/// Poisson arrivals at `jobs_per_s`, F exponential tasks each.
fn workload(set: &Setting, seed: u64, jobs_per_s: f64) -> Vec<JobSpec> {
    let mut rng = Rng::seeded(seed);
    let mut t_ms = 0.0;
    (0..set.jobs)
        .map(|i| {
            t_ms += rng.exponential(1000.0 / jobs_per_s);
            let durations_ms = (0..set.fanout).map(|_| (rng.exponential(T_E_MS).round() as u64).max(1)).collect();
            JobSpec {
                id: i as u64,
                name: format!("job{i}"),
                submit: Time(t_ms.round() as u64),
                queue: "default".into(),
                user: "u".into(),
                priority: 0,
                groups: vec![TaskGroup {
                    phase: Phase::Map,
                    priority: Priority::MAP,
                    resources: Resources::new(1024, 1),
                    durations_ms,
                    hosts: vec![],
                }],
                deadline: None,
                value: None,
                dag: None,
            }
        })
        .collect()
}

/// (fraction of zero-wait jobs, mean wait in ms, the load the sample
/// offered: its task time over N_c × its span) after the warm-up, and the
/// mean time a task waited at its master (every task, warm-up included:
/// what eq. (2)'s T_q models, before a job's max over its tasks).
fn run(set: &Setting, n_w: u32, rho: f64) -> (f64, f64, f64, f64) {
    let n_c = set.cluster.unwrap_or(20 * n_w) as usize;
    // ρ = λF·T_e / N_c
    let jobs_per_s = rho * n_c as f64 / (set.fanout as f64 * T_E_MS / 1000.0);
    let jobs = workload(set, u64::from(n_w) * 10 + (rho * 10.0) as u64, jobs_per_s);
    let span_ms = jobs.last().map_or(1, |j| j.submit.ms()).max(1) as f64;
    let work_ms: u64 = jobs.iter().map(|j| j.work_ms()).sum();
    let offered = work_ms as f64 / (n_c as f64 * span_ms);
    let cluster = ClusterSpec::uniform(n_c, Resources::new(1024, 1), 40);
    let params = BTreeMap::from([
        ("workers_per_group".to_string(), n_w.to_string()),
        ("reserved_pct".to_string(), "0".to_string()),
    ]);
    let cfg =
        SimConfig { policy: "pigeon".into(), params, heartbeat_ms: 0, sample_ms: 3_600_000, ..SimConfig::default() };
    let stream = Box::new(jobs.into_iter().map(Ok));
    let r = simulate(&cluster, stream, "poisson", &cfg, None).expect("simulation");
    let task_queueing = r.policy_metrics.flat().get("queue_delay_ms.mean").copied().unwrap_or(f64::NAN);
    assert_eq!((r.jobs.len(), r.unfinished), (set.jobs, 0));
    let mut jobs = r.jobs;
    jobs.sort_by_key(|j| j.id);
    let kept = &jobs[set.warm_up..];
    let waits: Vec<u64> = kept.iter().map(|j| j.response_ms().saturating_sub(j.ideal_ms)).collect();
    let zero = waits.iter().filter(|w| **w <= 1).count() as f64 / waits.len() as f64;
    let mean = waits.iter().sum::<u64>() as f64 / waits.len() as f64;
    (zero, mean, offered, task_queueing)
}

#[test]
fn simulation_agrees_with_the_model() {
    let set = match setting() {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    let mut report = format!(
        "N_c {}, F {}, {} jobs a case ({} warm-up)\n",
        set.cluster.map_or("20 × N_w".to_string(), |n| n.to_string()),
        set.fanout,
        set.jobs,
        set.warm_up
    );
    let mut cases = Vec::new();
    for &(n_w, rho) in &set.points {
        // the model at the load the sample offered (the target ± the
        // Poisson sample's own noise)
        let started = std::time::Instant::now();
        let (zero, wait, offered, task_q) = run(&set, n_w, rho);
        let p = p_job_exponential(n_w, offered);
        let t_q = mean_queueing(n_w, offered, T_E_MS);
        let t_w = t_q + 1.0;
        // printed only: a worker is held T_e + 2d per task (the idle notice
        // and the next dispatch, 1 ms), so its M/M/N_w load is ρ(T_e+2d)/T_e
        let rho_held = offered * (T_E_MS + 1.0) / T_E_MS;
        let (p_held, t_q_held) = (p_job_exponential(n_w, rho_held), mean_queueing(n_w, rho_held, T_E_MS + 1.0));
        report.push_str(&format!(
            "N_w {n_w:>3} ρ {rho} (offered {offered:.4}): P_job(0) sim {zero:.4} model {p:.4}; \
             wait sim {wait:.3} ms model {t_w:.3} ms ({:+.1} %); task at its master {task_q:.3} ms, \
             T_q {t_q:.3} ms; model at ρ(T_e+2d)/T_e: P_job(0) {p_held:.4}, T_q {t_q_held:.3} ms, \
             wait {:.3} ms; {:.0} s\n",
            (wait / t_w - 1.0) * 100.0,
            t_q_held + 1.0,
            started.elapsed().as_secs_f64()
        ));
        eprint!("{}", report.lines().last().map_or(String::new(), |l| format!("{l}\n")));
        cases.push((n_w, zero, p, wait, t_w));
    }
    println!("{report}");
    // bounds: see the module doc and integration/results/pigeon.md
    for (n_w, zero, p, wait, t_w) in cases {
        assert!((zero - p).abs() <= P_TOL, "P_job(0) off by more than {P_TOL}:\n{report}");
        let tol = wait_tol(n_w);
        assert!((wait - t_w).abs() <= tol * t_w, "mean wait off by more than {tol}:\n{report}");
        assert!(wait >= t_w * 0.95, "the simulated wait is not below the model's:\n{report}");
    }
}
