//! Fuzzing of the bridge: the event batches the shim sends, valid and
//! malformed, through the same decoding and core the RM uses, under every
//! policy, each batch as JSON or in the binary layout of
//! `sojourn_jni::wire` (the hot events binary, the others as JSON under
//! their tag), damaged at the byte level now and then. Each input is a fresh session fed a few batches that mix
//! plausible events (small ids, so they hit live nodes, apps and containers),
//! hostile values (negative, huge, wrong types, unknown ids and types) and
//! byte-level garbage, with the host's follow-ups (confirm, reject with each
//! refusal kind, complete, progress) built from the decisions that came
//! back. It asserts, for every input:
//!
//! - no panic (the bridge's guard would turn one into a Java exception, but a
//!   panic here is a bug all the same), and a batch that is a JSON array,
//!   or binary and undamaged, is never refused whole;
//! - every refused event is reported once with its index and a kind;
//! - the mirror's invariants hold after every batch (no node's books differ
//!   from its containers, none over-committed unless the host made it so:
//!   a NODE_RESOURCE_UPDATE below what runs there is YARN's own over-commit,
//!   and a suspension the host refuses after the core reused the vcores is
//!   one that YARN's own check of room then undoes, which this fuzz host,
//!   confirming at random, does not model).
//!
//! `SOJOURN_FUZZ_CASES` sets the inputs (default 100,000); `SOJOURN_FUZZ_SEED`
//! replays a run. The count is printed to stderr.

use serde_json::{json, Value};
use sojourn_core::Rng;
use sojourn_jni::session::{Session, Settings};
use sojourn_jni::wire;
use std::collections::BTreeMap;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};

const POLICIES: [&str; 6] = ["fifo", "fair", "capacity", "hfsp", "kairos", "bigc"];

fn cases() -> u64 {
    std::env::var("SOJOURN_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000)
}

fn seed() -> u64 {
    std::env::var("SOJOURN_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_b41d)
}

/// A number: mostly small, sometimes at or past the edges of its type.
fn number(r: &mut Rng) -> Value {
    match r.below(12) {
        0 => json!(-1),
        1 => json!(u32::MAX),
        2 => json!(u64::MAX),
        3 => json!(i64::MIN),
        4 => json!(1.5),
        5 => json!("7"),
        6 => Value::Null,
        _ => json!(r.below(6)),
    }
}

fn resources(r: &mut Rng) -> Value {
    if r.below(8) == 0 {
        return json!({"memory_mb": number(r), "vcores": number(r)});
    }
    json!({"memory_mb": 256 * (1 + r.below(16)), "vcores": 1 + r.below(4)})
}

fn pick<T: Clone>(r: &mut Rng, xs: &[T]) -> T {
    xs[r.below(xs.len() as u64) as usize].clone()
}

fn phase(r: &mut Rng) -> Value {
    json!(pick(r, &["am", "map", "reduce", "other", "shuffle"]))
}

/// One event: plausible most of the time, hostile some of the time.
fn event(r: &mut Rng, containers: &[u64]) -> Value {
    let id = |r: &mut Rng| if r.below(10) == 0 { number(r) } else { json!(r.below(5)) };
    let container = |r: &mut Rng| match containers.len() {
        0 => json!(r.below(10)),
        n if r.below(8) > 0 => json!(containers[r.below(n as u64) as usize]),
        _ => number(r),
    };
    match r.below(14) {
        0 => json!({"type": "node_added", "node": id(r), "name": format!("h{}", r.below(5)),
                    "rack": format!("/r{}", r.below(2)), "capacity": resources(r)}),
        1 => json!({"type": "node_removed", "node": id(r)}),
        2 => json!({"type": "node_resource_updated", "node": id(r), "capacity": resources(r)}),
        3 | 4 => json!({"type": "node_heartbeat", "node": id(r)}),
        5 => {
            let queue = pick(r, &["default", "root.default", "", "x"]);
            json!({"type": "app_added", "app": id(r), "queue": queue, "user": "u", "priority": number(r)})
        }
        6 => json!({"type": "app_removed", "app": id(r)}),
        7 | 8 => {
            let priority = if r.below(6) == 0 { number(r) } else { json!(pick(r, &[0, 10, 20])) };
            let count = if r.below(6) == 0 { number(r) } else { json!(r.below(5)) };
            let mut ask = json!({"priority": priority, "capability": resources(r), "count": count, "phase": phase(r)});
            if r.below(4) == 0 {
                ask["locality"] = json!([{"Node": [r.below(5), r.below(3)]}, {"Rack": ["/r0", r.below(3)]}]);
                ask["relax_locality"] = json!(r.below(2) == 0);
            }
            json!({"type": "asks_updated", "app": id(r), "asks": [ask]})
        }
        9 => json!({"type": "container_started", "container": container(r)}),
        10 => {
            let outcome = pick(r, &["finished", "released", "preempted", "lost", "expired", "killed", "gone"]);
            json!({"type": "container_completed", "container": container(r), "outcome": outcome})
        }
        11 => {
            let progress = pick(r, &[json!(0.5), json!(1.0), json!(-0.1), json!(7), json!("half")]);
            json!({"type": "container_progress", "container": container(r), "progress": progress})
        }
        12 => json!({"type": "container_recovered", "container": container(r), "app": id(r), "node": id(r),
                     "priority": 20, "resources": resources(r), "phase": phase(r), "suspended": r.below(3) == 0}),
        _ => json!({"type": pick(r, &["schedule_all", "node_teleported", "rejected"])}),
    }
}

/// The host's follow-ups to a batch's decisions. `nodes` learns where each
/// container runs; `overcommit_ok` the nodes of refused suspensions.
fn follow_ups(
    r: &mut Rng,
    decisions: &[Value],
    containers: &mut Vec<u64>,
    nodes: &mut BTreeMap<u64, u64>,
    overcommit_ok: &mut std::collections::BTreeSet<String>,
) -> Vec<Value> {
    let mut out = Vec::new();
    for d in decisions {
        if let Some(c) = d["container"].as_u64() {
            if !containers.contains(&c) {
                containers.push(c);
            }
            if let Some(n) = d["node"].as_u64() {
                nodes.insert(c, n);
            }
        }
        match r.below(5) {
            0 => {
                if d["type"] == "preempt" {
                    if let Some(n) = d["container"].as_u64().and_then(|c| nodes.get(&c)) {
                        overcommit_ok.insert(format!("node#{n} over-committed"));
                    }
                }
                let kind = pick(r, &["retry", "never", "error"]);
                out.push(json!({"type": "rejected", "decision": d, "reason": "fuzz", "kind": kind}));
            }
            1 if d["type"] == "allocate" => {
                out.push(json!({"type": "container_completed", "container": d["container"], "outcome": "finished"}))
            }
            _ if d["type"] == "allocate" => out.push(json!({"type": "container_started", "container": d["container"]})),
            _ => {}
        }
    }
    out
}

/// Turns a batch into text, sometimes damaged at the byte level.
fn text(r: &mut Rng, batch: &[Value]) -> String {
    let mut s = Value::Array(batch.to_vec()).to_string();
    match r.below(20) {
        0 => s.truncate(r.below(s.len() as u64 + 1) as usize),
        1 => {
            let i = r.below(s.len() as u64) as usize;
            if s.is_char_boundary(i) && s.is_char_boundary(i + 1) {
                let with = pick(r, &["{", "]", "\"", "9", "-"]);
                s.replace_range(i..i + 1, with);
            }
        }
        _ => {}
    }
    s
}

/// A batch in the binary layout as the shim encodes it: each event that
/// decodes as one in binary where the layout has it (else as JSON), each
/// hostile one as its JSON under the JSON tag; sometimes damaged at the byte
/// level. Returns the bytes and whether they were damaged.
fn binary(r: &mut Rng, batch: &[Value]) -> (Vec<u8>, bool) {
    let mut out = vec![wire::VERSION];
    out.extend_from_slice(&(batch.len() as u32).to_le_bytes());
    for v in batch {
        match serde_json::from_value::<sojourn_core::Event>(v.clone()) {
            Ok(e) => {
                let mut one = Vec::new();
                wire::encode_events(&[e], &mut one);
                out.extend_from_slice(&one[5..]); // without its version and count
            }
            Err(_) => {
                let text = v.to_string();
                out.push(wire::TAG_JSON);
                out.extend_from_slice(&(text.len() as u32).to_le_bytes());
                out.extend_from_slice(text.as_bytes());
            }
        }
    }
    let damaged = match r.below(10) {
        0 => {
            out.truncate(r.below(out.len() as u64) as usize);
            true
        }
        1 => {
            let i = r.below(out.len() as u64) as usize;
            out[i] = r.below(256) as u8;
            true
        }
        2 => {
            out.push(r.below(256) as u8);
            true
        }
        _ => false,
    };
    (out, damaged)
}

fn run_one(r: &mut Rng) -> Result<(usize, usize), String> {
    let policy = POLICIES[r.below(POLICIES.len() as u64) as usize];
    let mut s = Session::open(policy, &BTreeMap::new(), Settings::default()).map_err(|e| e.to_string())?;
    let (mut applied, mut refused) = (0, 0);
    let mut containers = Vec::new();
    let mut carry: Vec<Value> = Vec::new();
    let mut shrunk = std::collections::BTreeSet::new();
    let mut where_ = BTreeMap::new();
    for step in 0..4u64 {
        let mut batch = std::mem::take(&mut carry);
        for _ in 0..1 + r.below(10) {
            batch.push(event(r, &containers));
        }
        if step == 0 {
            batch.insert(
                0,
                json!({"type": "node_added", "node": 1, "name": "h1", "rack": "/r0",
                                   "capacity": {"memory_mb": 4096, "vcores": 4}}),
            );
            batch.insert(1, json!({"type": "app_added", "app": 1, "queue": "default", "user": "u"}));
        }
        let now = sojourn_core::Time(step * 1000);
        // What the core was sent, as far as the bookkeeping of over-committed
        // nodes below needs it: a damaged binary batch may carry other valid
        // events than the batch it was made from.
        let mut sent = batch.clone();
        let (result, input, must_apply) = if r.below(2) == 0 {
            let input = text(r, &batch);
            let is_array = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(&input).is_ok();
            (s.handle_json(now, &input), input, is_array)
        } else {
            let (bytes, damaged) = binary(r, &batch);
            if damaged {
                sent = wire::decode_events(&bytes)
                    .map(|es| es.into_iter().flatten().filter_map(|e| serde_json::to_value(e).ok()).collect())
                    .unwrap_or_default();
            }
            (s.handle_wire(now, &bytes), format!("binary {bytes:?} of {}", Value::Array(batch.clone())), !damaged)
        };
        let resp = match result {
            Ok(resp) => resp,
            Err(e) if !must_apply => {
                refused += 1;
                let _ = e;
                continue;
            }
            Err(e) => return Err(format!("{policy}: a batch was refused whole: {e}: {input}")),
        };
        let mut seen = std::collections::BTreeSet::new();
        for e in &resp.errors {
            if !seen.insert(e.index) {
                return Err(format!("{policy}: event {} reported twice: {input}", e.index));
            }
        }
        refused += resp.errors.len();
        applied += batch.len().saturating_sub(resp.errors.len());
        for e in &sent {
            // A shrunk node, and a node a recovered container over-commits
            // (booked as the host reports it), may be over-committed.
            if e["type"] == "node_resource_updated" || e["type"] == "container_recovered" {
                shrunk.insert(format!("node#{} over-committed", e["node"]));
            }
        }
        if let Err(e) = s.check_invariants() {
            let m = e.to_string();
            if !shrunk.iter().any(|n| m.contains(n.as_str())) {
                return Err(format!("{policy}: mirror invariant broken: {m} after {input}"));
            }
        }
        let decisions: Vec<Value> = resp.decisions.iter().filter_map(|d| serde_json::to_value(d).ok()).collect();
        carry = follow_ups(r, &decisions, &mut containers, &mut where_, &mut shrunk);
    }
    Ok((applied, refused))
}

#[test]
fn fuzz_the_bridge_under_every_policy() {
    let (n, seed) = (cases(), seed());
    let mut r = Rng::seeded(seed);
    let (mut applied, mut refused, mut panics) = (0usize, 0usize, 0u64);
    let started = std::time::Instant::now();
    let mut failures = Vec::new();
    for i in 0..n {
        let mut case = r.fork();
        match catch_unwind(AssertUnwindSafe(|| run_one(&mut case))) {
            Ok(Ok((a, f))) => {
                applied += a;
                refused += f;
            }
            Ok(Err(e)) => failures.push(format!("input {i}: {e}")),
            Err(_) => {
                panics += 1;
                failures.push(format!("input {i}: panicked"));
            }
        }
        if failures.len() >= 5 {
            break;
        }
    }
    let line = format!(
        "fuzz bridge: {n} inputs, {panics} panics, {} invariant or protocol failures, {applied} events applied, \
         {refused} refused, {:.1} s (seed {seed})\n",
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
    assert!(failures.is_empty(), "{line}{}", failures.join("\n"));
}
