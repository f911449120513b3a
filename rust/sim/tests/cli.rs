//! The `sojourn` binary end to end: the main job, determinism of its files,
//! the policy listing and clear errors.

use std::path::{Path, PathBuf};
use std::process::Command;

fn sojourn() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sojourn"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sojourn-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn read_all(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("output dir")
        .map(|e| {
            let e = e.expect("entry");
            (e.file_name().to_string_lossy().to_string(), std::fs::read(e.path()).expect("file"))
        })
        .collect();
    v.sort();
    v
}

/// The same seed gives byte-identical files and printed output, for every
/// policy, in heartbeat mode with AM containers (the path with the most
/// state).
#[test]
fn same_seed_gives_byte_identical_output() {
    let run = |tag: &str| {
        let (out, rep) = (tmp(&format!("{tag}-out")), tmp(&format!("{tag}-rep")));
        let o = sojourn()
            .args(["compare", "--quiet", "--no-wall-clock", "--limit", "400", "--heartbeat-ms", "1000"])
            .args(["--am-mb", "1024", "--seed", "7", "--out"])
            .arg(&out)
            .arg("--report")
            .arg(&rep)
            .output()
            .expect("run sojourn");
        assert!(o.status.success());
        (read_all(&out), read_all(&rep), String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let a = run("a");
    let b = run("b");
    assert!(!a.0.is_empty() && !a.1.is_empty());
    assert!(!a.2.contains("wall clock"), "the printed table keeps no timing row: {}", a.2);
    assert_eq!(a.2, b.2, "the printed output differs between two runs with the same seed");
    assert_eq!(a.0.iter().map(|f| &f.0).collect::<Vec<_>>(), b.0.iter().map(|f| &f.0).collect::<Vec<_>>());
    for (x, y) in a.0.iter().zip(&b.0).chain(a.1.iter().zip(&b.1)) {
        assert!(x.1 == y.1, "{} differs between two runs with the same seed", x.0);
    }
}

/// `sojourn compare` with no arguments: the shipped workload, every policy,
/// every job finished, one column per policy.
#[test]
fn main_job_runs_every_policy_on_the_shipped_workload() {
    let out = sojourn().args(["compare", "--quiet"]).output().expect("run sojourn");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FB-2009_samples_24_times_1hr_0.tsv"), "{text}");
    let header = text.lines().find(|l| l.starts_with("vs fifo")).expect("table header");
    for p in ["fifo", "fair", "capacity"] {
        assert!(header.contains(p), "{header}");
    }
    let unfinished = text.lines().find(|l| l.trim_start().starts_with("unfinished")).expect("unfinished row");
    assert!(unfinished.split_whitespace().skip(1).all(|w| w == "0" || w == "(1.00)" || w == "(-)"), "{unfinished}");
}

#[test]
fn policies_lists_parameters_with_defaults() {
    let out = sojourn().args(["policies"]).output().expect("run sojourn");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for p in ["fifo", "fair", "capacity"] {
        assert!(text.lines().any(|l| l == p), "{p} missing from\n{text}");
    }
    assert!(text.contains("queue.*.weight"));
}

#[test]
fn unknown_policy_and_bad_parameter_are_named() {
    let out = sojourn().args(["simulate", "--policy", "lottery", "--limit", "5"]).output().expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown policy 'lottery'"));
    let out =
        sojourn().args(["simulate", "--policy", "fair", "-p", "assign_multiple=perhaps", "--limit", "5"]).output();
    let out = out.expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("assign_multiple") && err.contains("perhaps"), "{err}");
}

#[test]
fn malformed_trace_error_names_file_and_line() {
    let dir = tmp("bad");
    std::fs::create_dir_all(&dir).expect("dir");
    let f = dir.join("bad.tr");
    std::fs::write(&f, "0 2 1.0 1.0 1.0\n1 2 1.0 x 1.0\n").expect("write");
    let out = sojourn().args(["simulate", "--quiet", "--workload"]).arg(&f).output().expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.tr:2"), "{err}");
}

/// `sojourn to-sls` writes a workload as an SLS trace that the simulator
/// reads back with the same jobs and task counts, times divided by the
/// compression, and an SLS nodes file.
#[test]
fn to_sls_round_trips_through_the_sls_reader() {
    let dir = tmp("to-sls");
    std::fs::create_dir_all(&dir).expect("dir");
    let (trace, nodes) = (dir.join("t.json"), dir.join("n.json"));
    let spec = "gridmix:jobs=20:seed=3";
    let out = sojourn()
        .args(["to-sls", spec, "--compress", "10", "--nodes", "3", "-o"])
        .arg(&trace)
        .arg("--nodes-out")
        .arg(&nodes)
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let original: Vec<_> = sojourn_sim::workload::open(spec).expect("spec").map(|j| j.expect("job")).collect();
    let back: Vec<_> =
        sojourn_sim::workload::open(&trace.display().to_string()).expect("sls").map(|j| j.expect("job")).collect();
    assert_eq!(back.len(), original.len());
    for (a, b) in original.iter().zip(&back) {
        assert_eq!(a.task_count(), b.task_count());
        let want = (a.submit.ms() - original[0].submit.ms()) as f64 / 10.0;
        assert!((b.submit.ms() as f64 - want).abs() <= 1.0, "{} vs {want}", b.submit.ms());
    }
    let n = std::fs::read_to_string(&nodes).expect("nodes");
    assert!(n.contains("node3") && !n.contains("node4"), "{n}");
}

/// `sojourn sls-compare` over two real SLS outputs of integration/sls/tiny-trace.json
/// (tests/data/sls: jobruntime.csv and the metrics it reads, the handle sampler cut to its
/// last rows): a table row per scheduler, the CSVs, and a page with one plot each.
#[test]
fn sls_compare_reports_each_scheduler_with_plots() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sls");
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../integration/sls/tiny-trace.json");
    let dir = tmp("sls-compare");
    std::fs::create_dir_all(&dir).expect("dir");
    let out = sojourn()
        .args(["sls-compare", "--trace"])
        .arg(&trace)
        .arg("--csv")
        .arg(dir.join("c.csv"))
        .arg("--jobs-csv")
        .arg(dir.join("j.csv"))
        .arg("--html")
        .arg(&dir)
        .arg(format!("sojourn:fifo={}", data.join("sojourn-fifo").display()))
        .arg(format!("capacity={}", data.join("capacity").display()))
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let header = text.lines().find(|l| l.starts_with("vs sojourn:fifo")).expect("table header");
    assert!(header.contains("sojourn:fifo") && header.contains("capacity"), "{header}");
    // Three jobs each; 9 tasks + 3 AMs; responses 7.012, 10.002, 18.998 s under sojourn:fifo.
    let row = |label: &str| text.lines().find(|l| l.trim_start().starts_with(label)).expect(label).to_string();
    assert!(row("finished").contains(" 3 ") && row("containers allocated").contains("12"), "{text}");
    assert!(row("response p50 (s)").contains("10.00"), "{text}");
    assert!(row("handle p99 (ms)").contains("65.87"), "{text}");
    assert!(text.contains("| app_0003 | 2.000 | 18.998 |"), "{text}");
    let csv = std::fs::read_to_string(dir.join("c.csv")).expect("summary csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("scheduler,finished,") && lines[1].starts_with("sojourn:fifo,3,"), "{csv}");
    assert!(std::fs::read_to_string(dir.join("j.csv")).expect("jobs csv").starts_with("job,trace_start_s,"));
    let html = std::fs::read_to_string(dir.join("index.html")).expect("index.html");
    for class in ["cdf", "jobs", "running"] {
        assert_eq!(
            html.matches(&format!("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot {class}\"")).count(),
            1
        );
    }
    assert_eq!(html.matches("<svg ").count(), 3);

    // A file name for --html; a missing directory and a malformed pair are named.
    let page = dir.join("sls.html");
    let capacity = format!("x={}", data.join("capacity").display());
    let out = sojourn().args(["sls-compare", "--html"]).arg(&page).arg(capacity).output().expect("run");
    assert!(out.status.success() && page.exists());
    let out = sojourn().args(["sls-compare", "a=/nonexistent/sls"]).output().expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/sls/jobruntime.csv"));
    let out = sojourn().args(["sls-compare", "just-a-dir"]).output().expect("run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("'just-a-dir' is not NAME=SLS_OUTPUT_DIR"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The AM model of the Kairos calibration (issue 20), by hand: one class-1
/// job (15 maps, then 15 reduces, of 42.5 s each alone on the testbed) on
/// one node. With an AM that starts up for 5 s and holds one of 16 vcores,
/// the 15 maps still fit: 5 + 85 = 90 s. On 15 vcores the AM's vcore leaves
/// room for 14, so each phase takes two waves: 5 + 4 × 42.5 = 175 s, unless
/// the AM holds no vcore (`--am-vcores 0`): 90 s again. `overhead_s=5` takes
/// the AM's 5 s off the task work, so the job lasts its table 85 s.
#[test]
fn am_start_up_vcores_and_overhead_time_a_kairos_job() {
    let dir = tmp("kairos-am");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let wl = dir.join("generated_workload_one");
    std::fs::write(&wl, "0 15 default /random100char-256mb-small out 0 0\n").expect("workload");
    let response = |wl_opts: &str, vcores: &str, extra: &[&str]| -> f64 {
        let out = dir.join(format!("out-{vcores}-{}-{}", wl_opts.len(), extra.len()));
        let st = sojourn()
            .args(["simulate", "--quiet", "--no-wall-clock", "--nodes", "1", "--node-memory-mb", "102400"])
            .args(["--node-vcores", vcores, "--classes", "none", "--workload"])
            .arg(format!("{}{wl_opts}", wl.display()))
            .args(extra)
            .arg("--out")
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .status()
            .expect("run sojourn");
        assert!(st.success());
        let csv = std::fs::read_to_string(out.join("jobs-fifo.csv")).expect("jobs csv");
        let row = csv.lines().nth(1).expect("one job");
        row.split(',').nth(5).expect("response_s").parse().expect("a number")
    };
    let am = ["--am-mb", "5120", "--am-startup-ms", "5000"];
    assert_eq!(response("", "16", &[]), 85.0);
    assert_eq!(response("", "16", &am), 90.0);
    assert_eq!(response("", "15", &am), 175.0);
    assert_eq!(response("", "15", &[&am[..], &["--am-vcores", "0"]].concat()), 90.0);
    assert_eq!(response(":overhead_s=5", "16", &am), 85.0);
    assert_eq!(response(":spread=0", "16", &[]), 85.0);
    let _ = std::fs::remove_dir_all(&dir);
}
