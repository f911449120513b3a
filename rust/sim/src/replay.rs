//! `sojourn replay`: re-runs a flight recording (JSON lines of
//! `sojourn_core::Record`, written by the YARN shim) through a fresh core and
//! prints the decisions it makes. The core is deterministic, so a recording
//! replays to the decisions the RM saw.

use crate::engine::SimError;
use sojourn_core::{Core, CoreConfig, Record};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// Replays `file`; returns one JSON decision per line.
pub fn replay(file: &Path, policy: &str, params: &BTreeMap<String, String>, seed: u64) -> Result<String, SimError> {
    let f = std::fs::File::open(file)
        .map_err(|e| SimError::Config(format!("cannot open recording {}: {e}", file.display())))?;
    let mut core = Core::new(sojourn_policies::build(policy, params)?, CoreConfig { seed, ..CoreConfig::default() });
    let mut out = String::new();
    for (i, line) in BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| SimError::Config(format!("{}:{}: {e}", file.display(), i + 1)))?;
        if line.trim().is_empty() {
            continue;
        }
        let rec: Record = serde_json::from_str(&line)
            .map_err(|e| SimError::Config(format!("{}:{}: not a recorded event: {e}", file.display(), i + 1)))?;
        match rec.event {
            Some(ev) => {
                if let Err(e) = core.handle(rec.now, ev) {
                    // The RM saw the same error and carried on; so does replay.
                    out.push_str(&format!("# {}:{}: {e}\n", file.display(), i + 1));
                }
            }
            None => core.handle_timeout(rec.now),
        }
        while let Some(d) = core.poll_decision() {
            out.push_str(&serde_json::to_string(&d).unwrap_or_default());
            out.push('\n');
        }
    }
    Ok(out)
}
