//! Simulated or wall time as integer milliseconds. The core never reads a
//! clock: every call carries `now` (ARCHITECTURE.md principle 1).

use serde::{Deserialize, Serialize};
use std::fmt;

/// An instant, in milliseconds since the host's epoch (the trace start in the
/// simulator, the RM's start in YARN).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub fn from_secs_f64(s: f64) -> Time {
        Time((s * 1000.0).round().max(0.0) as u64)
    }
    pub fn ms(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }
    /// `self + d` milliseconds, saturating.
    pub fn plus(self, d_ms: u64) -> Time {
        Time(self.0.saturating_add(d_ms))
    }
    /// Milliseconds from `earlier` to `self`, zero if `earlier` is later.
    pub fn since(self, earlier: Time) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}s", self.as_secs_f64())
    }
}
