//! One scheduler instance as the shim holds it: a [`Core`] built from a
//! policy name and its parameters, and an optional flight recorder. Events
//! arrive in batches; an event the core refuses is reported with its index
//! and the rest of the batch still applies (the RM keeps running and nothing
//! else is lost).

use crate::error::{BridgeError, Result};
use serde::{Deserialize, Serialize};
use sojourn_core::{Core, CoreConfig, Decision, Event, Record, Resources, Time};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};

/// Settings of a session beyond the policy and its parameters, sent by the
/// shim as JSON. Unknown fields are errors.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    #[serde(default)]
    pub seed: u64,
    /// YARN's maximum allocation; larger asks are refused.
    #[serde(default)]
    pub max_allocation: Option<Resources>,
    #[serde(default)]
    pub network_delay_ms: u64,
    /// Flight recorder: append every event the core receives to this file,
    /// one [`Record`] as JSON per line. The decisions the core made are
    /// appended to `<record>.decisions`, one [`Decision`] per line, so a
    /// replay can be checked against them.
    #[serde(default)]
    pub record: Option<String>,
}

/// An event the core refused, by its index in the batch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EventError {
    pub index: usize,
    pub message: String,
}

/// What one call returns.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Response {
    pub decisions: Vec<Decision>,
    pub errors: Vec<EventError>,
    /// The core's log records emitted during the call (filled by the caller
    /// that owns the log buffer).
    pub logs: Vec<crate::logbuf::LogLine>,
    /// When the policy next wants to be woken, if ever.
    pub next_timeout: Option<Time>,
}

struct Recorder {
    path: String,
    out: BufWriter<File>,
    decisions: BufWriter<File>,
}

fn append(path: &str) -> Result<BufWriter<File>> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| BridgeError::Config(format!("cannot open the flight recorder file '{path}': {e}")))?;
    Ok(BufWriter::new(file))
}

/// What a replay needs besides the events (one format with `sojourn replay`).
pub use sojourn_core::RecordingMeta;

impl Recorder {
    /// Starts a fresh recording at `path` (a previous one is kept as
    /// `<path>.prev`, with its `.decisions` and `.meta`).
    fn open(path: &str, meta: &RecordingMeta) -> Result<Recorder> {
        let files = [path.to_string(), format!("{path}.decisions"), format!("{path}.meta")];
        if std::fs::metadata(path).map(|m| m.len() > 0).unwrap_or(false) {
            for f in &files {
                let _ = std::fs::rename(f, format!("{f}.prev"));
            }
        }
        let meta_json = serde_json::to_string_pretty(meta).map_err(|e| BridgeError::Internal(e.to_string()))?;
        std::fs::write(&files[2], meta_json)
            .map_err(|e| BridgeError::Config(format!("cannot open the flight recorder file '{}': {e}", files[2])))?;
        Ok(Recorder { path: path.to_string(), out: append(&files[0])?, decisions: append(&files[1])? })
    }

    fn write(&mut self, record: &Record) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, record)?;
        self.out.write_all(b"\n")
    }

    fn write_decisions(&mut self, decisions: &[Decision]) -> std::io::Result<()> {
        for d in decisions {
            serde_json::to_writer(&mut self.decisions, d)?;
            self.decisions.write_all(b"\n")?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()?;
        self.decisions.flush()
    }
}

pub struct Session {
    core: Core,
    policy: String,
    recorder: Option<Recorder>,
}

impl Session {
    /// Builds the policy (validating its parameters) and the core.
    pub fn open(policy: &str, params: &BTreeMap<String, String>, settings: Settings) -> Result<Session> {
        let built = sojourn_policies::build(policy, params)?;
        let meta = RecordingMeta {
            policy: policy.to_string(),
            params: params.clone(),
            seed: settings.seed,
            max_allocation: settings.max_allocation,
            network_delay_ms: settings.network_delay_ms,
        };
        let recorder = match settings.record.as_deref() {
            Some(p) if !p.trim().is_empty() => Some(Recorder::open(p.trim(), &meta)?),
            _ => None,
        };
        let config = CoreConfig {
            seed: settings.seed,
            max_allocation: settings.max_allocation,
            network_delay_ms: settings.network_delay_ms,
        };
        log::info!(
            "sojourn core started: policy {policy}, {} parameter(s), seed {}{}",
            params.len(),
            settings.seed,
            recorder.as_ref().map(|r| format!(", recording to {}", r.path)).unwrap_or_default()
        );
        Ok(Session { core: Core::new(built, config), policy: policy.to_string(), recorder })
    }

    pub fn policy(&self) -> &str {
        &self.policy
    }

    /// Applies a batch of events at `now`, returning every decision made.
    pub fn handle(&mut self, now: Time, events: Vec<Event>) -> Response {
        let mut errors = Vec::new();
        for (index, event) in events.into_iter().enumerate() {
            self.record(Record { now, event: Some(event.clone()) });
            if let Err(e) = self.core.handle(now, event) {
                errors.push(EventError { index, message: e.to_string() });
            }
        }
        self.response(errors)
    }

    /// Decodes a JSON array of events and applies it.
    pub fn handle_json(&mut self, now: Time, events: &str) -> Result<Response> {
        let events: Vec<Event> =
            serde_json::from_str(events).map_err(|e| BridgeError::BadInput(format!("events: {e}")))?;
        Ok(self.handle(now, events))
    }

    /// Fires the timers due at `now`.
    pub fn handle_timeout(&mut self, now: Time) -> Response {
        self.record(Record { now, event: None });
        self.core.handle_timeout(now);
        self.response(Vec::new())
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.core.poll_timeout()
    }

    /// A snapshot for operators: the policy's own view, the mirror's totals
    /// and the core's counters.
    pub fn describe(&self) -> serde_json::Value {
        let c = self.core.cluster();
        let s = self.core.stats();
        serde_json::json!({
            "policy": self.policy,
            "state": self.core.policy().describe(c),
            "cluster": {
                "nodes": c.node_count(),
                "apps": c.apps().count(),
                "containers": c.containers().count(),
                "total": c.total(),
                "allocated": c.allocated(),
                "pending_containers": c.pending_containers(),
            },
            "stats": {
                "events": s.events,
                "allocations": s.allocations,
                "preemptions": s.preemptions,
                "resumes": s.resumes,
                "rejections": s.rejections,
            },
            "next_timeout": self.core.poll_timeout(),
        })
    }

    fn response(&mut self, errors: Vec<EventError>) -> Response {
        let decisions = self.core.drain_decisions();
        if let Some(r) = &mut self.recorder {
            if let Err(e) = r.write_decisions(&decisions) {
                log::error!("flight recorder: cannot write to {}.decisions: {e}; recording stops", r.path);
                self.recorder = None;
            }
        }
        self.flush_recorder();
        Response { decisions, errors, logs: Vec::new(), next_timeout: self.core.poll_timeout() }
    }

    fn record(&mut self, record: Record) {
        if let Some(r) = &mut self.recorder {
            if let Err(e) = r.write(&record) {
                log::error!("flight recorder: cannot write to {}: {e}; recording stops", r.path);
                self.recorder = None;
            }
        }
    }

    fn flush_recorder(&mut self) {
        if let Some(r) = &mut self.recorder {
            if let Err(e) = r.flush() {
                log::error!("flight recorder: cannot write to {}: {e}; recording stops", r.path);
                self.recorder = None;
            }
        }
    }
}

/// The policies and their parameter schemas, as JSON.
pub fn catalog() -> serde_json::Value {
    let list: Vec<serde_json::Value> = sojourn_policies::catalog()
        .iter()
        .map(|p| serde_json::json!({ "name": p.name, "doc": p.doc, "params": p.params }))
        .collect();
    serde_json::Value::Array(list)
}

/// Re-runs a flight recording: each record's event (or timer firing) applied
/// at its time to a fresh core, returning every decision in order. With the
/// same policy, parameters and seed this reproduces the recorded run's
/// decisions (the core is deterministic); `sojourn replay` does the same in
/// the simulator.
pub fn replay(meta: &RecordingMeta, records: impl IntoIterator<Item = Record>) -> Result<Vec<Decision>> {
    let settings = Settings {
        seed: meta.seed,
        max_allocation: meta.max_allocation,
        network_delay_ms: meta.network_delay_ms,
        record: None,
    };
    let mut s = Session::open(&meta.policy, &meta.params, settings)?;
    let mut out = Vec::new();
    for r in records {
        let resp = match r.event {
            Some(e) => s.handle(r.now, vec![e]),
            None => s.handle_timeout(r.now),
        };
        out.extend(resp.decisions);
    }
    Ok(out)
}
