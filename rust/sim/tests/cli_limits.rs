//! The command line's caps (`workload::limits`): every size and period flag
//! is checked before anything is read, repeated `-p` keys and `--limit 0`
//! are errors, and a run's simulated time (so its samples) is bounded.

use clap::Parser;
use sojourn_sim::cli::{self, Cli};
use sojourn_sim::workload::limits::{MAX_NODES, MAX_TIME_MS};
use std::path::PathBuf;

fn run(args: &[&str]) -> Result<String, String> {
    let cli = Cli::try_parse_from(std::iter::once("sojourn").chain(args.iter().copied())).map_err(|e| e.to_string())?;
    cli::run(cli).map_err(|e| e.to_string())
}

fn tmp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sojourn-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let f = dir.join(name);
    std::fs::write(&f, text).expect("write");
    f
}

#[test]
fn repeated_p_key_is_an_error() {
    let e = run(&["simulate", "--policy", "fair", "-p", "assign_multiple=true", "-p", "assign_multiple=false"])
        .unwrap_err();
    assert!(e.contains("parameter 'assign_multiple' is given twice (true and false)"), "{e}");
    let e = run(&["compare", "--policies", "fifo,fair", "-p", "fair.a=1", "-p", "fair.a=1"]).unwrap_err();
    assert!(e.contains("'fair.a' is given twice"), "{e}");
}

#[test]
fn limit_zero_is_refused() {
    let e = run(&["simulate", "--limit", "0", "-w", "gridmix:jobs=3"]).unwrap_err();
    assert!(e.contains("--limit 0: expected at least 1 job"), "{e}");
    // --limit 1 is one job.
    let out = run(&["simulate", "--limit", "1", "-w", "gridmix:jobs=3", "--quiet", "--nodes", "4"]).expect("runs");
    assert!(out.lines().any(|l| l.split_whitespace().eq(["jobs", "1"])), "{out}");
}

#[test]
fn every_size_flag_past_its_cap_is_named() {
    let too_big_nodes = (MAX_NODES + 1).to_string();
    for (flag, value, said) in [
        ("--nodes", "0", "--nodes 0: expected 1 to 100000"),
        ("--nodes", too_big_nodes.as_str(), "--nodes 100001: expected 1 to 100000"),
        ("--load", "0", "--load 0: expected a number above 0 and at most 100"),
        ("--load", "1e9", "--load 1000000000"),
        ("--load", "NaN", "--load NaN"),
        ("--node-memory-mb", "0", "--node-memory-mb 0"),
        ("--node-memory-mb", "99999999999", "--node-memory-mb 99999999999: expected 1 to 16777216"),
        ("--node-vcores", "5000", "--node-vcores 5000: expected 1 to 4096"),
        ("--nodes-per-rack", "0", "--nodes-per-rack 0"),
        ("--heartbeat-ms", "86400001", "--heartbeat-ms 86400001: expected 0 to 86400000"),
        ("--am-heartbeat-ms", "1000000000", "--am-heartbeat-ms"),
        ("--am-response-lag", "101", "--am-response-lag 101: expected 0 to 100"),
        ("--am-mb", "0", "--am-mb 0"),
        ("--am-mb", "99999999999", "--am-mb 99999999999"),
        ("--network-delay-ms", "18446744073709551615", "--network-delay-ms"),
        ("--progress-s", "86401", "--progress-s 86401: expected 0 to 86400"),
        ("--sample-s", "0", "--sample-s 0: expected 1 to 86400"),
        ("--sample-s", "18446744073709551615", "--sample-s 18446744073709551615"),
        ("--fail", "1e10:0", "--fail '1e10:0': 1e10 s is not within 0 to 31536000 s"),
        ("--fail", "5:0:-3", "--fail '5:0:-3'"),
        ("--suspended-speed", "1", "--suspended-speed 1: expected a share in [0, 1)"),
        ("--suspended-speed", "NaN", "--suspended-speed NaN"),
    ] {
        let e = run(&["simulate", "-w", "gridmix:jobs=2", flag, value]).unwrap_err();
        assert!(e.contains(said), "{flag} {value}: {e}");
    }
    let e = run(&["to-sls", "gridmix:jobs=2", "--nodes", "1000000000000", "-o", "/nonexistent/x.json"]).unwrap_err();
    assert!(e.contains("--nodes 1000000000000: expected 1 to 100000"), "{e}");
}

#[test]
fn a_load_that_needs_too_many_nodes_is_refused() {
    let e = run(&["simulate", "-w", "gridmix:jobs=50", "--load", "0.000001"]).unwrap_err();
    assert!(e.contains("--load 0.000001 needs") && e.contains("more than the limit of 100000"), "{e}");
}

#[test]
fn a_far_future_arrival_is_refused_naming_the_line() {
    // Before the caps this run sampled every 60 s for 317 years.
    let f = tmp_file("far.tr", "0 1 1 1\n1e10 1 1 1\n");
    let e = run(&["simulate", "--quiet", "-w", f.to_str().expect("utf-8")]).unwrap_err();
    assert!(e.contains("far.tr:2: arrival_s: 10000000000 s is past the limit on times"), "{e}");
}

/// A year-late arrival is allowed; the sampling period must then keep the
/// run within the sample cap, and the run stops two years in.
#[test]
fn the_sampling_period_bounds_the_run() {
    // One job 300 days in.
    let f = tmp_file("late.tr", "25920000 1 1 1\n");
    let w = f.to_str().expect("utf-8");
    let e = run(&["simulate", "--quiet", "-w", w, "--nodes", "1", "--sample-s", "1"]).unwrap_err();
    assert!(
        e.contains("--sample-s 1: a run keeps at most 2097152 samples") && e.contains("--sample-s 13 or more"),
        "{e}"
    );
    let out = run(&["simulate", "--quiet", "-w", w, "--nodes", "1", "--sample-s", "13"]).expect("runs");
    assert!(unfinished(&out) == "0", "{out}");
    // Two year-long tasks on one slot, from day 365: the second would end
    // in year 3; the run stops at two years with it unfinished.
    let year_s = MAX_TIME_MS / 1000;
    let f = tmp_file("long.tr", &format!("{year_s} 2 {year_s} {year_s} {year_s}\n"));
    let out = run(&["simulate", "--quiet", "-w", f.to_str().expect("utf-8"), "--nodes", "1", "--node-vcores", "1"])
        .expect("runs");
    assert_eq!(unfinished(&out), "1", "{out}");
}

fn unfinished(out: &str) -> String {
    let row = out.lines().find(|l| l.trim_start().starts_with("unfinished")).unwrap_or("");
    row.split_whitespace().nth(1).unwrap_or("").to_string()
}

/// A malformed `--paper-point` is refused before anything runs, naming it;
/// a good one puts its figures on the report's CDF.
#[test]
fn paper_points_are_checked_and_drawn() {
    let e = run(&["compare", "--policies", "fifo", "-w", "gridmix:jobs=3", "--paper-point", "thesis:fifo:p50=808"])
        .unwrap_err();
    assert!(e.contains("--paper-point 'thesis:fifo:p50=808': four ':'-separated parts"), "{e}");
    let dir = std::env::temp_dir().join(format!("sojourn-paper-{}", std::process::id()));
    let report = dir.to_string_lossy().to_string();
    let args = ["compare", "--policies", "fifo,fair", "-w", "gridmix:jobs=3", "--nodes", "4", "--quiet"];
    let point = "kairos-thesis:fair:response:p50=808,p99=2061";
    run(&[&args[..], &["--report", &report, "--paper-point", point]].concat()).expect("runs");
    let html = std::fs::read_to_string(dir.join("index.html")).expect("the report");
    assert!(html.contains("fair kairos-thesis: p50 = 808") && html.contains("fair kairos-thesis: p99 = 2061"));
}

#[test]
fn max_assignments_needs_heartbeats_and_at_least_one() {
    let base = ["simulate", "-w", "gridmix:jobs=3", "--quiet", "--nodes", "4"];
    let with = |extra: &[&str]| run(&[&base[..], extra].concat());
    let e = with(&["--max-assignments", "2"]).unwrap_err();
    assert!(e.contains("--max-assignments needs node heartbeats"), "{e}");
    let e = with(&["--max-assignments", "0", "--heartbeat-ms", "1000"]).unwrap_err();
    assert!(e.contains("--max-assignments 0: expected at least 1"), "{e}");
    let out = with(&["--max-assignments", "1", "--sls-timing"]).expect("runs");
    assert!(out.lines().any(|l| l.split_whitespace().eq(["jobs", "3"])), "{out}");
    assert!(out.contains("at most 1 containers placed"), "the summary says the limit: {out}");
}
