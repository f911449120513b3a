//! Hawk's motivation experiment (delgado.md §4.3; thesis §2.2.3, L466–470)
//! as a simulator test: 15,000 one-slot servers, 1,000 jobs arriving as a
//! Poisson process with a mean gap of 50 s, 95% short (100 tasks of 100 s)
//! and 5% long (1,000 tasks of 20,000 s): the `sparrow` generator
//! (`sojourn compare -w sparrow --nodes 15000 --node-vcores 1`). Under Sparrow the cluster is busy
//! but not full (the thesis: utilization sampled every 100 s, median 86%,
//! max 97.8%), yet a large fraction of short jobs take over 15,000 s,
//! stuck behind long tasks, against about 100 s for an omniscient
//! scheduler. Hawk, on the same jobs, rescues most of them.

use sojourn_core::Resources;
use sojourn_sim::engine::{simulate, SimConfig};
use sojourn_sim::run::RunResult;
use sojourn_sim::workload::synthetic::{SparrowJobs, SparrowOptions, SPARROW_SERVERS};
use sojourn_sim::workload::{ClusterSpec, JobSpec};

/// The thesis's jobs: the simulator's `sparrow` generator
/// (`workload::synthetic`, delgado.md §4.3), seed 1.
/// The thesis's jobs: the simulator's `sparrow` generator
/// (`workload::synthetic`, delgado.md §4.3), seed 1.
fn jobs() -> Vec<JobSpec> {
    SparrowJobs::new(SparrowOptions::new(1)).collect()
}

fn run(policy: &str, params: &[(&str, &str)]) -> RunResult {
    let cluster = ClusterSpec::uniform(SPARROW_SERVERS, Resources::new(1024, 1), 40);
    let cfg = SimConfig {
        policy: policy.into(),
        params: params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        heartbeat_ms: 0,
        sample_ms: 100_000,
        ..SimConfig::default()
    };
    let r = simulate(&cluster, Box::new(jobs().into_iter().map(Ok)), "motivation", &cfg, None).expect("simulates");
    assert_eq!(r.unfinished, 0, "{policy}: every job finishes");
    r
}

/// Share of short jobs (100 tasks) with a response above 15,000 s.
fn short_over_15000s(r: &RunResult) -> f64 {
    let short: Vec<_> = r.jobs.iter().filter(|j| j.tasks == 100).collect();
    short.iter().filter(|j| j.finish.since(j.submit) > 15_000_000).count() as f64 / short.len() as f64
}

#[test]
fn sparrow_keeps_short_jobs_behind_long_ones_on_a_cluster_not_full() {
    let sparrow = run("sparrow", &[]);
    // Utilization while jobs arrive (the thesis's samples cover the trace).
    let last_submit = sparrow.jobs.iter().map(|j| j.submit).max().expect("jobs");
    let mut util: Vec<f64> = sparrow.utilization.iter().filter(|s| s.t <= last_submit).map(|s| s.vcores).collect();
    util.sort_by(f64::total_cmp);
    let median = util[util.len() / 2];
    let max = util[util.len() - 1];
    let stuck = short_over_15000s(&sparrow);
    eprintln!("sparrow: utilization median {median:.3}, max {max:.3}; short jobs over 15,000 s: {stuck:.3}");
    // Seed 1: median 0.929, max 0.984, short jobs over 15,000 s 0.68. The
    // generator's seeds 1-10 give medians 0.91-0.96 (41-59 long jobs of
    // 1,000): busier than the thesis's draw (median 0.86, max 0.978).
    assert!((0.80..=0.96).contains(&median), "median utilization {median} (thesis 0.86)");
    assert!((0.94..1.0).contains(&max), "busy, yet never every server (thesis: max 0.978), got {max}");
    assert!(stuck > 0.10, "a large fraction of short jobs over 15,000 s under Sparrow, got {stuck}");

    let hawk = run("hawk", &[("trace", "google"), ("cutoff_s", "1000")]);
    let rescued = short_over_15000s(&hawk);
    eprintln!("hawk: short jobs over 15,000 s: {rescued:.3}");
    assert!(rescued < stuck / 2.0, "hawk {rescued} vs sparrow {stuck}");
}
