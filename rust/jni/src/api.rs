//! The safe API the JNI functions call: sessions live in a registry keyed by
//! an opaque handle, so a stale or double-closed handle from Java is an
//! error, never a dangling pointer. Each session has its own lock; the
//! registry lock is held only to look a handle up.

use crate::error::{BridgeError, Result};
use crate::logbuf;
use crate::session::{Response, Session, Settings};
use sojourn_core::Time;
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
