//! Eagle against Hawk on Hawk's motivation workload (delgado.md §4.3, §4.5):
//! the `sparrow` generator, 15,000 one-slot servers, 1,000 jobs (95% short
//! of 100 tasks × 100 s, 5% long of 1,000 tasks × 20,000 s), the Google
//! setting (17% short partition) with a cutoff of 1,000 s. Eagle's SSS must
//! keep every short probe away from long tasks (Table 3.2: 0 probes behind
//! long tasks, 0 short tasks after long ones), and its short jobs must do
//! at least as well as Hawk's (E1), long jobs not much worse (E2).

use sojourn_core::Resources;
use sojourn_sim::engine::{simulate, SimConfig};
use sojourn_sim::run::RunResult;
use sojourn_sim::workload::synthetic::{SparrowJobs, SparrowOptions, SPARROW_SERVERS};
use sojourn_sim::workload::ClusterSpec;

fn run(policy: &str) -> RunResult {
    let cluster = ClusterSpec::uniform(SPARROW_SERVERS, Resources::new(1024, 1), 40);
    let params = [("trace", "google"), ("cutoff_s", "1000")];
    let cfg = SimConfig {
        policy: policy.into(),
        params: params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        heartbeat_ms: 0,
        ..SimConfig::default()
    };
    let jobs = SparrowJobs::new(SparrowOptions::new(1));
    let r = simulate(&cluster, Box::new(jobs.map(Ok)), "motivation", &cfg, None).expect("simulates");
    assert_eq!(r.unfinished, 0, "{policy}: every job finishes");
    r
}

/// Mean response (ms) of the jobs with `tasks` tasks (100: short, 1,000: long).
fn mean_response(r: &RunResult, tasks: u32) -> f64 {
    let js: Vec<u64> = r.jobs.iter().filter(|j| j.tasks == tasks).map(|j| j.response_ms()).collect();
    js.iter().sum::<u64>() as f64 / js.len() as f64
}

#[test]
fn eagle_keeps_short_probes_away_from_long_tasks_and_beats_hawk_on_short_jobs() {
    let eagle = run("eagle");
    let hawk = run("hawk");
    let m = &eagle.policy_metrics;
    assert_eq!(m.counter("probes_behind_long"), 0, "SSS: no short probe queues behind a long task");
    assert_eq!(m.counter("short_after_long"), 0);
    assert!(m.counter("sss_rejections") > 0, "long tasks were there to avoid");
    assert!(hawk.policy_metrics.counter("probes_behind_long") > 0);
    let (es, hs) = (mean_response(&eagle, 100), mean_response(&hawk, 100));
    let (el, hl) = (mean_response(&eagle, 1000), mean_response(&hawk, 1000));
    eprintln!("short mean: eagle {es:.0} ms, hawk {hs:.0} ms; long mean: eagle {el:.0} ms, hawk {hl:.0} ms");
    assert!(es <= hs, "E1: eagle's short jobs {es} ms vs hawk's {hs} ms");
    assert!(el <= hl * 1.1, "E2: eagle's long jobs {el} ms vs hawk's {hl} ms");
}
