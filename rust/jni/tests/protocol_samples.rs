//! The protocol samples the shim's `ProtocolSchemaTest` checks Java against
//! (`sojourn_jni::api::{event_samples, decision_samples}`): every variant of
//! `Event` and `Decision` has one, and every field of each is away from its
//! default. The matches below name every variant with no wildcard, so a new
//! variant does not compile until it is counted here, and then fails
//! `every_variant_has_a_sample` until it has a sample.

use serde_json::{json, Value};
use sojourn_core::{Decision, Event};
use sojourn_jni::api;

const EVENT_VARIANTS: usize = 14;

fn event_variant(e: &Event) -> usize {
    match e {
        Event::NodeAdded(_) => 0,
        Event::NodeRemoved { .. } => 1,
        Event::NodeResourceUpdated { .. } => 2,
        Event::NodeHeartbeat { .. } => 3,
        Event::AppAdded(_) => 4,
        Event::AppRemoved { .. } => 5,
        Event::AsksUpdated { .. } => 6,
        Event::ContainerStarted { .. } => 7,
        Event::ContainerCompleted { .. } => 8,
        Event::ContainerProgress { .. } => 9,
        Event::Rejected { .. } => 10,
        Event::ContainerRecovered { .. } => 11,
        Event::ScheduleAll => 12,
        Event::OffloadDone { .. } => 13,
    }
}

const DECISION_VARIANTS: usize = 5;

fn decision_variant(d: &Decision) -> usize {
    match d {
        Decision::Allocate { .. } => 0,
        Decision::Reserve { .. } => 1,
        Decision::Unreserve { .. } => 2,
        Decision::Preempt { .. } => 3,
        Decision::Resume { .. } => 4,
    }
}

#[test]
fn every_variant_has_a_sample() {
    let mut events = [false; EVENT_VARIANTS];
    for e in api::event_samples() {
        events[event_variant(&e)] = true;
    }
    let missing: Vec<usize> = (0..EVENT_VARIANTS).filter(|i| !events[*i]).collect();
    assert!(missing.is_empty(), "event variants {missing:?} (in event_variant's order) have no sample");
    let mut decisions = [false; DECISION_VARIANTS];
    for d in api::decision_samples() {
        decisions[decision_variant(&d)] = true;
    }
    let missing: Vec<usize> = (0..DECISION_VARIANTS).filter(|i| !decisions[*i]).collect();
    assert!(missing.is_empty(), "decision variants {missing:?} (in decision_variant's order) have no sample");
}

/// The default of a field whose serde default is a value of its own (the
/// rest default to null, 0, false, "" or empty).
fn own_default(field: &str) -> Option<Value> {
    match field {
        "relax_locality" => Some(json!(true)),
        "kind" => Some(json!("retry")),
        "phase" => Some(json!("other")),
        _ => None,
    }
}

/// The path of every value in `v` that holds its field's default.
fn defaults(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Null | Value::Bool(false) => out.push(path.to_string()),
        Value::Number(n) if n.as_f64() == Some(0.0) => out.push(path.to_string()),
        Value::String(s) if s.is_empty() => out.push(path.to_string()),
        Value::Array(a) if a.is_empty() => out.push(path.to_string()),
        Value::Object(o) if o.is_empty() => out.push(path.to_string()),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| defaults(x, &format!("{path}[{i}]"), out)),
        Value::Object(o) => {
            for (k, x) in o {
                let here = format!("{path}.{k}");
                match own_default(k) {
                    Some(d) if *x == d => out.push(here),
                    Some(_) => {}
                    None => defaults(x, &here, out),
                }
            }
        }
        _ => {}
    }
}

#[test]
fn every_field_of_every_sample_is_away_from_its_default() {
    let events = api::event_samples().into_iter().map(|e| serde_json::to_value(e).unwrap());
    let samples = events.chain(api::decision_samples().into_iter().map(|d| serde_json::to_value(d).unwrap()));
    for s in samples {
        let mut found = Vec::new();
        defaults(&s, "", &mut found);
        assert!(found.is_empty(), "{s}: {found:?} hold their default");
    }
    // Fields skipped when they hold their default are written out.
    let all = serde_json::to_string(&api::event_samples()).unwrap();
    for field in [r#""kind":"never""#, r#""sort_finished":1500"#, r#""gpus":"#] {
        assert!(all.contains(field), "{field} in {all}");
    }
}

#[test]
fn the_round_trip_gives_back_what_it_was_given_and_names_a_bad_field() {
    let all = serde_json::to_string(&api::event_samples()).unwrap();
    assert_eq!(api::events_round_trip_for_test(&all).unwrap(), all);
    // A misspelt optional field is dropped (so the shim's test sees the difference) ...
    let out = api::events_round_trip_for_test(r#"[{"type":"app_added","app":1,"queue":"q","user":"u","prio":4}]"#);
    assert!(!out.unwrap().contains(r#""prio""#));
    // ... and a misspelt required one is refused, naming it.
    let e = api::events_round_trip_for_test(r#"[{"type":"node_removed","nod":1}]"#).unwrap_err();
    assert!(e.to_string().contains("node"), "{e}");
}

#[test]
fn the_response_sample_carries_every_decision_sample() {
    let r: Value = serde_json::from_str(&api::response_sample_for_test().unwrap()).unwrap();
    let decisions: Vec<Decision> = serde_json::from_value(r["decisions"].clone()).unwrap();
    assert_eq!(decisions, api::decision_samples());
    let kinds: Vec<&str> = r["errors"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["retry", "never", "error"]);
    assert_eq!(r["next_timeout"], 123_456);
}
