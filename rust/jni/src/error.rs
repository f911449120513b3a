//! The bridge's one error type, and the Java exception each kind becomes.

use sojourn_core::CoreError;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum BridgeError {
    /// Bad configuration: unknown policy, unknown key, bad value. Java sees
    /// `IllegalArgumentException`, so the RM refuses to start.
    Config(String),
    /// Input that cannot be decoded (malformed JSON from the shim).
    BadInput(String),
    /// A handle that is not (or no longer) open.
    Closed(u64),
    /// A core that panicked in an earlier call: it is never used again.
    Poisoned(u64),
    /// Anything else, including a panic caught at the boundary.
    Internal(String),
}

impl BridgeError {
    /// The JNI name of the exception class this error is thrown as.
    pub fn java_class(&self) -> &'static str {
        match self {
            BridgeError::Config(_) | BridgeError::BadInput(_) => "java/lang/IllegalArgumentException",
            BridgeError::Closed(_) | BridgeError::Poisoned(_) | BridgeError::Internal(_) => {
                "java/lang/IllegalStateException"
            }
        }
    }
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BridgeError::Config(m) => write!(f, "sojourn: {m}"),
            BridgeError::BadInput(m) => write!(f, "sojourn: bad input from the shim: {m}"),
            BridgeError::Closed(h) => write!(f, "sojourn: native handle {h} is not open (closed already?)"),
            BridgeError::Poisoned(h) => write!(
                f,
                "sojourn: native core {h} panicked in an earlier call and may be half-applied; it must be rebuilt"
            ),
            BridgeError::Internal(m) => write!(f, "sojourn: internal error: {m}"),
        }
    }
}

impl std::error::Error for BridgeError {}

impl From<CoreError> for BridgeError {
    fn from(e: CoreError) -> Self {
        match e {
            CoreError::Config(m) => BridgeError::Config(format!("configuration error: {m}")),
            e @ CoreError::ClockBackwards { .. } => BridgeError::BadInput(e.to_string()),
            other => BridgeError::Internal(other.to_string()),
        }
    }
}

pub type Result<T, E = BridgeError> = std::result::Result<T, E>;
