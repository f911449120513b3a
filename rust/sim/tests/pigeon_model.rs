//! Simulation against Pigeon's queueing model (pigeon.md §2, Figs 3–4,
//! L158–160) in the paper's setting: N_c = 30,000 one-slot workers in
//! groups of N_w ∈ {50, 100, 200}, Poisson job arrivals of F = 100
//! exponential tasks of mean T_e = 100 ms (whole milliseconds, the
//! simulator's clock), d = 0.5 ms one way, no reserved workers, loads 0.8
//! and 0.9; 20,000 jobs a case (2 M tasks), the first 2,000 left out as
//! warm-up; about 30 s in release.
//!
//! Asserted: the fraction of zero-wait jobs (completion − longest task ≤
//! 2d: the batch to the master and the task to the worker; the host ends a
//! job when its last container does, without the paper's third delay back
//! to the distributor) against eq. (6), and the mean job wait (completion −
//! longest task) against T_q + 2d (L158: wait = queueing + communication),
//! the two the paper compares (P_job(0) within 1 %, the wait within ~12 %).
//! Printed only: the fraction of tasks dispatched on arrival (eq. (1)'s
//! P_task(0)) and their mean wait at the master (eq. (2)'s T_q), over
//! every task: the policy's counters include the warm-up, when queues are
//! still short, and come out 1–3 points above the model at 90 %.
//!
//! **The model is evaluated at ρ' = ρ(T_e + 2d)/T_e with service time
//! T_e + 2d**: as its master sees it, a worker is busy from the dispatch
//! (the task's trip, d) until the idle notice arrives (d after the run), so
//! the M/M/N_w queue the masters are runs at ρ' = 1.01ρ, and at 90 % the
//! Erlang-C queue is steep in ρ. The paper's own evaluation (at ρ, T_e) is
//! printed in brackets: the job wait is then 20–38 % above it at N_w = 50
//! and 90 %, where the paper saw ~12 %. Each sample's arrival times are
//! scaled so that it offers exactly ρ (see `workload`).
//!
//! `PIGEON_MODEL_JOBS=n` (default 20,000; a tenth is warm-up) and
//! `PIGEON_MODEL_POINTS=50:0.8,200:0.9` (N_w:load; default all six) narrow
//! it; integration/results/pigeon.md has its figures.

mod common;

use sojourn_core::{Resources, Rng, Time};
use sojourn_policies::pigeon::analysis::{mean_queueing, p_job_exponential, p_task_zero};
use sojourn_sim::engine::{simulate, SimConfig};
use sojourn_sim::workload::{ClusterSpec, JobSpec};
use std::collections::BTreeMap;

const T_E_MS: f64 = 100.0;
/// The communication delay one way (pigeon's `delay_us` default).
const D_MS: f64 = 0.5;
/// How long a task holds a worker as its master sees it: the task's trip
/// to the worker (d), its run, the idle notice back (d).
const HELD_MS: f64 = T_E_MS + 2.0 * D_MS;
/// The paper's cluster and fan-out (§2, Fig 3).
const N_C: usize = 30_000;
const FANOUT: usize = 100;

/// The cases to run: the paper's, or fewer (`PIGEON_MODEL_*`).
#[derive(Clone, Debug)]
struct Setting {
    jobs: usize,
    warm_up: usize,
    points: Vec<(u32, f64)>,
}

const POINTS: [(u32, f64); 6] = [(50, 0.8), (100, 0.8), (200, 0.8), (50, 0.9), (100, 0.9), (200, 0.9)];

/// The setting from the environment; a malformed variable is an error
/// naming it.
fn setting() -> Result<Setting, String> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
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
    Ok(Setting { jobs, warm_up: jobs / 10, points })
}
/// Largest gap allowed between simulated and modelled P_job(0), absolute
/// (the paper: within 1 %).
const P_JOB_TOL: f64 = 0.015;
/// How far the mean job wait may fall below and rise above T_q + 2d,
/// relative. Above more than below: a job waits for the latest of its F
/// tasks, not one task (L141 takes them as equal), which the paper also
/// saw as the simulation higher (~12 % at N_w = 50, 90 %).
const WAIT_BELOW: f64 = 0.05;
const WAIT_ABOVE: f64 = 0.15;

/// Poisson arrivals at `jobs_per_s`, F exponential tasks each, the
/// arrival times then scaled so that the sample offers exactly `rho`
/// (its task time over N_c × its span): a finite Poisson sample is
/// otherwise up to ~1.5 % off its rate, and at 90 % the Erlang-C queue is
/// steep in ρ (T_q rises by a third from ρ = 0.897 to 0.906).
fn workload(set: &Setting, seed: u64, rho: f64) -> Vec<JobSpec> {
    let jobs_per_s = rho * N_C as f64 / (FANOUT as f64 * T_E_MS / 1000.0);
    let mut rng = Rng::seeded(seed);
    let mut t_ms = 0.0;
    let drawn: Vec<(f64, Vec<u64>)> = (0..set.jobs)
        .map(|_| {
            t_ms += rng.exponential(1000.0 / jobs_per_s);
            (t_ms, (0..FANOUT).map(|_| (rng.exponential(T_E_MS).round() as u64).max(1)).collect())
        })
        .collect();
    let work_ms: u64 = drawn.iter().flat_map(|(_, d)| d.iter()).sum();
    let span_ms = drawn.last().map_or(1.0, |(t, _)| *t);
    let scale = work_ms as f64 / (N_C as f64 * span_ms) / rho;
    drawn
        .into_iter()
        .enumerate()
        .map(|(i, (t_ms, durations_ms))| common::map_job(i as u64, Time((t_ms * scale).round() as u64), durations_ms))
        .collect()
}

/// What one case measured, after the warm-up unless said.
struct Measured {
    /// The fraction of jobs that waited at most 2d.
    p_job_zero: f64,
    /// The mean job wait (completion − longest task), ms.
    job_wait_ms: f64,
    /// The load the sample offered (its task time over N_c × its span).
    offered: f64,
    /// The fraction of tasks dispatched on arrival (every task, warm-up
    /// included: eq. (1)'s P_task(0)).
    p_task_zero: f64,
    /// The mean time a task waited at its master (every task: what eq.
    /// (2)'s T_q models, before a job's max over its tasks), ms.
    task_wait_ms: f64,
}

fn run(set: &Setting, n_w: u32, rho: f64) -> Measured {
    let jobs = workload(set, u64::from(n_w) * 10 + (rho * 10.0) as u64, rho);
    let span_ms = jobs.last().map_or(1, |j| j.submit.ms()).max(1) as f64;
    let work_ms: u64 = jobs.iter().map(|j| j.work_ms()).sum();
    let offered = work_ms as f64 / (N_C as f64 * span_ms);
    let cluster = ClusterSpec::uniform(N_C, Resources::new(1024, 1), 40);
    let params = BTreeMap::from([
        ("workers_per_group".to_string(), n_w.to_string()),
        ("reserved_pct".to_string(), "0".to_string()),
    ]);
    let cfg =
        SimConfig { policy: "pigeon".into(), params, heartbeat_ms: 0, sample_ms: 3_600_000, ..SimConfig::default() };
    let stream = Box::new(jobs.into_iter().map(Ok));
    let r = simulate(&cluster, stream, "poisson", &cfg, None).expect("simulation");
    let flat = r.policy_metrics.flat();
    // a counter that never counted is absent
    let count = |k: &str| flat.get(k).copied().unwrap_or(0.0);
    let queued = count("queued_short") + count("queued_long");
    let tasks = count("short_tasks") + count("long_tasks");
    assert!(tasks > 0.0, "pigeon reported no tasks: {flat:?}");
    assert_eq!((r.jobs.len(), r.unfinished), (set.jobs, 0));
    let mut jobs = r.jobs;
    jobs.sort_by_key(|j| j.id);
    let kept = &jobs[set.warm_up..];
    let waits: Vec<u64> = kept.iter().map(|j| j.response_ms().saturating_sub(j.ideal_ms)).collect();
    Measured {
        p_job_zero: waits.iter().filter(|w| **w <= 1).count() as f64 / waits.len() as f64,
        job_wait_ms: waits.iter().sum::<u64>() as f64 / waits.len() as f64,
        offered,
        p_task_zero: 1.0 - queued / tasks,
        task_wait_ms: flat.get("queue_delay_ms.mean").copied().unwrap_or(f64::NAN),
    }
}

#[test]
fn simulation_agrees_with_the_model() {
    let set = match setting() {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    let mut report = format!(
        "N_c {}, F {}, {} jobs a case ({} warm-up); model at ρ' = ρ(T_e + 2d)/T_e with T_e + 2d = {HELD_MS} ms \
         (the paper's, at ρ and T_e, in brackets)\n",
        N_C, FANOUT, set.jobs, set.warm_up
    );
    let mut failures = Vec::new();
    for &(n_w, rho) in &set.points {
        let started = std::time::Instant::now();
        let m = run(&set, n_w, rho);
        let held = m.offered * HELD_MS / T_E_MS;
        let (p_task, t_q) = (p_task_zero(n_w, held), mean_queueing(n_w, held, HELD_MS));
        let (p_job, wait) = (p_job_exponential(n_w, held), t_q + 2.0 * D_MS);
        let paper = (p_job_exponential(n_w, m.offered), mean_queueing(n_w, m.offered, T_E_MS) + 2.0 * D_MS);
        let line = format!(
            "N_w {n_w:>3} ρ {rho} (offered {:.4}): every task, warm-up included: P_task(0) sim {:.4} model \
             {p_task:.4}, wait at its master sim {:.3} ms model T_q {t_q:.3} ms; P_job(0) sim {:.4} model {p_job:.4} [{:.4}]; job wait sim {:.3} ms model \
             T_q + 2d {wait:.3} ms ({:+.1} %) [{:.3} ms, {:+.1} %]; {:.0} s",
            m.offered,
            m.p_task_zero,
            m.task_wait_ms,
            m.p_job_zero,
            paper.0,
            m.job_wait_ms,
            (m.job_wait_ms / wait - 1.0) * 100.0,
            paper.1,
            (m.job_wait_ms / paper.1 - 1.0) * 100.0,
            started.elapsed().as_secs_f64()
        );
        eprintln!("{line}");
        report.push_str(&line);
        report.push('\n');
        if (m.p_job_zero - p_job).abs() > P_JOB_TOL {
            failures.push(format!("N_w {n_w} ρ {rho}: P_job(0) off by more than {P_JOB_TOL}"));
        }
        if m.job_wait_ms < wait * (1.0 - WAIT_BELOW) || m.job_wait_ms > wait * (1.0 + WAIT_ABOVE) {
            failures.push(format!("N_w {n_w} ρ {rho}: mean job wait outside −{WAIT_BELOW}/+{WAIT_ABOVE} of the model"));
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{}\n{report}", failures.join("\n"));
}
