//! The two JSON job-trace formats of Hadoop's Scheduler Load Simulator
//! (`shared/research/yarn.md` §3.1): SLS's own job format and Rumen job
//! traces. Both are streams of concatenated top-level JSON objects, read
//! one object at a time (Rumen traces run to megabytes per job). Numbers may
//! be JSON numbers or strings (SLS parses every value as a string); unknown
//! fields are ignored; a value of the wrong shape (a task list that is not
//! a list) or truncated JSON is an error naming the file and the line.
//!
//! # SLS jobs
//! Keys read per job: `job.start.ms` (required,
//! the submit time), `job.queue.name` (`default`), `job.id`, `job.user`
//! (`default`), `job.count` (1; copies get `<id>_<k>` names) and `job.tasks`
//! (required), each task with `count` (1), `container.host` (`/rack/host`),
//! `container.duration.ms` or legacy `duration.ms`, else `container.end.ms -
//! container.start.ms` (must be > 0, as SLS demands), `container.priority`
//! (20 for maps, 10 for reduces), `container.type` (`map`), and
//! `container.memory-mb` / `container.vcores` (1024 / 1, SLS's
//! `yarn.sls.container.*` defaults). An object with `num.nodes` or
//! `num.racks` and no tasks is the optional cluster header and is skipped.
//! A job's tasks (`count`s summed) are at most [`MAX_TASKS_PER_JOB`], and
//! its copies' tasks count toward the workload's [`super::limits`], checked
//! before any copy is made; copies are made one at a time as they are read.
//!
//! Tasks of the same phase, priority and container become one task group;
//! the groups run maps first, then reduces, then any other type, as SLS's
//! MapReduce AM does (`am.type` is ignored: every job runs so). A job whose
//! maps ask for two container sizes thus gets two map groups that run one
//! after the other: a simplification.
//!
//! # Rumen jobs
//! What SLS uses (`SLSRunner`/`AMDefinitionRumen`): `user` (`default`),
//! `queue` (`default`), `jobID` (the job's name), `submitTime` relative to
//! the first job's (a job earlier than the first starts at 0, as in SLS),
//! and for each map and reduce task the **last** attempt's `hostName` and
//! `finishTime - startTime` (at least 1 ms). Tasks without attempts are
//! skipped, as in SLS; an attempt without its times is an error. Containers
//! are 1024 MB / 1 vcore at priority 20 (maps) and 10 (reduces); Rumen's
//! task memory is ignored, as SLS ignores it.
//!
//! Times are checked arithmetic: a submit time or a task's `finishTime -
//! startTime` that overflows is an error, and both are at most a year
//! ([`super::limits`]).
//!
//! Hosts keep only the host part of `/rack/host`, which is how the
//! simulator names nodes. Ids are the job order from 0. Submit times must
//! not decrease: an earlier job is an error naming its line (sort with
//! [`super::sort_by_submit`] for unsorted traces).

use super::json::{host_of, opt_i64, opt_string, JsonObjects};
use super::limits::{check_ms, Budget, MAX_NODE_MEMORY_MB, MAX_NODE_VCORES};
use super::text::open_file;
use super::{JobSpec, TaskGroup, WorkloadError, MAX_TASKS_PER_JOB};
use serde::Deserialize;
use sojourn_core::{Phase, Priority, Resources, Time};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// SLS's default task container (`yarn.sls.container.memory.mb`, `.vcores`).
pub const SLS_CONTAINER: Resources = Resources::new(1024, 1);

// ---------------------------------------------------------------- SLS jobs

#[derive(Deserialize)]
struct SlsJob {
    #[serde(rename = "job.start.ms", default, deserialize_with = "opt_i64")]
    start_ms: Option<i64>,
    #[serde(rename = "job.queue.name", default, deserialize_with = "opt_string")]
    queue: Option<String>,
    #[serde(rename = "job.id", default, deserialize_with = "opt_string")]
    id: Option<String>,
    #[serde(rename = "job.user", default, deserialize_with = "opt_string")]
    user: Option<String>,
    #[serde(rename = "job.count", default, deserialize_with = "opt_i64")]
    count: Option<i64>,
    #[serde(rename = "job.tasks", default)]
    tasks: Option<Vec<SlsTask>>,
    #[serde(rename = "num.nodes", default, deserialize_with = "opt_i64")]
    num_nodes: Option<i64>,
    #[serde(rename = "num.racks", default, deserialize_with = "opt_i64")]
    num_racks: Option<i64>,
}

#[derive(Deserialize)]
struct SlsTask {
    #[serde(default, deserialize_with = "opt_i64")]
    count: Option<i64>,
    #[serde(rename = "container.host", default, deserialize_with = "opt_string")]
    host: Option<String>,
    #[serde(rename = "container.start.ms", default, deserialize_with = "opt_i64")]
    start_ms: Option<i64>,
    #[serde(rename = "container.end.ms", default, deserialize_with = "opt_i64")]
    end_ms: Option<i64>,
    #[serde(rename = "container.duration.ms", default, deserialize_with = "opt_i64")]
    duration_ms: Option<i64>,
    #[serde(rename = "duration.ms", default, deserialize_with = "opt_i64")]
    legacy_duration_ms: Option<i64>,
    #[serde(rename = "container.priority", default, deserialize_with = "opt_i64")]
    priority: Option<i64>,
    #[serde(rename = "container.type", default, deserialize_with = "opt_string")]
    kind: Option<String>,
    #[serde(rename = "container.memory-mb", default, deserialize_with = "opt_i64")]
    memory_mb: Option<i64>,
    #[serde(rename = "container.vcores", default, deserialize_with = "opt_i64")]
    vcores: Option<i64>,
}

/// Adds `n` tasks to the group of the same phase, priority and container,
/// or to a new group.
fn add_tasks(
    groups: &mut Vec<TaskGroup>,
    phase: Phase,
    prio: Priority,
    res: Resources,
    ms: u64,
    host: Option<String>,
    n: usize,
) {
    let i = match groups.iter().position(|g| g.phase == phase && g.priority == prio && g.resources == res) {
        Some(i) => i,
        None => {
            groups.push(TaskGroup { phase, priority: prio, resources: res, durations_ms: vec![], hosts: vec![] });
            groups.len() - 1
        }
    };
    let g = &mut groups[i];
    g.durations_ms.resize(g.durations_ms.len() + n, ms);
    g.hosts.resize(g.hosts.len() + n, host);
}

/// Maps first, then reduces, then others (a stable sort keeps file order
/// within a phase); host lists with no host at all are dropped.
fn finish_groups(mut groups: Vec<TaskGroup>) -> Vec<TaskGroup> {
    let rank = |p: Phase| match p {
        Phase::Am => 0,
        Phase::Map => 1,
        Phase::Reduce => 2,
        Phase::Other => 3,
    };
    groups.sort_by_key(|g| rank(g.phase));
    for g in &mut groups {
        if g.hosts.iter().all(|h| h.is_none()) {
            g.hosts.clear();
        }
    }
    groups
}

/// The jobs of an SLS JSON job stream.
pub struct SlsJobs<R: Read> {
    objects: JsonObjects<R, SlsJob>,
    file: String,
    /// The job of the last object, the number of its next copy and its
    /// `job.count`.
    pending: Option<(JobSpec, u64, u64)>,
    next_id: u64,
    last_submit: Time,
    budget: Budget,
    done: bool,
}

impl<R: Read> SlsJobs<R> {
    pub fn from_reader(reader: R, file: impl Into<String>) -> SlsJobs<R> {
        let file = file.into();
        SlsJobs {
            objects: JsonObjects::new(reader, file.clone()),
            file,
            pending: None,
            next_id: 0,
            last_submit: Time::ZERO,
            budget: Budget::default(),
            done: false,
        }
    }

    /// The next copy of the pending job, if any.
    fn next_copy(&mut self) -> Option<JobSpec> {
        let (job, k, count) = self.pending.as_mut()?;
        let mut copy = job.clone();
        copy.id = self.next_id;
        if *count > 1 {
            copy.name = format!("{}_{k}", job.name);
        }
        *k += 1;
        if *k == *count {
            self.pending = None;
        }
        self.next_id += 1;
        Some(copy)
    }

    /// Turns one object into its jobs (`job.count` copies); `Ok(false)` for
    /// the cluster header.
    fn convert(&mut self, line: usize, job: SlsJob) -> Result<bool, WorkloadError> {
        let err = |msg: String| WorkloadError::new(&self.file, line, msg);
        if job.tasks.is_none() && (job.num_nodes.is_some() || job.num_racks.is_some()) {
            return Ok(false);
        }
        let start = job.start_ms.ok_or_else(|| err("job without job.start.ms".into()))?;
        if start < 0 {
            return Err(err(format!("negative job.start.ms {start}")));
        }
        check_ms(start as u64, "job.start.ms", &self.file, line)?;
        let tasks = job.tasks.ok_or_else(|| err("job without job.tasks".into()))?;
        let count = job.count.unwrap_or(1);
        if !(1..=1_000_000).contains(&count) {
            return Err(err(format!("job.count must be from 1 to 1000000, found {count}")));
        }
        let mut groups = Vec::new();
        let mut n_tasks: u64 = 0;
        for (i, t) in tasks.iter().enumerate() {
            let terr = |msg: String| err(format!("task {}: {msg}", i + 1));
            let n = t.count.unwrap_or(1);
            if n < 0 {
                return Err(terr(format!("bad count {n}")));
            }
            n_tasks = n_tasks.saturating_add(n as u64);
            if n_tasks > MAX_TASKS_PER_JOB {
                return Err(terr(format!(
                    "count {n} brings the job to {n_tasks} tasks, more than the limit of {MAX_TASKS_PER_JOB}"
                )));
            }
            let dur = match (t.duration_ms.or(t.legacy_duration_ms), t.start_ms, t.end_ms) {
                (Some(d), _, _) => d,
                (None, Some(s), Some(e)) => e
                    .checked_sub(s)
                    .ok_or_else(|| terr(format!("container.end.ms {e} - container.start.ms {s} overflows")))?,
                _ => return Err(terr("no container.duration.ms nor container.start.ms and .end.ms".into())),
            };
            if dur <= 0 {
                return Err(terr(format!("duration must be positive, found {dur} ms")));
            }
            check_ms(dur as u64, &format!("task {} duration", i + 1), &self.file, line)?;
            let phase = match t.kind.as_deref().map(str::trim) {
                None | Some("map") => Phase::Map,
                Some("reduce") => Phase::Reduce,
                Some(_) => Phase::Other,
            };
            let default_prio = if phase == Phase::Reduce { Priority::REDUCE } else { Priority::MAP };
            let prio = match t.priority {
                None => default_prio,
                Some(p) => Priority(u32::try_from(p).map_err(|_| terr(format!("bad container.priority {p}")))?),
            };
            let memory = t.memory_mb.unwrap_or(SLS_CONTAINER.memory_mb as i64);
            let vcores = t.vcores.unwrap_or(SLS_CONTAINER.vcores as i64);
            if memory <= 0 || vcores < 0 || memory as u64 > MAX_NODE_MEMORY_MB || vcores > MAX_NODE_VCORES as i64 {
                return Err(terr(format!(
                    "bad container size {memory} MB / {vcores} vcores (at most {MAX_NODE_MEMORY_MB} MB / \
                     {MAX_NODE_VCORES} vcores)"
                )));
            }
            let res = Resources::new(memory as u64, vcores as u32);
            let host = t.host.as_deref().and_then(host_of);
            add_tasks(&mut groups, phase, prio, res, dur as u64, host, n as usize);
        }
        let groups = finish_groups(groups);
        let submit = Time(start as u64);
        if submit < self.last_submit {
            return Err(err(format!("job.start.ms {start} is before the previous job's ({})", self.last_submit.ms())));
        }
        let template = JobSpec {
            id: self.next_id,
            name: job.id.unwrap_or_else(|| format!("job_{}", self.next_id)),
            submit,
            queue: job.queue.unwrap_or_else(|| "default".into()),
            user: job.user.unwrap_or_else(|| "default".into()),
            priority: 0,
            groups,
            deadline: None,
            value: None,
            dag: None,
        };
        self.budget.admit(&template, count as u64, &self.file, line)?;
        self.last_submit = submit;
        self.pending = Some((template, 0, count as u64));
        Ok(true)
    }
}

impl<R: Read> Iterator for SlsJobs<R> {
    type Item = Result<JobSpec, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(j) = self.next_copy() {
                return Some(Ok(j));
            }
            if self.done {
                return None;
            }
            let r = match self.objects.next()? {
                Ok((line, job)) => self.convert(line, job),
                Err(e) => Err(e),
            };
            if let Err(e) = r {
                self.done = true;
                return Some(Err(e));
            }
        }
    }
}

/// Opens an SLS JSON job file.
pub fn open_sls(path: impl AsRef<Path>) -> Result<SlsJobs<BufReader<File>>, WorkloadError> {
    let path = path.as_ref();
    Ok(SlsJobs::from_reader(open_file(path)?, path.display().to_string()))
}

// ------------------------------------------------------------------- Rumen

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct RumenJob {
    #[serde(default, deserialize_with = "opt_string")]
    jobID: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    jobName: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    user: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    queue: Option<String>,
    #[serde(default, deserialize_with = "opt_i64")]
    submitTime: Option<i64>,
    #[serde(default)]
    mapTasks: Option<Vec<RumenTask>>,
    #[serde(default)]
    reduceTasks: Option<Vec<RumenTask>>,
}

#[derive(Deserialize)]
struct RumenTask {
    #[serde(default)]
    attempts: Option<Vec<RumenAttempt>>,
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct RumenAttempt {
    #[serde(default, deserialize_with = "opt_string")]
    hostName: Option<String>,
    #[serde(default, deserialize_with = "opt_i64")]
    startTime: Option<i64>,
    #[serde(default, deserialize_with = "opt_i64")]
    finishTime: Option<i64>,
}

/// The jobs of a Rumen job trace.
pub struct RumenJobs<R: Read> {
    objects: JsonObjects<R, RumenJob>,
    file: String,
    baseline: Option<i64>,
    next_id: u64,
    last_submit: Time,
    budget: Budget,
    done: bool,
}

impl<R: Read> RumenJobs<R> {
    pub fn from_reader(reader: R, file: impl Into<String>) -> RumenJobs<R> {
        let file = file.into();
        RumenJobs {
            objects: JsonObjects::new(reader, file.clone()),
            file,
            baseline: None,
            next_id: 0,
            last_submit: Time::ZERO,
            budget: Budget::default(),
            done: false,
        }
    }

    fn convert(&mut self, line: usize, job: RumenJob) -> Result<JobSpec, WorkloadError> {
        let err = |msg: String| WorkloadError::new(&self.file, line, msg);
        let submit_abs = job.submitTime.ok_or_else(|| err("job without submitTime".into()))?;
        let base = *self.baseline.get_or_insert(submit_abs);
        let offset = submit_abs
            .checked_sub(base)
            .ok_or_else(|| err(format!("submitTime {submit_abs} minus the first job's submitTime {base} overflows")))?;
        let submit = Time(check_ms(offset.max(0) as u64, "submitTime after the first job's", &self.file, line)?);
        let mut groups = Vec::new();
        for (phase, prio, tasks) in [
            (Phase::Map, Priority::MAP, job.mapTasks.unwrap_or_default()),
            (Phase::Reduce, Priority::REDUCE, job.reduceTasks.unwrap_or_default()),
        ] {
            for (i, t) in tasks.into_iter().enumerate() {
                let Some(a) = t.attempts.and_then(|mut a| a.pop()) else { continue };
                let (Some(s), Some(f)) = (a.startTime, a.finishTime) else {
                    return Err(err(format!("{phase:?} task {}: last attempt without startTime or finishTime", i + 1)));
                };
                if s < 0 || f < 0 {
                    return Err(err(format!("{phase:?} task {}: last attempt has no time ({s}, {f})", i + 1)));
                }
                let d = f.checked_sub(s).ok_or_else(|| {
                    err(format!("{phase:?} task {}: finishTime {f} - startTime {s} overflows", i + 1))
                })?;
                let ms = check_ms(d.max(1) as u64, &format!("{phase:?} task {} duration", i + 1), &self.file, line)?;
                let host = a.hostName.as_deref().and_then(host_of);
                add_tasks(&mut groups, phase, prio, SLS_CONTAINER, ms, host, 1);
            }
        }
        if submit < self.last_submit {
            return Err(err(format!(
                "submitTime {submit_abs} is {} ms before the previous job's",
                self.last_submit.ms() - submit.ms()
            )));
        }
        let id = self.next_id;
        let spec = JobSpec {
            id,
            name: job.jobID.or(job.jobName).unwrap_or_else(|| format!("job_{id}")),
            submit,
            queue: job.queue.unwrap_or_else(|| "default".into()),
            user: job.user.unwrap_or_else(|| "default".into()),
            priority: 0,
            groups: finish_groups(groups),
            deadline: None,
            value: None,
            dag: None,
        };
        self.budget.admit(&spec, 1, &self.file, line)?;
        self.last_submit = submit;
        self.next_id += 1;
        Ok(spec)
    }
}

impl<R: Read> Iterator for RumenJobs<R> {
    type Item = Result<JobSpec, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = match self.objects.next()? {
            Ok((line, job)) => self.convert(line, job),
            Err(e) => Err(e),
        };
        self.done = r.is_err();
        Some(r)
    }
}

/// Opens a Rumen job trace.
pub fn open_rumen(path: impl AsRef<Path>) -> Result<RumenJobs<BufReader<File>>, WorkloadError> {
    let path = path.as_ref();
    Ok(RumenJobs::from_reader(open_file(path)?, path.display().to_string()))
}

// ----------------------------------------------------------------- sniffing

/// What the first object of a `.json` file looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonKind {
    Sls,
    Rumen,
    SlsNodes,
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct Sniff {
    #[serde(default)]
    jobID: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    submitTime: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    mapTasks: Option<serde::de::IgnoredAny>,
    #[serde(rename = "job.tasks", default)]
    tasks: Option<serde::de::IgnoredAny>,
    #[serde(rename = "job.start.ms", default)]
    start: Option<serde::de::IgnoredAny>,
    #[serde(rename = "num.nodes", default)]
    num_nodes: Option<serde::de::IgnoredAny>,
    #[serde(rename = "num.racks", default)]
    num_racks: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    nodes: Option<serde::de::IgnoredAny>,
}

/// Reads the first object of a JSON stream to tell SLS jobs, Rumen jobs and
/// SLS nodes apart.
pub fn sniff(reader: impl Read, file: &str) -> Result<JsonKind, WorkloadError> {
    let first = JsonObjects::<_, Sniff>::new(reader, file).next();
    let (line, s) = match first {
        None => return Err(WorkloadError::new(file, 0, "empty JSON trace")),
        Some(r) => r?,
    };
    if s.jobID.is_some() || s.submitTime.is_some() || s.mapTasks.is_some() {
        Ok(JsonKind::Rumen)
    } else if s.tasks.is_some() || s.start.is_some() || s.num_nodes.is_some() || s.num_racks.is_some() {
        Ok(JsonKind::Sls)
    } else if s.nodes.is_some() {
        Ok(JsonKind::SlsNodes)
    } else {
        Err(WorkloadError::new(
            file,
            line,
            "neither an SLS job (job.start.ms, job.tasks) nor a Rumen job (jobID, submitTime, mapTasks)",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> String {
        format!("{}/../../../shared/traces/sls/2jobs2min-rumen-jh.json", env!("CARGO_MANIFEST_DIR"))
    }

    fn sls(text: &str) -> Vec<Result<JobSpec, WorkloadError>> {
        SlsJobs::from_reader(text.as_bytes(), "jobs.json").collect()
    }

    #[test]
    fn rumen_sample_has_two_jobs_of_96_maps() {
        let jobs: Vec<JobSpec> = open_rumen(sample()).unwrap().map(|j| j.unwrap()).collect();
        assert_eq!(jobs.len(), 2);
        for j in &jobs {
            assert_eq!(j.groups.len(), 1);
            let g = &j.groups[0];
            assert_eq!((g.phase, g.priority, g.resources), (Phase::Map, Priority::MAP, SLS_CONTAINER));
            assert_eq!(g.durations_ms.len(), 96);
            assert_eq!(g.hosts.len(), 96);
            assert_eq!(j.queue, "sls_queue_1");
            assert_eq!(j.user, "jenkins");
        }
        assert_eq!(jobs[0].name, "job_1369942127770_1205");
        assert_eq!(jobs[0].submit, Time(0));
        // 1371222159703 - 1371222054499.
        assert_eq!(jobs[1].submit, Time(105_204));
        // First map's last attempt: 1371222078206 - 1371222061163 on a2118.
        assert_eq!(jobs[0].groups[0].durations_ms[0], 17_043);
        assert_eq!(jobs[0].groups[0].hosts[0].as_deref(), Some("a2118.smile.com"));
        assert_eq!(sniff(std::fs::File::open(sample()).unwrap(), "s").unwrap(), JsonKind::Rumen);
    }

    #[test]
    fn sls_jobs_with_header_counts_and_string_numbers() {
        let text = r#"{"num.nodes": 3, "num.racks": 1}
{"am.type":"mapreduce","job.start.ms":0,"job.end.ms":95375,"job.queue.name":"sls_queue_1","job.id":"job_1",
 "job.user":"default","job.tasks":[
  {"count":2,"container.host":"/default-rack/node1","container.duration.ms":50000,"container.priority":20,
   "container.type":"map","container.memory-mb":1024,"container.vcores":1},
  {"container.host":"/default-rack/node2","container.start.ms":"100","container.end.ms":"40100",
   "container.priority":"10","container.type":"reduce","container.memory-mb":"2048","container.vcores":1},
  {"container.duration.ms":7,"container.type":"map"}]}
{"job.start.ms":"5000","job.count":2,"job.tasks":[{"duration.ms":1000}],"unknown":{"a":[1]}}
"#;
        assert_eq!(sniff(text.as_bytes(), "j").unwrap(), JsonKind::Sls);
        let jobs: Vec<JobSpec> = sls(text).into_iter().map(|j| j.unwrap()).collect();
        assert_eq!(jobs.len(), 3);
        let j = &jobs[0];
        assert_eq!((j.name.as_str(), j.queue.as_str(), j.submit), ("job_1", "sls_queue_1", Time(0)));
        assert_eq!(j.groups.len(), 2);
        assert_eq!(j.groups[0].durations_ms, vec![50_000, 50_000, 7]);
        assert_eq!(j.groups[0].hosts, vec![Some("node1".to_string()), Some("node1".to_string()), None]);
        assert_eq!(j.groups[1].phase, Phase::Reduce);
        assert_eq!(j.groups[1].priority, Priority::REDUCE);
        assert_eq!(j.groups[1].resources, Resources::new(2048, 1));
        assert_eq!(j.groups[1].durations_ms, vec![40_000]);
        assert_eq!((jobs[1].id, jobs[1].name.as_str(), jobs[1].submit), (1, "job_1_0", Time(5_000)));
        assert_eq!(jobs[2].name, "job_1_1");
        assert!(jobs[2].groups[0].hosts.is_empty());
    }

    #[test]
    fn sls_errors_name_the_line() {
        let e = sls("{\"job.start.ms\": 0, \"job.tasks\": []}\n{\"job.start.ms\": \"soon\", \"job.tasks\": []}")
            .pop()
            .unwrap()
            .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("jobs.json", 2));
        assert!(e.message.contains("soon"), "{e}");
        let e = sls("{\"job.start.ms\": 0,\n \"job.tasks\": {\"count\": 1}}").pop().unwrap().unwrap_err();
        assert_eq!(e.line, 2);
        let e = sls("\n\n{\"job.start.ms\": 0, \"job.tasks\": [{\"container.duration.ms\": 0}]}")
            .pop()
            .unwrap()
            .unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("task 1: duration must be positive"), "{e}");
        let e = sls("{\"job.start.ms\": 0, \"job.tasks\": [{\"container.duration.ms\": 5}]}\n{\"job.start.ms\": 1,")
            .pop()
            .unwrap()
            .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.starts_with("truncated JSON"), "{e}");
        let e = sls("{\"job.start.ms\": 9, \"job.tasks\": []}\n{\"job.start.ms\": 8, \"job.tasks\": []}")
            .pop()
            .unwrap()
            .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("before the previous"), "{e}");
    }

    #[test]
    fn an_sls_job_count_times_task_count_past_the_cap_is_refused() {
        use crate::workload::limits::MAX_TASKS_PER_RUN;
        // 98 bytes asking for 10^6 copies of a job of 10^7 tasks.
        let text =
            r#"{"job.start.ms":0,"job.count":1000000,"job.tasks":[{"count":10000000,"container.duration.ms":1}]}"#;
        let e = sls(text).pop().unwrap().unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("jobs.json", 1));
        assert!(e.message.contains(&format!("more than the limit of {MAX_TASKS_PER_JOB}")), "{e}");
        // Within the per-job cap, but 10^6 copies of 100 tasks pass the workload's.
        let text = "\n{\"job.start.ms\":0,\"job.count\":1000000,\"job.tasks\":[{\"count\":100,\"duration.ms\":1}]}";
        let v = sls(text);
        assert_eq!(v.len(), 1, "no copy is made");
        let e = v[0].as_ref().unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains(&format!("more than the limit of {MAX_TASKS_PER_RUN}")), "{e}");
        // The same counts split over two task entries.
        let text =
            r#"{"job.start.ms":0,"job.tasks":[{"count":600000,"duration.ms":1},{"count":600000,"duration.ms":1}]}"#;
        assert!(sls(text).pop().unwrap().unwrap_err().message.contains("task 2: count 600000 brings the job"));
    }

    #[test]
    fn sls_copies_are_made_one_at_a_time() {
        let text = r#"{"job.start.ms":3,"job.id":"j","job.count":300000,"job.tasks":[{"count":3,"duration.ms":1}]}"#;
        let mut s = SlsJobs::from_reader(text.as_bytes(), "jobs.json");
        let first = s.next().unwrap().unwrap();
        assert_eq!((first.id, first.name.as_str(), first.task_count()), (0, "j_0", 3));
        assert!(s.pending.is_some());
        let last = s.last().unwrap().unwrap();
        assert_eq!((last.id, last.name.as_str(), last.submit), (299_999, "j_299999", Time(3)));
    }

    #[test]
    fn sls_far_future_start_and_overflowing_times_are_refused() {
        let e = sls(r#"{"job.start.ms":1e13,"job.tasks":[]}"#).pop().unwrap().unwrap_err();
        assert!(e.message.contains("job.start.ms: 10000000000000 ms is past the limit"), "{e}");
        let text = r#"{"job.start.ms":0,"job.tasks":[{"container.start.ms":-9000000000000000000,"container.end.ms":9000000000000000000}]}"#;
        let e = sls(text).pop().unwrap().unwrap_err();
        assert!(e.message.contains("task 1: container.end.ms 9000000000000000000 - container.start.ms"), "{e}");
        assert!(e.message.contains("overflows"), "{e}");
        let e = sls(r#"{"job.start.ms":0,"job.tasks":[{"duration.ms":40000000000}]}"#).pop().unwrap().unwrap_err();
        assert!(e.message.contains("task 1 duration: 40000000000 ms is past the limit"), "{e}");
    }

    #[test]
    fn rumen_time_overflow_is_an_error() {
        let rumen = |text: &str| RumenJobs::from_reader(text.as_bytes(), "r.json").collect::<Vec<_>>();
        let text = "{\"jobID\": \"a\", \"submitTime\": -9000000000000000000}\n\
                    {\"jobID\": \"b\", \"submitTime\": 9000000000000000000}";
        let v = rumen(text);
        assert!(v[0].is_ok());
        let e = v[1].as_ref().unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("r.json", 2));
        assert!(e.message.contains("overflows"), "{e}");
        let text = "{\"jobID\": \"a\", \"submitTime\": 0, \"mapTasks\": [{\"attempts\": \
                    [{\"startTime\": 1, \"finishTime\": 9000000000000000000}]}]}";
        let e = rumen(text).pop().unwrap().unwrap_err();
        assert!(e.message.contains("Map task 1 duration: 8999999999999999999 ms is past the limit"), "{e}");
        // Far apart but representable: past the horizon.
        let text = "{\"jobID\": \"a\", \"submitTime\": 0}\n{\"jobID\": \"b\", \"submitTime\": 40000000000}";
        let e = rumen(text).pop().unwrap().unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("is past the limit on times"), "{e}");
    }

    #[test]
    fn rumen_errors_name_the_line() {
        let text = std::fs::read_to_string(sample()).unwrap();
        // Cut the trace inside its second job.
        let cut = &text[..text.len() - 1000];
        let v: Vec<_> = RumenJobs::from_reader(cut.as_bytes(), "r.json").collect();
        assert_eq!(v.len(), 2);
        assert!(v[0].is_ok());
        let e = v[1].as_ref().unwrap_err();
        assert_eq!(e.line, cut.matches('\n').count() + 1);
        assert!(e.message.starts_with("truncated JSON"), "{e}");
        let bad = "{\"jobID\": \"j\", \"submitTime\": 5,\n \"mapTasks\": [{\"attempts\": [{\"startTime\": 1}]}]}";
        let e = RumenJobs::from_reader(bad.as_bytes(), "r.json").next().unwrap().unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("without startTime or finishTime"), "{e}");
        let bad = "{\"jobID\": \"j\", \"submitTime\": 5,\n \"mapTasks\": 3}";
        let e = RumenJobs::from_reader(bad.as_bytes(), "r.json").next().unwrap().unwrap_err();
        assert_eq!(e.line, 2);
    }
}
