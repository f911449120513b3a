//! A run's settings from the command line: every flag checked against
//! [`limits`] (each error names the flag, the value and the limit), then
//! turned into the engine's [`SimConfig`].

use super::RunArgs;
use crate::engine::{LaunchModel, NodeFailure, OffloadChild, SimConfig, SimError};
use crate::workload::estimate_error::EstimateError;
use crate::workload::limits::{
    self, MAX_AM_RESPONSE_LAG, MAX_LOAD, MAX_NODES, MAX_NODE_MEMORY_MB, MAX_NODE_VCORES, MAX_PERIOD_MS, MAX_TIME_S,
};
use crate::workload::slots::Hadoop1Slots;
use sojourn_core::{Resources, Time};
use std::collections::BTreeMap;

pub(super) fn cfg_err(m: impl Into<String>) -> SimError {
    SimError::Config(m.into())
}

/// `-p key=value` parameters; a key given twice is an error naming it.
pub fn parse_params(raw: &[String]) -> Result<BTreeMap<String, String>, SimError> {
    let mut params = BTreeMap::new();
    for kv in raw {
        let (k, v) = kv.split_once('=').ok_or_else(|| cfg_err(format!("parameter '{kv}' is not key=value")))?;
        let (k, v) = (k.trim().to_string(), v.trim().to_string());
        if let Some(first) = params.get(&k) {
            return Err(cfg_err(format!("parameter '{k}' is given twice ({first} and {v})")));
        }
        params.insert(k, v);
    }
    Ok(params)
}

fn parse_failure(s: &str) -> Result<NodeFailure, SimError> {
    let bad = || cfg_err(format!("--fail '{s}' is not AT_S:NODE[:RECOVER_AFTER_S]"));
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 {
        return Err(bad());
    }
    let secs = |t: &str| -> Result<f64, SimError> {
        let v: f64 = t.parse().map_err(|_| bad())?;
        if !(0.0..=MAX_TIME_S).contains(&v) {
            return Err(cfg_err(format!("--fail '{s}': {t} s is not within 0 to {MAX_TIME_S} s (365 days)")));
        }
        Ok(v)
    };
    let at = secs(parts[0])?;
    let node: usize = parts[1].parse().map_err(|_| bad())?;
    let recover = match parts.get(2) {
        Some(r) => Some((secs(r)? * 1000.0).round() as u64),
        None => None,
    };
    Ok(NodeFailure { at: Time::from_secs_f64(at), node, recover_after_ms: recover })
}

/// Checks every size and period flag of a run against [`limits`]; each
/// error names the flag, the value and the limit.
pub fn check_run_args(args: &RunArgs) -> Result<(), SimError> {
    let within = |flag: &str, v: u64, lo: u64, hi: u64| {
        if (lo..=hi).contains(&v) {
            Ok(())
        } else {
            Err(cfg_err(format!("--{flag} {v}: expected {lo} to {hi}")))
        }
    };
    if let Some(n) = args.nodes {
        within("nodes", n as u64, 1, MAX_NODES as u64)?;
    }
    if !(args.load > 0.0 && args.load <= MAX_LOAD) {
        return Err(cfg_err(format!("--load {}: expected a number above 0 and at most {MAX_LOAD}", args.load)));
    }
    within("node-memory-mb", args.node_memory_mb, 1, MAX_NODE_MEMORY_MB)?;
    within("node-vcores", args.node_vcores as u64, 1, MAX_NODE_VCORES as u64)?;
    within("nodes-per-rack", args.nodes_per_rack as u64, 1, MAX_NODES as u64)?;
    within("heartbeat-ms", args.heartbeat_ms, 0, MAX_PERIOD_MS)?;
    within("am-heartbeat-ms", args.am_heartbeat_ms, 0, MAX_PERIOD_MS)?;
    within("am-startup-ms", args.am_startup_ms, 0, MAX_PERIOD_MS)?;
    within("am-vcores", args.am_vcores as u64, 0, MAX_NODE_VCORES as u64)?;
    within("am-response-lag", args.am_response_lag as u64, 0, MAX_AM_RESPONSE_LAG as u64)?;
    within("network-delay-ms", args.network_delay_ms, 0, MAX_PERIOD_MS)?;
    within("progress-s", args.progress_s, 0, MAX_PERIOD_MS / 1000)?;
    within("sample-s", args.sample_s, 1, MAX_PERIOD_MS / 1000)?;
    if let Some(mb) = args.am_mb {
        within("am-mb", mb, 1, MAX_NODE_MEMORY_MB)?;
    }
    if args.limit == Some(0) {
        return Err(cfg_err("--limit 0: expected at least 1 job (leave --limit out for the whole workload)"));
    }
    for f in &args.failures {
        parse_failure(f)?;
    }
    paper_points(args)?;
    slots(args)?;
    Ok(())
}

/// `--slots`, parsed, and refused beside the flags it contradicts: an AM
/// model (Hadoop 1 ran jobs from the JobTracker, without AM containers), a
/// nodes file (the slots give every node's shape) and
/// `--placement-slowdown` (whose GPU preference would read reduce slots as
/// GPUs).
pub(super) fn slots(args: &RunArgs) -> Result<Option<Hadoop1Slots>, SimError> {
    let Some(spec) = &args.slots else { return Ok(None) };
    let s = Hadoop1Slots::parse(spec, MAX_NODE_VCORES, MAX_NODE_MEMORY_MB).map_err(cfg_err)?;
    let clash = if args.am_mb.is_some() {
        Some("--am-mb: Hadoop 1 has no AM containers")
    } else if args.sls_timing {
        Some("--sls-timing: it runs 1024 MB AMs, and Hadoop 1 has no AM containers")
    } else if args.nodes_file.is_some() {
        Some("--nodes-file: the slots give every node's shape")
    } else if args.placement_slowdown.is_some() {
        Some("--placement-slowdown: it would read the reduce slots, counted as GPUs, as GPUs")
    } else {
        None
    };
    match clash {
        Some(why) => Err(cfg_err(format!("--slots '{spec}' cannot go with {why}"))),
        None => Ok(Some(s)),
    }
}

/// The `--paper-point` figures for the report's CDFs.
pub(super) fn paper_points(args: &RunArgs) -> Result<Vec<crate::report::PaperPoints>, SimError> {
    args.paper_points.iter().map(|p| crate::report::PaperPoints::parse(p).map_err(cfg_err)).collect()
}

impl RunArgs {
    /// The YARN timing flags after `--sls-timing` has filled in those not
    /// given: (NM heartbeat ms, AM MB, AM heartbeat ms, AM response lag).
    pub(super) fn timing(&self) -> (u64, Option<u64>, u64, u32) {
        let (hb, am, am_hb, lag) = (self.heartbeat_ms, self.am_mb, self.am_heartbeat_ms, self.am_response_lag);
        if !self.sls_timing {
            return (hb, am, am_hb, lag);
        }
        let or = |x: u64, d: u64| if x == 0 { d } else { x };
        (or(hb, 1000), am.or(Some(1024)), or(am_hb, 1000), if lag == 0 { 1 } else { lag })
    }
}

/// The run's configuration. It stops at [`limits::run_horizon_ms`] of
/// simulated time, so at most [`limits::MAX_SAMPLES`] + 1 utilization samples are
/// kept (jobs still open then are counted unfinished).
pub(super) fn sim_config(
    policy: &str,
    params: BTreeMap<String, String>,
    args: &RunArgs,
) -> Result<SimConfig, SimError> {
    check_run_args(args)?;
    let (heartbeat_ms, am_mb, am_heartbeat_ms, am_response_lag) = args.timing();
    Ok(SimConfig {
        policy: policy.to_string(),
        params,
        seed: args.seed,
        heartbeat_ms,
        am_container: am_mb.map(|mb| Resources::new(mb, args.am_vcores)),
        am_startup_ms: args.am_startup_ms,
        am_heartbeat_ms,
        am_response_lag,
        slowstart: if (0.0..=1.0).contains(&args.slowstart) {
            args.slowstart
        } else {
            return Err(SimError::Config(format!("--slowstart {}: expected a share in [0, 1]", args.slowstart)));
        },
        estimates: !args.no_estimates,
        estimate_error: estimate_error(args)?,
        network_delay_ms: args.network_delay_ms,
        failures: args.failures.iter().map(|f| parse_failure(f)).collect::<Result<_, _>>()?,
        sample_ms: args.sample_s * 1000,
        until: Some(Time(limits::run_horizon_ms(args.sample_s * 1000))),
        check_invariants: false,
        progress_ms: args.progress_s * 1000,
        reduces_wait_for_maps: args.reduces_wait_for_maps,
        suspended_speed: if (0.0..1.0).contains(&args.suspended_speed) {
            args.suspended_speed
        } else {
            return Err(cfg_err(format!("--suspended-speed {}: expected a share in [0, 1)", args.suspended_speed)));
        },
        launch: launch_model(args)?,
        // (Checked by `simulate`, which names the value.)
        placement_slowdown: args.placement_slowdown,
        isolate_solves: if args.solves == "child" && sojourn_policies::OFFLOADS_SOLVES.contains(&policy) {
            Some(OffloadChild::this_executable()?)
        } else {
            None
        },
        max_assignments: match args.max_assignments {
            Some(0) => return Err(cfg_err("--max-assignments 0: expected at least 1 (leave it out for no limit)")),
            Some(_) if heartbeat_ms == 0 => {
                return Err(cfg_err(
                    "--max-assignments needs node heartbeats (--heartbeat-ms N or --sls-timing): \
                     event-driven runs offer new demand to all nodes at once",
                ))
            }
            n => n,
        },
    })
}

/// --launch-ms, --launch-per-concurrent-ms and --launch-scope.
fn launch_model(args: &RunArgs) -> Result<LaunchModel, SimError> {
    for (flag, v) in [("launch-ms", args.launch_ms), ("launch-per-concurrent-ms", args.launch_per_concurrent_ms)] {
        if v > limits::MAX_TIME_MS {
            return Err(cfg_err(format!("--{flag} {v}: expected 0 to {}", limits::MAX_TIME_MS)));
        }
    }
    let per_node = match args.launch_scope.as_str() {
        "node" => true,
        "cluster" => false,
        other => return Err(cfg_err(format!("--launch-scope '{other}': expected node or cluster"))),
    };
    Ok(LaunchModel { base_ms: args.launch_ms, per_concurrent_ms: args.launch_per_concurrent_ms, per_node })
}

/// --estimate-error and its seed; refused beside --no-estimates (nothing to mis-estimate).
fn estimate_error(args: &RunArgs) -> Result<Option<EstimateError>, SimError> {
    match &args.estimate_error {
        None if args.estimate_error_seed.is_some() => Err(cfg_err("--estimate-error-seed needs --estimate-error")),
        None => Ok(None),
        Some(_) if args.no_estimates => Err(cfg_err("--estimate-error and --no-estimates: choose one")),
        Some(range) => {
            EstimateError::parse(range, args.estimate_error_seed.unwrap_or(args.seed)).map(Some).map_err(cfg_err)
        }
    }
}
