//! Sojourn's scheduling core: the model (resources, nodes, apps, asks,
//! containers), the protocol, the cluster mirror and the [`Policy`] trait.
//!
//! The core is sans-I/O and deterministic (ARCHITECTURE.md principle 1): no
//! clock, threads, files or global randomness. Hosts (the simulator in
//! `sojourn-sim`, the YARN shim through `sojourn-jni`, a replay) drive a
//! [`Core`].
//!
//! # For a policy author
//!
//! - **The cycle.** Every host calls [`Core::step`]`(now, events)` and gets a
//!   [`Step`]: the policy's due timers fire first, then the events apply in
//!   order, then the decisions come back with [`Step::next_wake`]. What the
//!   host's carrying out of a decision brings back (a confirmation, a
//!   rejection, a killed container's completion, a new ask) arrives in the
//!   *next* step, never in the middle of this one. Time never goes
//!   backwards ([`CoreError::ClockBackwards`]). See [`engine`].
//! - **The extension points** are the methods of [`Policy`]: `on_event`,
//!   `on_node_heartbeat`, `on_schedule`, `next_wake`/`on_wake`, `describe`.
//!   Every decision goes through [`Ctx`], which checks it against the mirror
//!   ([`Cluster`]) and records it as assumed until the host confirms or
//!   rejects it.
//! - **Outcomes are typed.** A refused event ([`RefusedEvent`]) and a
//!   rejected decision ([`Event::Rejected`]) carry a [`RefusalKind`]:
//!   `Retry` (may succeed once the state changes), `Never` (do not issue it
//!   again: the mirror remembers, e.g. a suspension the host cannot do) or
//!   `Error` (a bug on the side that produced it).
//! - **A heartbeat may have a limit.** A host can bound the containers
//!   placed while one `NodeHeartbeat` is handled
//!   ([`CoreConfig::max_assignments`], YARN's per-node-heartbeat
//!   maximum-container-assignments; the shim sets it). Once it is spent,
//!   [`Cluster::can_allocate`] refuses with [`Refusal::AssignmentLimit`] and
//!   [`Ctx::allocate`] with [`CoreError::AssignmentLimit`] (`Retry`), before
//!   anything is decided. A policy that places several containers per
//!   heartbeat should stop its walk when [`Cluster::assignments_left`] is
//!   `Some(0)`, and treat the refusal as the end of the heartbeat, not as a
//!   failure to report.
//! - **Timers are typed.** A policy keeps its wake-ups in a
//!   [`TimerTable`] of its own payload type (an enum), reports the first in
//!   [`Policy::next_wake`] and pops the due ones in [`Policy::on_wake`];
//!   setting and cancelling cost O(log n).
//! - **Metrics.** A policy counts and observes its own work through
//!   `ctx.metrics` ([`Metrics`]); the simulator's reports and the shim's
//!   MXBean show them.
//! - **Tests** drive a policy through [`Harness`] (one event per step,
//!   decisions kept until drained), the same cycle the hosts use.

#![forbid(unsafe_code)]

pub mod cluster;
pub mod engine;
pub mod error;
pub mod harness;
pub mod ids;
pub mod metrics;
pub mod params;
pub mod policy;
pub mod protocol;
pub mod resources;
pub mod rng;
pub mod time;
pub mod timer;

pub use cluster::{App, AskState, Cluster, Container, ContainerState, Node, RackId, Recovered, Refusal};
pub use engine::{Core, CoreConfig, CoreStats, RefusedEvent, ReplayOutcome, Step};
pub use error::{CoreError, Result};
pub use harness::Harness;
pub use ids::{AppId, ContainerId, GangId, NodeId, Priority};
pub use metrics::{Distribution, Metrics};
pub use params::{ParamKind, ParamSpec, Params};
pub use policy::{Ctx, Described, Offload, OffloadWork, Policy};
pub use protocol::{
    AppSpec, Ask, Decision, Event, Locality, NodeSpec, Outcome, Phase, PreemptMode, Preference, Record, RecordingMeta,
    RefusalKind,
};
pub use resources::{Calculator, Resources};
pub use rng::Rng;
pub use time::Time;
pub use timer::TimerTable;
