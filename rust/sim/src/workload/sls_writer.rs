//! Writing workloads as SLS JSON traces (issue #6), so that SWIM (`.tsv`) and Hawk/Eagle
//! (`.tr`) traces, or any workload spec, can be replayed by Hadoop's Scheduler Load
//! Simulator in a real ResourceManager.
//!
//! SLS runs in wall-clock time, so a time-compression factor divides every submit time and
//! task duration: with `compression = 96` a day of trace runs in 15 minutes. The output is
//! SLS's stream of JSON objects, one job each (research/yarn.md §3.1), with one task entry per
//! task (`count` 1). Maps become `container.type` `map`, everything else `reduce` (SLS's MR AM
//! runs maps before reduces, as the simulator runs task groups in order). Tasks without a
//! host, or whose host is not in `hosts`, are placed round-robin on `hosts`.

use std::io::Write;

use serde_json::{json, Value};
use sojourn_core::Phase;

use super::{JobSpec, WorkloadError};
use crate::engine::SimError;

/// How a workload becomes an SLS trace.
#[derive(Clone, Debug, PartialEq)]
pub struct SlsWriteOptions {
    /// Divides submit times and task durations (1 = real time). Must be ≥ 1 and finite.
    pub compression: f64,
    /// SLS hosts, `/rack/host`, as in the nodes file SLS will run with (at least one).
    pub hosts: Vec<String>,
    /// The shortest task after compression, ms (SLS needs durations > 0).
    pub min_task_ms: u64,
}

impl SlsWriteOptions {
    /// `compression` and `n` hosts `/default-rack/node1..n` (the names of [`sls_nodes_json`]).
    pub fn new(compression: f64, n_hosts: usize) -> SlsWriteOptions {
        SlsWriteOptions {
            compression,
            hosts: (1..=n_hosts).map(|i| format!("/default-rack/node{i}")).collect(),
            min_task_ms: 1,
        }
    }

    fn check(&self) -> Result<(), SimError> {
        if !(self.compression.is_finite() && self.compression >= 1.0) {
            return Err(SimError::Config(format!("sls: compression must be ≥ 1, got {}", self.compression)));
        }
        if self.hosts.is_empty() {
            return Err(SimError::Config("sls: at least one host is needed".to_string()));
        }
        Ok(())
    }

    fn scale(&self, ms: u64) -> u64 {
        (ms as f64 / self.compression).round() as u64
    }
}

/// An SLS nodes file for `n` nodes `node1..n` on `default-rack` (memory/vcores from SLS's
/// `yarn.sls.nm.*` settings).
pub fn sls_nodes_json(n: usize) -> String {
    let nodes: Vec<Value> = (1..=n).map(|i| json!({ "node": format!("node{i}") })).collect();
    format!("{}\n", json!({ "rack": "default-rack", "nodes": nodes }))
}

/// One job as an SLS JSON object. `origin_ms` is the trace time that becomes SLS's 0;
/// `cursor` walks `opts.hosts` round-robin across calls.
pub fn job_to_sls(job: &JobSpec, origin_ms: u64, opts: &SlsWriteOptions, cursor: &mut usize) -> Value {
    let start = opts.scale(job.submit.0.saturating_sub(origin_ms));
    let mut tasks = Vec::new();
    let mut span = 0;
    for g in &job.groups {
        let kind = if g.phase == Phase::Map { "map" } else { "reduce" };
        let mut longest = 0;
        for (i, &d) in g.durations_ms.iter().enumerate() {
            let host = match g.hosts.get(i).and_then(|h| h.as_deref()) {
                Some(h) if opts.hosts.iter().any(|x| x == h) => h.to_string(),
                _ => {
                    let h = opts.hosts[*cursor % opts.hosts.len()].clone();
                    *cursor += 1;
                    h
                }
            };
            let ms = opts.scale(d).max(opts.min_task_ms).max(1);
            longest = longest.max(ms);
            tasks.push(json!({
                "count": 1,
                "container.host": host,
                "container.duration.ms": ms,
                "container.priority": g.priority.0,
                "container.type": kind,
                "container.memory-mb": g.resources.memory_mb,
                "container.vcores": g.resources.vcores,
            }));
        }
        span += longest;
    }
    json!({
        "am.type": "mapreduce",
        "job.start.ms": start,
        "job.end.ms": start + span,
        "job.queue.name": job.queue,
        "job.id": format!("job_{}", job.id),
        "job.user": job.user,
        "job.tasks": tasks,
    })
}

/// Writes `jobs` as an SLS trace; returns how many jobs were written. Time 0 of the trace is
/// the first job's submit time (jobs are expected in submit order, as the readers give them).
pub fn write_sls<I, W>(jobs: I, opts: &SlsWriteOptions, mut out: W) -> Result<u64, SimError>
where
    I: IntoIterator<Item = Result<JobSpec, WorkloadError>>,
    W: Write,
{
    opts.check()?;
    let (mut origin, mut cursor, mut n) = (None, 0usize, 0u64);
    for job in jobs {
        let job = job?;
        // SLS submits every job at its trace time: a DAG's order would be lost.
        if job.dag.as_ref().is_some_and(|d| !d.parents.is_empty()) {
            return Err(SimError::Config(format!(
                "sls: job {} ({}) waits for parent jobs, and an SLS trace cannot express job dependencies",
                job.id, job.name
            )));
        }
        let o = *origin.get_or_insert(job.submit.0);
        let v = job_to_sls(&job, o, opts, &mut cursor);
        writeln!(out, "{v}").map_err(|e| SimError::Config(format!("sls: write: {e}")))?;
        n += 1;
    }
    Ok(n)
}

/// Converts a workload spec (e.g. `trace.tsv` (SWIM), `trace.tr` (Hawk/Eagle),
/// `swim:day.tsv:jobs=200`, see [`super::WorkloadSpec::parse`]) to an SLS trace.
pub fn convert_to_sls<W: Write>(spec: &str, opts: &SlsWriteOptions, out: W) -> Result<u64, SimError> {
    write_sls(super::open(spec)?, opts, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::TaskGroup;
    use sojourn_core::{Resources, Time};

    fn job(id: u64, submit: u64, maps: &[u64], reduces: &[u64]) -> JobSpec {
        let slot = Resources::new(1024, 1);
        JobSpec {
            id,
            name: format!("j{id}"),
            submit: Time(submit),
            queue: "default".to_string(),
            user: "u".to_string(),
            priority: 0,
            groups: vec![TaskGroup::maps(slot, maps.to_vec()), TaskGroup::reduces(slot, reduces.to_vec())],
            deadline: None,
            value: None,
            dag: None,
        }
    }

    fn temp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("sojourn-sls-writer-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d.join(name)
    }

    #[test]
    fn compresses_time_and_places_tasks_round_robin() {
        let opts = SlsWriteOptions::new(10.0, 2);
        let mut cursor = 0;
        let v = job_to_sls(&job(7, 100_000, &[40_000, 20_000], &[5]), 50_000, &opts, &mut cursor);
        assert_eq!(v["job.start.ms"], 5_000);
        assert_eq!(v["job.end.ms"], 5_000 + 4_000 + 1);
        assert_eq!(v["job.id"], "job_7");
        let t = v["job.tasks"].as_array().unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(t[0]["container.duration.ms"], 4_000);
        assert_eq!(t[0]["container.host"], "/default-rack/node1");
        assert_eq!(t[1]["container.host"], "/default-rack/node2");
        assert_eq!(t[2]["container.type"], "reduce");
        assert_eq!(t[2]["container.priority"], 10);
        assert_eq!(t[2]["container.duration.ms"], 1, "a compressed task lasts at least 1 ms");
        assert_eq!(cursor, 3);
    }

    #[test]
    fn bad_options_are_errors() {
        let mut o = SlsWriteOptions::new(0.5, 1);
        assert!(write_sls(Vec::new(), &o, Vec::new()).is_err());
        o.compression = 2.0;
        o.hosts.clear();
        assert!(write_sls(Vec::new(), &o, Vec::new()).is_err());
    }

    #[test]
    fn written_traces_read_back_with_the_sls_reader() {
        let jobs = vec![Ok(job(1, 10_000, &[6_000, 6_000], &[2_000])), Ok(job(2, 30_000, &[4_000], &[]))];
        let path = temp("roundtrip.json");
        let mut buf = Vec::new();
        assert_eq!(write_sls(jobs, &SlsWriteOptions::new(2.0, 3), &mut buf).unwrap(), 2);
        std::fs::write(&path, &buf).unwrap();
        let back: Vec<JobSpec> =
            crate::workload::open(&format!("sls:{}", path.display())).unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].submit, Time(0));
        assert_eq!(back[1].submit, Time(10_000));
        assert_eq!(back[0].task_count(), 3);
        assert_eq!(back[0].work_ms(), 3_000 + 3_000 + 1_000);
        assert_eq!(back[1].work_ms(), 2_000);
    }

    #[test]
    fn converts_swim_and_eagle_traces() {
        let swim = temp("day.tsv");
        std::fs::write(&swim, "a\t0\t0\t134217728\t0\t0\nb\t60\t60\t268435456\t0\t0\n").unwrap();
        let mut buf = Vec::new();
        let n = convert_to_sls(&swim.display().to_string(), &SlsWriteOptions::new(60.0, 2), &mut buf).unwrap();
        assert_eq!(n, 2);
        let text = String::from_utf8(buf).unwrap();
        let objs: Vec<Value> =
            serde_json::Deserializer::from_str(&text).into_iter::<Value>().collect::<Result<_, _>>().unwrap();
        assert_eq!(objs[0]["job.start.ms"], 0);
        assert_eq!(objs[1]["job.start.ms"], 1_000, "60 s of trace at 60x is 1 s");

        let eagle = temp("jobs.tr");
        std::fs::write(&eagle, "0 2 5 4 6\n20 1 3 3\n").unwrap();
        let mut buf = Vec::new();
        let n = convert_to_sls(&eagle.display().to_string(), &SlsWriteOptions::new(10.0, 1), &mut buf).unwrap();
        assert_eq!(n, 2);
        let text = String::from_utf8(buf).unwrap();
        let objs: Vec<Value> =
            serde_json::Deserializer::from_str(&text).into_iter::<Value>().collect::<Result<_, _>>().unwrap();
        assert_eq!(objs[1]["job.start.ms"], 2_000, "20 s at 10x");
        let t = objs[0]["job.tasks"].as_array().unwrap();
        assert_eq!(
            (t[0]["container.duration.ms"].clone(), t[1]["container.duration.ms"].clone()),
            (json!(400), json!(600))
        );
        assert_eq!(t[0]["container.type"], "map");
    }

    /// SLS has no job dependencies: a DAG workload is refused, naming the job, not flattened.
    #[test]
    fn dag_workloads_are_refused() {
        let mut buf = Vec::new();
        let e = convert_to_sls("pigmix-dag:test:queries=3", &SlsWriteOptions::new(10.0, 2), &mut buf).unwrap_err();
        assert!(
            e.to_string().contains("job 4 (pigmix-test-dag-q2-L3-") && e.to_string().contains("dependencies"),
            "{e}"
        );
    }
}
