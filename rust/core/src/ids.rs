//! Newtype ids. YARN's string ids (ContainerId, ApplicationAttemptId,
//! NodeId) are mapped to these at the boundary (the JNI crate or a trace
//! reader); inside Rust they are small integers so that state can live in
//! ordered maps and slabs.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id {
    ($(#[$m:meta])* $name:ident, $inner:ty, $prefix:literal) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub $inner);
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id!(/// A worker node (YARN NodeManager).
    NodeId, u32, "node#");
id!(/// An application (YARN application attempt).
    AppId, u32, "app#");
id!(/// A container. Allocated containers get ids from the core's own counter.
    ContainerId, u64, "container#");
id!(/// A gang: containers placed all or nothing ([`crate::Ctx::allocate_gang`]).
    /// Its value is its first member's container id, so it needs no counter.
    GangId, u64, "gang#");

/// YARN's request priority: *lower value = more important*. MapReduce asks for
/// its AM at 0, maps at 20 and reduces at 10.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Priority(pub u32);

impl Priority {
    pub const AM: Priority = Priority(0);
    pub const REDUCE: Priority = Priority(10);
    pub const MAP: Priority = Priority(20);
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "prio{}", self.0)
    }
}
