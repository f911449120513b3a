//! The Rayon/CapacityScheduler baseline's parameters and their defaults
//! (tetrisched.md §4.3–4.4). Where the paper says only "default queue
//! settings" the default is Hadoop's and the choice is a parameter.

use super::admission::{AdmissionConfig, Placement};
use sojourn_core::{CoreError, ParamKind, ParamSpec, Params, Result};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new("plan_step_ms", ParamKind::Int, "1000", "the reservation plan's time step (ms): reservations start and end on its multiples (Hadoop's plan follower step)"),
    ParamSpec::new("plan_share", ParamKind::Float, "1", "share of the cluster's slots the plan may reserve at any instant (CapacityOverTimePolicy's instantaneous maximum, Hadoop's default 100%)"),
    ParamSpec::new("placement", ParamKind::Choice(&["late", "early"]), "late", "where the greedy agent places a reservation in [submit, deadline]: as late as the deadline allows (allocating from the deadline backwards, §4.3) or as early as possible (YARN-4360)"),
    ParamSpec::new("preemption", ParamKind::Bool, "true", "kill best-effort containers (and containers beyond a reservation's guarantee), newest app and container first, when an active reservation cannot get its capacity (§4.4: CapacityScheduler's preemption enabled)"),
    ParamSpec::new("slot_mb", ParamKind::Int, "1024", "memory of one plan unit (a slot); reservations and guarantees are counted in slots"),
    ParamSpec::new("slot_vcores", ParamKind::Int, "1", "vcores of one plan unit (a slot)"),
    ParamSpec::new("default_runtime_ms", ParamKind::Int, "60000", "the reserved duration of an SLO app whose asks carry no runtime estimate"),
];

/// Validated parameters.
#[derive(Clone, Debug)]
pub struct Config {
    pub admission: AdmissionConfig,
    pub preemption: bool,
}

impl Config {
    pub fn from_params(p: &Params) -> Result<Config> {
        let name = p.str("placement")?;
        let placement = Placement::parse(&name)
            .ok_or_else(|| CoreError::Config(format!("parameter 'placement': unknown placement '{name}'")))?;
        Ok(Config {
            admission: AdmissionConfig {
                step_ms: p.int_at_least("plan_step_ms", 1)? as u64,
                share: p.float_in("plan_share", 0.0, 1.0)?,
                placement,
                slot_mb: p.int_at_least("slot_mb", 1)? as u64,
                slot_vcores: p.int_at_least("slot_vcores", 1)?.min(i64::from(u32::MAX)) as u32,
                default_runtime_ms: p.int_at_least("default_runtime_ms", 1)? as u64,
            },
            preemption: p.bool("preemption")?,
        })
    }
}
