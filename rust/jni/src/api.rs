//! The safe API the JNI functions call: sessions live in a registry keyed by
//! an opaque handle, so a stale or double-closed handle from Java is an
//! error, never a dangling pointer. Each session has its own lock; the
//! registry lock is held only to look a handle up.

use crate::error::{BridgeError, Result};
use crate::logbuf;
use crate::session::{EventError, Response, Session, Settings};
use sojourn_core::{
    AppId, AppSpec, Ask, ContainerId, Decision, Event, GangId, Locality, NodeId, NodeSpec, Outcome, Phase, PreemptMode,
    Priority, RefusalKind, Resources, Time,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

type Shared = Arc<Mutex<Session>>;

static SESSIONS: Mutex<BTreeMap<u64, Shared>> = Mutex::new(BTreeMap::new());
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

fn registry() -> MutexGuard<'static, BTreeMap<u64, Shared>> {
    // The registry holds no invariant a panic could break halfway.
    SESSIONS.lock().unwrap_or_else(|p| p.into_inner())
}

fn session(handle: u64) -> Result<Shared> {
    registry().get(&handle).cloned().ok_or(BridgeError::Closed(handle))
}

fn with_session<T>(handle: u64, f: impl FnOnce(&mut Session) -> Result<T>) -> Result<T> {
    let shared = session(handle)?;
    // A panic inside an earlier call was caught and reported, but it may
    // have left the mirror half-applied (the mirror applies an event before
    // the policy sees it): the session is never used again. The shim
    // rebuilds a core from YARN's own books instead.
    let mut s = shared.lock().map_err(|_| BridgeError::Poisoned(handle))?;
    f(&mut s)
}

/// Panics while holding the session, as a bug in a policy would: for the
/// shim's tests of its recovery from a poisoned core.
pub fn panic_in_session_for_test(handle: u64) -> Result<()> {
    with_session(handle, |_| -> Result<()> { panic!("deliberate panic inside core {handle} for a test") })
}

/// Opens a session. `keys`/`values` are the policy's parameters without the
/// `yarn.scheduler.sojourn.<policy>.` prefix; `settings` is a JSON object
/// ([`Settings`]); `log_level` as [`logbuf::install`].
pub fn create(policy: &str, keys: Vec<String>, values: Vec<String>, settings: &str, log_level: i32) -> Result<u64> {
    logbuf::install(log_level);
    if keys.len() != values.len() {
        return Err(BridgeError::BadInput(format!("{} parameter keys but {} values", keys.len(), values.len())));
    }
    let mut params = BTreeMap::new();
    for (k, v) in keys.into_iter().zip(values) {
        if params.insert(k.clone(), v).is_some() {
            return Err(BridgeError::Config(format!("parameter '{k}' given twice")));
        }
    }
    let settings: Settings = if settings.trim().is_empty() {
        Settings::default()
    } else {
        serde_json::from_str(settings).map_err(|e| BridgeError::Config(format!("core settings: {e}")))?
    };
    let s = Session::open(policy.trim(), &params, settings)?;
    let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
    registry().insert(handle, Arc::new(Mutex::new(s)));
    Ok(handle)
}

fn encode(mut r: Response) -> Result<String> {
    r.logs = logbuf::drain();
    serde_json::to_string(&r).map_err(|e| BridgeError::Internal(format!("cannot encode the response: {e}")))
}

fn time(now: i64) -> Time {
    Time(now.max(0) as u64)
}

/// One step of the core at `now` (ms) with a JSON array of events (empty:
/// only the timers due fire); returns a JSON [`Response`].
pub fn step(handle: u64, now: i64, events: &str) -> Result<String> {
    let r = with_session(handle, |s| s.handle_json(time(now), events))?;
    encode(r)
}

/// One step as [`step`], with the events in the bridge's binary layout
/// ([`crate::wire`]) and the response written in it into `out`. Returns the
/// response's length; when it does not fit in `out`, minus its length, and
/// the response waits in the session for [`take_response`] (the step has
/// happened: it must not be lost or run twice).
pub fn step_wire(handle: u64, now: i64, events: &[u8], out: &mut [u8]) -> Result<i32> {
    with_session(handle, |s| {
        let mut r = s.handle_wire(time(now), events)?;
        r.logs = logbuf::drain();
        crate::wire::encode_response(&r, &mut s.wire_out);
        let n = wire_len(&s.wire_out)?;
        match out.get_mut(..s.wire_out.len()) {
            Some(dst) => {
                dst.copy_from_slice(&s.wire_out);
                Ok(n)
            }
            None => Ok(-n),
        }
    })
}

/// Copies the session's last binary response into `out`, which must hold
/// it; returns its length.
pub fn take_response(handle: u64, out: &mut [u8]) -> Result<i32> {
    with_session(handle, |s| {
        let n = wire_len(&s.wire_out)?;
        let have = out.len();
        let dst = out
            .get_mut(..s.wire_out.len())
            .ok_or_else(|| BridgeError::BadInput(format!("response buffer: {have} byte(s), the response needs {n}")))?;
        dst.copy_from_slice(&s.wire_out);
        Ok(n)
    })
}

fn wire_len(bytes: &[u8]) -> Result<i32> {
    i32::try_from(bytes.len())
        .map_err(|_| BridgeError::Internal(format!("a binary response of {} bytes is too large", bytes.len())))
}

/// When the policy next wants a step (ms), or -1 for never.
pub fn next_wake(handle: u64) -> Result<i64> {
    with_session(handle, |s| Ok(s.next_wake().map_or(-1, |t| t.0.min(i64::MAX as u64) as i64)))
}

/// The session's describe() snapshot as JSON.
pub fn describe(handle: u64) -> Result<String> {
    let v = with_session(handle, |s| Ok(s.describe()))?;
    Ok(v.to_string())
}

/// Closes a session; the handle is invalid afterwards. Closing twice is an error.
pub fn close(handle: u64) -> Result<()> {
    registry().remove(&handle).map(|_| ()).ok_or(BridgeError::Closed(handle))
}

/// Log lines buffered on this thread outside a call (e.g. by `create`) as JSON.
pub fn drain_logs() -> String {
    serde_json::to_string(&logbuf::drain()).unwrap_or_else(|_| "[]".to_string())
}

/// Every policy with its parameter schema, as JSON.
pub fn catalog() -> String {
    crate::session::catalog().to_string()
}

/// Replays a flight recording file (`<file>`, with `<file>.meta` for the
/// policy, parameters and seed) with a fresh core and compares its decisions
/// with the recording's `<file>.decisions`. Returns a JSON summary
/// `{"records", "decisions", "recorded_decisions", "identical", "first_difference"}`.
pub fn replay_file(path: &str) -> Result<String> {
    let read =
        |p: &str| std::fs::read_to_string(p).map_err(|e| BridgeError::BadInput(format!("cannot read '{p}': {e}")));
    let mpath = format!("{path}.meta");
    let meta: crate::session::RecordingMeta =
        serde_json::from_str(&read(&mpath)?).map_err(|e| BridgeError::BadInput(format!("{mpath}: {e}")))?;
    let mut records = Vec::new();
    for (i, line) in read(path)?.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let r: sojourn_core::Record =
            serde_json::from_str(line).map_err(|e| BridgeError::BadInput(format!("{path}:{}: {e}", i + 1)))?;
        records.push(r);
    }
    let mut recorded = Vec::new();
    let dpath = format!("{path}.decisions");
    for (i, line) in read(&dpath)?.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let d: sojourn_core::Decision =
            serde_json::from_str(line).map_err(|e| BridgeError::BadInput(format!("{dpath}:{}: {e}", i + 1)))?;
        recorded.push(d);
    }
    let n = records.len();
    let replayed = crate::session::replay(&meta, records)?;
    let first = (0..replayed.len().max(recorded.len())).find(|&i| replayed.get(i) != recorded.get(i));
    Ok(serde_json::json!({
        "policy": meta.policy,
        "records": n,
        "decisions": replayed.len(),
        "recorded_decisions": recorded.len(),
        "identical": first.is_none(),
        "first_difference": first,
    })
    .to_string())
}

// ---- the protocol's schema, for the shim's tests ----------------------------------
//
// The Java shim writes events and reads decisions by hand (Protocol.java).
// Its ProtocolSchemaTest holds it to the serde schema through these:
// events it builds must come back from `events_round_trip_for_test`
// unchanged, and it must read every field of `decision_samples`, carried in
// a `Response` as a step returns one. The samples cover every variant (a
// test matches them exhaustively) with every field away from its default,
// so a field renamed on either side reads as 0 or absent and fails there.

/// Decodes a JSON array of events as a step decodes them (serde, into
/// [`Event`]) and encodes them again. Serde drops a field it does not know
/// and defaults one that is missing, so an event the shim misspells comes
/// back different; a required field missing, or a value of the wrong type,
/// is `BadInput` naming it. Tests only.
pub fn events_round_trip_for_test(events: &str) -> Result<String> {
    let decoded: Vec<Event> =
        serde_json::from_str(events).map_err(|e| BridgeError::BadInput(format!("events: {e}")))?;
    serde_json::to_string(&decoded).map_err(|e| BridgeError::Internal(format!("cannot encode the events: {e}")))
}

/// Decodes a batch in the bridge's binary layout as a binary step decodes
/// it and returns it as a JSON array, an event whose value is wrong as
/// `{"error": message}`: the shim's test that its binary encoder and the
/// JSON one say the same. Broken framing is `BadInput` naming the field.
/// Tests only.
pub fn wire_events_to_json_for_test(events: &[u8]) -> Result<String> {
    let decoded =
        crate::wire::decode_events(events).map_err(|e| BridgeError::BadInput(format!("binary events: {e}")))?;
    let values: Vec<serde_json::Value> = decoded
        .into_iter()
        .map(|e| match e {
            Ok(e) => serde_json::to_value(e).unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() })),
            Err(e) => serde_json::json!({ "error": e.message }),
        })
        .collect();
    Ok(serde_json::Value::Array(values).to_string())
}

/// [`response_sample`] in the binary layout, into `out`; returns its length
/// (or minus it when `out` is too small). Tests only.
pub fn wire_response_sample_for_test(out: &mut [u8]) -> Result<i32> {
    let mut bytes = Vec::new();
    crate::wire::encode_response(&response_sample(), &mut bytes);
    let n = wire_len(&bytes)?;
    match out.get_mut(..bytes.len()) {
        Some(dst) => {
            dst.copy_from_slice(&bytes);
            Ok(n)
        }
        None => Ok(-n),
    }
}

/// One sample of every [`Event`] variant, every field away from its default
/// (and distinct values, so that two fields swapped show too).
pub fn event_samples() -> Vec<Event> {
    vec![
        Event::NodeAdded(NodeSpec {
            node: NodeId(5),
            name: "h5.example.com:8041".to_string(),
            rack: "/rack-b".to_string(),
            labels: vec!["gpu".to_string()],
            capacity: Resources::new(16_384, 16).with_gpus(2),
        }),
        Event::NodeRemoved { node: NodeId(6) },
        Event::NodeResourceUpdated { node: NodeId(7), capacity: Resources::new(8192, 8).with_gpus(1) },
        Event::NodeHeartbeat { node: NodeId(8) },
        Event::AppAdded(AppSpec {
            app: AppId(42),
            name: "wordcount".to_string(),
            queue: "root.eng".to_string(),
            user: "alice".to_string(),
            priority: 3,
            deadline: Some(Time(90_000)),
            value: Some(2.5),
        }),
        Event::AppRemoved { app: AppId(43) },
        Event::AsksUpdated {
            app: AppId(44),
            asks: vec![Ask {
                priority: Priority(20),
                capability: Resources::new(2048, 2).with_gpus(1),
                count: 9,
                phase: Phase::Map,
                locality: vec![Locality::Node(NodeId(5), 2), Locality::Rack("/rack-b".to_string(), 3)],
                relax_locality: false,
                label: Some("gpu".to_string()),
                est_task_ms: Some(60_000),
            }],
        },
        Event::ContainerStarted { container: ContainerId(7001) },
        Event::ContainerCompleted { container: ContainerId(7002), outcome: Outcome::Preempted },
        Event::ContainerProgress { container: ContainerId(7003), progress: 0.75, sort_finished: Some(Time(1500)) },
        Event::Rejected {
            decision: decision_samples().remove(0),
            reason: "no room on node 5".to_string(),
            kind: RefusalKind::Never,
        },
        Event::ContainerRecovered {
            container: ContainerId(7004),
            app: AppId(45),
            node: NodeId(9),
            priority: Priority(10),
            resources: Resources::new(3072, 3).with_gpus(1),
            phase: Phase::Reduce,
            suspended: true,
        },
        Event::ScheduleAll,
        Event::OffloadDone { tag: 12, result: serde_json::json!({ "objective": 1.5 }) },
    ]
}

/// [`event_samples`] as a JSON array. Tests only.
pub fn event_samples_for_test() -> Result<String> {
    serde_json::to_string(&event_samples())
        .map_err(|e| BridgeError::Internal(format!("cannot encode the event samples: {e}")))
}

/// One sample of every [`Decision`] variant (two of `Preempt`, one per
/// mode), every field away from its default and the values distinct.
pub fn decision_samples() -> Vec<Decision> {
    vec![
        Decision::Allocate {
            container: ContainerId(7101),
            app: AppId(51),
            priority: Priority(20),
            node: NodeId(11),
            resources: Resources::new(3072, 3).with_gpus(2),
            gang: Some(GangId(7100)),
        },
        Decision::Reserve {
            app: AppId(52),
            priority: Priority(10),
            node: NodeId(12),
            resources: Resources::new(5120, 5).with_gpus(1),
        },
        Decision::Unreserve { app: AppId(53), priority: Priority(7), node: NodeId(13) },
        Decision::Preempt { container: ContainerId(7102), mode: PreemptMode::Kill },
        Decision::Preempt { container: ContainerId(7103), mode: PreemptMode::Suspend },
        Decision::Resume { container: ContainerId(7104) },
    ]
}

/// A [`Response`] as a step returns it: every decision sample, an event
/// refused of each kind, one log line and a next timeout, encoded as the
/// bridge encodes responses. Tests only.
pub fn response_sample_for_test() -> Result<String> {
    serde_json::to_string(&response_sample())
        .map_err(|e| BridgeError::Internal(format!("cannot encode the response: {e}")))
}

/// The response [`response_sample_for_test`] encodes.
pub fn response_sample() -> Response {
    let errors = [RefusalKind::Retry, RefusalKind::Never, RefusalKind::Error]
        .into_iter()
        .enumerate()
        .map(|(i, kind)| EventError { index: 3 + i, kind, message: format!("sample refusal {}", 3 + i) })
        .collect();
    Response {
        decisions: decision_samples(),
        errors,
        logs: vec![logbuf::LogLine {
            level: "DEBUG",
            target: "sojourn_jni::api".to_string(),
            message: "a sample log line".to_string(),
        }],
        next_timeout: Some(Time(123_456)),
    }
}
