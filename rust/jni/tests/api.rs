//! The bridge's safe API, exercised without a JVM.

use sojourn_core::{Decision, Record};
use sojourn_jni::api;
use sojourn_jni::error::BridgeError;

fn open(policy: &str, kv: &[(&str, &str)], settings: &str) -> Result<u64, BridgeError> {
    let keys = kv.iter().map(|(k, _)| k.to_string()).collect();
    let values = kv.iter().map(|(_, v)| v.to_string()).collect();
    api::create(policy, keys, values, settings, 3)
}

const SETUP: &str = r#"[
  {"type":"node_added","node":1,"name":"h1:1234","rack":"/default-rack","capacity":{"memory_mb":8192,"vcores":8}},
  {"type":"app_added","app":1,"queue":"root.default","user":"alice"},
  {"type":"asks_updated","app":1,"asks":[{"priority":0,"capability":{"memory_mb":2048,"vcores":1},"count":3,"phase":"am"}]},
  {"type":"node_heartbeat","node":1}
]"#;

fn response(json: &str) -> serde_json::Value {
    serde_json::from_str(json).unwrap()
}

#[test]
fn unknown_policy_is_a_config_error_naming_it() {
    let e = open("fiffo", &[], "").unwrap_err();
    assert!(matches!(e, BridgeError::Config(_)), "{e:?}");
    assert!(e.to_string().contains("fiffo") && e.to_string().contains("fifo"), "{e}");
    assert_eq!(e.java_class(), "java/lang/IllegalArgumentException");
}

#[test]
fn unknown_parameter_is_a_config_error_naming_it() {
    let e = open("fifo", &[("quantum_ms", "5")], "").unwrap_err();
    assert!(matches!(e, BridgeError::Config(_)) && e.to_string().contains("quantum_ms"), "{e}");
}

#[test]
fn unknown_setting_is_a_config_error() {
    let e = open("fifo", &[], r#"{"sed": 3}"#).unwrap_err();
    assert!(matches!(e, BridgeError::Config(_)) && e.to_string().contains("sed"), "{e}");
}

#[test]
fn a_heartbeat_allocates_and_logs_come_back() {
    let h = open("fifo", &[], r#"{"seed": 7}"#).unwrap();
    let created = api::drain_logs();
    assert!(created.contains("policy fifo"), "{created}");
    let r = response(&api::step(h, 10, SETUP).unwrap());
    let decisions: Vec<Decision> = serde_json::from_value(r["decisions"].clone()).unwrap();
    assert_eq!(decisions.len(), 3, "{r}");
    assert!(decisions.iter().all(|d| matches!(d, Decision::Allocate { .. })));
    assert_eq!(r["errors"].as_array().unwrap().len(), 0);
    let d = response(&api::describe(h).unwrap());
    assert_eq!(d["cluster"]["containers"], 3);
    assert_eq!(d["stats"]["allocations"], 3);
    api::close(h).unwrap();
}

#[test]
fn a_bad_event_is_reported_by_index_and_the_rest_applies() {
    let h = open("fifo", &[], "").unwrap();
    let batch = r#"[
      {"type":"node_heartbeat","node":9},
      {"type":"node_added","node":1,"name":"h1","rack":"/r","capacity":{"memory_mb":1024,"vcores":1}}
    ]"#;
    let r = response(&api::step(h, 0, batch).unwrap());
    let errors = r["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["index"], 0);
    assert!(errors[0]["message"].as_str().unwrap().contains("node#9"));
    assert_eq!(response(&api::describe(h).unwrap())["cluster"]["nodes"], 1);
    api::close(h).unwrap();
}

#[test]
fn a_batch_that_is_not_an_array_is_bad_input_and_changes_nothing() {
    let h = open("fifo", &[], "").unwrap();
    let e = api::step(h, 0, r#"{"type":"node_heartbeat","node":1}"#).unwrap_err();
    assert!(matches!(e, BridgeError::BadInput(_)), "{e:?}");
    assert_eq!(response(&api::describe(h).unwrap())["stats"]["events"], 0);
    api::close(h).unwrap();
}

/// Reliability finding 1: one undecodable event (a negative priority, a
/// count past u32, an unknown type) used to drop its whole batch, and with it
/// the completions beside it; the mirror then held containers YARN had freed.
#[test]
fn a_malformed_event_inside_a_good_batch_is_refused_alone() {
    let h = open("fifo", &[], "").unwrap();
    let r = response(&api::step(h, 0, SETUP).unwrap());
    let first = r["decisions"][0]["container"].as_u64().unwrap();
    let batch = format!(
        r#"[
      {{"type":"asks_updated","app":1,"asks":[{{"priority":-1,"capability":{{"memory_mb":1024,"vcores":1}},"count":1}}]}},
      {{"type":"container_completed","container":{first},"outcome":"finished"}},
      {{"type":"asks_updated","app":1,"asks":[{{"priority":20,"capability":{{"memory_mb":1024,"vcores":1}},"count":4294967296}}]}},
      {{"type":"node_teleported","node":1}},
      {{"type":"app_removed","app":77}}
    ]"#
    );
    let r = response(&api::step(h, 1, &batch).unwrap());
    let errors = r["errors"].as_array().unwrap();
    let by_index: Vec<(u64, &str)> =
        errors.iter().map(|e| (e["index"].as_u64().unwrap(), e["kind"].as_str().unwrap())).collect();
    assert_eq!(by_index, vec![(0, "error"), (2, "error"), (3, "error"), (4, "never")], "{r}");
    assert!(errors[0]["message"].as_str().unwrap().contains("-1"), "{r}");
    assert!(errors[3]["message"].as_str().unwrap().contains("app#77"), "{r}");
    // The completion in the middle applied: the mirror holds 2 containers, not 3.
    let d = response(&api::describe(h).unwrap());
    assert_eq!(d["cluster"]["containers"], 2, "{d}");
    assert_eq!(d["cluster"]["allocated"]["memory_mb"], 4096, "{d}");
    api::close(h).unwrap();
}

#[test]
fn a_closed_handle_is_an_error_not_a_crash() {
    let h = open("fifo", &[], "").unwrap();
    api::close(h).unwrap();
    assert!(matches!(api::close(h), Err(BridgeError::Closed(_))));
    assert!(matches!(api::step(h, 0, "[]"), Err(BridgeError::Closed(_))));
    assert!(matches!(api::next_wake(999_999), Err(BridgeError::Closed(_))));
}

#[test]
fn a_clock_that_goes_backwards_is_refused_and_applies_nothing() {
    let h = open("fifo", &[], "").unwrap();
    api::step(h, 100, SETUP).unwrap();
    let e = api::step(h, 99, r#"[{"type":"node_heartbeat","node":1}]"#).unwrap_err();
    assert!(matches!(&e, BridgeError::BadInput(m) if m.contains("clock went backwards")), "{e}");
    let d = response(&api::describe(h).unwrap());
    assert_eq!(d["stats"]["events"], 4, "the refused step applied nothing: {d}");
    response(&api::step(h, 100, "[]").unwrap()); // the same time again is fine
    api::close(h).unwrap();
}

#[test]
fn describe_carries_the_policys_own_metrics() {
    // Kairos counts its quantum ends: one task, a 1 s quantum, woken at 1 s
    // (every end woken for: lazy_quanta=false).
    let h = open("kairos", &[("quantum_ms", "1000"), ("lazy_quanta", "false")], "").unwrap();
    let map_task = SETUP.replace(r#""phase":"am""#, r#""phase":"map""#).replace(r#""count":3"#, r#""count":1"#);
    let r = response(&api::step(h, 0, &map_task).unwrap());
    assert!(!r["decisions"].as_array().unwrap().is_empty(), "{r}");
    response(&api::step(h, 1000, "[]").unwrap());
    let d = response(&api::describe(h).unwrap());
    assert_eq!(d["metrics"]["quantum_ends"], 1.0, "{d}");
    api::close(h).unwrap();
}

/// With the default lazy quanta, a task alone on its node is not woken at
/// its quantum ends: `quantum_ends` takes them when the task stops (here,
/// finishes at 2.5 s after ends at 1 s and 2 s), as `lazy_quanta` documents.
#[test]
fn a_lone_tasks_quantum_ends_are_counted_when_it_stops() {
    let h = open("kairos", &[("quantum_ms", "1000")], "").unwrap();
    let map_task = SETUP.replace(r#""phase":"am""#, r#""phase":"map""#).replace(r#""count":3"#, r#""count":1"#);
    let r = response(&api::step(h, 0, &map_task).unwrap());
    let c = r["decisions"][0]["container"].as_u64().unwrap();
    response(&api::step(h, 2000, "[]").unwrap());
    let d = response(&api::describe(h).unwrap());
    assert_eq!(d["metrics"]["quantum_ends"], serde_json::Value::Null, "not counted while dormant: {d}");
    let done = format!(r#"[{{"type":"container_completed","container":{c},"outcome":"finished"}}]"#);
    response(&api::step(h, 2500, &done).unwrap());
    let d = response(&api::describe(h).unwrap());
    assert_eq!(d["metrics"]["quantum_ends"], 2.0, "{d}");
    api::close(h).unwrap();
}

#[test]
fn a_rejection_rolls_the_mirror_back() {
    let h = open("fifo", &[], "").unwrap();
    let r = response(&api::step(h, 0, SETUP).unwrap());
    let first = r["decisions"][0].clone();
    let batch = serde_json::json!([{"type": "rejected", "decision": first, "reason": "node full in YARN"}]);
    let r = response(&api::step(h, 1, &batch.to_string()).unwrap());
    assert_eq!(r["errors"].as_array().unwrap().len(), 0, "{r}");
    let d = response(&api::describe(h).unwrap());
    assert_eq!(d["cluster"]["containers"], 2);
    assert_eq!(d["cluster"]["pending_containers"], 1);
    assert_eq!(d["stats"]["rejections"], 1);
    api::close(h).unwrap();
}

#[test]
fn the_flight_recorder_writes_one_record_per_step() {
    let path = std::env::temp_dir().join(format!("sojourn-jni-rec-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let settings = serde_json::json!({ "record": path.to_str().unwrap() }).to_string();
    let h = open("fifo", &[], &settings).unwrap();
    api::step(h, 5, SETUP).unwrap();
    api::step(h, 6, "[]").unwrap();
    api::close(h).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let records: Vec<Record> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 2);
    assert_eq!((records[0].now.0, records[0].events.len()), (5, 4), "the setup batch is one step");
    assert_eq!((records[1].now.0, records[1].events.len()), (6, 0), "a step with no event only fires timers");
    for ext in ["", ".decisions", ".meta"] {
        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sojourn-jni-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_recorder_writes_owner_only_files() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("rec-mode");
    let path = dir.join("rec.jsonl");
    let settings = serde_json::json!({ "record": path.to_str().unwrap() }).to_string();
    let h = open("fifo", &[], &settings).unwrap();
    api::step(h, 5, SETUP).unwrap();
    api::close(h).unwrap();
    for ext in ["", ".decisions", ".meta"] {
        let f = format!("{}{ext}", path.display());
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{f} is mode {mode:o}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_recorder_refuses_a_symbolic_link() {
    let dir = scratch("rec-link");
    let victim = dir.join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    for target in ["rec.jsonl", "rec.jsonl.meta"] {
        let path = dir.join("rec.jsonl");
        for ext in ["", ".meta", ".decisions"] {
            let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
        }
        std::os::unix::fs::symlink(&victim, dir.join(target)).unwrap();
        let settings = serde_json::json!({ "record": path.to_str().unwrap() }).to_string();
        let e = open("fifo", &[], &settings).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{target}: {e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me", "{target}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_recorder_rotates_past_its_cap() {
    let dir = scratch("rec-rotate");
    let path = dir.join("rec.jsonl");
    let settings = serde_json::json!({ "record": path.to_str().unwrap(), "record_max_mb": 1 }).to_string();
    let h = open("fifo", &[], &settings).unwrap();
    api::step(h, 0, SETUP).unwrap();
    let beats = format!("[{}]", vec![r#"{"type":"node_heartbeat","node":1}"#; 1000].join(","));
    for t in 1..=60 {
        api::step(h, t, &beats).unwrap();
    }
    api::close(h).unwrap();
    let size = |ext: &str| std::fs::metadata(format!("{}{ext}", path.display())).map(|m| m.len()).unwrap_or(0);
    assert!(size(".prev") >= 1 << 20 && size(".prev") < (1 << 20) + 64 * 1024, "{}", size(".prev"));
    assert!(size("") < 1 << 20, "the current segment restarted: {}", size(""));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}.meta", path.display())).unwrap()).unwrap();
    assert!(meta["segment"].as_u64().unwrap_or(0) >= 2, "{meta}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_catalog_lists_fifo() {
    let c: serde_json::Value = serde_json::from_str(&api::catalog()).unwrap();
    assert!(c.as_array().unwrap().iter().any(|p| p["name"] == "fifo"), "{c}");
}

#[test]
fn a_recording_replays_to_identical_decisions() {
    let path = std::env::temp_dir().join(format!("sojourn-jni-replay-{}.jsonl", std::process::id()));
    let dpath = format!("{}.decisions", path.display());
    let mpath = format!("{}.meta", path.display());
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&dpath);
    let settings = serde_json::json!({ "seed": 3, "record": path.to_str().unwrap() }).to_string();
    let h = open("fifo", &[], &settings).unwrap();
    let r = response(&api::step(h, 5, SETUP).unwrap());
    let first = r["decisions"][0].clone();
    let batch = serde_json::json!([
        {"type": "rejected", "decision": first, "reason": "test"},
        {"type": "node_heartbeat", "node": 1}
    ]);
    api::step(h, 9, &batch.to_string()).unwrap();
    api::close(h).unwrap();
    let out = api::replay_file(path.to_str().unwrap()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["identical"], true, "{v}");
    assert_eq!(v["decisions"], 4, "{v}");
    let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&mpath).unwrap()).unwrap();
    assert_eq!(meta["seed"], 3);
    for f in [path.to_str().unwrap(), &dpath, &mpath] {
        let _ = std::fs::remove_file(f);
    }
}

/// Reliability finding 10: after a panic the core was served again,
/// possibly half-applied. Now every later call on it fails, naming it.
#[test]
fn a_core_that_panicked_is_never_used_again() {
    let h = open("fifo", &[], "").unwrap();
    api::step(h, 0, SETUP).unwrap();
    let panicked = std::panic::catch_unwind(|| api::panic_in_session_for_test(h));
    assert!(panicked.is_err(), "the test hook panics");
    let e = api::step(h, 1, r#"[{"type":"node_heartbeat","node":1}]"#).unwrap_err();
    assert!(matches!(e, BridgeError::Poisoned(x) if x == h), "{e:?}");
    assert!(e.to_string().contains("rebuilt"), "{e}");
    assert!(matches!(api::describe(h), Err(BridgeError::Poisoned(_))));
    api::close(h).unwrap();
}

/// TetriSched's solve runs on the bridge's offload thread: the step that
/// starts a cycle returns at once with no allocation, a later call (a
/// heartbeat) brings the plan, and the recording, which holds the solver's
/// answer as an event, replays to the same decisions without solving.
#[test]
fn a_tetrisched_solve_runs_off_the_call_and_its_answer_replays() {
    let dir = scratch("offload");
    let path = dir.join("rec.jsonl");
    let settings = serde_json::json!({ "record": path.to_str().unwrap() }).to_string();
    let h = open("tetrisched", &[("slo_queues", "root.slo")], &settings).unwrap();
    let setup = r#"[
      {"type":"node_added","node":1,"name":"h1:1234","rack":"/r0","capacity":{"memory_mb":4096,"vcores":4}},
      {"type":"app_added","app":1,"queue":"root.slo","user":"alice"},
      {"type":"asks_updated","app":1,"asks":[{"priority":1,"capability":{"memory_mb":1024,"vcores":1},"count":2,"phase":"map","est_task_ms":8000}]},
      {"type":"node_heartbeat","node":1}
    ]"#;
    let r = response(&api::step(h, 4_000, setup).unwrap());
    assert_eq!(r["decisions"].as_array().map(Vec::len), Some(0), "the solve is not in the call: {r}");
    let d = response(&api::describe(h).unwrap());
    assert_eq!(d["state"]["solving"], true, "{d}");
    let mut allocated = 0;
    let mut t = 4_001;
    let start = std::time::Instant::now();
    while allocated == 0 && start.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let r = response(&api::step(h, t, r#"[{"type":"node_heartbeat","node":1}]"#).unwrap());
        allocated = r["decisions"].as_array().map_or(0, |a| a.iter().filter(|d| d["type"] == "allocate").count());
        t += 1;
    }
    assert_eq!(allocated, 2, "the plan arrives with a later heartbeat: the whole gang");
    let d = response(&api::describe(h).unwrap());
    assert_eq!(d["state"]["solving"], false, "{d}");
    assert_eq!(d["metrics"]["tetrisched.offloaded_solves"], 1.0, "{d}");
    api::close(h).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"offload_done\""), "the answer is recorded");
    let out = api::replay_file(path.to_str().unwrap()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["identical"], true, "{v}");
    assert_eq!(v["decisions"], 2, "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}
