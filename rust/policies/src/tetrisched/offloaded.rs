//! A cycle's solve (steps 7–9) as data, so that the ResourceManager can run
//! it in a child process (`sojourn-offload`): CBC 2.10.8 has aborted the
//! process on an assertion (`compile.rs`, `run_backend`), and an abort
//! inside the RM's JVM would end the RM. In a child it costs one solve,
//! which answers with an error, and the cycle falls back to the greedy plan
//! (§2.7).

use super::compile::{self, Solved, SolverOptions, Supply, Window};
use super::strl::{LeafId, Partitioning, Strl};
use sojourn_core::{Described, OffloadWork};
use std::collections::BTreeMap;

/// The kind under which a solve is described.
pub const KIND: &str = "tetrisched.solve";

/// Everything [`compile::solve`] reads.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SolveInput {
    pub root: Strl,
    pub parts: Partitioning,
    pub supply: Supply,
    pub window: Window,
    pub opts: SolverOptions,
    /// Warm start: units per leaf (§2.6).
    pub warm: BTreeMap<LeafId, u32>,
}

impl SolveInput {
    /// The solve, answered as it crosses the host.
    pub fn solve(&self) -> serde_json::Value {
        encode(compile::solve(&self.root, &self.parts, &self.supply, self.window, &self.opts, &self.warm))
    }
}

impl OffloadWork for SolveInput {
    fn run(self: Box<Self>) -> serde_json::Value {
        self.solve()
    }

    /// The solve as data; `None` (the closure alone) if it does not encode.
    fn describe(&self) -> Option<Described> {
        match serde_json::to_value(self) {
            Ok(input) => Some(Described {
                kind: KIND.to_string(),
                input,
                budget_ms: (self.opts.time_limit_s.max(0.0) * 1000.0).ceil() as u64,
            }),
            Err(e) => {
                log::warn!("tetrisched: a solve does not encode ({e}); it runs in this process");
                None
            }
        }
    }
}

/// Runs a described solve: the same answer the closure gives.
pub fn run(input: serde_json::Value) -> Result<serde_json::Value, String> {
    let input: SolveInput =
        serde_json::from_value(input).map_err(|e| format!("the input of a {KIND} does not decode: {e}"))?;
    Ok(input.solve())
}

/// A solve's answer as it crosses the host: the plan, or why there is none.
pub(super) fn encode(answer: Result<Solved, String>) -> serde_json::Value {
    match answer {
        Ok(s) => serde_json::to_value(&s).unwrap_or_else(|e| serde_json::json!({ "error": format!("encode: {e}") })),
        Err(e) => serde_json::json!({ "error": e }),
    }
}

pub(super) fn decode(v: &serde_json::Value) -> Result<Solved, String> {
    if let Some(e) = v.get("error") {
        return Err(e.as_str().map_or_else(|| e.to_string(), str::to_string));
    }
    serde_json::from_value(v.clone()).map_err(|e| format!("the solver's answer does not decode: {e}"))
}
