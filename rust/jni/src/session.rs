//! One scheduler instance as the shim holds it: a [`Core`] built from a
//! policy name and its parameters, and an optional flight recorder. Events
//! arrive in batches; an event the core refuses is reported with its index
//! and the rest of the batch still applies (the RM keeps running and nothing
//! else is lost).

use crate::error::{BridgeError, Result};
use crate::isolation::Isolation;
use crate::offload::Worker;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sojourn_core::{Core, CoreConfig, Decision, Event, Record, RefusalKind, Resources, Time};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};

/// Settings of a session beyond the policy and its parameters, sent by the
/// shim as JSON. Unknown fields are errors.
#[derive(Clone, Debug, PartialEq, Deserialize)]
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
    /// replay can be checked against them. The files are the RM user's
    /// alone (mode 0600: they name users, apps and queues), and a path that
    /// is a symbolic link is refused.
    #[serde(default)]
    pub record: Option<String>,
    /// The recording's events file is rotated when it passes this size
    /// (MiB): the segment so far becomes `<record>.prev` (an older `.prev` is
    /// dropped) and a new one starts, so the recorder holds at most about
    /// twice this much. 0: no cap.
    #[serde(default = "default_record_max_mb")]
    pub record_max_mb: u64,
    /// Where a policy's offloaded work that comes described runs:
    /// `"thread"` (the offload thread) or `"process"` (a child process
    /// running `offload_command`, so that a solver's abort costs one
    /// answer, not the RM; `isolation.rs`).
    #[serde(default = "default_offload_isolation")]
    pub offload_isolation: String,
    /// The `sojourn-offload` executable, for `"process"`.
    #[serde(default)]
    pub offload_command: Option<String>,
    /// At most this many containers placed per node heartbeat
    /// ([`CoreConfig::max_assignments`]); absent: no limit. 0 is refused:
    /// nothing would ever be placed.
    #[serde(default)]
    pub max_assignments: Option<u32>,
}

fn default_offload_isolation() -> String {
    "thread".into()
}

/// How long past twice its budget a piece in a child process may run
/// before the child is killed (it loads and starts the solver, and the
/// machine may be busy).
const OFFLOAD_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

impl Settings {
    /// The offload isolation these settings ask for; an unknown mode, or
    /// `"process"` without a command, is an error naming it.
    pub fn isolation(&self) -> Result<Isolation> {
        match (self.offload_isolation.as_str(), self.offload_command.as_deref().map(str::trim)) {
            ("thread", _) => Ok(Isolation::Thread),
            ("process", Some(c)) if !c.is_empty() => Ok(Isolation::Process { command: c.into(), grace: OFFLOAD_GRACE }),
            ("process", _) => Err(BridgeError::Config(
                "offload_isolation 'process' needs offload_command (the sojourn-offload executable)".into(),
            )),
            (other, _) => {
                Err(BridgeError::Config(format!("offload_isolation '{other}': expected 'process' or 'thread'")))
            }
        }
    }
}

fn default_record_max_mb() -> u64 {
    1024
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            seed: 0,
            max_allocation: None,
            network_delay_ms: 0,
            record: None,
            record_max_mb: default_record_max_mb(),
            offload_isolation: default_offload_isolation(),
            offload_command: None,
            max_assignments: None,
        }
    }
}

/// An event the core refused (or could not decode), by its index in the
/// batch, with whether it could succeed later, never, or shows a bug.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EventError {
    pub index: usize,
    pub kind: RefusalKind,
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
    meta: RecordingMeta,
    out: BufWriter<File>,
    decisions: BufWriter<File>,
    /// Bytes written to the events file of this segment.
    written: u64,
    max_bytes: u64,
}

/// Opens `path` for appending, owner-only, refusing a symbolic link
/// (`O_NOFOLLOW`: a link planted at the path cannot redirect the writes).
fn open_private(path: &str, append: bool) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = OpenOptions::new();
    o.create(true).mode(0o600).custom_flags(libc::O_NOFOLLOW);
    if append {
        o.append(true);
    } else {
        o.write(true).truncate(true);
    }
    let f = o.open(path)?;
    // An existing file keeps its old mode on open: narrow it too.
    use std::os::unix::fs::PermissionsExt;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(f)
}

fn recorder_error(path: &str, e: std::io::Error) -> BridgeError {
    let why = if e.raw_os_error() == Some(libc::ELOOP) { "it is a symbolic link".to_string() } else { e.to_string() };
    BridgeError::Config(format!("cannot open the flight recorder file '{path}': {why}"))
}

/// What a replay needs besides the events (one format with `sojourn replay`).
pub use sojourn_core::RecordingMeta;

impl Recorder {
    /// Starts a fresh recording at `path` (a previous one is kept as
    /// `<path>.prev`, with its `.decisions` and `.meta`).
    fn open(path: &str, meta: &RecordingMeta, max_mb: u64) -> Result<Recorder> {
        let (out, decisions) = Self::start_segment(path, meta)?;
        Ok(Recorder {
            path: path.to_string(),
            meta: meta.clone(),
            out,
            decisions,
            written: 0,
            max_bytes: max_mb.saturating_mul(1 << 20),
        })
    }

    fn files(path: &str) -> [String; 3] {
        [path.to_string(), format!("{path}.decisions"), format!("{path}.meta")]
    }

    fn start_segment(path: &str, meta: &RecordingMeta) -> Result<(BufWriter<File>, BufWriter<File>)> {
        let files = Self::files(path);
        if std::fs::symlink_metadata(path).map(|m| m.len() > 0 && m.file_type().is_file()).unwrap_or(false) {
            for f in &files {
                let _ = std::fs::rename(f, format!("{f}.prev"));
            }
        }
        let meta_json = serde_json::to_string_pretty(meta).map_err(|e| BridgeError::Internal(e.to_string()))?;
        let mut m = open_private(&files[2], false).map_err(|e| recorder_error(&files[2], e))?;
        m.write_all(meta_json.as_bytes()).map_err(|e| recorder_error(&files[2], e))?;
        let out = open_private(&files[0], true).map_err(|e| recorder_error(&files[0], e))?;
        let decisions = open_private(&files[1], true).map_err(|e| recorder_error(&files[1], e))?;
        Ok((BufWriter::new(out), BufWriter::new(decisions)))
    }

    fn write(&mut self, record: &Record) -> std::io::Result<()> {
        let line = serde_json::to_vec(record)?;
        self.out.write_all(&line)?;
        self.out.write_all(b"\n")?;
        self.written += line.len() as u64 + 1;
        Ok(())
    }

    fn write_decisions(&mut self, decisions: &[Decision]) -> std::io::Result<()> {
        for d in decisions {
            serde_json::to_writer(&mut self.decisions, d)?;
            self.decisions.write_all(b"\n")?;
        }
        Ok(())
    }

    /// Flushes, and rotates when the segment passed its cap. A segment after
    /// the first starts in the middle of a run: its `.meta` says so, and a
    /// replay of it starts from an empty core, so it checks nothing exactly.
    fn flush(&mut self) -> Result<()> {
        self.out.flush().and_then(|_| self.decisions.flush()).map_err(|e| recorder_error(&self.path, e))?;
        if self.max_bytes > 0 && self.written >= self.max_bytes {
            self.meta.segment += 1;
            let (out, decisions) = Self::start_segment(&self.path, &self.meta)?;
            self.out = out;
            self.decisions = decisions;
            self.written = 0;
            log::info!(
                "flight recorder: {} passed {} MiB; the previous segment is {}.prev",
                self.path,
                self.max_bytes >> 20,
                self.path
            );
        }
        Ok(())
    }
}

/// How soon the shim is asked to call back while offloaded work runs (ms).
const OFFLOAD_POLL_MS: u64 = 50;

pub struct Session {
    core: Core,
    policy: String,
    recorder: Option<Recorder>,
    /// The last binary response, kept between calls so that encoding one
    /// allocates nothing once the buffer has grown, and so that a response
    /// larger than the shim's buffer can be fetched by a second call.
    pub(crate) wire_out: Vec<u8>,
    /// Runs the policy's offloaded work (TetriSched's solves) off the
    /// scheduler's lock; started at the first piece of work.
    worker: Worker,
}

impl Session {
    /// Builds the policy (validating its parameters) and the core.
    pub fn open(policy: &str, params: &BTreeMap<String, String>, settings: Settings) -> Result<Session> {
        let built = sojourn_policies::build(policy, params)?;
        if settings.max_assignments == Some(0) {
            return Err(BridgeError::Config(
                "max_assignments 0 would place no container ever: give at least 1, or leave it out for no limit".into(),
            ));
        }
        let meta = RecordingMeta {
            policy: policy.to_string(),
            params: params.clone(),
            seed: settings.seed,
            max_allocation: settings.max_allocation,
            network_delay_ms: settings.network_delay_ms,
            segment: 0,
            offload: true,
            max_assignments: settings.max_assignments,
        };
        let recorder = match settings.record.as_deref() {
            Some(p) if !p.trim().is_empty() => Some(Recorder::open(p.trim(), &meta, settings.record_max_mb)?),
            _ => None,
        };
        let config = CoreConfig {
            seed: settings.seed,
            max_allocation: settings.max_allocation,
            network_delay_ms: settings.network_delay_ms,
            offload: true,
            max_assignments: settings.max_assignments,
        };
        let isolation = settings.isolation()?;
        log::info!(
            "sojourn core started: policy {policy}, {} parameter(s), seed {}{}",
            params.len(),
            settings.seed,
            recorder.as_ref().map(|r| format!(", recording to {}", r.path)).unwrap_or_default()
        );
        Ok(Session {
            core: Core::new(built, config),
            policy: policy.to_string(),
            recorder,
            wire_out: Vec::new(),
            worker: Worker::new(isolation),
        })
    }

    pub fn policy(&self) -> &str {
        &self.policy
    }

    /// One step of the core at `now` with a batch of events (the core's
    /// cycle: due timers fire, then the events apply), returning every
    /// decision made. A clock that went backwards is refused whole.
    pub fn handle(&mut self, now: Time, events: Vec<Event>) -> Result<Response> {
        self.handle_each(now, events.into_iter().map(Ok).collect())
    }

    /// Steps the core with every event that decodes; each other one, and
    /// each the core refuses, is reported alone, by index, and the rest of
    /// the batch still applies (one user's malformed ask never costs
    /// another user's completion its place in the mirror).
    fn handle_each(&mut self, now: Time, events: Vec<Result<Event, EventError>>) -> Result<Response> {
        let mut errors = Vec::new();
        let mut decoded = Vec::with_capacity(events.len());
        // The batch index of each decoded event, kept only once one failed to
        // decode (until then the two indexes agree): a heartbeat's step
        // allocates no more than it must.
        let mut index_of = Vec::new();
        for (index, event) in events.into_iter().enumerate() {
            match event {
                Ok(e) => {
                    if !errors.is_empty() {
                        index_of.push(index);
                    }
                    decoded.push(e);
                }
                Err(e) => {
                    if errors.is_empty() {
                        index_of.extend(0..index);
                    }
                    errors.push(EventError { index, ..e });
                }
            }
        }
        // Checked here too so that a refused step is never recorded.
        if now < self.core.now() {
            return Err(sojourn_core::CoreError::ClockBackwards { now, last: self.core.now() }.into());
        }
        // Offloaded work that finished since the last call enters after the
        // host's events, as events of this step (so the recorder keeps them).
        let host_events = decoded.len();
        decoded.extend(self.worker.finished());
        if self.recorder.is_some() {
            self.record(Record::step(now, decoded.clone()));
        }
        let step = self.core.step(now, decoded)?;
        for work in self.core.take_offloads() {
            self.worker.submit(work);
        }
        for r in step.refused {
            if r.index >= host_events {
                // An answer the policy no longer wanted: not the host's fault.
                log::warn!("offloaded work's answer refused: {}", r.error);
                continue;
            }
            errors.push(EventError {
                index: index_of.get(r.index).copied().unwrap_or(r.index),
                kind: r.error.kind(),
                message: r.error.to_string(),
            });
        }
        errors.sort_by_key(|e| e.index);
        // While offloaded work runs, the shim's timer calls back soon (its
        // tick, yarn.scheduler.sojourn.tick-ms), so that an answer is applied
        // even when no NodeManager heartbeats.
        let mut wake = step.next_wake;
        if self.worker.busy() {
            let poll = now.plus(OFFLOAD_POLL_MS);
            wake = Some(wake.map_or(poll, |t| t.min(poll)));
        }
        Ok(self.response(step.decisions, errors, wake))
    }

    /// Decodes a JSON array of events one element at a time and applies it.
    /// Only a batch that is not a JSON array at all is refused whole.
    pub fn handle_json(&mut self, now: Time, events: &str) -> Result<Response> {
        let raw: Vec<&RawValue> =
            serde_json::from_str(events).map_err(|e| BridgeError::BadInput(format!("events: {e}")))?;
        let decoded = raw
            .into_iter()
            .map(|r| {
                serde_json::from_str::<Event>(r.get()).map_err(|e| EventError {
                    index: 0,
                    kind: RefusalKind::Error,
                    message: format!("cannot decode the event {}: {e}", excerpt(r.get())),
                })
            })
            .collect();
        self.handle_each(now, decoded)
    }

    /// Decodes a batch in the bridge's binary layout ([`crate::wire`]) and
    /// applies it as [`Session::handle_json`] does: broken framing refuses
    /// the batch whole, a wrong value only its own event.
    pub fn handle_wire(&mut self, now: Time, events: &[u8]) -> Result<Response> {
        let decoded =
            crate::wire::decode_events(events).map_err(|e| BridgeError::BadInput(format!("binary events: {e}")))?;
        self.handle_each(now, decoded)
    }

    /// When the policy next wants a step.
    pub fn next_wake(&self) -> Option<Time> {
        self.core.next_wake()
    }

    /// The mirror's own invariants (each node's books equal its containers'
    /// holdings and fit its capacity), for tests and fuzzing.
    pub fn check_invariants(&self) -> std::result::Result<(), sojourn_core::CoreError> {
        self.core.cluster().check_invariants()
    }

    /// A snapshot for operators: the policy's own view, the mirror's totals
    /// and the core's counters.
    pub fn describe(&self) -> serde_json::Value {
        let c = self.core.cluster();
        let s = self.core.stats();
        serde_json::json!({
            "policy": self.policy,
            "now": self.core.now(),
            "state": self.core.describe(),
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
            // The policy's own figures, flat: counters by name, and each
            // distribution as name.count/.mean/.p50/.p90/.p99/.max.
            "metrics": self.core.metrics().flat(),
            "next_timeout": self.core.next_wake(),
            "offload": self.worker.describe(),
        })
    }

    fn response(&mut self, decisions: Vec<Decision>, errors: Vec<EventError>, next: Option<Time>) -> Response {
        if let Some(r) = &mut self.recorder {
            if let Err(e) = r.write_decisions(&decisions) {
                log::error!("flight recorder: cannot write to {}.decisions: {e}; recording stops", r.path);
                self.recorder = None;
            }
        }
        self.flush_recorder();
        Response { decisions, errors, logs: Vec::new(), next_timeout: next }
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
                log::error!("flight recorder: {e}; recording stops");
                self.recorder = None;
            }
        }
    }
}

/// The start of a (possibly huge or hostile) input, for a log line.
fn excerpt(s: &str) -> String {
    const MAX: usize = 200;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
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

/// Re-runs a flight recording: each recorded step applied at its time to a
/// fresh core ([`sojourn_core::Core::replay`], the one replay loop, which
/// `sojourn replay` uses too), returning every decision in order. With the
/// same policy, parameters and seed this reproduces the recorded run's
/// decisions (the core is deterministic).
pub fn replay(meta: &RecordingMeta, records: impl IntoIterator<Item = Record>) -> Result<Vec<Decision>> {
    let mut core = Core::new(sojourn_policies::build(&meta.policy, &meta.params)?, meta.core_config());
    Ok(core.replay(records)?.decisions)
}
