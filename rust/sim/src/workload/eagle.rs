//! Hawk/Eagle traces (`.tr`; `shared/research/delgado.md` §0 and §4.1,
//! `shared/traces/README.md`).
//!
//! # Format
//! One job per line, whitespace separated: `arrival_s n_tasks mean_task_s
//! d_1 ... d_n`, times in seconds. There is no job id: the line order is the
//! id (from 0). `n_tasks` must equal the number of durations; `mean_task_s`
//! is checked to be a number but not used (the job's mean task duration is
//! recomputed from the durations, which is what the original simulator's
//! estimate is, delgado.md §0). Arrivals must not decrease. Arrivals and
//! durations are at most a year ([`super::limits`]).
//!
//! # Modes
//! - [`EagleMode::Exact`]: arrivals and durations as written, rounded to
//!   the millisecond.
//! - [`EagleMode::Original`]: as the authors' simulator
//!   (`eagle_simulation.py`, class `Job`): durations truncated to whole
//!   seconds (`int(float(d))`), and the k-th further job with the same
//!   arrival as an earlier one arrives k × 0.01 s later. The original can
//!   then process a job "in the past" (a spread job overtaking the next
//!   arrival); here such a job arrives with its predecessor instead, so the
//!   stream stays in order.
//!
//! In both modes a duration below 1 ms becomes 1 ms. Each job is one task
//! group of [`Phase::Map`] tasks at priority 20; a task takes one slot,
//! modelled as one container of [`EagleOptions::container`] (1024 MB / 1
//! vcore by default, so that a node's slots are its memory / 1024).

use super::limits::Budget;
use super::text::{open_file, parse_nonneg_f64, parse_secs, parse_u64, Lines};
use super::{JobSpec, TaskGroup, WorkloadError};
use sojourn_core::{Phase, Priority, Resources, Time};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// How literally to read a `.tr` file (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EagleMode {
    Exact,
    Original,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EagleOptions {
    pub mode: EagleMode,
    /// The container of one slot.
    pub container: Resources,
    /// Subtract the first arrival from every arrival, so the run starts
    /// with the first job (YH2_sub.tr starts at 65,013 s). Off by default,
    /// as in the original.
    pub rebase: bool,
}

impl Default for EagleOptions {
    fn default() -> Self {
        EagleOptions { mode: EagleMode::Exact, container: Resources::new(1024, 1), rebase: false }
    }
}

impl EagleOptions {
    /// Sets one option by name: `mode=exact|original`, `slot_mb`,
    /// `slot_vcores`, `rebase=true|false`.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let bad = || format!("eagle option {key}: bad value {value:?}");
        match key {
            "mode" => {
                self.mode = match value {
                    "exact" => EagleMode::Exact,
                    "original" => EagleMode::Original,
                    _ => return Err(format!("eagle option mode: expected exact or original, found {value:?}")),
                }
            }
            "slot_mb" => self.container.memory_mb = value.parse().ok().filter(|v| *v > 0).ok_or_else(bad)?,
            "slot_vcores" => self.container.vcores = value.parse().ok().filter(|v| *v > 0).ok_or_else(bad)?,
            "rebase" => self.rebase = value.parse().map_err(|_| bad())?,
            _ => return Err(format!("unknown eagle option {key:?} (known: mode, slot_mb, slot_vcores, rebase)")),
        }
        Ok(())
    }
}

/// The jobs of a `.tr` stream.
pub struct EagleJobs<R> {
    lines: Lines<R>,
    opts: EagleOptions,
    next_id: u64,
    /// Raw arrival of the previous line (order check, equal-arrival spread).
    last_raw: f64,
    /// Arrival given to the last job with that raw arrival (Original mode).
    last_spread: f64,
    last_submit: Time,
    base: Option<f64>,
    budget: Budget,
    done: bool,
}

impl<R: BufRead> EagleJobs<R> {
    pub fn from_reader(reader: R, file: impl Into<String>, opts: EagleOptions) -> EagleJobs<R> {
        EagleJobs {
            lines: Lines::new(reader, file),
            opts,
            next_id: 0,
            last_raw: f64::NEG_INFINITY,
            last_spread: 0.0,
            last_submit: Time::ZERO,
            base: None,
            budget: Budget::default(),
            done: false,
        }
    }

    fn parse(&mut self, line: usize, text: &str) -> Result<JobSpec, WorkloadError> {
        let file = self.lines.file();
        let cols: Vec<&str> = text.split_whitespace().collect();
        if cols.len() < 4 {
            return Err(WorkloadError::new(
                file,
                line,
                format!("expected arrival_s n_tasks mean_task_s d_1 ... d_n, found {} fields", cols.len()),
            ));
        }
        let arrival = parse_secs(cols[0], "arrival_s", file, line)?;
        let n = parse_u64(cols[1], "n_tasks", file, line)?;
        parse_nonneg_f64(cols[2], "mean_task_s", file, line)?;
        let durs = &cols[3..];
        if n != durs.len() as u64 {
            return Err(WorkloadError::new(
                file,
                line,
                format!("n_tasks is {n} but the line has {} task durations", durs.len()),
            ));
        }
        if arrival < self.last_raw {
            return Err(WorkloadError::new(
                file,
                line,
                format!("arrival {arrival} s is before the previous job's ({} s)", self.last_raw),
            ));
        }
        let original = self.opts.mode == EagleMode::Original;
        let mut durations_ms = Vec::with_capacity(durs.len());
        for (i, d) in durs.iter().enumerate() {
            let s = parse_secs(d, &format!("duration {}", i + 1), file, line)?;
            let ms = if original { s.trunc() as u64 * 1000 } else { (s * 1000.0).round() as u64 };
            durations_ms.push(ms.max(1));
        }

        let at = if original && arrival == self.last_raw { self.last_spread + 0.01 } else { arrival };
        self.last_raw = arrival;
        self.last_spread = at;
        let base = *self.base.get_or_insert(if self.opts.rebase { arrival } else { 0.0 });
        let submit = Time::from_secs_f64(at - base).max(self.last_submit);
        self.last_submit = submit;
        let id = self.next_id;
        let job = JobSpec {
            id,
            name: format!("job{id}"),
            submit,
            queue: "default".into(),
            user: "default".into(),
            priority: 0,
            groups: vec![TaskGroup {
                phase: Phase::Map,
                priority: Priority::MAP,
                resources: self.opts.container,
                durations_ms,
                hosts: Vec::new(),
            }],
            deadline: None,
            value: None,
            dag: None,
        };
        self.budget.admit(&job, 1, file, line)?;
        self.next_id += 1;
        Ok(job)
    }
}

impl<R: BufRead> Iterator for EagleJobs<R> {
    type Item = Result<JobSpec, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = match self.lines.next()? {
            Ok((line, text)) => self.parse(line, &text),
            Err(e) => Err(e),
        };
        self.done = r.is_err();
        Some(r)
    }
}

/// Opens a `.tr` file as a job stream.
pub fn open(path: impl AsRef<Path>, opts: EagleOptions) -> Result<EagleJobs<BufReader<File>>, WorkloadError> {
    let path = path.as_ref();
    Ok(EagleJobs::from_reader(open_file(path)?, path.display().to_string(), opts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn sample(name: &str) -> String {
        format!("{}/../../../shared/traces/eagle/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    fn read_str(text: &str, mode: EagleMode) -> Vec<Result<JobSpec, WorkloadError>> {
        let opts = EagleOptions { mode, ..EagleOptions::default() };
        EagleJobs::from_reader(Cursor::new(text.to_string()), "t.tr", opts).collect()
    }

    #[test]
    fn yh2_sub_has_3363_jobs_and_137029_tasks() {
        for mode in [EagleMode::Exact, EagleMode::Original] {
            let opts = EagleOptions { mode, ..EagleOptions::default() };
            let jobs: Vec<JobSpec> = open(sample("YH2_sub.tr"), opts).unwrap().map(|j| j.unwrap()).collect();
            assert_eq!(jobs.len(), 3_363);
            assert_eq!(jobs.iter().map(|j| j.task_count()).sum::<usize>(), 137_029);
            assert!(jobs.windows(2).all(|w| w[0].submit <= w[1].submit));
            assert_eq!(jobs[0].submit, Time(65_013_200));
            assert_eq!(jobs[0].task_count(), 1_651);
            assert_eq!(jobs[0].groups[0].phase, Phase::Map);
            // Yahoo cutoff 90.5811 s (delgado.md §0): 337 long jobs.
            let long = jobs.iter().filter(|j| j.mean_task_ms() > 90_581.1).count();
            assert!((335..=339).contains(&long), "{long} long jobs ({mode:?})");
        }
    }

    #[test]
    fn yh10_exact_and_original_durations() {
        let exact: Vec<JobSpec> =
            open(sample("YH10.tr"), EagleOptions::default()).unwrap().map(|j| j.unwrap()).collect();
        assert_eq!(exact.len(), 10);
        assert_eq!(exact.iter().map(|j| j.task_count()).sum::<usize>(), 183);
        assert_eq!(exact[0].submit, Time(7_527));
        assert_eq!(exact[0].task_count(), 51);
        // First task: 6.44153634315 s.
        assert_eq!(exact[0].groups[0].durations_ms[0], 6_442);
        let opts = EagleOptions { mode: EagleMode::Original, ..EagleOptions::default() };
        let orig: Vec<JobSpec> = open(sample("YH10.tr"), opts).unwrap().map(|j| j.unwrap()).collect();
        assert_eq!(orig[0].groups[0].durations_ms[0], 6_000);
        assert!(orig.iter().flat_map(|j| &j.groups[0].durations_ms).all(|d| *d == 1 || *d / 1000 * 1000 == *d));
    }

    #[test]
    fn original_mode_spreads_equal_arrivals() {
        let text = "1 1 2 2\n1 1 0.4 0.4\n1 1 3 3\n1.01 1 1 1\n2 1 1 1\n";
        let jobs: Vec<JobSpec> = read_str(text, EagleMode::Original).into_iter().map(|j| j.unwrap()).collect();
        let at: Vec<u64> = jobs.iter().map(|j| j.submit.ms()).collect();
        // 1, 1.01, 1.02, then 1.01 would go back in time: it joins 1.02.
        assert_eq!(at, vec![1_000, 1_010, 1_020, 1_020, 2_000]);
        assert_eq!(jobs[1].groups[0].durations_ms, vec![1]);
        let exact: Vec<u64> = read_str(text, EagleMode::Exact).into_iter().map(|j| j.unwrap().submit.ms()).collect();
        assert_eq!(exact, vec![1_000, 1_000, 1_000, 1_010, 2_000]);
    }

    #[test]
    fn rebase_starts_at_the_first_arrival() {
        let opts = EagleOptions { rebase: true, ..EagleOptions::default() };
        let jobs: Vec<JobSpec> =
            EagleJobs::from_reader(Cursor::new("100 1 1 1\n101.5 1 1 1\n"), "t.tr", opts).map(|j| j.unwrap()).collect();
        assert_eq!(jobs[0].submit, Time(0));
        assert_eq!(jobs[1].submit, Time(1_500));
    }

    #[test]
    fn a_far_future_arrival_is_refused_naming_the_line() {
        let e = read_str("1 1 1 1\n1e10 1 1 1\n", EagleMode::Exact).pop().unwrap().unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("t.tr", 2));
        assert!(e.message.contains("arrival_s: 10000000000 s is past the limit on times"), "{e}");
        let e = read_str("1 2 1 1 4e7\n", EagleMode::Original).pop().unwrap().unwrap_err();
        assert!(e.message.contains("duration 2: 40000000 s is past the limit"), "{e}");
        // Original mode spreads equal arrivals past the last allowed second.
        let e = read_str("31536000 1 1 1\n31536000 1 1 1\n", EagleMode::Original).pop().unwrap().unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("submit time"), "{e}");
    }

    #[test]
    fn malformed_lines_name_file_and_line() {
        let e = read_str("1 2 1 1 1\n2 3 1 1 1\n", EagleMode::Exact).pop().unwrap().unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("t.tr", 2));
        assert!(e.message.contains("n_tasks is 3 but the line has 2"), "{e}");
        let e = read_str("1 1 1 1\n\n2 1 1 x\n", EagleMode::Exact).pop().unwrap().unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("duration 1"), "{e}");
        let e = read_str("1 1 1\n", EagleMode::Exact).pop().unwrap().unwrap_err();
        assert!(e.message.contains("found 3 fields"), "{e}");
        let e = read_str("5 1 1 1\n4 1 1 1\n", EagleMode::Exact).pop().unwrap().unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("before the previous"), "{e}");
        let e = read_str("1 1.5 1 1\n", EagleMode::Exact).pop().unwrap().unwrap_err();
        assert!(e.message.contains("n_tasks"), "{e}");
    }
}
