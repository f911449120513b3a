//! The bridge's binary encoding, for the hot path of a step: a batch of
//! events from the shim and the response back, little-endian, written by
//! Java into a direct `ByteBuffer` (`Wire.java`) and read here in place. A
//! heartbeat batch costs a few bytes and no parsing; JSON stays for the
//! rarer events (a tag carrying one event's JSON) and for everything else
//! the bridge does (tests, describe, the flight recorder's files).
//!
//! Events (shim to core):
//!
//! ```text
//! u8 version (1) | u32 count | count x (u8 tag | fields)
//!   1 node_heartbeat          u32 node
//!   2 container_started       u64 container
//!   3 container_completed     u64 container, u8 outcome (0 finished, 1 released,
//!                             2 preempted, 3 lost, 4 expired, 5 killed)
//!   4 container_progress      u64 container, f64 progress, u8 has_sort_finished,
//!                             [u64 sort_finished if has_sort_finished = 1]
//!   5 node_removed            u32 node
//!   6 app_removed             u32 app
//!   7 node_resource_updated   u32 node, resources
//!   8 schedule_all            (nothing)
//!   127 json                  u32 length, that many bytes: one event as JSON
//! resources: u64 memory_mb, u32 vcores, u32 gpus
//! ```
//!
//! Response (core to shim):
//!
//! ```text
//! u8 version (1) | i64 next_timeout (-1: none)
//! | u32 decisions | each: u8 tag | fields
//!   1 allocate   u64 container, u32 app, u32 priority, u32 node, resources
//!   2 reserve    u32 app, u32 priority, u32 node, resources
//!   3 unreserve  u32 app, u32 priority, u32 node
//!   4 preempt    u64 container, u8 mode (0 kill, 1 suspend)
//!   5 resume     u64 container
//!   6 allocate, a member of a gang: as 1, then u64 gang
//! | u32 errors | each: u32 index, u8 kind (0 retry, 1 never, 2 error), string message
//! | u32 logs | each: u8 level (1 error .. 5 trace), string target, string message
//! string: u32 length, that many bytes of UTF-8
//! ```
//!
//! The input is untrusted: every length, count and tag is checked, and a
//! batch whose framing is broken (truncated, an unknown tag, bytes left
//! over) is refused whole with an error naming the field and its offset. A
//! value that is wrong inside intact framing (an unknown outcome, a JSON
//! event that does not decode) costs only its own event, as on the JSON
//! path.

use crate::logbuf::LogLine;
use crate::session::{EventError, Response};
use sojourn_core::{
    AppId, ContainerId, Decision, Event, GangId, NodeId, Outcome, PreemptMode, Priority, RefusalKind, Resources, Time,
};
use std::fmt;

/// The layout's version, the first byte of either direction.
pub const VERSION: u8 = 1;

pub const TAG_NODE_HEARTBEAT: u8 = 1;
pub const TAG_CONTAINER_STARTED: u8 = 2;
pub const TAG_CONTAINER_COMPLETED: u8 = 3;
pub const TAG_CONTAINER_PROGRESS: u8 = 4;
pub const TAG_NODE_REMOVED: u8 = 5;
pub const TAG_APP_REMOVED: u8 = 6;
pub const TAG_NODE_RESOURCE_UPDATED: u8 = 7;
pub const TAG_SCHEDULE_ALL: u8 = 8;
pub const TAG_JSON: u8 = 127;

pub const TAG_ALLOCATE: u8 = 1;
pub const TAG_RESERVE: u8 = 2;
pub const TAG_UNRESERVE: u8 = 3;
pub const TAG_PREEMPT: u8 = 4;
pub const TAG_RESUME: u8 = 5;
/// An allocation that is a member of a gang: `TAG_ALLOCATE`'s fields, then
/// the gang (u64).
pub const TAG_ALLOCATE_GANG: u8 = 6;

const OUTCOMES: [Outcome; 6] =
    [Outcome::Finished, Outcome::Released, Outcome::Preempted, Outcome::Lost, Outcome::Expired, Outcome::Killed];
const KINDS: [RefusalKind; 3] = [RefusalKind::Retry, RefusalKind::Never, RefusalKind::Error];
const LEVELS: [&str; 5] = ["ERROR", "WARN", "INFO", "DEBUG", "TRACE"];

/// Input whose framing is broken: what was being read, where, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireError(pub String);

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WireError {}

/// A cursor over untrusted bytes; every read is bounds-checked and names
/// the field it reads in its error.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn left(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize, field: &dyn fmt::Display) -> Result<&'a [u8], WireError> {
        if n > self.left() {
            return Err(WireError(format!(
                "{field} at byte {}: {n} byte(s) needed, {} left (truncated?)",
                self.pos,
                self.left()
            )));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, field: &dyn fmt::Display) -> Result<[u8; N], WireError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, field)?);
        Ok(a)
    }

    fn u8(&mut self, field: &dyn fmt::Display) -> Result<u8, WireError> {
        Ok(self.array::<1>(field)?[0])
    }

    fn u32(&mut self, field: &dyn fmt::Display) -> Result<u32, WireError> {
        Ok(u32::from_le_bytes(self.array(field)?))
    }

    fn u64(&mut self, field: &dyn fmt::Display) -> Result<u64, WireError> {
        Ok(u64::from_le_bytes(self.array(field)?))
    }

    fn i64(&mut self, field: &dyn fmt::Display) -> Result<i64, WireError> {
        Ok(i64::from_le_bytes(self.array(field)?))
    }

    fn f64(&mut self, field: &dyn fmt::Display) -> Result<f64, WireError> {
        Ok(f64::from_le_bytes(self.array(field)?))
    }

    fn resources(&mut self, at: &Field<'_>) -> Result<Resources, WireError> {
        let memory_mb = self.u64(&at.sub("memory_mb"))?;
        let vcores = self.u32(&at.sub("vcores"))?;
        let gpus = self.u32(&at.sub("gpus"))?;
        Ok(Resources { memory_mb, vcores, gpus })
    }

    /// A length-prefixed string; invalid UTF-8 is an error naming the field.
    fn string(&mut self, field: &dyn fmt::Display) -> Result<String, WireError> {
        let n = self.u32(field)? as usize;
        let bytes = self.take(n, field)?;
        String::from_utf8(bytes.to_vec()).map_err(|e| WireError(format!("{field}: not UTF-8: {e}")))
    }

    fn version(&mut self, what: &str) -> Result<(), WireError> {
        let v = self.u8(&format_args!("{what}: the version byte"))?;
        if v != VERSION {
            return Err(WireError(format!("{what}: version {v}, expected {VERSION}")));
        }
        Ok(())
    }

    /// A count of items at least `min_size` bytes each, checked against the
    /// bytes left so that a hostile count never sizes an allocation.
    fn count(&mut self, field: &dyn fmt::Display, min_size: usize) -> Result<usize, WireError> {
        let at = self.pos;
        let n = self.u32(field)? as usize;
        if n.saturating_mul(min_size) > self.left() {
            return Err(WireError(format!(
                "{field} at byte {at}: {n} item(s) cannot fit in the {} byte(s) left",
                self.left()
            )));
        }
        Ok(n)
    }

    fn end(&self, what: &str) -> Result<(), WireError> {
        if self.left() > 0 {
            return Err(WireError(format!("{what}: {} byte(s) left over at byte {}", self.left(), self.pos)));
        }
        Ok(())
    }
}

/// Names a field for an error message only when one is made: "event 3
/// (container_completed) field 'outcome'".
struct Field<'a> {
    item: &'a str,
    index: usize,
    kind: &'a str,
    name: &'a str,
}

impl<'a> Field<'a> {
    fn sub(&self, name: &'a str) -> Field<'a> {
        Field { name, ..*self }
    }
}

impl fmt::Display for Field<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} ({}) field '{}'", self.item, self.index, self.kind, self.name)
    }
}

fn event_name(tag: u8) -> &'static str {
    match tag {
        TAG_NODE_HEARTBEAT => "node_heartbeat",
        TAG_CONTAINER_STARTED => "container_started",
        TAG_CONTAINER_COMPLETED => "container_completed",
        TAG_CONTAINER_PROGRESS => "container_progress",
        TAG_NODE_REMOVED => "node_removed",
        TAG_APP_REMOVED => "app_removed",
        TAG_NODE_RESOURCE_UPDATED => "node_resource_updated",
        TAG_SCHEDULE_ALL => "schedule_all",
        TAG_JSON => "json",
        _ => "unknown tag",
    }
}

fn refused(index: usize, message: String) -> EventError {
    EventError { index, kind: RefusalKind::Error, message }
}

/// Decodes a batch of events. `Err`: the framing is broken and the batch is
/// refused whole. `Ok`: one entry per event, in order; an entry is an error
/// when that event's value is wrong (an unknown outcome, a progress that is
/// not a finite number, JSON that does not decode as an event).
#[allow(clippy::type_complexity)]
pub fn decode_events(buf: &[u8]) -> Result<Vec<Result<Event, EventError>>, WireError> {
    let mut r = Reader::new(buf);
    r.version("events")?;
    let n = r.count(&"events: the event count", 1)?;
    let mut out = Vec::with_capacity(n);
    for index in 0..n {
        let tag = r.u8(&format_args!("event {index}: its tag"))?;
        let at = Field { item: "event", index, kind: event_name(tag), name: "" };
        let event = match tag {
            TAG_NODE_HEARTBEAT => Ok(Event::NodeHeartbeat { node: NodeId(r.u32(&at.sub("node"))?) }),
            TAG_CONTAINER_STARTED => {
                Ok(Event::ContainerStarted { container: ContainerId(r.u64(&at.sub("container"))?) })
            }
            TAG_CONTAINER_COMPLETED => {
                let container = ContainerId(r.u64(&at.sub("container"))?);
                let o = r.u8(&at.sub("outcome"))?;
                match OUTCOMES.get(o as usize) {
                    Some(&outcome) => Ok(Event::ContainerCompleted { container, outcome }),
                    None => Err(refused(index, format!("{}: unknown outcome {o} (0 to 5)", at.sub("outcome")))),
                }
            }
            TAG_CONTAINER_PROGRESS => {
                let container = ContainerId(r.u64(&at.sub("container"))?);
                let progress = r.f64(&at.sub("progress"))?;
                let sort_finished = match r.u8(&at.sub("has_sort_finished"))? {
                    0 => None,
                    1 => Some(Time(r.u64(&at.sub("sort_finished"))?)),
                    b => {
                        return Err(WireError(format!("{}: {b}, expected 0 or 1", at.sub("has_sort_finished"))));
                    }
                };
                if progress.is_finite() {
                    Ok(Event::ContainerProgress { container, progress, sort_finished })
                } else {
                    Err(refused(index, format!("{}: {progress} is not a finite number", at.sub("progress"))))
                }
            }
            TAG_NODE_REMOVED => Ok(Event::NodeRemoved { node: NodeId(r.u32(&at.sub("node"))?) }),
            TAG_APP_REMOVED => Ok(Event::AppRemoved { app: AppId(r.u32(&at.sub("app"))?) }),
            TAG_NODE_RESOURCE_UPDATED => {
                let node = NodeId(r.u32(&at.sub("node"))?);
                let capacity = r.resources(&at.sub("capacity"))?;
                Ok(Event::NodeResourceUpdated { node, capacity })
            }
            TAG_SCHEDULE_ALL => Ok(Event::ScheduleAll),
            TAG_JSON => {
                let field = at.sub("length");
                let len = r.u32(&field)? as usize;
                let bytes = r.take(len, &field)?;
                serde_json::from_slice::<Event>(bytes).map_err(|e| {
                    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]);
                    refused(index, format!("cannot decode the event {text}: {e}"))
                })
            }
            other => {
                return Err(WireError(format!("event {index}: unknown tag {other} at byte {}", r.pos - 1)));
            }
        };
        out.push(event);
    }
    r.end("events")?;
    Ok(out)
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_resources(out: &mut Vec<u8>, r: &Resources) {
    put_u64(out, r.memory_mb);
    put_u32(out, r.vcores);
    put_u32(out, r.gpus);
}

/// A length-prefixed string; one longer than a u32 can count is cut (at a
/// character boundary), never sent with a wrong length.
fn put_str(out: &mut Vec<u8>, s: &str) {
    let mut end = s.len().min(u32::MAX as usize);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    put_u32(out, end as u32);
    out.extend_from_slice(&s.as_bytes()[..end]);
}

/// Encodes a batch of events as the shim does: the hot variants in binary,
/// the others as JSON under [`TAG_JSON`]. For tests and benchmarks of the
/// decoder (the shim has its own encoder, `Wire.java`).
pub fn encode_events(events: &[Event], out: &mut Vec<u8>) {
    out.push(VERSION);
    put_u32(out, events.len() as u32);
    for e in events {
        match e {
            Event::NodeHeartbeat { node } => {
                out.push(TAG_NODE_HEARTBEAT);
                put_u32(out, node.0);
            }
            Event::ContainerStarted { container } => {
                out.push(TAG_CONTAINER_STARTED);
                put_u64(out, container.0);
            }
            Event::ContainerCompleted { container, outcome } => {
                out.push(TAG_CONTAINER_COMPLETED);
                put_u64(out, container.0);
                out.push(OUTCOMES.iter().position(|o| o == outcome).unwrap_or(0) as u8);
            }
            Event::ContainerProgress { container, progress, sort_finished } => {
                out.push(TAG_CONTAINER_PROGRESS);
                put_u64(out, container.0);
                out.extend_from_slice(&progress.to_le_bytes());
                match sort_finished {
                    Some(t) => {
                        out.push(1);
                        put_u64(out, t.0);
                    }
                    None => out.push(0),
                }
            }
            Event::NodeRemoved { node } => {
                out.push(TAG_NODE_REMOVED);
                put_u32(out, node.0);
            }
            Event::AppRemoved { app } => {
                out.push(TAG_APP_REMOVED);
                put_u32(out, app.0);
            }
            Event::NodeResourceUpdated { node, capacity } => {
                out.push(TAG_NODE_RESOURCE_UPDATED);
                put_u32(out, node.0);
                put_resources(out, capacity);
            }
            Event::ScheduleAll => out.push(TAG_SCHEDULE_ALL),
            other => {
                out.push(TAG_JSON);
                // An event of the core's own types always serialises.
                let json = serde_json::to_vec(other).unwrap_or_default();
                put_u32(out, json.len() as u32);
                out.extend_from_slice(&json);
            }
        }
    }
}

fn time_wire(t: Option<Time>) -> i64 {
    t.map_or(-1, |t| t.0.min(i64::MAX as u64) as i64)
}

/// Encodes a response into `out` (cleared first, so a buffer kept between
/// calls is reused without allocating).
pub fn encode_response(r: &Response, out: &mut Vec<u8>) {
    out.clear();
    out.push(VERSION);
    out.extend_from_slice(&time_wire(r.next_timeout).to_le_bytes());
    put_u32(out, r.decisions.len() as u32);
    for d in &r.decisions {
        match d {
            Decision::Allocate { container, app, priority, node, resources, gang } => {
                out.push(if gang.is_some() { TAG_ALLOCATE_GANG } else { TAG_ALLOCATE });
                put_u64(out, container.0);
                put_u32(out, app.0);
                put_u32(out, priority.0);
                put_u32(out, node.0);
                put_resources(out, resources);
                if let Some(g) = gang {
                    put_u64(out, g.0);
                }
            }
            Decision::Reserve { app, priority, node, resources } => {
                out.push(TAG_RESERVE);
                put_u32(out, app.0);
                put_u32(out, priority.0);
                put_u32(out, node.0);
                put_resources(out, resources);
            }
            Decision::Unreserve { app, priority, node } => {
                out.push(TAG_UNRESERVE);
                put_u32(out, app.0);
                put_u32(out, priority.0);
                put_u32(out, node.0);
            }
            Decision::Preempt { container, mode } => {
                out.push(TAG_PREEMPT);
                put_u64(out, container.0);
                out.push(match mode {
                    PreemptMode::Kill => 0,
                    PreemptMode::Suspend => 1,
                });
            }
            Decision::Resume { container } => {
                out.push(TAG_RESUME);
                put_u64(out, container.0);
            }
        }
    }
    put_u32(out, r.errors.len() as u32);
    for e in &r.errors {
        put_u32(out, e.index.min(u32::MAX as usize) as u32);
        out.push(KINDS.iter().position(|k| *k == e.kind).unwrap_or(2) as u8);
        put_str(out, &e.message);
    }
    put_u32(out, r.logs.len() as u32);
    for l in &r.logs {
        out.push(LEVELS.iter().position(|x| *x == l.level).map_or(3, |i| i as u8 + 1));
        put_str(out, &l.target);
        put_str(out, &l.message);
    }
}

/// Decodes a response as the shim does (tests: the round trip of
/// [`encode_response`]; the shim has its own decoder).
pub fn decode_response(buf: &[u8]) -> Result<Response, WireError> {
    let mut r = Reader::new(buf);
    r.version("response")?;
    let t = r.i64(&"response: next_timeout")?;
    let next_timeout = if t < 0 { None } else { Some(Time(t as u64)) };
    let n = r.count(&"response: the decision count", 1)?;
    let mut decisions = Vec::with_capacity(n);
    for index in 0..n {
        let tag = r.u8(&format_args!("decision {index}: its tag"))?;
        let at = Field { item: "decision", index, kind: "", name: "" };
        let d = match tag {
            TAG_ALLOCATE | TAG_ALLOCATE_GANG => Decision::Allocate {
                container: ContainerId(r.u64(&at.sub("container"))?),
                app: AppId(r.u32(&at.sub("app"))?),
                priority: Priority(r.u32(&at.sub("priority"))?),
                node: NodeId(r.u32(&at.sub("node"))?),
                resources: r.resources(&at.sub("resources"))?,
                gang: if tag == TAG_ALLOCATE_GANG { Some(GangId(r.u64(&at.sub("gang"))?)) } else { None },
            },
            TAG_RESERVE => Decision::Reserve {
                app: AppId(r.u32(&at.sub("app"))?),
                priority: Priority(r.u32(&at.sub("priority"))?),
                node: NodeId(r.u32(&at.sub("node"))?),
                resources: r.resources(&at.sub("resources"))?,
            },
            TAG_UNRESERVE => Decision::Unreserve {
                app: AppId(r.u32(&at.sub("app"))?),
                priority: Priority(r.u32(&at.sub("priority"))?),
                node: NodeId(r.u32(&at.sub("node"))?),
            },
            TAG_PREEMPT => {
                let container = ContainerId(r.u64(&at.sub("container"))?);
                let mode = match r.u8(&at.sub("mode"))? {
                    0 => PreemptMode::Kill,
                    1 => PreemptMode::Suspend,
                    m => return Err(WireError(format!("{}: unknown mode {m}", at.sub("mode")))),
                };
                Decision::Preempt { container, mode }
            }
            TAG_RESUME => Decision::Resume { container: ContainerId(r.u64(&at.sub("container"))?) },
            other => return Err(WireError(format!("decision {index}: unknown tag {other} at byte {}", r.pos - 1))),
        };
        decisions.push(d);
    }
    let n = r.count(&"response: the error count", 9)?;
    let mut errors = Vec::with_capacity(n);
    for index in 0..n {
        let at = Field { item: "error", index, kind: "", name: "" };
        let i = r.u32(&at.sub("index"))? as usize;
        let k = r.u8(&at.sub("kind"))?;
        let kind = *KINDS.get(k as usize).ok_or_else(|| WireError(format!("{}: unknown kind {k}", at.sub("kind"))))?;
        let message = r.string(&at.sub("message"))?;
        errors.push(EventError { index: i, kind, message });
    }
    let n = r.count(&"response: the log line count", 9)?;
    let mut logs = Vec::with_capacity(n);
    for index in 0..n {
        let at = Field { item: "log line", index, kind: "", name: "" };
        let l = r.u8(&at.sub("level"))?;
        let level = *(l as usize)
            .checked_sub(1)
            .and_then(|i| LEVELS.get(i))
            .ok_or_else(|| WireError(format!("{}: unknown level {l}", at.sub("level"))))?;
        let target = r.string(&at.sub("target"))?;
        let message = r.string(&at.sub("message"))?;
        logs.push(LogLine { level, target, message });
    }
    r.end("response")?;
    Ok(Response { decisions, errors, logs, next_timeout })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{decision_samples, event_samples};
    use proptest::prelude::*;

    fn round_trip(events: &[Event]) -> Vec<Result<Event, EventError>> {
        let mut buf = Vec::new();
        encode_events(events, &mut buf);
        decode_events(&buf).expect("a batch the encoder wrote decodes")
    }

    fn resources() -> impl Strategy<Value = Resources> {
        (any::<u64>(), any::<u32>(), any::<u32>()).prop_map(|(memory_mb, vcores, gpus)| Resources {
            memory_mb,
            vcores,
            gpus,
        })
    }

    /// Every variant the binary layout carries, over its whole value range.
    fn binary_event() -> impl Strategy<Value = Event> {
        prop_oneof![
            any::<u32>().prop_map(|n| Event::NodeHeartbeat { node: NodeId(n) }),
            any::<u64>().prop_map(|c| Event::ContainerStarted { container: ContainerId(c) }),
            (any::<u64>(), 0..OUTCOMES.len())
                .prop_map(|(c, o)| Event::ContainerCompleted { container: ContainerId(c), outcome: OUTCOMES[o] }),
            (any::<u64>(), -1e9f64..1e9, proptest::option::of(any::<u64>())).prop_map(|(c, progress, s)| {
                Event::ContainerProgress { container: ContainerId(c), progress, sort_finished: s.map(Time) }
            }),
            any::<u32>().prop_map(|n| Event::NodeRemoved { node: NodeId(n) }),
            any::<u32>().prop_map(|a| Event::AppRemoved { app: AppId(a) }),
            (any::<u32>(), resources())
                .prop_map(|(n, capacity)| Event::NodeResourceUpdated { node: NodeId(n), capacity }),
            Just(Event::ScheduleAll),
        ]
    }

    /// Every event variant: the binary ones, and the samples of the others
    /// (which go as JSON).
    fn any_event() -> impl Strategy<Value = Event> {
        let samples = event_samples();
        prop_oneof![binary_event(), (0..samples.len()).prop_map(move |i| samples[i].clone())]
    }

    fn decision() -> impl Strategy<Value = Decision> {
        prop_oneof![
            (any::<u64>(), any::<u32>(), any::<u32>(), any::<u32>(), resources(), any::<Option<u64>>()).prop_map(
                |(c, a, p, n, r, g)| Decision::Allocate {
                    container: ContainerId(c),
                    app: AppId(a),
                    priority: Priority(p),
                    node: NodeId(n),
                    resources: r,
                    gang: g.map(GangId),
                }
            ),
            (any::<u32>(), any::<u32>(), any::<u32>(), resources()).prop_map(|(a, p, n, r)| Decision::Reserve {
                app: AppId(a),
                priority: Priority(p),
                node: NodeId(n),
                resources: r
            }),
            (any::<u32>(), any::<u32>(), any::<u32>()).prop_map(|(a, p, n)| Decision::Unreserve {
                app: AppId(a),
                priority: Priority(p),
                node: NodeId(n)
            }),
            (any::<u64>(), any::<bool>()).prop_map(|(c, s)| Decision::Preempt {
                container: ContainerId(c),
                mode: if s { PreemptMode::Suspend } else { PreemptMode::Kill }
            }),
            any::<u64>().prop_map(|c| Decision::Resume { container: ContainerId(c) }),
        ]
    }

    fn response() -> impl Strategy<Value = Response> {
        let error = (0..u32::MAX as usize, 0..KINDS.len(), ".{0,40}").prop_map(|(index, k, message)| EventError {
            index,
            kind: KINDS[k],
            message,
        });
        let log = (0..LEVELS.len(), "[a-z_:]{0,30}", ".{0,60}").prop_map(|(l, target, message)| LogLine {
            level: LEVELS[l],
            target,
            message,
        });
        (
            proptest::collection::vec(decision(), 0..8),
            proptest::collection::vec(error, 0..4),
            proptest::collection::vec(log, 0..4),
            proptest::option::of(0..i64::MAX as u64),
        )
            .prop_map(|(decisions, errors, logs, t)| Response {
                decisions,
                errors,
                logs,
                next_timeout: t.map(Time),
            })
    }

    proptest! {
        #[test]
        fn every_event_round_trips(events in proptest::collection::vec(any_event(), 0..20)) {
            let back: Vec<Event> = round_trip(&events).into_iter().map(|e| e.expect("decodes")).collect();
            prop_assert_eq!(back, events);
        }

        #[test]
        fn every_response_round_trips(r in response()) {
            let mut buf = Vec::new();
            encode_response(&r, &mut buf);
            prop_assert_eq!(decode_response(&buf).expect("decodes"), r);
        }

        /// Every cut of a valid batch is refused with an error naming a
        /// field, never a panic, and never taken for a shorter batch.
        #[test]
        fn truncated_events_are_errors(events in proptest::collection::vec(any_event(), 1..10)) {
            let mut buf = Vec::new();
            encode_events(&events, &mut buf);
            for cut in 0..buf.len() {
                let e = decode_events(&buf[..cut]).expect_err("a truncated batch is refused");
                prop_assert!(e.0.contains("byte"), "{}", e);
            }
        }

        #[test]
        fn truncated_responses_are_errors(r in response()) {
            let mut buf = Vec::new();
            encode_response(&r, &mut buf);
            for cut in 0..buf.len() {
                prop_assert!(decode_response(&buf[..cut]).is_err());
            }
        }

        /// Garbage never panics: it decodes to something or is refused.
        #[test]
        fn garbage_never_panics(mut bytes in proptest::collection::vec(any::<u8>(), 0..200), versioned in any::<bool>()) {
            if versioned && !bytes.is_empty() {
                bytes[0] = VERSION;
            }
            let _ = decode_events(&bytes);
            let _ = decode_response(&bytes);
        }
    }

    #[test]
    fn the_samples_cover_every_binary_tag_and_the_json_fallback() {
        let mut buf = Vec::new();
        encode_events(&event_samples(), &mut buf);
        let back: Vec<Event> = decode_events(&buf).unwrap().into_iter().map(|e| e.unwrap()).collect();
        assert_eq!(back, event_samples());
        let response = Response { decisions: decision_samples(), ..Response::default() };
        encode_response(&response, &mut buf);
        assert_eq!(decode_response(&buf).unwrap(), response);
    }

    #[test]
    fn framing_errors_name_the_field() {
        let mut buf = Vec::new();
        encode_events(&[Event::ContainerCompleted { container: ContainerId(7), outcome: Outcome::Lost }], &mut buf);
        let e = decode_events(&buf[..buf.len() - 1]).unwrap_err();
        assert_eq!(
            e.0,
            "event 0 (container_completed) field 'outcome' at byte 14: 1 byte(s) needed, 0 left (truncated?)"
        );
        assert_eq!(decode_events(&[2, 0, 0, 0, 0]).unwrap_err().0, "events: version 2, expected 1");
        assert_eq!(decode_events(&[1, 1, 0, 0, 0, 99]).unwrap_err().0, "event 0: unknown tag 99 at byte 5");
        let e = decode_events(&[1, 255, 255, 255, 255]).unwrap_err();
        assert!(e.0.starts_with("events: the event count at byte 1: 4294967295 item(s)"), "{e}");
        let mut extra = buf.clone();
        extra.push(0);
        assert_eq!(decode_events(&extra).unwrap_err().0, "events: 1 byte(s) left over at byte 15");
    }

    /// Refusals name the event's index in the batch, whether it failed to
    /// decode or the core refused it, before or after one that failed.
    #[test]
    fn refusals_carry_their_batch_index() {
        use crate::session::{Session, Settings};
        let mut s = Session::open("fifo", &Default::default(), Settings::default()).unwrap();
        let mut buf = Vec::new();
        encode_events(
            &[
                Event::ContainerStarted { container: ContainerId(1) }, // unknown: the core refuses it
                Event::ContainerCompleted { container: ContainerId(7), outcome: Outcome::Lost },
                Event::AppRemoved { app: AppId(9) }, // unknown too
            ],
            &mut buf,
        );
        buf[5 + 9 + 9] = 9; // the second event's outcome: fails to decode
        let r = s.handle_wire(Time(1), &buf).unwrap();
        let got: Vec<(usize, RefusalKind)> = r.errors.iter().map(|e| (e.index, e.kind)).collect();
        assert_eq!(got, vec![(0, RefusalKind::Never), (1, RefusalKind::Error), (2, RefusalKind::Never)]);
    }

    #[test]
    fn a_wrong_value_costs_only_its_event() {
        let mut buf = Vec::new();
        encode_events(
            &[
                Event::ContainerCompleted { container: ContainerId(7), outcome: Outcome::Lost },
                Event::NodeHeartbeat { node: NodeId(3) },
            ],
            &mut buf,
        );
        buf[14] = 9; // the outcome
        let out = decode_events(&buf).unwrap();
        let e = out[0].as_ref().unwrap_err();
        assert_eq!((e.index, e.kind), (0, RefusalKind::Error));
        assert!(e.message.contains("field 'outcome': unknown outcome 9"), "{}", e.message);
        assert_eq!(out[1], Ok(Event::NodeHeartbeat { node: NodeId(3) }));

        let mut json = vec![VERSION, 1, 0, 0, 0, TAG_JSON, 4, 0, 0, 0];
        json.extend_from_slice(b"{\"a\"");
        let e = decode_events(&json).unwrap().remove(0).unwrap_err();
        assert!(e.message.starts_with("cannot decode the event {\"a\""), "{}", e.message);

        let mut nan = Vec::new();
        encode_events(
            &[Event::ContainerProgress { container: ContainerId(1), progress: f64::NAN, sort_finished: None }],
            &mut nan,
        );
        let e = decode_events(&nan).unwrap().remove(0).unwrap_err();
        assert!(e.message.contains("'progress': NaN is not a finite number"), "{}", e.message);
    }
}
