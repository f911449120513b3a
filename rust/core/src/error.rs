//! The core's one error type. Every message names the offending input.

use crate::ids::{AppId, ContainerId, NodeId};
use crate::protocol::RefusalKind;
use crate::time::Time;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum CoreError {
    UnknownNode(NodeId),
    DuplicateNode(NodeId),
    UnknownApp(AppId),
    DuplicateApp(AppId),
    UnknownContainer(ContainerId),
    /// A resource vector that is zero where it must not be, or larger than
    /// anything the cluster allows.
    BadResource {
        what: String,
        why: String,
    },
    /// Configuration: unknown key, bad value, unknown policy.
    Config(String),
    /// A decision a policy produced failed the core's own validation; this is
    /// a policy bug, reported rather than applied.
    InvalidDecision(String),
    /// Anything else a driver sent that cannot be applied.
    BadEvent(String),
    /// A host stepped the core at a time before its previous step: its
    /// clock is not monotonic (a bug in the host, never clamped silently).
    ClockBackwards {
        now: Time,
        last: Time,
    },
    /// A placement asked for after the node heartbeat being handled placed
    /// `limit` containers, the most the host allows one heartbeat: it may
    /// succeed at a later heartbeat.
    AssignmentLimit {
        limit: u32,
        app: AppId,
        node: NodeId,
    },
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::UnknownNode(n) => write!(f, "unknown node {n}"),
            CoreError::DuplicateNode(n) => write!(f, "node {n} was already added"),
            CoreError::UnknownApp(a) => write!(f, "unknown application {a}"),
            CoreError::DuplicateApp(a) => write!(f, "application {a} was already added"),
            CoreError::UnknownContainer(c) => write!(f, "unknown container {c}"),
            CoreError::BadResource { what, why } => write!(f, "bad resource in {what}: {why}"),
            CoreError::Config(m) => write!(f, "configuration error: {m}"),
            CoreError::InvalidDecision(m) => write!(f, "policy produced an invalid decision: {m}"),
            CoreError::BadEvent(m) => write!(f, "bad event: {m}"),
            CoreError::ClockBackwards { now, last } => {
                write!(f, "the host's clock went backwards: a step at {now} after one at {last}")
            }
            CoreError::AssignmentLimit { limit, app, node } => write!(
                f,
                "{app} cannot be placed on {node} in this heartbeat: it already placed {limit} container(s), \
                 the most one node heartbeat may place"
            ),
        }
    }
}

impl CoreError {
    /// Whether the refused input could succeed later, never, or shows a bug.
    pub fn kind(&self) -> RefusalKind {
        match self {
            CoreError::UnknownNode(_)
            | CoreError::DuplicateNode(_)
            | CoreError::UnknownApp(_)
            | CoreError::DuplicateApp(_)
            | CoreError::UnknownContainer(_)
            | CoreError::BadResource { .. }
            | CoreError::BadEvent(_) => RefusalKind::Never,
            CoreError::AssignmentLimit { .. } => RefusalKind::Retry,
            CoreError::Config(_) | CoreError::InvalidDecision(_) | CoreError::ClockBackwards { .. } => {
                RefusalKind::Error
            }
        }
    }
}

impl std::error::Error for CoreError {}

pub type Result<T, E = CoreError> = std::result::Result<T, E>;
