//! SWIM workloads (`SWIMProjectUCB/SWIM`, `workloadSuite/*.tsv`; see
//! `shared/research/yarn.md` §3.4 and `shared/traces/README.md`).
//!
//! # Format
//! One job per line, tab separated: `job_id`, `submit_time_s` (relative to
//! the start), `inter_job_gap_s`, `map_input_bytes`, `shuffle_bytes`,
//! `reduce_output_bytes`, and optionally a 7th column, the anonymized input
//! path. A line without tabs is split on whitespace. Blank lines are
//! skipped; any other malformed line is an error naming file and line.
//! Job ids must be unique (a repeated id is an error naming both lines: a
//! file pasted together twice is more likely than two jobs of one name).
//! Times are at most a year ([`super::limits`]). Submit times must not decrease (the published files are sorted); a
//! decreasing one is an error (sort with [`super::sort_by_submit`] first if
//! a hand-made file is not sorted).
//!
//! # From bytes to tasks
//! SWIM gives bytes, not tasks. The model, calibrated on the HFSP testbed
//! (`shared/research/hfsp.md` §5.1 platform, §5.6 what a simulator must
//! choose, §5.4 anchor H8), is:
//!
//! - A map reads at most one HDFS block (128 MiB, §5.1) and writes at most
//!   [`SwimOptions::max_task_write_bytes`] (1 GiB): `maps = max(1,
//!   ceil(input / 128 MiB), ceil(map_output / 1 GiB))`, where `map_output` is
//!   the shuffle, or the final output for a map-only job (no shuffle). The
//!   second term only matters for generator-like jobs (a few KB of input,
//!   TBs of output, e.g. job2023 of FB-2010), which really ran many maps;
//!   without it one map would write 1.9 TB. Set the option to `u64::MAX` for
//!   the plain `ceil(input / 128 MiB)`.
//! - Reduces exist only when there is a shuffle: `reduces = max(ceil(shuffle
//!   / 1 GiB), ceil(output / 1 GiB))`, 0 without shuffle.
//! - A task's duration is a fixed overhead (JVM start, commit: 5 s) plus the
//!   bytes it reads and writes at a per-task rate: maps 8 MiB/s over input
//!   plus map output, reduces 4 MiB/s over shuffle plus output. All tasks
//!   of a phase get the same share of the bytes.
//!
//! On the three SWIM samples this gives map tasks of 5–149 s with medians
//! of 21–25 s ("most MAP tasks finish within 60 s", §5.4 H8; "per-job mean
//! mostly ≤ 60 s", §5.6) and reduce tasks of 5–509 s ("REDUCE task times
//! span about 2 orders of magnitude", H8). Maps get 1024 MB / 1 vcore
//! containers and reduces 2048 MB / 1 vcore (the testbed's 1 GB map and
//! 2 GB reduce slots, §5.1), at request priorities 20 and 10.
//!
//! [`swim_sizes`] gives the single-server job size of the HFSP simulator
//! studies instead: `map_input + (1 + 4) * shuffle + reduce_output` bytes.

use super::limits::Budget;
use super::text::{open_file, parse_secs, parse_u64, Lines};
use super::{JobSpec, TaskGroup, WorkloadError, MAX_TASKS_PER_JOB};
use sojourn_core::{Resources, Time};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The weight of shuffle bytes in the HFSP single-server size: `1 + d/n`
/// with `d/n = 4` (`shared/traces/README.md`).
pub const HFSP_SHUFFLE_WEIGHT: u64 = 5;

/// How SWIM bytes become tasks (see the module doc for the model).
#[derive(Clone, Debug, PartialEq)]
pub struct SwimOptions {
    /// HDFS block: the most input one map reads (HFSP testbed: 128 MB).
    pub block_bytes: u64,
    /// Most bytes one map writes, and the most shuffle or output bytes one
    /// reduce handles.
    pub max_task_write_bytes: u64,
    /// Map processing rate over input plus map output, bytes/s.
    pub map_bytes_per_s: f64,
    /// Reduce processing rate over shuffle plus output, bytes/s.
    pub reduce_bytes_per_s: f64,
    /// Fixed time of every task, ms.
    pub task_overhead_ms: u64,
    pub map_container: Resources,
    pub reduce_container: Resources,
    pub queue: String,
    pub user: String,
    /// Every byte count is multiplied by this before tasks are derived: SWIM's
    /// own way to replay a big cluster's day on a small one (e.g. the
    /// FB-2010 day on the HFSP testbed's 20 nodes).
    pub bytes_scale: f64,
}

impl Default for SwimOptions {
    fn default() -> Self {
        SwimOptions {
            block_bytes: 128 * MIB,
            max_task_write_bytes: GIB,
            map_bytes_per_s: 8.0 * MIB as f64,
            reduce_bytes_per_s: 4.0 * MIB as f64,
            task_overhead_ms: 5_000,
            map_container: Resources::new(1024, 1),
            reduce_container: Resources::new(2048, 1),
            queue: "default".into(),
            user: "default".into(),
            bytes_scale: 1.0,
        }
    }
}

impl SwimOptions {
    /// Sets one option by name (for workload specs such as
    /// `swim:FB.tsv:map_mib_s=10`). Sizes in MiB, rates in MiB/s.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let num = || value.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0);
        let bad = || format!("swim option {key}: bad value {value:?}");
        match key {
            "block_mib" => self.block_bytes = (num().ok_or_else(bad)? * MIB as f64) as u64,
            "max_write_mib" => self.max_task_write_bytes = (num().ok_or_else(bad)? * MIB as f64) as u64,
            "map_mib_s" => self.map_bytes_per_s = num().ok_or_else(bad)? * MIB as f64,
            "reduce_mib_s" => self.reduce_bytes_per_s = num().ok_or_else(bad)? * MIB as f64,
            "overhead_ms" => self.task_overhead_ms = value.trim().parse().map_err(|_| bad())?,
            "reduce_mb" => self.reduce_container.memory_mb = value.trim().parse().map_err(|_| bad())?,
            "map_mb" => self.map_container.memory_mb = value.trim().parse().map_err(|_| bad())?,
            "bytes_scale" => self.bytes_scale = num().ok_or_else(bad)?,
            "queue" => self.queue = value.to_string(),
            "user" => self.user = value.to_string(),
            _ => {
                return Err(format!(
                    "unknown swim option {key:?} (known: block_mib, max_write_mib, map_mib_s, reduce_mib_s, \
                     overhead_ms, map_mb, reduce_mb, bytes_scale, queue, user)"
                ))
            }
        }
        if self.block_bytes == 0 || self.max_task_write_bytes == 0 {
            return Err(bad());
        }
        Ok(())
    }
}

/// One SWIM row as written.
#[derive(Clone, Debug, PartialEq)]
pub struct SwimRecord {
    pub name: String,
    pub submit_s: f64,
    pub gap_s: f64,
    pub map_input: u64,
    pub shuffle: u64,
    pub reduce_output: u64,
    pub input_path: Option<String>,
}

impl SwimRecord {
    /// `map_input + shuffle_weight * shuffle + reduce_output` bytes.
    pub fn size(&self, shuffle_weight: u64) -> u64 {
        self.map_input.saturating_add(self.shuffle.saturating_mul(shuffle_weight)).saturating_add(self.reduce_output)
    }

    /// The HFSP single-server size (shuffle weight 1 + 4).
    pub fn hfsp_size(&self) -> u64 {
        self.size(HFSP_SHUFFLE_WEIGHT)
    }

    /// The record with its byte counts multiplied by `f`.
    fn scaled(&self, f: f64) -> SwimRecord {
        let by = |b: u64| (b as f64 * f).round() as u64;
        SwimRecord {
            map_input: by(self.map_input),
            shuffle: by(self.shuffle),
            reduce_output: by(self.reduce_output),
            ..self.clone()
        }
    }

    /// `(maps, reduces)` under `opts` (module doc).
    pub fn task_counts(&self, opts: &SwimOptions) -> (u64, u64) {
        if opts.bytes_scale != 1.0 {
            return self.scaled(opts.bytes_scale).task_counts(&SwimOptions { bytes_scale: 1.0, ..opts.clone() });
        }
        let map_out = if self.shuffle > 0 { self.shuffle } else { self.reduce_output };
        let maps = self.map_input.div_ceil(opts.block_bytes).max(map_out.div_ceil(opts.max_task_write_bytes)).max(1);
        let reduces = if self.shuffle == 0 {
            0
        } else {
            self.shuffle.div_ceil(opts.max_task_write_bytes).max(self.reduce_output.div_ceil(opts.max_task_write_bytes))
        };
        (maps, reduces)
    }

    /// The job under `opts`, with the given id.
    pub fn to_job(&self, id: u64, opts: &SwimOptions) -> JobSpec {
        if opts.bytes_scale != 1.0 {
            return self.scaled(opts.bytes_scale).to_job(id, &SwimOptions { bytes_scale: 1.0, ..opts.clone() });
        }
        let (maps, reduces) = self.task_counts(opts);
        let task_ms = |bytes: f64, tasks: u64, rate: f64| {
            let ms = opts.task_overhead_ms as f64 + 1000.0 * bytes / tasks as f64 / rate;
            (ms.round() as u64).max(1)
        };
        let map_out = if self.shuffle > 0 { self.shuffle } else { self.reduce_output };
        let map_ms = task_ms(self.map_input as f64 + map_out as f64, maps, opts.map_bytes_per_s);
        let mut groups = vec![TaskGroup::maps(opts.map_container, vec![map_ms; maps as usize])];
        if reduces > 0 {
            let reduce_ms = task_ms(self.shuffle as f64 + self.reduce_output as f64, reduces, opts.reduce_bytes_per_s);
            groups.push(TaskGroup::reduces(opts.reduce_container, vec![reduce_ms; reduces as usize]));
        }
        JobSpec {
            id,
            name: self.name.clone(),
            submit: Time::from_secs_f64(self.submit_s),
            queue: opts.queue.clone(),
            user: opts.user.clone(),
            priority: 0,
            groups,
            deadline: None,
            value: None,
            dag: None,
        }
    }
}

/// The rows of a SWIM file with their line numbers, checked for column
/// count, numbers, unique job ids and non-decreasing submit times.
pub struct SwimRecords<R> {
    lines: Lines<R>,
    last_submit: f64,
    /// The line of each job id seen.
    ids: BTreeMap<String, usize>,
    done: bool,
}

impl<R: BufRead> SwimRecords<R> {
    pub fn from_reader(reader: R, file: impl Into<String>) -> SwimRecords<R> {
        SwimRecords { lines: Lines::new(reader, file), last_submit: 0.0, ids: BTreeMap::new(), done: false }
    }

    fn parse(&mut self, line: usize, text: &str) -> Result<SwimRecord, WorkloadError> {
        let file = self.lines.file();
        let cols: Vec<&str> =
            if text.contains('\t') { text.split('\t').collect() } else { text.split_whitespace().collect() };
        if cols.len() != 6 && cols.len() != 7 {
            return Err(WorkloadError::new(
                file,
                line,
                format!("expected 6 or 7 tab-separated columns, found {}", cols.len()),
            ));
        }
        let name = cols[0].trim();
        if name.is_empty() {
            return Err(WorkloadError::new(file, line, "empty job id"));
        }
        let rec = SwimRecord {
            name: name.to_string(),
            submit_s: parse_secs(cols[1], "submit_time_s", file, line)?,
            gap_s: parse_secs(cols[2], "inter_job_gap_s", file, line)?,
            map_input: parse_u64(cols[3], "map_input_bytes", file, line)?,
            shuffle: parse_u64(cols[4], "shuffle_bytes", file, line)?,
            reduce_output: parse_u64(cols[5], "reduce_output_bytes", file, line)?,
            input_path: cols.get(6).map(|s| s.trim().to_string()).filter(|s| !s.is_empty()),
        };
        if rec.submit_s < self.last_submit {
            return Err(WorkloadError::new(
                file,
                line,
                format!("submit time {} s is before the previous job's ({} s)", rec.submit_s, self.last_submit),
            ));
        }
        if let Some(first) = self.ids.insert(rec.name.clone(), line) {
            return Err(WorkloadError::new(
                file,
                line,
                format!("job id {:?} was already used on line {first}", rec.name),
            ));
        }
        self.last_submit = rec.submit_s;
        Ok(rec)
    }
}

impl<R: BufRead> Iterator for SwimRecords<R> {
    type Item = Result<(usize, SwimRecord), WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = match self.lines.next()? {
            Ok((line, text)) => self.parse(line, &text).map(|rec| (line, rec)),
            Err(e) => Err(e),
        };
        self.done = r.is_err();
        Some(r)
    }
}

/// The jobs of a SWIM file, streamed; ids are the row order from 0.
pub struct SwimJobs<R> {
    records: SwimRecords<R>,
    opts: SwimOptions,
    next_id: u64,
    budget: Budget,
}

impl<R: BufRead> SwimJobs<R> {
    pub fn from_reader(reader: R, file: impl Into<String>, opts: SwimOptions) -> SwimJobs<R> {
        SwimJobs { records: SwimRecords::from_reader(reader, file), opts, next_id: 0, budget: Budget::default() }
    }
}

impl<R: BufRead> Iterator for SwimJobs<R> {
    type Item = Result<JobSpec, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (line, rec) = match self.records.next()? {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        let (maps, reduces) = rec.task_counts(&self.opts);
        if maps.saturating_add(reduces) > MAX_TASKS_PER_JOB {
            self.records.done = true;
            return Some(Err(WorkloadError::new(
                self.records.lines.file(),
                line,
                format!("{maps} maps and {reduces} reduces: more than {MAX_TASKS_PER_JOB} tasks in one job"),
            )));
        }
        let job = rec.to_job(self.next_id, &self.opts);
        if let Err(e) = self.budget.admit(&job, 1, self.records.lines.file(), line) {
            self.records.done = true;
            return Some(Err(e));
        }
        self.next_id += 1;
        Some(Ok(job))
    }
}

/// Opens a SWIM file as a job stream.
pub fn open(path: impl AsRef<Path>, opts: SwimOptions) -> Result<SwimJobs<BufReader<File>>, WorkloadError> {
    let path = path.as_ref();
    Ok(SwimJobs::from_reader(open_file(path)?, path.display().to_string(), opts))
}

/// Opens a SWIM file as a stream of rows.
pub fn records(path: impl AsRef<Path>) -> Result<SwimRecords<BufReader<File>>, WorkloadError> {
    let path = path.as_ref();
    Ok(SwimRecords::from_reader(open_file(path)?, path.display().to_string()))
}

/// One job's HFSP single-server size.
#[derive(Clone, Debug, PartialEq)]
pub struct SwimSize {
    /// Row order from 0, as the job ids of [`open`].
    pub id: u64,
    pub submit: Time,
    /// `map_input + (1 + 4) * shuffle + reduce_output`, bytes.
    pub size_bytes: u64,
}

/// The HFSP single-server size of every job of a SWIM file, in submit
/// order (a few dozen bytes per job, so a day of FB-2010 is under 1 MB).
pub fn swim_sizes(path: impl AsRef<Path>) -> Result<Vec<SwimSize>, WorkloadError> {
    records(path)?
        .enumerate()
        .map(|(i, r)| {
            r.map(|(_, rec)| SwimSize {
                id: i as u64,
                submit: Time::from_secs_f64(rec.submit_s),
                size_bytes: rec.hfsp_size(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sojourn_core::{Phase, Priority};
    use std::io::Cursor;

    fn sample(name: &str) -> String {
        format!("{}/../../../shared/traces/swim/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    fn read_str(text: &str) -> Vec<Result<JobSpec, WorkloadError>> {
        SwimJobs::from_reader(Cursor::new(text.to_string()), "t.tsv", SwimOptions::default()).collect()
    }

    #[test]
    fn fb2010_has_24442_jobs_in_order() {
        let jobs: Vec<JobSpec> = open(sample("FB-2010_samples_24_times_1hr_0.tsv"), SwimOptions::default())
            .unwrap()
            .map(|j| j.unwrap())
            .collect();
        assert_eq!(jobs.len(), 24_442);
        assert!(jobs.windows(2).all(|w| w[0].submit <= w[1].submit));
        assert_eq!(jobs[0].name, "job0");
        assert_eq!(jobs[0].submit, Time(9_000));
        assert_eq!(jobs.last().unwrap().submit, Time(86_408_000));
        // job0: 1,762 B in, no shuffle, 14,347 B out: one map (5 s + 16 KB at
        // 8 MiB/s), no reduce.
        assert_eq!(jobs[0].groups.len(), 1);
        assert_eq!(jobs[0].groups[0].durations_ms, vec![5_002]);
        // job2: 53,088,744,165 B in (396 blocks), 1.51 GB shuffle (2 reduces).
        assert_eq!(jobs[2].groups[0].durations_ms.len(), 396);
        assert_eq!(jobs[2].groups[1].durations_ms.len(), 2);
        assert_eq!(jobs[2].groups[1].phase, Phase::Reduce);
        assert_eq!(jobs[2].groups[1].priority, Priority::REDUCE);
        assert_eq!(jobs[2].groups[1].resources, Resources::new(2048, 1));
        let maps: usize = jobs.iter().map(|j| j.groups[0].durations_ms.len()).sum();
        let reduces: usize = jobs.iter().filter_map(|j| j.groups.get(1)).map(|g| g.durations_ms.len()).sum();
        assert_eq!((maps, reduces), (8_115_701, 511_254));
    }

    #[test]
    fn task_times_match_the_hfsp_testbed() {
        // hfsp.md §5.4 H8: maps mostly within 60 s, reduces span ~100x.
        let mut maps = Vec::new();
        let (mut rmin, mut rmax) = (u64::MAX, 0);
        for j in open(sample("FB-2009_samples_24_times_1hr_1.tsv"), SwimOptions::default()).unwrap() {
            let j = j.unwrap();
            maps.push(j.groups[0].durations_ms[0]);
            if let Some(g) = j.groups.get(1) {
                rmin = rmin.min(g.durations_ms[0]);
                rmax = rmax.max(g.durations_ms[0]);
            }
        }
        assert_eq!(maps.len(), 6_638);
        maps.sort_unstable();
        assert!(maps[maps.len() / 2] < 60_000, "median map {} ms", maps[maps.len() / 2]);
        assert!(*maps.last().unwrap() < 150_000);
        assert!(rmax / rmin >= 80, "reduce range {rmin}..{rmax} ms");
    }

    #[test]
    fn fb2009_sample_counts() {
        assert_eq!(records(sample("FB-2009_samples_24_times_1hr_0.tsv")).unwrap().count(), 5_894);
        let n = open(sample("FB-2009_samples_24_times_1hr_1.tsv"), SwimOptions::default()).unwrap().count();
        assert_eq!(n, 6_638);
    }

    #[test]
    fn hfsp_sizes_of_fb2010() {
        let sizes = swim_sizes(sample("FB-2010_samples_24_times_1hr_0.tsv")).unwrap();
        assert_eq!(sizes.len(), 24_442);
        // hfsp.md §4.2: with weight 1 the mean is 76.1 GB and the max 85.2 TB
        // (decimal units); the HFSP weight 5 gives larger sizes.
        let recs: Vec<SwimRecord> =
            records(sample("FB-2010_samples_24_times_1hr_0.tsv")).unwrap().map(|r| r.unwrap().1).collect();
        let mean1 = recs.iter().map(|r| r.size(1) as f64).sum::<f64>() / recs.len() as f64;
        let max1 = recs.iter().map(|r| r.size(1)).max().unwrap();
        assert!((mean1 / 1e9 - 76.1).abs() < 0.05, "mean {mean1}");
        assert!((max1 as f64 / 1e12 - 85.2).abs() < 0.05, "max {max1}");
        // job1: 970 + 5 * 609 + 697.
        assert_eq!(sizes[1].size_bytes, 970 + 5 * 609 + 697);
        assert_eq!(sizes[1].submit, Time(18_000));
        let total: u128 = sizes.iter().map(|s| s.size_bytes as u128).sum();
        let mean5 = total as f64 / sizes.len() as f64 / GIB as f64;
        assert!((mean5 - 137.61).abs() < 0.01, "mean {mean5} GiB");
    }

    #[test]
    fn seven_columns_and_whitespace_are_accepted() {
        let jobs = read_str("a\t1\t1\t134217729\t0\t0\t/in/a\r\nb 2 1 0 2147483648 10\n\n");
        let a = jobs[0].as_ref().unwrap();
        assert_eq!(a.groups[0].durations_ms.len(), 2);
        let b = jobs[1].as_ref().unwrap();
        // Shuffle 2 GiB: 2 maps (each writes at most 1 GiB), 2 reduces.
        assert_eq!(b.groups[0].durations_ms.len(), 2);
        assert_eq!(b.groups[1].durations_ms.len(), 2);
        // Reduce: 5 s + (1 GiB + 5 B) at 4 MiB/s = 261 s.
        assert_eq!(b.groups[1].durations_ms[0], 261_000);
        assert_eq!(b.id, 1);
    }

    #[test]
    fn malformed_rows_name_the_line() {
        let e = read_str("a\t1\t1\t1\t0\t0\nb\t2\t1\t1x\t0\t0\n").pop().unwrap().unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("t.tsv", 2));
        assert!(e.message.contains("map_input_bytes"), "{e}");
        let e = read_str("a\t1\t1\t1\t0\n").pop().unwrap().unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("found 5"), "{e}");
        let e = read_str("a\t5\t1\t1\t0\t0\n\nb\t4\t1\t1\t0\t0\n").pop().unwrap().unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("before the previous"), "{e}");
        let e = read_str("a\t1\t1\t1\t0\t0\nb\t1\t1\t1e18\t0\t0\n").pop().unwrap().unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("tasks in one job"), "{e}");
        let e = read_str("a\t-1\t1\t1\t0\t0\n").pop().unwrap().unwrap_err();
        assert!(e.message.contains("negative"), "{e}");
    }

    #[test]
    fn a_far_future_arrival_is_refused_naming_the_line() {
        let e = read_str("a\t1\t1\t1\t0\t0\nb\t1e10\t1\t1\t0\t0\n").pop().unwrap().unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("t.tsv", 2));
        assert!(e.message.contains("submit_time_s: 10000000000 s is past the limit on times"), "{e}");
        // A year is the limit, inclusive.
        assert!(read_str("a\t31536000\t0\t1\t0\t0\n")[0].is_ok());
    }

    #[test]
    fn a_slow_rate_past_the_duration_cap_is_refused() {
        // 1 GB at 1 byte/s: a map of 31 years.
        let mut o = SwimOptions::default();
        o.set("map_mib_s", "0.000001").unwrap();
        let v: Vec<_> = SwimJobs::from_reader(Cursor::new("a\t1\t1\t100000000\t0\t0\n"), "t.tsv", o).collect();
        let e = v[0].as_ref().unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("task duration"), "{e}");
    }

    #[test]
    fn duplicate_swim_job_id_is_an_error_naming_both_lines() {
        let v = read_str("a\t1\t1\t1\t0\t0\nb\t2\t1\t1\t0\t0\n\na\t3\t1\t1\t0\t0\n");
        assert_eq!(v.len(), 3);
        let e = v[2].as_ref().unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("t.tsv", 4));
        assert!(e.message.contains("job id \"a\" was already used on line 1"), "{e}");
    }

    #[test]
    fn the_largest_published_job_is_within_the_task_cap() {
        let most = records(sample("FB-2010_samples_24_times_1hr_0.tsv"))
            .unwrap()
            .map(|r| {
                let (m, r) = r.unwrap().1.task_counts(&SwimOptions::default());
                m + r
            })
            .max()
            .unwrap();
        assert!(most <= MAX_TASKS_PER_JOB, "{most} tasks");
    }

    #[test]
    fn options_by_name() {
        let mut o = SwimOptions::default();
        o.set("map_mib_s", "16").unwrap();
        o.set("reduce_mb", "4096").unwrap();
        assert_eq!(o.map_bytes_per_s, 16.0 * MIB as f64);
        assert_eq!(o.reduce_container.memory_mb, 4096);
        assert!(o.set("map_mib_s", "-1").is_err());
        assert!(o.set("nope", "1").is_err());
    }
}
