//! `sojourn replay` on a recording made the way the YARN shim makes one (a
//! `sojourn-jni` session with its flight recorder on): the replay reads the
//! policy and seed from the `.meta` file, reproduces every recorded
//! decision, and reports the first difference when the recording disagrees.

use sojourn_core::{
    AppId, AppSpec, Ask, Decision, Event, NodeId, NodeSpec, Outcome, Phase, PreemptMode, Priority, Resources, Time,
};
use sojourn_jni::session::{Session, Settings};
use sojourn_sim::replay::{cli, replay, ReplayOptions};
use std::collections::BTreeMap;

fn app(id: u32, queue: &str) -> Event {
    Event::AppAdded(AppSpec::new(AppId(id), queue, "u"))
}

fn asks(id: u32, n: u32) -> Event {
    Event::AsksUpdated { app: AppId(id), asks: vec![Ask::new(Priority::MAP, Resources::new(1024, 1), n, Phase::Map)] }
}

/// Fair with preemption: queue a fills two nodes, b arrives and is starved,
/// the policy kills one of a's containers after the timeout (a timer), one
/// allocation is rejected by the "RM", containers finish.
fn record(path: &std::path::Path) -> usize {
    let params: BTreeMap<String, String> = [
        ("preemption", "true"),
        ("queue.root.b.fair_share_preemption_timeout_ms", "2000"),
        ("queue.root.a.weight", "1"),
        ("queue.root.b.weight", "1"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let settings = Settings { seed: 7, record: Some(path.display().to_string()), ..Settings::default() };
    let mut s = Session::open("fair", &params, settings).expect("session");
    let mut decisions = 0;
    let mut count = |r: Result<sojourn_jni::session::Response, sojourn_jni::error::BridgeError>| {
        let r = r.expect("a step");
        decisions += r.decisions.len();
        r.decisions
    };
    let node = |n: u32| {
        Event::NodeAdded(NodeSpec {
            node: NodeId(n),
            name: format!("n{n}"),
            rack: "/r".into(),
            labels: vec![],
            capacity: Resources::new(2048, 2),
        })
    };
    count(s.handle(Time(0), vec![node(0), node(1), app(1, "a"), asks(1, 6)]));
    let mut running = Vec::new();
    // FairScheduler places one container a heartbeat
    for n in [0, 1, 0, 1] {
        for d in count(s.handle(Time(100), vec![Event::NodeHeartbeat { node: NodeId(n) }])) {
            if let Decision::Allocate { container, .. } = d {
                running.push(container);
            }
        }
    }
    assert_eq!(running.len(), 4, "a fills both nodes");
    // the RM refuses nothing here; b arrives and starves
    count(s.handle(Time(1000), vec![app(2, "b"), asks(2, 2)]));
    let mut killed = Vec::new();
    for t in [2000, 3000, 3500, 4000, 5000] {
        for d in count(s.handle(Time(t), vec![])) {
            if let Decision::Preempt { container, mode: PreemptMode::Kill } = d {
                killed.push(container);
            }
        }
    }
    assert!(!killed.is_empty(), "fair preempted nothing for the starved queue");
    let done: Vec<Event> =
        killed.iter().map(|c| Event::ContainerCompleted { container: *c, outcome: Outcome::Preempted }).collect();
    count(s.handle(Time(5100), done));
    let ds = count(s.handle(Time(5200), vec![Event::NodeHeartbeat { node: NodeId(0) }]));
    // the RM rejects the first allocation it gets back, as a shim would for a
    // node that just went away
    if let Some(d @ Decision::Allocate { .. }) = ds.into_iter().next() {
        count(s.handle(
            Time(5300),
            vec![Event::Rejected { decision: d, reason: "test".into(), kind: Default::default() }],
        ));
    }
    count(s.handle(Time(5400), vec![Event::NodeHeartbeat { node: NodeId(1) }]));
    count(s.handle(Time(9000), vec![Event::ContainerCompleted { container: running[0], outcome: Outcome::Finished }]));
    count(s.handle(Time(9100), vec![Event::NodeHeartbeat { node: NodeId(0) }]));
    drop(s);
    decisions
}

#[test]
fn a_recorded_rm_session_replays_to_identical_decisions() {
    let path = std::env::temp_dir().join(format!("sojourn-sim-replay-{}.jsonl", std::process::id()));
    for ext in ["", ".meta", ".decisions", ".prev", ".prev.meta", ".prev.decisions"] {
        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
    }
    let made = record(&path);
    let r = replay(&path, &ReplayOptions::default()).expect("replay");
    assert_eq!((r.meta.policy.as_str(), r.meta.seed), ("fair", 7), "settings come from the .meta file");
    assert_eq!(r.decisions.len(), made);
    assert_eq!(r.recorded.as_ref().map(Vec::len), Some(made));
    assert_eq!(r.first_difference(), None);
    let out = cli(&path, &ReplayOptions::default()).expect("identical");
    assert!(out.contains(&format!("identical to the {made} recorded")), "{out}");

    // Another policy decides otherwise, and the replay says where.
    let other = ReplayOptions { policy: Some("fifo".into()), ..ReplayOptions::default() };
    let e = cli(&path, &other).expect_err("fifo differs from the recorded fair").to_string();
    assert!(e.contains("replay differs from the recording at decision"), "{e}");

    // A tampered recording is caught too.
    let dpath = format!("{}.decisions", path.display());
    let text = std::fs::read_to_string(&dpath).expect("decisions");
    let mut lines: Vec<&str> = text.lines().collect();
    lines.pop();
    std::fs::write(&dpath, lines.join("\n")).expect("write");
    let e = cli(&path, &ReplayOptions::default()).expect_err("one decision short").to_string();
    assert!(e.contains(&format!("at decision {made} of {}", made - 1)), "{e}");
}
