//! Offloaded work run from its description ([`sojourn_core::Described`]),
//! as a host that runs it in another process does (`sojourn-offload`, the
//! ResourceManager's child). Each kind answers exactly as the closure the
//! policy offloaded with it.

/// Runs the work `kind` names on `input`; an unknown kind or an input that
/// does not decode is an error naming it.
pub fn run(kind: &str, input: serde_json::Value) -> Result<serde_json::Value, String> {
    match kind {
        crate::tetrisched::offloaded::KIND => crate::tetrisched::offloaded::run(input),
        other => Err(format!("unknown offloaded work kind '{other}' (known: {})", crate::tetrisched::offloaded::KIND)),
    }
}
