//! Workloads: what jobs arrive when, and the cluster they run on. Readers
//! for the trace formats of `shared/traces/README.md` and generators for
//! synthetic workloads all produce [`JobSpec`]s, streamed in submit order.

use serde::{Deserialize, Serialize};
use sojourn_core::{Phase, Priority, Resources, Time};
use std::fmt;

/// One job of a workload. Its task groups run one after the other (a
/// MapReduce job's maps, then its reduces); the tasks of a group in parallel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    /// Id within the workload (the line order where the format has none).
    pub id: u64,
    pub name: String,
    pub submit: Time,
    pub queue: String,
    pub user: String,
    /// YARN application priority (higher = more important).
    pub priority: i32,
    pub groups: Vec<TaskGroup>,
    pub deadline: Option<Time>,
    pub value: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskGroup {
    pub phase: Phase,
    /// Request priority (MapReduce: maps 20, reduces 10).
    pub priority: Priority,
    /// Container size of each task.
    pub resources: Resources,
    /// Each task's run time on an idle node, ms (at least 1).
    pub durations_ms: Vec<u64>,
    /// Preferred host of each task, when the trace gives one (same length as
    /// `durations_ms`, or empty).
    pub hosts: Vec<Option<String>>,
}

impl JobSpec {
    pub fn task_count(&self) -> usize {
        self.groups.iter().map(|g| g.durations_ms.len()).sum()
    }
    /// Total task time (ms): the job's work.
    pub fn work_ms(&self) -> u64 {
        self.groups.iter().flat_map(|g| g.durations_ms.iter()).sum()
    }
    /// Run time on an empty cluster: the longest task of each group, summed
    /// (groups run in sequence). Slowdown is response time over this.
    pub fn ideal_ms(&self) -> u64 {
        self.groups.iter().map(|g| g.durations_ms.iter().copied().max().unwrap_or(0)).sum()
    }
    /// Mean task duration (ms), the Hawk/Eagle runtime estimate.
    pub fn mean_task_ms(&self) -> f64 {
        let n = self.task_count();
        if n == 0 {
            0.0
        } else {
            self.work_ms() as f64 / n as f64
        }
    }
}

/// A node of the simulated cluster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeShape {
    pub name: String,
    pub rack: String,
    pub capacity: Resources,
    #[serde(default)]
    pub labels: Vec<String>,
}

/// The simulated cluster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterSpec {
    pub nodes: Vec<NodeShape>,
}

impl ClusterSpec {
    /// `n` identical nodes, `per_rack` to a rack (racks `/rack0`, `/rack1` ...).
    pub fn uniform(n: usize, capacity: Resources, per_rack: usize) -> ClusterSpec {
        let per_rack = per_rack.max(1);
        ClusterSpec {
            nodes: (0..n)
                .map(|i| NodeShape {
                    name: format!("node{i}"),
                    rack: format!("/rack{}", i / per_rack),
                    capacity,
                    labels: Vec::new(),
                })
                .collect(),
        }
    }
    pub fn total(&self) -> Resources {
        self.nodes.iter().fold(Resources::ZERO, |acc, n| acc + n.capacity)
    }
}

/// An error reading a workload: the file, the line (1-based, 0 when not
/// line-oriented) and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl WorkloadError {
    pub fn new(file: impl Into<String>, line: usize, message: impl Into<String>) -> WorkloadError {
        WorkloadError { file: file.into(), line, message: message.into() }
    }
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        } else {
            write!(f, "{}: {}", self.file, self.message)
        }
    }
}

impl std::error::Error for WorkloadError {}

/// A stream of jobs in non-decreasing submit order.
pub type JobStream = Box<dyn Iterator<Item = Result<JobSpec, WorkloadError>>>;
