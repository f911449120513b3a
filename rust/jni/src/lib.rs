//! `sojourn-jni`: the native side of Sojourn's YARN shim
//! (`org.sojourn.yarn.Native`). It holds [`sojourn_core::Core`]s built with
//! [`sojourn_policies::build`] and drives them with batches of protocol
//! events; events, decisions and log lines cross the boundary as JSON
//! (serde of the core's own protocol types), one call per batch.
//!
//! Every exported function is a few lines: catch any panic, call a safe
//! function of [`api`] returning `Result`, and turn an error into a Java
//! exception (`IllegalArgumentException` for configuration and malformed
//! input, `IllegalStateException` otherwise) while returning a default. No
//! panic crosses into the JVM, and nothing is printed to stderr: the core's
//! log records return with each response ([`logbuf`]).
//!
//! Handles are registry keys, not pointers, so the crate needs no `unsafe`.

pub mod api;
pub mod error;
pub mod logbuf;
pub mod session;

use error::{BridgeError, Result};
use jni::objects::{JClass, JObject, JObjectArray, JString};
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
