//! The one protocol between a driver (the simulator, or the YARN shim through
//! JNI) and the core (ARCHITECTURE.md principle 2). Plain serde types: the
//! simulator passes them directly, the JNI bridge encodes them, and the flight
//! recorder writes them as JSON lines for `sojourn replay`.
//!
//! Inputs are [`Event`]s, each applied at a `now`; outputs are [`Decision`]s,
//! pulled in order. A driver that cannot apply a decision sends it back in
//! [`Event::Rejected`], and the core rolls its mirror back.

use crate::ids::{AppId, ContainerId, GangId, NodeId, Priority};
use crate::resources::Resources;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A NodeManager as it registers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeSpec {
    pub node: NodeId,
    /// Host name (YARN's `host:port` node id, or a trace's host).
    pub name: String,
    /// Rack path, e.g. `/default-rack`.
    pub rack: String,
    /// Node labels (partitions). Empty: the default partition.
    #[serde(default)]
    pub labels: Vec<String>,
    pub capacity: Resources,
}

/// Where a job runs at full speed, as TetriSched's job types say it
/// (tetrisched.md §3.3, A12): GPU jobs on nodes with GPUs, MPI jobs with all
/// of a gang in one rack, others anywhere. YARN carries no such type, so it
/// is read from the application's name ([`Preference::of_name`]); the
/// policy plans by it and the simulator's slowdown off it is ground truth,
/// so both read it here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preference {
    /// On nodes with GPUs.
    Gpu,
    /// All of a group's tasks in one rack.
    OneRack,
    /// Anywhere.
    Anywhere,
}

impl Preference {
    /// Case-insensitive: a name containing `gpu` is [`Preference::Gpu`],
    /// else one containing `mpi` is [`Preference::OneRack`].
    pub fn of_name(name: &str) -> Preference {
        let name = name.to_ascii_lowercase();
        if name.contains("gpu") {
            Preference::Gpu
        } else if name.contains("mpi") {
            Preference::OneRack
        } else {
            Preference::Anywhere
        }
    }
}

/// An application as it is submitted. Its submit time is the `now` of the
/// event that adds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AppSpec {
    pub app: AppId,
    #[serde(default)]
    pub name: String,
    /// Queue name as submitted (a leaf name or a full path `root.a.b`).
    pub queue: String,
    pub user: String,
    /// YARN application priority: *higher value = more important*.
    #[serde(default)]
    pub priority: i32,
    /// Completion deadline, when the user gave one (TetriSched).
    #[serde(default)]
    pub deadline: Option<Time>,
    /// Value of finishing by the deadline (TetriSched).
    #[serde(default)]
    pub value: Option<f64>,
}

impl AppSpec {
    /// An app of `user` in `queue`, with no name, priority 0, and no
    /// deadline or value (what most tests and trace readers need).
    pub fn new(app: AppId, queue: &str, user: &str) -> AppSpec {
        AppSpec {
            app,
            name: String::new(),
            queue: queue.to_string(),
            user: user.to_string(),
            priority: 0,
            deadline: None,
            value: None,
        }
    }
}

/// The phase of an application a request belongs to. MapReduce asks for its
/// AM at priority 0, maps at 20 and reduces at 10; policies such as HFSP keep
/// a separate queue per phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Am,
    Map,
    Reduce,
    Other,
}

/// A locality preference of an ask: so many of its containers would like
/// this node or this rack.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Locality {
    Node(NodeId, u32),
    Rack(String, u32),
}

/// An application's outstanding request at one priority (YARN's
/// `ResourceRequest`s of one `SchedulerRequestKey`, aggregated: `count` is the
/// `ANY` count, `locality` the node and rack entries). An update replaces
/// the previous ask at that priority; `count == 0` withdraws it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ask {
    pub priority: Priority,
    pub capability: Resources,
    pub count: u32,
    #[serde(default = "default_phase")]
    pub phase: Phase,
    #[serde(default)]
    pub locality: Vec<Locality>,
    /// `false`: only the listed nodes/racks may serve this ask.
    #[serde(default = "yes")]
    pub relax_locality: bool,
    /// Node-label expression; `None` is the default partition.
    #[serde(default)]
    pub label: Option<String>,
    /// Estimated duration of each task of this ask, when the driver knows it
    /// (a trace, application tags, or learned). Policies that need no
    /// estimates ignore it.
    #[serde(default)]
    pub est_task_ms: Option<u64>,
}

fn default_phase() -> Phase {
    Phase::Other
}
fn yes() -> bool {
    true
}

impl Ask {
    pub fn new(priority: Priority, capability: Resources, count: u32, phase: Phase) -> Ask {
        Ask {
            priority,
            capability,
            count,
            phase,
            locality: Vec::new(),
            relax_locality: true,
            label: None,
            est_task_ms: None,
        }
    }
}

/// Why a container ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The task finished (successfully or not) on its own.
    Finished,
    /// The application gave the container back.
    Released,
    /// Killed because the core preempted it.
    Preempted,
    /// The node was lost with the container on it.
    Lost,
    /// Allocated but never launched (YARN's allocation expiry).
    Expired,
    /// Killed for any other reason (the app was killed, an admin).
    Killed,
}

/// How a container is preempted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PreemptMode {
    /// Kill it: its work is lost and the task runs again from scratch.
    Kill,
    /// Suspend it: it keeps its memory and node, stops using CPU, and can
    /// be resumed where it stopped.
    Suspend,
}

/// What a driver tells the core.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    NodeAdded(NodeSpec),
    NodeRemoved {
        node: NodeId,
    },
    NodeResourceUpdated {
        node: NodeId,
        capacity: Resources,
    },
    /// YARN's `NODE_UPDATE`: a scheduling opportunity on this node.
    NodeHeartbeat {
        node: NodeId,
    },
    AppAdded(AppSpec),
    AppRemoved {
        app: AppId,
    },
    AsksUpdated {
        app: AppId,
        asks: Vec<Ask>,
    },
    /// The driver confirms an allocation: the container was created.
    ContainerStarted {
        container: ContainerId,
    },
    ContainerCompleted {
        container: ContainerId,
        outcome: Outcome,
    },
    /// A running container's progress in [0, 1], as the driver reads it (the
    /// YARN shim from MapReduce AMs, the simulator from task durations);
    /// hfsp's Δ rule sizes training tasks from it.
    ContainerProgress {
        container: ContainerId,
        progress: f64,
        /// When a reduce finished its shuffle and sort, if the driver knows
        /// (a MapReduce AM reports it as the attempt's merge finish): the
        /// start of the task time HFSP's authors' code measures (hfsp.md D4).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sort_finished: Option<Time>,
    },
    /// The driver could not apply a decision: the core rolls it back.
    /// `kind` says whether the same decision could succeed later
    /// ([`RefusalKind::Retry`], the default in older recordings) or never
    /// ([`RefusalKind::Never`]: the core then stops re-issuing it, e.g. a
    /// suspension the host cannot carry out).
    Rejected {
        decision: Decision,
        reason: String,
        #[serde(default, skip_serializing_if = "RefusalKind::is_retry")]
        kind: RefusalKind,
    },
    /// A container that exists in the host but not (or no longer) in the
    /// core: one YARN recovered after a ResourceManager restart or fail-over,
    /// one a restarted ApplicationMaster kept, or one the host re-sends when
    /// it rebuilds the core's mirror from its own books. The host chooses
    /// the id (the core's own counter moves past it). It is booked as the
    /// host reports it, even past the node's room (the node is then
    /// over-committed until enough of its containers end).
    ContainerRecovered {
        container: ContainerId,
        app: AppId,
        node: NodeId,
        priority: Priority,
        resources: Resources,
        #[serde(default = "default_phase")]
        phase: Phase,
        /// It is suspended (it holds its memory but no vcores).
        #[serde(default)]
        suspended: bool,
    },
    /// Event-driven drivers (the papers' simulators): offer every node with
    /// free resources to the policy now, as if each had heartbeated.
    ScheduleAll,
    /// The answer to work the policy handed the host with
    /// [`Ctx::offload`](crate::Ctx::offload) (a TetriSched MILP solve), under
    /// the tag the policy gave it. The host runs the work off the scheduler's
    /// path and brings the answer back as this event, so the flight recorder
    /// keeps it and a replay reproduces the decisions without redoing the work.
    OffloadDone {
        tag: u64,
        result: serde_json::Value,
    },
}

/// How the side that refused something should have it treated: the
/// Kubernetes scheduling framework's status codes, as the core needs them.
/// An event the core refuses comes back with one; a decision the host
/// refuses goes back in [`Event::Rejected`] with one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalKind {
    /// It may succeed later, once the state it depends on changes (a
    /// container that does not fit yet, a node busy with another request).
    #[default]
    Retry,
    /// It can never succeed as given (an unknown or departed id, a duplicate,
    /// an ask larger than the maximum allocation, a suspension the host
    /// cannot carry out): do not send it again.
    Never,
    /// Something is wrong on the side that produced it (a policy decision
    /// that fails the core's own validation, a malformed event): a bug to
    /// report, not a condition to wait out.
    Error,
}

impl RefusalKind {
    pub fn is_retry(&self) -> bool {
        *self == RefusalKind::Retry
    }
}

/// What the core tells a driver.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Decision {
    /// Start a container for `app`'s ask at `priority` on `node`. The core has
    /// already counted it (assumed) in its mirror.
    ///
    /// With `gang`, it is one member of an atomic group (the decisions of one
    /// step with the same gang, all of one app and priority): a host applies
    /// all of them or refuses all. If a host starts some and refuses others
    /// anyway, the core kills those it started, so a gang never runs in part.
    Allocate {
        container: ContainerId,
        app: AppId,
        priority: Priority,
        node: NodeId,
        resources: Resources,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gang: Option<GangId>,
    },
    /// Hold `node` for `app`'s large ask at `priority` until it fits.
    Reserve { app: AppId, priority: Priority, node: NodeId, resources: Resources },
    /// Drop the reservation on `node`.
    Unreserve { app: AppId, priority: Priority, node: NodeId },
    /// Take `container` away: kill it (the driver reports it completed with
    /// [`Outcome::Preempted`]) or suspend it (effective at once in the mirror).
    Preempt { container: ContainerId, mode: PreemptMode },
    /// Resume a suspended container on its node.
    Resume { container: ContainerId },
}

/// One line of a flight recording: one [`Core::step`](crate::Core::step),
/// its time and its events in order (none: a step that only fired timers).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub now: Time,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
    /// Recordings made before steps were recorded whole held one event a
    /// line here; they replay as one step per line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<Event>,
}

impl Record {
    /// A step at `now` with `events`.
    pub fn step(now: Time, events: Vec<Event>) -> Record {
        Record { now, events, event: None }
    }

    /// The step's events, in order, whichever form the line had.
    pub fn into_events(self) -> Vec<Event> {
        let mut events = self.events;
        events.extend(self.event);
        events
    }
}

/// What a replay needs besides the events: the YARN shim's flight recorder
/// writes it to `<record>.meta` when a recording starts (beside the events,
/// one [`Record`] a line, and `<record>.decisions`, one [`Decision`] a line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordingMeta {
    pub policy: String,
    pub params: BTreeMap<String, String>,
    pub seed: u64,
    #[serde(default)]
    pub max_allocation: Option<Resources>,
    #[serde(default)]
    pub network_delay_ms: u64,
    /// 0 for a recording from the RM's start; n for the n-th segment after
    /// the recorder rotated, which starts mid-run and so cannot replay the
    /// decisions exactly.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub segment: u32,
    /// The host ran offloaded work ([`CoreConfig::offload`](crate::CoreConfig::offload)):
    /// a replay must configure its core the same way, so the policy waits for
    /// the recorded [`Event::OffloadDone`] answers instead of working inline.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub offload: bool,
    /// The run's limit on containers per node heartbeat
    /// ([`CoreConfig::max_assignments`](crate::CoreConfig::max_assignments)),
    /// which a replay must apply to make the same decisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_assignments: Option<u32>,
}

impl RecordingMeta {
    /// The core settings the recorded run had, for a replay.
    pub fn core_config(&self) -> crate::CoreConfig {
        crate::CoreConfig {
            seed: self.seed,
            max_allocation: self.max_allocation,
            network_delay_ms: self.network_delay_ms,
            offload: self.offload,
            max_assignments: self.max_assignments,
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_progress_reads_with_or_without_a_sort_finish() {
        let plain: Event =
            serde_json::from_str(r#"{"type":"container_progress","container":7,"progress":0.5}"#).unwrap();
        assert_eq!(plain, Event::ContainerProgress { container: ContainerId(7), progress: 0.5, sort_finished: None });
        let sorted: Event =
            serde_json::from_str(r#"{"type":"container_progress","container":7,"progress":0.9,"sort_finished":1500}"#)
                .unwrap();
        assert_eq!(
            sorted,
            Event::ContainerProgress { container: ContainerId(7), progress: 0.9, sort_finished: Some(Time(1500)) }
        );
        // Written back without the field when unknown (recordings stay as they were).
        assert!(!serde_json::to_string(&plain).unwrap().contains("sort_finished"));
    }
}
