//! `sojourn-jni`: the native side of Sojourn's YARN shim
//! (`org.sojourn.yarn.Native`). It holds [`sojourn_core::Core`]s built with
//! [`sojourn_policies::build`] and drives them with batches of protocol
//! events; events, decisions and log lines cross the boundary one call per
//! batch, as JSON (serde of the core's own protocol types) or, on the hot
//! path of a step, in the compact binary layout of [`wire`] through direct
//! `ByteBuffer`s.
//!
//! Every exported function is a few lines: catch any panic, call a safe
//! function of [`api`] returning `Result`, and turn an error into a Java
//! exception (`IllegalArgumentException` for configuration and malformed
//! input, `IllegalStateException` otherwise) while returning a default. No
//! panic crosses into the JVM, and nothing is printed to stderr: the core's
//! log records return with each response ([`logbuf`]).
//!
//! Handles are registry keys, not pointers. The one `unsafe` is
//! [`direct_buffers`], which views the memory of the shim's direct buffers.

pub mod api;
pub mod error;
/// Offloaded work in a child process: shared with the simulator, which
/// isolates its solves the same way.
pub use sojourn_policies::isolation;
pub mod logbuf;
pub mod offload;
pub mod session;
pub mod wire;

use error::{BridgeError, Result};
use jni::objects::{JByteBuffer, JClass, JObject, JObjectArray, JString};
use jni::sys::{jint, jlong, jstring};
use jni::JNIEnv;
use std::panic::{catch_unwind, AssertUnwindSafe};

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

fn throw(env: &mut JNIEnv<'_>, e: &BridgeError) {
    // A JNI call that failed may have left its own exception pending; keep it.
    if env.exception_check().unwrap_or(false) {
        return;
    }
    let _ = env.throw_new(e.java_class(), e.to_string());
}

/// Runs `f`, turning an error or a panic into a pending Java exception and
/// `default`.
fn guard<'l, T>(env: &mut JNIEnv<'l>, default: T, f: impl FnOnce(&mut JNIEnv<'l>) -> Result<T>) -> T {
    match catch_unwind(AssertUnwindSafe(|| f(env))) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            throw(env, &e);
            default
        }
        Err(payload) => {
            throw(env, &BridgeError::Internal(format!("native panic: {}", panic_message(payload))));
            default
        }
    }
}

fn jni_err(what: &str) -> impl Fn(jni::errors::Error) -> BridgeError + '_ {
    move |e| match e {
        jni::errors::Error::NullPtr(_) | jni::errors::Error::NullDeref(_) => {
            BridgeError::BadInput(format!("{what} is null"))
        }
        other => BridgeError::Internal(format!("JNI failure reading {what}: {other}")),
    }
}

fn string(env: &mut JNIEnv<'_>, s: &JString<'_>, what: &str) -> Result<String> {
    if s.is_null() {
        return Err(BridgeError::BadInput(format!("{what} is null")));
    }
    Ok(env.get_string(s).map_err(jni_err(what))?.into())
}

fn strings(env: &mut JNIEnv<'_>, arr: &JObjectArray<'_>, what: &str) -> Result<Vec<String>> {
    if arr.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(arr).map_err(jni_err(what))?;
    let mut out = Vec::with_capacity(n.max(0) as usize);
    for i in 0..n {
        let o: JObject<'_> = env.get_object_array_element(arr, i).map_err(jni_err(what))?;
        let s = JString::from(o);
        out.push(string(env, &s, what)?);
        env.delete_local_ref(s).map_err(jni_err(what))?;
    }
    Ok(out)
}

fn new_string(env: &mut JNIEnv<'_>, s: String) -> Result<jstring> {
    Ok(env.new_string(s).map_err(jni_err("the response"))?.into_raw())
}

/// The address and capacity of a direct `ByteBuffer`, checked: not null,
/// direct, and its capacity known.
fn direct_buffer(env: &JNIEnv<'_>, b: &JByteBuffer<'_>, what: &str) -> Result<(*mut u8, usize)> {
    if b.is_null() {
        return Err(BridgeError::BadInput(format!("{what} buffer is null")));
    }
    let ptr = env
        .get_direct_buffer_address(b)
        .map_err(|e| BridgeError::BadInput(format!("{what} buffer: not a direct ByteBuffer ({e})")))?;
    let cap = env.get_direct_buffer_capacity(b).map_err(jni_err(what))?;
    Ok((ptr, cap))
}

/// The first `length` bytes of the direct buffer `input` (none: empty), and
/// the whole of the direct buffer `output`, as slices for one native call.
///
/// Sound because: the local references keep both buffers (and so their
/// memory, which a direct buffer frees only once unreachable) alive for the
/// call; `length` is checked against `input`'s capacity; the two must not
/// overlap, so the shared and the mutable view never alias; and the shim
/// touches neither while the call runs (both belong to one core and are
/// used under its lock, `Native.step`).
fn direct_buffers<'b>(
    env: &JNIEnv<'_>,
    input: Option<(&JByteBuffer<'_>, jint)>,
    output: &JByteBuffer<'_>,
) -> Result<(&'b [u8], &'b mut [u8])> {
    let (out_ptr, out_cap) = direct_buffer(env, output, "the response")?;
    let (in_ptr, in_len) = match input {
        Some((b, length)) => {
            let (ptr, cap) = direct_buffer(env, b, "the events")?;
            let len = usize::try_from(length)
                .ok()
                .filter(|n| *n <= cap)
                .ok_or_else(|| BridgeError::BadInput(format!("events length {length}: outside 0..={cap}")))?;
            (ptr as *const u8, len)
        }
        None => (std::ptr::null(), 0),
    };
    let (a, b) = (in_ptr as usize, out_ptr as usize);
    if in_len > 0 && out_cap > 0 && a < b.saturating_add(out_cap) && b < a.saturating_add(in_len) {
        return Err(BridgeError::BadInput("the events and the response share one buffer".to_string()));
    }
    // An empty slice still needs a non-null, aligned pointer.
    let dangling = std::ptr::NonNull::<u8>::dangling().as_ptr();
    let in_ptr = if in_len == 0 || in_ptr.is_null() { dangling as *const u8 } else { in_ptr };
    let out_cap = if out_ptr.is_null() { 0 } else { out_cap };
    let out_ptr = if out_cap == 0 { dangling } else { out_ptr };
    // SAFETY: see the function's comment; each pointer is non-null and
    // addresses at least its length of live bytes.
    unsafe { Ok((std::slice::from_raw_parts(in_ptr, in_len), std::slice::from_raw_parts_mut(out_ptr, out_cap))) }
}

fn handle_id(h: jlong) -> Result<u64> {
    u64::try_from(h).ok().filter(|h| *h > 0).ok_or(BridgeError::Closed(h as u64))
}

/// `static native long nCreate(String policy, String[] keys, String[] values, String settingsJson, int logLevel)`
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nCreate<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    policy: JString<'l>,
    keys: JObjectArray<'l>,
    values: JObjectArray<'l>,
    settings: JString<'l>,
    log_level: jint,
) -> jlong {
    guard(&mut env, 0, |env| {
        logbuf::install_panic_hook();
        let policy = string(env, &policy, "policy")?;
        let keys = strings(env, &keys, "parameter keys")?;
        let values = strings(env, &values, "parameter values")?;
        let settings = if settings.is_null() { String::new() } else { string(env, &settings, "settings")? };
        let h = api::create(&policy, keys, values, &settings, log_level)?;
        Ok(h as jlong)
    })
}

/// `static native String nStep(long handle, long now, String eventsJson)`
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nStep<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    now: jlong,
    events: JString<'l>,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let events = string(env, &events, "events")?;
        let out = api::step(handle_id(handle)?, now, &events)?;
        new_string(env, out)
    })
}

/// `static native int nStepBinary(long handle, long now, ByteBuffer events, int length, ByteBuffer response)`:
/// a step with the first `length` bytes of `events` in the binary layout of
/// [`wire`], its response written into `response`. Returns the response's
/// length, or minus it when it does not fit (then `nTakeResponse` with a
/// buffer that large fetches it). Both buffers are direct.
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nStepBinary<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    now: jlong,
    events: JByteBuffer<'l>,
    length: jint,
    response: JByteBuffer<'l>,
) -> jint {
    guard(&mut env, 0, |env| {
        let (input, out) = direct_buffers(env, Some((&events, length)), &response)?;
        api::step_wire(handle_id(handle)?, now, input, out)
    })
}

/// `static native int nTakeResponse(long handle, ByteBuffer response)`: the
/// last binary response of the core, into a buffer large enough; returns
/// its length.
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nTakeResponse<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    response: JByteBuffer<'l>,
) -> jint {
    guard(&mut env, 0, |env| {
        let (_, out) = direct_buffers(env, None, &response)?;
        api::take_response(handle_id(handle)?, out)
    })
}

/// `static native long nNextWake(long handle)`: ms, or -1 for never.
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nNextWake<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jlong {
    guard(&mut env, -1, |_| api::next_wake(handle_id(handle)?))
}

/// `static native String nDescribe(long handle)`
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nDescribe<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let out = api::describe(handle_id(handle)?)?;
        new_string(env, out)
    })
}

/// `static native void nClose(long handle)`
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nClose<'l>(mut env: JNIEnv<'l>, _class: JClass<'l>, handle: jlong) {
    guard(&mut env, (), |_| api::close(handle_id(handle)?))
}

/// `static native String nDrainLogs()`: log lines of this thread not yet returned.
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nDrainLogs<'l>(mut env: JNIEnv<'l>, _class: JClass<'l>) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| new_string(env, api::drain_logs()))
}

/// `static native String nCatalog()`
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nCatalog<'l>(mut env: JNIEnv<'l>, _class: JClass<'l>) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| new_string(env, api::catalog()))
}

/// `static native String nReplay(String path)`: re-runs a flight recording
/// and compares with its recorded decisions.
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nReplay<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    path: JString<'l>,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let path = string(env, &path, "path")?;
        let out = api::replay_file(&path)?;
        new_string(env, out)
    })
}

/// `static native void nPanicForTest()`: panics inside a native call, so
/// the shim's tests can check that a panic becomes an exception.
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nPanicForTest<'l>(mut env: JNIEnv<'l>, _class: JClass<'l>) {
    guard(&mut env, (), |_| -> Result<()> { panic!("deliberate panic for a test") })
}

/// `static native void nPanicInCoreForTest(long handle)`: panics inside the
/// core `handle` while holding it, which poisons it (tests of the shim's
/// rebuild).
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nPanicInCoreForTest<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    guard(&mut env, (), |_| api::panic_in_session_for_test(handle as u64))
}

/// `static native String nEventsRoundTripForTest(String eventsJson)`: the
/// events decoded as a step decodes them and encoded again (the shim's
/// schema test; see [`api::events_round_trip_for_test`]).
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nEventsRoundTripForTest<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    events: JString<'l>,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let events = string(env, &events, "events")?;
        let out = api::events_round_trip_for_test(&events)?;
        new_string(env, out)
    })
}

/// `static native String nEventSamplesForTest()`: one sample of every
/// event variant, as a JSON array.
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nEventSamplesForTest<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| new_string(env, api::event_samples_for_test()?))
}

/// `static native String nResponseSampleForTest()`: a step's response
/// carrying one sample of every decision variant (see
/// [`api::response_sample_for_test`]).
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nResponseSampleForTest<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| new_string(env, api::response_sample_for_test()?))
}

/// `static native String nWireEventsToJsonForTest(ByteBuffer events, int length, ByteBuffer scratch)`:
/// binary events decoded as a binary step decodes them, as JSON (see
/// [`api::wire_events_to_json_for_test`]); `scratch` is any other direct buffer.
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nWireEventsToJsonForTest<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    events: JByteBuffer<'l>,
    length: jint,
    scratch: JByteBuffer<'l>,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let (input, _) = direct_buffers(env, Some((&events, length)), &scratch)?;
        let out = api::wire_events_to_json_for_test(input)?;
        new_string(env, out)
    })
}

/// `static native int nWireResponseSampleForTest(ByteBuffer response)`: the
/// response sample of `nResponseSampleForTest` in the binary layout.
#[no_mangle]
pub extern "system" fn Java_org_sojourn_yarn_Native_nWireResponseSampleForTest<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    response: JByteBuffer<'l>,
) -> jint {
    guard(&mut env, 0, |env| {
        let (_, out) = direct_buffers(env, None, &response)?;
        api::wire_response_sample_for_test(out)
    })
}
