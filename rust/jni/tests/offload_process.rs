//! Offloaded work in a child process (`isolation.rs`, the `sojourn-offload`
//! executable): a child that aborts or hangs costs its piece an error
//! answer, never the worker (the RM), and the next piece gets a new child.

use sojourn_core::{Described, Event, Offload, OffloadWork};
use sojourn_jni::isolation::Isolation;
use sojourn_jni::offload::Worker;
use sojourn_policies::tetrisched::compile::{SolverOptions, Supply, Window};
use sojourn_policies::tetrisched::offloaded::SolveInput;
use sojourn_policies::tetrisched::strl::{Leaf, Partitioning, Strl};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn process_worker(grace: Duration) -> Worker {
    Worker::new(Isolation::Process { command: env!("CARGO_BIN_EXE_sojourn-offload").into(), grace })
}

/// Two gangs competing for a partition of two nodes over a 4-slice window:
/// a small real TetriSched solve.
fn small_solve() -> SolveInput {
    let leaf = |job, k, value| Leaf { job, set: 0, k, start: 0, dur: 2, value, width: 1 };
    SolveInput {
        root: Strl::Sum(vec![Strl::NCk(leaf(1, 2, 10.0)), Strl::NCk(leaf(2, 1, 5.5))]),
        parts: Partitioning { parts: vec![vec![0, 1]], of_set: vec![vec![0]] },
        supply: Supply { avail: vec![vec![2, 2, 2, 2]] },
        window: Window { now: 0, len: 4 },
        opts: SolverOptions::default(),
        warm: BTreeMap::new(),
    }
}

fn solve_piece(tag: u64, input: SolveInput) -> Offload {
    Offload { tag, work: Box::new(input) }
}

/// Work known only by its description: in process mode its closure must
/// not run.
struct OnlyDescribed(Described);

impl OffloadWork for OnlyDescribed {
    fn run(self: Box<Self>) -> serde_json::Value {
        panic!("the closure ran instead of the child")
    }
    fn describe(&self) -> Option<Described> {
        Some(self.0.clone())
    }
}

/// A piece for the test kinds only the executable knows (no closure to
/// fall back on: in process mode the closure must not run).
fn test_piece(tag: u64, kind: &str, input: serde_json::Value, budget_ms: u64) -> Offload {
    Offload { tag, work: Box::new(OnlyDescribed(Described { kind: kind.into(), input, budget_ms })) }
}

fn wait_for(w: &mut Worker, n: usize, within: Duration) -> Vec<(u64, serde_json::Value)> {
    let start = Instant::now();
    let mut got = Vec::new();
    while got.len() < n && start.elapsed() < within {
        got.extend(w.finished().into_iter().filter_map(|e| match e {
            Event::OffloadDone { tag, result } => Some((tag, result)),
            _ => None,
        }));
        std::thread::sleep(Duration::from_millis(5));
    }
    got
}

fn children(w: &Worker) -> serde_json::Value {
    w.describe()["children"].clone()
}

#[test]
fn a_child_that_aborts_costs_its_piece_and_the_next_solve_gets_a_new_child() {
    let expected = small_solve().solve();
    assert!(expected.get("error").is_none() && expected["plan"]["grants"].as_object().is_some(), "{expected}");
    let mut w = process_worker(Duration::from_secs(5));
    w.submit(solve_piece(1, small_solve()));
    let first = wait_for(&mut w, 1, Duration::from_secs(30));
    let first_pid = children(&w)["pid"].as_u64();
    w.submit(test_piece(2, "test.abort", serde_json::Value::Null, 1000));
    w.submit(solve_piece(3, small_solve()));
    let got = wait_for(&mut w, 2, Duration::from_secs(30));
    assert_eq!(first, vec![(1, expected.clone())], "the child solves as the closure does");
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, 2);
    let why = got[0].1["error"].as_str().unwrap_or_default();
    assert!(why.contains("died") && why.contains("SIGABRT"), "the lost piece says the child aborted: {}", got[0].1);
    assert_eq!(got[1], (3, expected), "the next solve answers correctly from a new child");
    let c = children(&w);
    assert_eq!(
        (c["started"].as_u64(), c["answered"].as_u64(), c["failed"].as_u64()),
        (Some(2), Some(2), Some(1)),
        "{c}"
    );
    assert_ne!(c["pid"].as_u64(), first_pid, "{c}");
    assert!(!w.busy());
}

#[test]
fn a_hung_child_is_killed_at_its_deadline() {
    let mut w = process_worker(Duration::from_millis(300));
    let start = Instant::now();
    // Budget 100 ms: the deadline is 2 × 100 + 300 ms.
    w.submit(test_piece(1, "test.sleep", serde_json::json!(60_000), 100));
    std::thread::sleep(Duration::from_millis(100));
    let hung_pid = children(&w)["pid"].as_u64().expect("a child runs");
    let got = wait_for(&mut w, 1, Duration::from_secs(10));
    let waited = start.elapsed();
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].1["error"].as_str().is_some_and(|e| e.contains("did not answer within")), "{:?}", got[0]);
    assert!(waited >= Duration::from_millis(500) && waited < Duration::from_secs(3), "{waited:?}");
    assert!(!std::path::Path::new(&format!("/proc/{hung_pid}")).exists(), "the hung child was killed and reaped");
    w.submit(test_piece(2, "test.sleep", serde_json::json!(10), 100));
    let got = wait_for(&mut w, 1, Duration::from_secs(10));
    assert_eq!(got, vec![(2, serde_json::json!({ "slept_ms": 10 }))]);
}

#[test]
fn a_missing_executable_is_an_error_answer_and_undescribed_work_runs_on_the_thread() {
    let mut w = Worker::new(Isolation::Process {
        command: "/nonexistent/sojourn-offload".into(),
        grace: Duration::from_secs(1),
    });
    w.submit(solve_piece(1, small_solve()));
    w.submit(Offload { tag: 2, work: Box::new(|| serde_json::json!("closure")) });
    let got = wait_for(&mut w, 2, Duration::from_secs(10));
    assert_eq!(got.len(), 2, "{got:?}");
    let why = got[0].1["error"].as_str().unwrap_or_default();
    assert!(why.contains("/nonexistent/sojourn-offload") && why.contains("cannot be started"), "{why}");
    assert_eq!(got[1], (2, serde_json::json!("closure")));
}

#[test]
fn the_session_settings_name_a_bad_isolation() {
    use sojourn_jni::session::Settings;
    let bad = Settings { offload_isolation: "sandbox".into(), ..Settings::default() };
    assert!(bad.isolation().is_err_and(|e| e.to_string().contains("'sandbox'")));
    let no_command = Settings { offload_isolation: "process".into(), ..Settings::default() };
    assert!(no_command.isolation().is_err_and(|e| e.to_string().contains("offload_command")));
    let ok =
        Settings { offload_isolation: "process".into(), offload_command: Some("/x/y".into()), ..Settings::default() };
    assert!(
        matches!(ok.isolation(), Ok(Isolation::Process { command, .. }) if command == std::path::Path::new("/x/y"))
    );
    assert_eq!(Settings::default().isolation().ok(), Some(Isolation::Thread));
}
