//! `--solves child` (`SimConfig::isolate_solves`): TetriSched's solves
//! answered by a child process (`sojourn offload-worker`) decide exactly as
//! inline solves do, and a solve whose child aborts (as CBC 2.10.8 has)
//! costs that solve, not the run.

#[path = "common/gs_mix.rs"]
#[allow(dead_code)] // this test uses the workload only
mod gs_mix;
use sojourn_core::Resources;
use sojourn_sim::engine::{simulate, OffloadChild, SimConfig};
use sojourn_sim::run::RunResult;
use sojourn_sim::workload::{ClusterSpec, JobSpec, JobStream};

fn child() -> OffloadChild {
    OffloadChild::sojourn_at(env!("CARGO_BIN_EXE_sojourn").into())
}

/// TetriSched on `jobs` and six one-slot nodes; the wall-clock figures
/// zeroed, so that two runs compare whole.
fn run(jobs: &[JobSpec], heartbeat_ms: u64, isolate: Option<OffloadChild>) -> RunResult {
    let cfg = SimConfig {
        policy: "tetrisched".into(),
        heartbeat_ms,
        check_invariants: true,
        isolate_solves: isolate,
        ..SimConfig::default()
    };
    let owned: Vec<JobSpec> = jobs.to_vec();
    let stream: JobStream = Box::new(owned.into_iter().map(Ok));
    let cluster = ClusterSpec::uniform(6, Resources::new(1024, 1), 10);
    let mut r = simulate(&cluster, stream, "gs_mix", &cfg, None).expect("the run completes");
    r.wall_ms = 0.0;
    r.core_ms = 0.0;
    r
}

/// Every job, every figure and every policy counter are the inline run's,
/// event-driven and with heartbeats (where cycles also start at a
/// heartbeat), while the solves went to the child (one MILP per cycle).
#[test]
fn isolated_solves_decide_exactly_as_inline_ones() {
    let jobs = gs_mix::gs_mix(24, 6, 0.9, 7);
    for heartbeat_ms in [0, 1000] {
        let inline = run(&jobs, heartbeat_ms, None);
        let isolated = run(&jobs, heartbeat_ms, Some(child()));
        assert_eq!(isolated.unfinished, 0, "heartbeat {heartbeat_ms}");
        assert!(inline.policy_metrics.counter("tetrisched.cycles") > 0);
        assert_eq!(isolated.lost_offloads, 0);
        assert_eq!(isolated, inline, "heartbeat {heartbeat_ms}: the isolated run differs");
    }
}

/// The second solve aborts its child: the run goes on with a fresh child,
/// every job finishes, and exactly that solve is lost (counted, and planned
/// greedily instead).
#[test]
fn a_solve_that_aborts_its_child_costs_that_solve_not_the_run() {
    let jobs = gs_mix::gs_mix(24, 6, 0.9, 7);
    let mut aborting = child();
    aborting.abort_piece = Some(2);
    let r = run(&jobs, 0, Some(aborting));
    assert_eq!(r.unfinished, 0);
    assert_eq!(r.jobs.len(), jobs.len());
    assert_eq!(r.lost_offloads, 1);
    assert_eq!(r.policy_metrics.counter("tetrisched.solver_fallbacks"), 1);
    let inline = run(&jobs, 0, None);
    assert_eq!(inline.policy_metrics.counter("tetrisched.solver_fallbacks"), 0);
    assert_eq!(r.policy_metrics.counter("tetrisched.cycles"), inline.policy_metrics.counter("tetrisched.cycles"));
}

/// Through the CLI: `--solves child` (the default) finds its child (the
/// same executable) by itself and writes `--solves inline`'s files byte for
/// byte.
#[test]
fn the_cli_flag_writes_the_inline_runs_files() {
    let dir = std::env::temp_dir().join(format!("sojourn-isolated-solves-{}", std::process::id()));
    let workload = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/FB-2009_samples_24_times_1hr_0.tsv");
    let mut outs = Vec::new();
    for (name, solves) in [("inline", "inline"), ("isolated", "child")] {
        let out = dir.join(name);
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_sojourn"))
            .args(["simulate", "--policy", "tetrisched", "--workload", workload, "--limit", "12"])
            .args(["--no-wall-clock", "-q", "--out"])
            .arg(&out)
            .args(["--solves", solves])
            .stdout(std::process::Stdio::null())
            .status()
            .expect("sojourn runs");
        assert!(status.success(), "{name}: {status}");
        outs.push(out);
    }
    let mut files: Vec<_> =
        std::fs::read_dir(&outs[0]).expect("inline output").flatten().map(|e| e.file_name()).collect();
    files.sort();
    assert!(!files.is_empty());
    for f in &files {
        let a = std::fs::read(outs[0].join(f)).expect("inline file");
        let b = std::fs::read(outs[1].join(f)).expect("the same file of the isolated run");
        assert!(a == b, "{f:?} differs");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two jobs of five one-slot tasks, each an all-or-nothing gang, submitted
/// together on six one-slot nodes with one-slot AMs: once both AMs run,
/// four slots are left and neither gang ever fits. TetriSched keeps
/// planning each gang for when it expects the AMs to end, and its cycle
/// timer never stops; the run must still end, reporting both jobs
/// unfinished, inline and when a solve's child aborts (the lost solve's
/// greedy plan cannot place them either). It ran forever before.
#[test]
fn a_run_whose_gangs_never_fit_beside_their_ams_ends() {
    let jobs: Vec<JobSpec> = (0..2)
        .map(|id| {
            let mut j = gs_mix::gs_mix(1, 6, 0.9, 7).remove(0);
            j.id = id;
            j.name = format!("be{id}");
            j.submit = sojourn_core::Time::ZERO;
            j.deadline = None;
            j.groups[0].durations_ms = vec![10_000; 5];
            j
        })
        .collect();
    for isolate in [None, Some(2)] {
        let cfg = SimConfig {
            policy: "tetrisched".into(),
            am_container: Some(Resources::new(1024, 1)),
            isolate_solves: isolate.map(|piece| OffloadChild { abort_piece: Some(piece), ..child() }),
            ..SimConfig::default()
        };
        let jobs = jobs.clone();
        // On a thread, so that a run that does not end fails the test.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let stream: JobStream = Box::new(jobs.into_iter().map(Ok));
            let cluster = ClusterSpec::uniform(6, Resources::new(1024, 1), 10);
            let _ = tx.send(simulate(&cluster, stream, "deadlock", &cfg, None).map_err(|e| e.to_string()));
        });
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("isolate {isolate:?}: the run did not end within 120 s"))
            .expect("the run completes");
        assert_eq!(r.unfinished, 2, "isolate {isolate:?}");
        assert!(r.jobs.is_empty(), "isolate {isolate:?}: {} jobs finished", r.jobs.len());
        assert_eq!(r.lost_offloads, u64::from(isolate.is_some()), "isolate {isolate:?}");
    }
}
