//! What one simulation run produces: the raw material every metric and
//! report is computed from.

use serde::{Deserialize, Serialize};
use sojourn_core::{Metrics, Time};

/// One finished job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub id: u64,
    pub name: String,
    pub queue: String,
    pub user: String,
    pub submit: Time,
    pub finish: Time,
    pub tasks: u32,
    /// Sum of task durations (ms).
    pub work_ms: u64,
    /// Run time on an empty cluster (ms), see `JobSpec::ideal_ms`.
    pub ideal_ms: u64,
    /// Mean task duration (ms): the short/long classifier's input.
    pub mean_task_ms: f64,
}

impl JobRecord {
    /// Response (sojourn) time in ms.
    pub fn response_ms(&self) -> u64 {
        self.finish.since(self.submit)
    }
    /// Response time over ideal time (at least 1 when ideal > 0).
    pub fn slowdown(&self) -> f64 {
        if self.ideal_ms == 0 {
            1.0
        } else {
            self.response_ms() as f64 / self.ideal_ms as f64
        }
    }
}

/// One finished query (a DAG of jobs, `JobSpec::dag`): from its first job's
/// submission to its last job's finish.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryRecord {
    pub id: u64,
    /// The name of its first job (which names the query in generated workloads).
    pub first_job: String,
    pub jobs: u32,
    pub submit: Time,
    pub finish: Time,
}

impl QueryRecord {
    /// The query's response time in ms.
    pub fn response_ms(&self) -> u64 {
        self.finish.since(self.submit)
    }
}

/// Cluster use at one instant, as fractions of capacity.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct UtilSample {
    pub t: Time,
    pub memory: f64,
    pub vcores: f64,
    pub running_jobs: u32,
    pub pending_containers: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub policy: String,
    pub workload: String,
    pub seed: u64,
    pub nodes: usize,
    pub jobs: Vec<JobRecord>,
    /// Jobs submitted but not finished when the run ended.
    pub unfinished: u64,
    pub utilization: Vec<UtilSample>,
    pub preemptions_kill: u64,
    pub preemptions_suspend: u64,
    /// Task time thrown away by kills and lost nodes (ms).
    pub lost_work_ms: u64,
    /// Jain's fairness index over the dominant shares of the queues with
    /// running or pending work, one value per utilization sample.
    pub fairness: Vec<f64>,
    /// Tasks started and finished (simulated task events).
    pub task_events: u64,
    /// Events the core handled.
    pub core_events: u64,
    /// Wall time of the run (ms), and of that, time inside the core.
    pub wall_ms: f64,
    pub core_ms: f64,
    /// Simulated time at which the last job finished.
    pub makespan: Time,
    /// What the policy published about its own work (probes, steals,
    /// suspensions, quantum ends ...), see `sojourn_core::Metrics`.
    #[serde(default)]
    pub policy_metrics: Metrics,
    /// The finished queries of a workload with job DAGs, by id (empty without).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<QueryRecord>,
    /// Queries with a job not finished when the run ended.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unfinished_queries: u64,
    /// With isolated solves: offloaded pieces lost to a child process that
    /// died (a solver's abort), hung or answered garbage; each answered an
    /// error, and the policy fell back.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost_offloads: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
