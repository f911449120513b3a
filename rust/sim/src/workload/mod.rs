//! Workloads: what jobs arrive when, and the cluster they run on. Readers
//! for the trace formats of `shared/traces/README.md` and generators for
//! synthetic workloads all produce [`JobSpec`]s, streamed in submit order.
//!
//! Readers: [`swim`] (SWIM tsv), [`rumen`] (SLS JSON jobs and Rumen job
//! traces), [`eagle`] (Hawk/Eagle `.tr`), [`kairos`] (Kairos testbed
//! workloads) and [`nodes`] (SLS nodes files, the cluster). Generators:
//! [`synthetic`], [`job_mixes`] and [`pigmix_dag`] (PigMix queries as job
//! DAGs, [`JobSpec::dag`]). [`open`] takes one spec string for any of them (a path or
//! `synthetic:google:jobs=1000:seed=3`, see [`WorkloadSpec::parse`]).
//! Every reader streams, reports bad input as a [`WorkloadError`] naming
//! file and line, checks that submit times do not decrease (use
//! [`sort_by_submit`] or `sort=true` for unsorted traces) and gives every
//! task at least 1 ms. Every reader and generator holds a workload within
//! the caps of [`limits`] (times within a year, tasks per job and per
//! workload, line and object sizes).

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
    /// The query (a DAG of jobs, as a Pig script compiles to) this job is
    /// part of, and the jobs it waits for; `None` for an independent job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dag: Option<JobDag>,
}

/// A job's place in its query's DAG. The simulator submits the job only once
/// every parent has finished: at the later of its own submit time and its
/// last parent's finish. Parents are jobs of the same query that come
/// earlier in the stream (a JobControl adds a job after the jobs it depends
/// on); a query's response time runs from its first job's submission to its
/// last job's finish.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobDag {
    pub query: u64,
    /// Ids ([`JobSpec::id`]) of the jobs that must finish first.
    pub parents: Vec<u64>,
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

impl TaskGroup {
    /// A map phase of tasks without host preferences.
    pub fn maps(resources: Resources, durations_ms: Vec<u64>) -> TaskGroup {
        TaskGroup { phase: Phase::Map, priority: Priority::MAP, resources, durations_ms, hosts: Vec::new() }
    }

    /// A reduce phase of tasks without host preferences.
    pub fn reduces(resources: Resources, durations_ms: Vec<u64>) -> TaskGroup {
        TaskGroup { phase: Phase::Reduce, priority: Priority::REDUCE, resources, durations_ms, hosts: Vec::new() }
    }
}

/// The index of a weighted choice, from one draw of `rng` (the last one when
/// rounding leaves the draw past every weight).
pub(crate) fn pick_weighted(rng: &mut sojourn_core::Rng, weights: &[f64]) -> usize {
    let mut x = rng.next_f64() * weights.iter().sum::<f64>();
    for (i, w) in weights.iter().enumerate() {
        if x < *w {
            return i;
        }
        x -= w;
    }
    weights.len().saturating_sub(1)
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

// ------------------------------------------------------------------------
// Readers, generators and the workload spec.

pub mod dag_csv;
pub mod eagle;
pub mod estimate_error;
pub mod job_mixes;
mod json;
pub mod kairos;
pub mod limits;
pub mod nodes;
pub mod pigmix_dag;
pub mod rumen;
pub mod slots;
pub mod sls_writer;
mod spec;
pub mod swim;
pub mod synthetic;
pub(crate) mod text;

use std::path::Path;

pub use spec::{Source, WorkloadSpec};

pub use limits::MAX_TASKS_PER_JOB;

/// Opens a workload spec (see [`WorkloadSpec::parse`]): a trace file or a
/// generator such as `synthetic:google:jobs=1000:seed=3`.
pub fn open(spec: &str) -> Result<JobStream, WorkloadError> {
    WorkloadSpec::parse(spec)?.open()
}

/// Loads an SLS nodes file; nodes that give no resources get SLS's default
/// 10240 MB / 10 vcores (use [`nodes::load_nodes`] for another default).
pub fn load_cluster(path: impl AsRef<Path>) -> Result<ClusterSpec, WorkloadError> {
    nodes::load_nodes(path, nodes::SLS_NODE)
}

/// Reads a whole stream and returns it sorted by submit time (ties by id),
/// for traces that are not in order. The first error is returned as is.
pub fn sort_by_submit(stream: JobStream) -> Result<JobStream, WorkloadError> {
    let mut jobs = stream.collect::<Result<Vec<JobSpec>, WorkloadError>>()?;
    jobs.sort_by_key(|j| (j.submit, j.id));
    Ok(Box::new(jobs.into_iter().map(Ok)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(rel: &str) -> String {
        format!("{}/../../../shared/traces/{rel}", env!("CARGO_MANIFEST_DIR"))
    }

    fn count(spec: &str) -> usize {
        open(spec).unwrap().collect::<Result<Vec<_>, _>>().unwrap().len()
    }

    #[test]
    fn formats_are_inferred_from_the_name() {
        assert_eq!(count(&trace("eagle/YH10.tr")), 10);
        assert_eq!(count(&trace("swim/FB-2009_samples_24_times_1hr_0.tsv")), 5_894);
        assert_eq!(count(&trace("sls/2jobs2min-rumen-jh.json")), 2);
        assert_eq!(count(&trace("kairos/generated_workload_bigc")), 100);
        let e = open("/tmp/whatever.bin").err().unwrap();
        assert!(e.message.contains("cannot tell the format"), "{e}");
    }

    #[test]
    fn explicit_formats_and_options() {
        let spec = format!("eagle:{}:mode=original:jobs=3", trace("eagle/YH10.tr"));
        let w = WorkloadSpec::parse(&spec).unwrap();
        assert_eq!(w.limit, Some(3));
        assert!(matches!(&w.source, Source::Eagle(_, o) if o.mode == eagle::EagleMode::Original));
        let jobs: Vec<JobSpec> = w.open().unwrap().map(|j| j.unwrap()).collect();
        assert_eq!(jobs.len(), 3);
        assert_eq!(jobs[0].groups[0].durations_ms[0], 6_000);
        let spec = format!("swim:{}:reduce_mb=4096:sort=true", trace("swim/FB-2010_samples_24_times_1hr_0.tsv"));
        let j = open(&spec).unwrap().nth(2).unwrap().unwrap();
        assert_eq!(j.groups[1].resources, Resources::new(4096, 1));
        assert_eq!(count(&format!("rumen:{}", trace("sls/2jobs2min-rumen-jh.json"))), 2);
        let e = open(&format!("{}:mode=exact", trace("swim/FB-2009_samples_24_times_1hr_0.tsv"))).err().unwrap();
        assert!(e.message.contains("unknown swim option"), "{e}");
        let e = open(&format!("sls:{}:nope=1", trace("sls/2jobs2min-rumen-jh.json"))).err().unwrap();
        assert!(e.message.contains("unknown key"), "{e}");
    }

    #[test]
    fn at_once_submits_every_job_at_zero_as_sls_reads_rumen() {
        let submits = |spec: &str| -> Vec<u64> { open(spec).unwrap().map(|j| j.unwrap().submit.ms()).collect() };
        let rumen = trace("sls/2jobs2min-rumen-jh.json");
        // The sample's second job is submitted 105.204 s after the first.
        assert_eq!(submits(&rumen), vec![0, 105_204]);
        assert_eq!(submits(&format!("{rumen}:at_once=true")), vec![0, 0]);
        let e = open(&format!("{rumen}:at_once=yes")).err().unwrap();
        assert!(e.message.contains("at_once: expected true or false"), "{e}");
    }

    #[test]
    fn generators_by_name() {
        let a: Vec<JobSpec> = open("synthetic:google:jobs=1000:seed=3").unwrap().map(|j| j.unwrap()).collect();
        assert_eq!(a.len(), 1000);
        let direct: Vec<JobSpec> =
            synthetic::SyntheticJobs::new(synthetic::SyntheticOptions::new(synthetic::GOOGLE, 1000, 3)).collect();
        assert_eq!(a, direct);
        assert_eq!(count("synthetic:yahoo:jobs=10:interarrival_s=2"), 10);
        assert_eq!(count("gridmix:jobs=20"), 20);
        assert_eq!(count("pigmix:test"), 100);
        assert!(open("pigmix:stage").err().unwrap().message.contains("unknown pigmix workload"));
        assert_eq!(count("pigmix-dag:test:queries=17"), 29);
        assert_eq!(count("sparrow"), 1000);
        assert!(open("synthetic:alibaba").err().unwrap().message.contains("unknown synthetic profile"));
        assert!(open("synthetic:google:jobs=x").err().unwrap().message.contains("jobs"));
        assert!(open("gridmix:seeds=2").err().unwrap().message.contains("unknown key"));
    }

    #[test]
    fn generator_sizes_past_the_caps_are_refused() {
        let e = open("synthetic:google:jobs=10000001").err().unwrap();
        assert_eq!(e.file, "synthetic:google:jobs=10000001");
        assert!(e.message.contains("jobs: 10000001 is more than the limit of 10000000 jobs"), "{e}");
        assert!(open("gridmix:interarrival_s=1e9").err().unwrap().message.contains("past the limit on times"));
        assert!(open("kairos-draw:heavy:jobs=1e9").err().unwrap().message.contains("jobs"));
        assert!(open("synthetic:yahoo:slot_mb=99999999999").err().unwrap().message.contains("slot_mb"));
        // Allowed, but the arrivals leave the horizon: the job past it is refused.
        let v: Vec<_> = open("sparrow:jobs=20:interarrival_s=31536000").unwrap().collect();
        let e = v.last().unwrap().as_ref().unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("sparrow", 0));
        assert!(e.message.contains("submit time") && e.message.contains("past the limit on times"), "{e}");
    }

    #[test]
    fn repeated_spec_keys_are_an_error() {
        let e = open("gridmix:jobs=2:seed=1:jobs=3").err().unwrap();
        assert!(e.message.contains("key \"jobs\" is given twice"), "{e}");
        let e = open(&format!("{}:jobs=2:jobs=2", trace("eagle/YH10.tr"))).err().unwrap();
        assert!(e.message.contains("given twice"), "{e}");
    }

    #[test]
    fn sorting_an_unsorted_stream() {
        let mk = |id: u64, t: u64| JobSpec {
            id,
            name: format!("j{id}"),
            submit: Time(t),
            queue: "q".into(),
            user: "u".into(),
            priority: 0,
            groups: vec![],
            deadline: None,
            value: None,
            dag: None,
        };
        let s: JobStream = Box::new(vec![mk(0, 5), mk(1, 1), mk(2, 5), mk(3, 0)].into_iter().map(Ok));
        let ids: Vec<u64> = sort_by_submit(s).unwrap().map(|j| j.unwrap().id).collect();
        assert_eq!(ids, vec![3, 1, 0, 2]);
        let bad: JobStream = Box::new(vec![Ok(mk(0, 1)), Err(WorkloadError::new("f", 9, "bad"))].into_iter());
        assert_eq!(sort_by_submit(bad).err().unwrap().line, 9);
    }

    #[test]
    fn sls_nodes_file_as_the_cluster() {
        let path = std::env::temp_dir().join(format!("sojourn-nodes-{}.json", std::process::id()));
        std::fs::write(&path, "{\"rack\": \"r1\", \"nodes\": [{\"node\": \"a\"}, {\"node\": \"b\", \"vcores\": 4}]}\n")
            .unwrap();
        let c = load_cluster(&path).unwrap();
        assert_eq!(c.total(), Resources::new(20_480, 14));
        let e = open(path.to_str().unwrap()).err().unwrap();
        assert!(e.message.contains("nodes file"), "{e}");
        std::fs::remove_file(&path).unwrap();
        assert!(load_cluster(&path).unwrap_err().message.contains("cannot open"));
    }

    #[test]
    fn every_reader_feeds_the_simulator() {
        use crate::engine::{simulate, SimConfig};
        let cfg = SimConfig { heartbeat_ms: 0, ..SimConfig::default() };
        let cluster = ClusterSpec::uniform(40, Resources::new(8192, 8), 20);
        for spec in [
            trace("eagle/YH10.tr"),
            trace("sls/2jobs2min-rumen-jh.json"),
            format!("{}:jobs=30", trace("kairos/generated_workload")),
            format!("{}:jobs=30", trace("swim/FB-2009_samples_24_times_1hr_0.tsv")),
            "gridmix:jobs=10".to_string(),
            "pigmix-dag:dev:queries=17".to_string(),
        ] {
            let r = simulate(&cluster, open(&spec).unwrap(), &spec, &cfg, None).unwrap();
            assert_eq!(r.unfinished, 0, "{spec}");
        }
    }
}
