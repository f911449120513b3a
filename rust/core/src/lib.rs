//! Sojourn's scheduling core: the model (resources, nodes, apps, asks,
//! containers), the protocol, the cluster mirror and the [`Policy`] trait.
//!
//! The core is sans-I/O and deterministic (ARCHITECTURE.md principle 1): no
//! clock, threads, files or global randomness. Hosts (the simulator in
//! `sojourn-sim`, the YARN shim through `sojourn-jni`) drive a [`Core`].

#![forbid(unsafe_code)]

pub mod cluster;
pub mod engine;
pub mod error;
pub mod harness;
pub mod ids;
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
pub use ids::{AppId, ContainerId, NodeId, Priority};
pub use params::{ParamKind, ParamSpec, Params};
pub use policy::{Ctx, Policy};
pub use protocol::{
    AppSpec, Ask, Decision, Event, Locality, NodeSpec, Outcome, Phase, PreemptMode, Record, RecordingMeta, RefusalKind,
};
pub use resources::{Calculator, Resources};
pub use rng::Rng;
pub use time::Time;
pub use timer::TimerTable;
