//! The bridge's own cost of a `NODE_UPDATE` that changes nothing (a
//! heartbeat, no asks, nothing decided), below JNI: the JSON step
//! (`api::step`, decode and encode with serde) beside the binary one
//! (`api::step_wire`), fifo (or the policy named) with 1,000 nodes and 500
//! apps that ask nothing. Prints p50/p99 per step. For repeatable instruction counts run it under
//! `valgrind --tool=callgrind` with a small count:
//!
//!   cargo bench -p sojourn-jni --bench bridge            # 200,000 steps each
//!   cargo bench -p sojourn-jni --bench bridge -- 1000
//!   cargo bench -p sojourn-jni --bench bridge -- 20000 hfsp

use sojourn_core::{AppId, AppSpec, Event, NodeId, NodeSpec, Resources};
use sojourn_jni::{api, wire};
use std::time::Instant;

fn percentile(sorted: &[u64], q: f64) -> u64 {
    sorted[((q * sorted.len() as f64) as usize).min(sorted.len() - 1)]
}

fn open(policy: &str) -> u64 {
    let h = api::create(policy, Vec::new(), Vec::new(), "{\"seed\":1}", 2).expect("the policy opens");
    let mut setup = Vec::new();
    for n in 1..=1000u32 {
        setup.push(Event::NodeAdded(NodeSpec {
            node: NodeId(n),
            name: format!("h{n}:8041"),
            rack: format!("/r{}", n % 40),
            labels: Vec::new(),
            capacity: Resources::new(65_536, 64),
        }));
    }
    for a in 1..=500u32 {
        setup.push(Event::AppAdded(AppSpec {
            app: AppId(a),
            name: format!("bench-{a}"),
            queue: "root.default".to_string(),
            user: format!("u{}", a % 20),
            priority: 0,
            deadline: None,
            value: None,
        }));
    }
    let json = serde_json::to_string(&setup).expect("events encode");
    api::step(h, 0, &json).expect("the setup applies");
    h
}

fn report(what: &str, mut lat: Vec<u64>) {
    lat.sort_unstable();
    println!(
        "{what}: p50 {:.2} us, p99 {:.2} us",
        percentile(&lat, 0.5) as f64 / 1e3,
        percentile(&lat, 0.99) as f64 / 1e3
    );
}

fn main() {
    let steps: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(200_000);
    // cargo bench passes `--bench`; a word that is not a flag nor a count is the policy
    let policy = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-') && a.parse::<usize>().is_err())
        .unwrap_or_else(|| "fifo".to_string());
    println!("policy {policy}");
    let h = open(&policy);
    let mut lat = Vec::with_capacity(steps);
    for i in 0..steps {
        let json = format!("[{{\"type\":\"node_heartbeat\",\"node\":{}}}]", 1 + i % 1000);
        let t = Instant::now();
        let r = api::step(h, 1 + i as i64, &json).expect("a heartbeat applies");
        lat.push(t.elapsed().as_nanos() as u64);
        assert!(r.contains("\"decisions\":[]"), "a heartbeat decided something: {r}");
    }
    report("idle heartbeat, JSON step", lat);

    let mut lat = Vec::with_capacity(steps);
    let (mut events, mut out) = (Vec::new(), vec![0u8; 4096]);
    for i in 0..steps {
        events.clear();
        wire::encode_events(&[Event::NodeHeartbeat { node: NodeId(1 + (i % 1000) as u32) }], &mut events);
        let t = Instant::now();
        let n = api::step_wire(h, (steps + 1 + i) as i64, &events, &mut out).expect("a heartbeat applies");
        lat.push(t.elapsed().as_nanos() as u64);
        assert_eq!(n, 1 + 8 + 4 + 4 + 4, "a heartbeat decided, refused or logged something");
    }
    report("idle heartbeat, binary step", lat);
    api::close(h).expect("closes");
}
