//! The GS_MIX- and GS_HET-shaped SLO workloads of tetrisched.md §5, shared by the
//! simulator test `tests/tetrisched.rs` and the experiment in
//! `benches/tetrisched.rs`.

#[path = "mod.rs"]
mod jobs;

use sojourn_core::{Resources, Rng, Time};
use sojourn_policies::rayon::admission::{Admission, AdmissionConfig};
use sojourn_sim::engine::{simulate, SimConfig};
use sojourn_sim::run::RunResult;
use sojourn_sim::workload::estimate_error::EstimateError;
use sojourn_sim::workload::{ClusterSpec, JobSpec, JobStream};
use std::collections::{BTreeMap, BTreeSet};

/// A GS_MIX-shaped workload (Table 1: 70% SLO, 30% BE, unconstrained
/// [L301–L307]; parameters per §5.8/A13 as the paper gives none): rigid
/// gangs of k ∈ {1..4} one-slot tasks of one duration d ∈ U[10, 60] s,
/// Poisson arrivals at `load` of `nodes` slots; an SLO job's deadline is
/// submit + U[1.5, 3] × d; its value is left to the policy (tetrisched:
/// 1000 if Rayon's admission accepts it, 25 if not, §3.2).
pub fn gs_mix(jobs: u64, nodes: usize, load: f64, seed: u64) -> Vec<JobSpec> {
    generate(jobs, nodes, load, seed, 0.7, false)
}

/// A GS_HET-shaped workload (Table 1: 75% SLO, 25% BE; the SLO jobs half
/// GPU, half MPI, the BE jobs unconstrained [L357]) with [`gs_mix`]'s k, d,
/// deadline slack and arrivals. A job's type is in its name, as the
/// policy and the simulator's slowdown read it: `gpu<id>`, `mpi<id>`,
/// `be<id>`. `load` counts the trace durations: runs slowed off their
/// preferred nodes (`SimConfig::placement_slowdown`) add to it.
#[allow(dead_code)] // each test binary compiles this module; not all use it
pub fn gs_het(jobs: u64, nodes: usize, load: f64, seed: u64) -> Vec<JobSpec> {
    generate(jobs, nodes, load, seed, 0.75, true)
}

/// `slo_share` of the jobs are SLO jobs; `typed`: each is a GPU or an MPI
/// job with even odds (one more draw per job, after gs_mix's, so gs_mix's
/// jobs are unchanged).
fn generate(jobs: u64, nodes: usize, load: f64, seed: u64, slo_share: f64, typed: bool) -> Vec<JobSpec> {
    let mut rng = Rng::seeded(seed);
    let mean_work_s = 2.5 * 35.0; // E[k] · E[d]
    let interarrival_s = mean_work_s / (nodes as f64 * load);
    let mut t = 0.0;
    (0..jobs)
        .map(|id| {
            t += rng.exponential(interarrival_s);
            let k = 1 + rng.below(4) as usize;
            let d_ms = (10_000.0 + rng.next_f64() * 50_000.0).round() as u64;
            let slo = rng.next_f64() < slo_share;
            let slack = 1.5 + rng.next_f64() * 1.5;
            let kind = match (slo, typed) {
                (false, _) => "be",
                (true, false) => "slo",
                (true, true) if rng.next_f64() < 0.5 => "gpu",
                (true, true) => "mpi",
            };
            let submit = Time::from_secs_f64(t);
            let deadline = slo.then(|| submit.plus((d_ms as f64 * slack).round() as u64));
            gang_job(id, &format!("{kind}{id}"), submit, k, d_ms, deadline)
        })
        .collect()
}

/// A GR_MIX-shaped workload (tetrisched.md §5.2, Table 1: 52% SLO, 48% BE,
/// all unconstrained). The paper draws its SLO jobs from SWIM's `fb2009_2`
/// job class and its BE jobs from `yahoo_1`, "with sizes that fit on our
/// RC256 cluster" [L355], and gives neither class's parameters. Our reading:
/// each SLO job's (k, d) is drawn from the jobs of the shipped SWIM FB-2009
/// day (`swim/FB-2009_samples_24_times_1hr_0.tsv`, its map phase through the
/// simulator's bytes-to-tasks model), each BE job's from the shipped Yahoo
/// trace (`eagle/YH2_sub.tr`, Eagle's Yahoo 2011 sample), keeping the jobs
/// that fit: k ≤ `max_k` tasks and a mean task time d of 1 s to `max_d_s`.
/// A job is a rigid gang of k one-slot tasks of d each, as in [`gs_mix`];
/// Poisson arrivals at `load` of `nodes` slots (the mixture's mean k·d);
/// an SLO job's deadline is submit + U[1.5, 3] × d.
#[allow(dead_code)] // each test binary compiles this module; not all use it
pub fn gr_mix(jobs: u64, nodes: usize, load: f64, seed: u64, max_k: usize, max_d_s: u64) -> Vec<JobSpec> {
    gr(jobs, nodes, load, seed, 0.52, max_k, max_d_s)
}

/// GR_SLO: [`gr_mix`]'s SLO jobs only (Table 1: 100% SLO, fb2009_2 [L355]).
#[allow(dead_code)] // each test binary compiles this module; not all use it
pub fn gr_slo(jobs: u64, nodes: usize, load: f64, seed: u64, max_k: usize, max_d_s: u64) -> Vec<JobSpec> {
    gr(jobs, nodes, load, seed, 1.0, max_k, max_d_s)
}

/// (k, d ms) of each job of the shipped trace `rel` whose first phase fits.
#[allow(dead_code)] // each test binary compiles this module; not all use it
pub fn trace_pool(rel: &str, max_k: usize, max_d_s: u64) -> Vec<(usize, u64)> {
    let path = format!("{}/../../../shared/traces/{rel}", env!("CARGO_MANIFEST_DIR"));
    let stream = sojourn_sim::workload::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    stream
        .map(|j| j.unwrap_or_else(|e| panic!("{path}: {e}")))
        .filter_map(|j| {
            let g = j.groups.first()?;
            let k = g.durations_ms.len();
            let d = g.durations_ms.iter().sum::<u64>() / k.max(1) as u64;
            (k >= 1 && k <= max_k && (1000..=max_d_s * 1000).contains(&d)).then_some((k, d))
        })
        .collect()
}

fn gr(jobs: u64, nodes: usize, load: f64, seed: u64, slo_share: f64, max_k: usize, max_d_s: u64) -> Vec<JobSpec> {
    let slo_pool = trace_pool("swim/FB-2009_samples_24_times_1hr_0.tsv", max_k, max_d_s);
    let be_pool = trace_pool("eagle/YH2_sub.tr", max_k, max_d_s);
    let mean_work_s = |pool: &[(usize, u64)]| {
        pool.iter().map(|&(k, d)| k as f64 * d as f64 / 1000.0).sum::<f64>() / pool.len().max(1) as f64
    };
    let mean_work = slo_share * mean_work_s(&slo_pool) + (1.0 - slo_share) * mean_work_s(&be_pool);
    let interarrival_s = mean_work / (nodes as f64 * load);
    let mut rng = Rng::seeded(seed);
    let mut t = 0.0;
    (0..jobs)
        .map(|id| {
            t += rng.exponential(interarrival_s);
            let slo = rng.next_f64() < slo_share;
            let pool = if slo { &slo_pool } else { &be_pool };
            let (k, d_ms) = pool[rng.below(pool.len() as u64) as usize];
            let slack = 1.5 + rng.next_f64() * 1.5;
            let submit = Time::from_secs_f64(t);
            let deadline = slo.then(|| submit.plus((d_ms as f64 * slack).round() as u64));
            gang_job(id, &format!("{}{id}", if slo { "slo" } else { "be" }), submit, k, d_ms, deadline)
        })
        .collect()
}

/// Job `id` named `name` (its type, as the policy reads it): a rigid gang
/// of `k` one-slot map tasks of `d_ms` each, with an SLO `deadline` or none.
pub fn gang_job(id: u64, name: &str, submit: Time, k: usize, d_ms: u64, deadline: Option<Time>) -> JobSpec {
    JobSpec { name: name.into(), deadline, ..jobs::map_job(id, submit, vec![d_ms; k]) }
}

pub fn run(policy: &str, params: &[(&str, &str)], nodes: usize, jobs: &[JobSpec]) -> RunResult {
    run_mis_estimated(policy, params, nodes, jobs, 1.0)
}

/// [`run`] with every job's estimate × `factor` (§5.5's estimate error
/// 1 + e), the true durations unchanged.
pub fn run_mis_estimated(
    policy: &str,
    params: &[(&str, &str)],
    nodes: usize,
    jobs: &[JobSpec],
    factor: f64,
) -> RunResult {
    run_on(&ClusterSpec::uniform(nodes, Resources::new(1024, 1), 10), policy, params, jobs, factor, None)
}

/// RC80-shaped (A12): `nodes` one-slot nodes in racks of `per_rack`, the
/// first `gpu_racks` racks' nodes with a GPU in their capacity (which both
/// the policy and the simulator's slowdown read as GPU nodes).
#[allow(dead_code)] // each test binary compiles this module; not all use it
pub fn het_cluster(nodes: usize, per_rack: usize, gpu_racks: usize) -> ClusterSpec {
    let mut c = ClusterSpec::uniform(nodes, Resources::new(1024, 1), per_rack);
    for n in c.nodes.iter_mut().take(per_rack * gpu_racks) {
        n.capacity = n.capacity.with_gpus(1);
    }
    c
}

/// [`run_mis_estimated`] on `cluster` with a task σ = `slowdown` × slower
/// off its job's preferred nodes (`SimConfig::placement_slowdown`).
#[allow(dead_code)] // each test binary compiles this module; not all use it
pub fn run_het(
    cluster: &ClusterSpec,
    policy: &str,
    params: &[(&str, &str)],
    jobs: &[JobSpec],
    factor: f64,
    slowdown: f64,
) -> RunResult {
    run_on(cluster, policy, params, jobs, factor, Some(slowdown))
}

/// A run on `cluster` with every estimate × `factor` and, if given, a task
/// σ = `slowdown` × slower off its job's preferred nodes.
pub fn run_on(
    cluster: &ClusterSpec,
    policy: &str,
    params: &[(&str, &str)],
    jobs: &[JobSpec],
    factor: f64,
    slowdown: Option<f64>,
) -> RunResult {
    run_with(cluster, jobs, &config(policy, params, factor, slowdown))
}

/// [`run_on`]'s configuration: event-driven, invariants checked.
pub fn config(policy: &str, params: &[(&str, &str)], factor: f64, slowdown: Option<f64>) -> SimConfig {
    SimConfig {
        policy: policy.into(),
        params: params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>(),
        heartbeat_ms: 0,
        check_invariants: true,
        estimate_error: (factor != 1.0).then_some(EstimateError { lo: factor, hi: factor, seed: 0 }),
        placement_slowdown: slowdown,
        ..SimConfig::default()
    }
}

/// `jobs` on `cluster` under `cfg`.
pub fn run_with(cluster: &ClusterSpec, jobs: &[JobSpec], cfg: &SimConfig) -> RunResult {
    let owned: Vec<JobSpec> = jobs.to_vec();
    let stream: JobStream = Box::new(owned.into_iter().map(Ok));
    simulate(cluster, stream, "gs_mix", cfg, None).expect("run")
}

/// (SLO attainment %, SLO jobs, mean BE latency s, BE jobs, makespan s).
pub fn figures(jobs: &[JobSpec], r: &RunResult) -> (f64, usize, f64, usize, f64) {
    let spec: BTreeMap<u64, &JobSpec> = jobs.iter().map(|j| (j.id, j)).collect();
    let (mut met, mut be, mut be_s) = (0, 0, 0.0);
    for j in &r.jobs {
        match spec.get(&j.id).and_then(|s| s.deadline) {
            Some(d) => met += usize::from(j.finish <= d),
            None => {
                be += 1;
                be_s += j.response_ms() as f64 / 1000.0;
            }
        }
    }
    // Jobs that never finished count as misses (A21).
    let slo_all = jobs.iter().filter(|j| j.deadline.is_some()).count();
    let be_all = jobs.len() - slo_all;
    let makespan = r.jobs.iter().map(|j| j.finish.as_secs_f64()).fold(0.0, f64::max);
    (100.0 * met as f64 / slo_all.max(1) as f64, slo_all, be_s / be.max(1) as f64, be_all, makespan)
}

/// The SLO jobs Rayon's admission accepts (the default plan of the `rayon`
/// policy, shared by `tetrisched`) on `nodes` one-slot nodes with every
/// estimate × `factor`: replayed here in submit order as the policies
/// decide, so the metrics can split accepted from not accepted (§5.4).
pub fn accepted(jobs: &[JobSpec], nodes: usize, factor: f64) -> BTreeSet<u64> {
    let mut plan = Admission::new(AdmissionConfig::default());
    let mut order: Vec<&JobSpec> = jobs.iter().filter(|j| j.deadline.is_some()).collect();
    order.sort_by_key(|j| (j.submit, j.id));
    let mut out = BTreeSet::new();
    for j in order {
        let g = &j.groups[0];
        let exact = g.durations_ms.iter().sum::<u64>() / g.durations_ms.len().max(1) as u64;
        let est =
            if factor == 1.0 { exact } else { EstimateError { lo: factor, hi: factor, seed: 0 }.apply(exact, j.id) };
        let Some(deadline) = j.deadline else { continue };
        let k = g.durations_ms.len() as u32;
        if plan.place(j.submit, deadline, k, est, nodes as u32).is_some() {
            out.insert(j.id);
        }
    }
    out
}

/// §5.4's metrics: (accepted SLO attainment %, total SLO attainment %, SLO
/// attainment without reservation %, mean BE latency s); an SLO job that
/// never finished is a miss (A21).
pub fn slo_metrics(jobs: &[JobSpec], r: &RunResult, accepted: &BTreeSet<u64>) -> (f64, f64, f64, f64) {
    let finish: BTreeMap<u64, sojourn_core::Time> = r.jobs.iter().map(|j| (j.id, j.finish)).collect();
    let (mut acc, mut acc_met, mut norez, mut norez_met) = (0, 0, 0, 0);
    for j in jobs {
        let Some(d) = j.deadline else { continue };
        let met = usize::from(finish.get(&j.id).is_some_and(|f| *f <= d));
        if accepted.contains(&j.id) {
            acc += 1;
            acc_met += met;
        } else {
            norez += 1;
            norez_met += met;
        }
    }
    let pct = |a: usize, n: usize| 100.0 * a as f64 / n.max(1) as f64;
    let be: Vec<f64> = r
        .jobs
        .iter()
        .filter(|j| jobs.iter().any(|s| s.id == j.id && s.deadline.is_none()))
        .map(|j| j.response_ms() as f64 / 1000.0)
        .collect();
    let be_mean = be.iter().sum::<f64>() / be.len().max(1) as f64;
    (pct(acc_met, acc), pct(acc_met + norez_met, acc + norez), pct(norez_met, norez), be_mean)
}

/// SLO attainment % of the SLO jobs whose name contains `kind` (`gpu`,
/// `mpi`); a job that never finished is a miss.
#[allow(dead_code)] // each test binary compiles this module; not all use it
pub fn attainment_of(jobs: &[JobSpec], r: &RunResult, kind: &str) -> f64 {
    let finish: BTreeMap<u64, sojourn_core::Time> = r.jobs.iter().map(|j| (j.id, j.finish)).collect();
    let (mut n, mut met) = (0, 0);
    for j in jobs.iter().filter(|j| j.name.contains(kind)) {
        let Some(d) = j.deadline else { continue };
        n += 1;
        met += usize::from(finish.get(&j.id).is_some_and(|f| *f <= d));
    }
    100.0 * met as f64 / n.max(1) as f64
}
