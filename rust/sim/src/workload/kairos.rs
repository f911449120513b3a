//! Kairos YARN-testbed workloads (`epfl-labos/kairos`,
//! `extra-files/workloads/generated_workload*`; `shared/traces/README.md`,
//! `shared/research/delgado.md` §3.7).
//!
//! # Format
//! One job per line, whitespace separated: `sleep_before_submit_s
//! n_reduces queue hdfs_input output_prefix extra_flops_map
//! extra_flops_reduce`. The submitting script sleeps, then submits, so job
//! `i` arrives at the sum of the sleeps of lines 1..=i.
//!
//! # From a line to tasks
//! The jobs are Hadoop WordCount runs of the classes of Table 4.1
//! ([`TABLE_4_1`]). A line's class is read from the last `-` part of its
//! input path (`/random100char-256mb-small` → `small`): `small` is class 1
//! with no extra flops and class 2 ("medium small") with extra flops;
//! `medium`, `mediumlong` and `long` are classes 3, 4 and 5 (`long` covers
//! both the `-1gb-long` and `-256mb-long` inputs). The map count is the
//! class's (Table 4.1 is authoritative, delgado.md §3.7); the reduce count is
//! the line's own (equal to the table's in every published file).
//!
//! Table 4.1 gives only each class's makespan alone on the 120-core testbed
//! (30 nodes × 4 cores, delgado.md §3.5), not task times. We split it: maps
//! take [`KairosOptions::map_share`] (half) of the makespan and reduces the
//! rest, each phase running in `ceil(tasks / slots)` waves over the
//! [`KairosOptions::slots`] (120) cores, so that a class's job alone on the
//! testbed runs for its table duration. So a class-1 job has 15 maps and
//! 15 reduces of 42.5 s; a class-5 job 224 maps of 293.75 s (2 waves) and 60
//! reduces of 587.5 s. The table's duration is used even where a file's
//! extra flops differ from the table's (the `medium` lines carry 500, the
//! table 0): the table is what was measured. Every task gets the testbed
//! container, 5120 MB / 1 vcore (delgado.md §3.7 notes).
//!
//! # Calibration options (issue 20; all off by default, which is the model above)
//! - `spread=SIGMA`: each task's time is the phase time above times a
//!   log-normal factor `exp(SIGMA·Z − SIGMA²/2)` (mean 1, so a job's work is
//!   unchanged on average), drawn per task from `seed` and the job's id, so
//!   every policy sees the same times. Real tasks of one WordCount job vary
//!   (stragglers, data skew, a node's other containers); the thesis gives no
//!   figure, so SIGMA is a calibration knob. A job's longest task then
//!   outlasts the mean, so the job alone runs longer than its table duration.
//! - `spread_keeps=mean|alone` (`mean`): what the spread keeps. `mean` is the
//!   draw above. `alone` keeps the job's time alone instead, since Table 4.1's
//!   makespans were measured with the real variation in them: each phase's
//!   drawn times are scaled by one factor per job and phase so that the phase,
//!   run alone on `slots` cores with each task started in order on the first
//!   free core (as the simulator's FIFO places them), lasts what it lasts
//!   without spread (its waves × its phase time). The draws are the same,
//!   only scaled; a job then does less work than without spread (0.56–0.68
//!   of it by class at `spread=0.25`), so the offered load falls. With AMs
//!   holding a core (`--am-mb`), `slots=119` matches a multi-wave phase
//!   (class 5's maps) to the 119 cores left to tasks.
//! - `seed=N` (1): the seed of those draws.
//! - `overhead_s=S` (0): the part of each Table 4.1 makespan that is not task
//!   work (the AM container's start-up and the first container launches of a
//!   job run alone); it is taken off before the split, so a job's task work
//!   is `duration − S`. Pair it with `--am-mb` and `--am-startup-ms` to
//!   charge it as AM time instead of task time.

use super::limits::{check_ms, Budget};
use super::text::{open_file, parse_secs, parse_u64, secs_to_ms, Lines};
use super::{pick_weighted, JobSpec, TaskGroup, WorkloadError, MAX_TASKS_PER_JOB};
use sojourn_core::{Resources, Time};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// One row of Table 4.1 (delgado.md §3.7, thesis L1268–1273).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KairosClass {
    /// 1 to 5.
    pub category: u8,
    pub name: &'static str,
    pub input_gb: u32,
    pub maps: u32,
    pub reduces: u32,
    pub extra_flops: u32,
    /// Makespan alone on the testbed, s.
    pub duration_s: u32,
    /// Probability of the class in the testbed draws.
    pub probability: f64,
    /// Big-C's classification: categories 1–3 short, 4–5 long.
    pub short: bool,
}

pub const TABLE_4_1: [KairosClass; 5] = [
    KairosClass {
        category: 1,
        name: "small",
        input_gb: 4,
        maps: 15,
        reduces: 15,
        extra_flops: 0,
        duration_s: 85,
        probability: 0.32,
        short: true,
    },
    KairosClass {
        category: 2,
        name: "medium small",
        input_gb: 4,
        maps: 15,
        reduces: 15,
        extra_flops: 500,
        duration_s: 201,
        probability: 0.31,
        short: true,
    },
    KairosClass {
        category: 3,
        name: "medium",
        input_gb: 8,
        maps: 30,
        reduces: 30,
        extra_flops: 0,
        duration_s: 239,
        probability: 0.31,
        short: true,
    },
    KairosClass {
        category: 4,
        name: "medium long",
        input_gb: 30,
        maps: 112,
        reduces: 60,
        extra_flops: 500,
        duration_s: 308,
        probability: 0.04,
        short: false,
    },
    KairosClass {
        category: 5,
        name: "long",
        input_gb: 60,
        maps: 224,
        reduces: 60,
        extra_flops: 1000,
        duration_s: 1175,
        probability: 0.02,
        short: false,
    },
];

/// The Table 4.1 class of an input path and extra map flops (module doc).
pub fn class_of(hdfs_input: &str, extra_flops_map: u64) -> Option<&'static KairosClass> {
    let size = hdfs_input.trim_end_matches('/').rsplit('-').next()?;
    let i = match size {
        "small" if extra_flops_map == 0 => 0,
        "small" => 1,
        "medium" => 2,
        "mediumlong" => 3,
        "long" => 4,
        _ => return None,
    };
    Some(&TABLE_4_1[i])
}

#[derive(Clone, Debug, PartialEq)]
pub struct KairosOptions {
    /// Cores of the testbed the table's makespans were measured on.
    pub slots: u32,
    /// Fraction of a job's makespan spent in its map phase.
    pub map_share: f64,
    pub container: Resources,
    pub user: String,
    /// Log-normal deviation of each task's time around its phase time
    /// (module doc); 0 gives every task of a phase the same time.
    pub spread: f64,
    /// What the spread keeps: each phase's mean task time, or the job's
    /// time alone (module doc).
    pub spread_keeps: SpreadKeeps,
    /// Seed of the `spread` draws.
    pub seed: u64,
    /// Seconds of each table makespan that are not task work (module doc).
    pub overhead_s: f64,
}

impl Default for KairosOptions {
    fn default() -> Self {
        KairosOptions {
            slots: 120,
            map_share: 0.5,
            container: Resources::new(5120, 1),
            user: "default".into(),
            spread: 0.0,
            spread_keeps: SpreadKeeps::Mean,
            seed: 1,
            overhead_s: 0.0,
        }
    }
}

/// What a `spread` keeps of the model without spread (module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SpreadKeeps {
    /// Each phase's mean task time (and so the job's work).
    #[default]
    Mean,
    /// Each phase's time alone on the testbed (and so the job's).
    Alone,
}

/// The largest `spread` accepted: at 3 a task's factor already ranges over
/// several orders of magnitude.
pub const MAX_SPREAD: f64 = 3.0;

impl KairosOptions {
    /// Sets one option by name: `slots`, `map_share`, `container_mb`,
    /// `spread`, `spread_keeps`, `seed`, `overhead_s`.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let bad = || format!("kairos option {key}: bad value {value:?}");
        match key {
            "slots" => self.slots = value.parse().ok().filter(|v| *v > 0).ok_or_else(bad)?,
            "map_share" => {
                self.map_share = value.parse().ok().filter(|v: &f64| (0.0..=1.0).contains(v)).ok_or_else(bad)?
            }
            "container_mb" => self.container.memory_mb = value.parse().ok().filter(|v| *v > 0).ok_or_else(bad)?,
            "spread" => {
                self.spread =
                    value.parse().ok().filter(|v: &f64| (0.0..=MAX_SPREAD).contains(v)).ok_or_else(|| {
                        format!("kairos option spread: {value:?} is not a number in [0, {MAX_SPREAD}]")
                    })?
            }
            "spread_keeps" => {
                self.spread_keeps = match value {
                    "mean" => SpreadKeeps::Mean,
                    "alone" => SpreadKeeps::Alone,
                    _ => return Err(format!("kairos option spread_keeps: {value:?} is neither mean nor alone")),
                }
            }
            "seed" => self.seed = value.parse().map_err(|_| bad())?,
            "overhead_s" => {
                // Below the shortest class's makespan, so every task keeps some work.
                let max = TABLE_4_1.iter().map(|c| c.duration_s).min().unwrap_or(0) as f64;
                self.overhead_s = value.parse().ok().filter(|v: &f64| (0.0..max).contains(v)).ok_or_else(|| {
                    format!("kairos option overhead_s: {value:?} is not a number of seconds in [0, {max})")
                })?
            }
            _ => {
                return Err(format!(
                    "unknown kairos option {key:?} (known: slots, map_share, container_mb, spread, spread_keeps, seed, \
                     overhead_s)"
                ))
            }
        }
        Ok(())
    }

    /// `n` task times around `ms`: all `ms` without spread, else each times
    /// a mean-1 log-normal factor (module doc), at least 1 ms.
    /// Under `spread_keeps=alone` they are then scaled so that the phase
    /// lasts alone what `n` tasks of `ms` do.
    fn spread_times(&self, ms: u64, n: usize, rng: &mut sojourn_core::Rng) -> Vec<u64> {
        if self.spread == 0.0 {
            return vec![ms; n];
        }
        let mu = -self.spread * self.spread / 2.0;
        let times: Vec<u64> =
            (0..n).map(|_| ((ms as f64 * rng.lognormal(mu, self.spread)).round() as u64).max(1)).collect();
        if self.spread_keeps == SpreadKeeps::Mean {
            return times;
        }
        let slots = self.slots.max(1) as usize;
        let target = ms.saturating_mul((n as u64).div_ceil(slots as u64).max(1));
        // Greedy placement in order is unchanged by a common factor, so one
        // scaling brings the phase to its target, up to rounding.
        let factor = target as f64 / phase_alone_ms(&times, slots).max(1) as f64;
        times.iter().map(|t| ((*t as f64 * factor).round() as u64).max(1)).collect()
    }

    /// A job of `class` with `reduces` reduce tasks, task times by
    /// [`Self::task_ms`], every task in the testbed container.
    pub fn job(&self, id: u64, name: String, submit: Time, queue: &str, class: &KairosClass, reduces: u64) -> JobSpec {
        let (map_ms, reduce_ms) = self.task_ms(class, reduces);
        // One stream per job, from the seed and the job's id, so a job's
        // times do not depend on which jobs came before it.
        let mut rng = sojourn_core::Rng::seeded(self.seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut groups =
            vec![TaskGroup::maps(self.container, self.spread_times(map_ms, class.maps as usize, &mut rng))];
        if reduces > 0 {
            groups.push(TaskGroup::reduces(self.container, self.spread_times(reduce_ms, reduces as usize, &mut rng)));
        }
        JobSpec {
            id,
            name,
            submit,
            queue: queue.to_string(),
            user: self.user.clone(),
            priority: 0,
            groups,
            deadline: None,
            value: None,
            dag: None,
        }
    }

    /// `(map_ms, reduce_ms)` per task of a job of `class` with `reduces`.
    pub fn task_ms(&self, class: &KairosClass, reduces: u64) -> (u64, u64) {
        let slots = self.slots.max(1) as u64;
        let total_ms = (class.duration_s as f64 - self.overhead_s) * 1000.0;
        let map_waves = (class.maps as u64).div_ceil(slots).max(1) as f64;
        let reduce_waves = reduces.div_ceil(slots).max(1) as f64;
        let map_ms = (total_ms * self.map_share / map_waves).round() as u64;
        let reduce_ms = (total_ms * (1.0 - self.map_share) / reduce_waves).round() as u64;
        (map_ms.max(1), reduce_ms.max(1))
    }
}

/// How long a phase of tasks `times` (ms) lasts alone on `slots` cores,
/// each task started in order on the core that frees first.
pub fn phase_alone_ms(times: &[u64], slots: usize) -> u64 {
    use std::cmp::Reverse;
    let mut free: std::collections::BinaryHeap<Reverse<u64>> =
        std::iter::repeat_n(Reverse(0), slots.clamp(1, times.len().max(1))).collect();
    let mut end = 0;
    for t in times {
        let Reverse(at) = free.pop().unwrap_or(Reverse(0));
        // Saturating: the drawn times are checked against the limits only
        // after the job is built.
        let done = at.saturating_add(*t);
        end = end.max(done);
        free.push(Reverse(done));
    }
    end
}

/// The jobs of a Kairos workload stream.
pub struct KairosJobs<R> {
    lines: Lines<R>,
    opts: KairosOptions,
    next_id: u64,
    clock_ms: u64,
    budget: Budget,
    done: bool,
}

impl<R: BufRead> KairosJobs<R> {
    pub fn from_reader(reader: R, file: impl Into<String>, opts: KairosOptions) -> KairosJobs<R> {
        KairosJobs {
            lines: Lines::new(reader, file),
            opts,
            next_id: 0,
            clock_ms: 0,
            budget: Budget::default(),
            done: false,
        }
    }

    fn parse(&mut self, line: usize, text: &str) -> Result<JobSpec, WorkloadError> {
        let file = self.lines.file();
        let cols: Vec<&str> = text.split_whitespace().collect();
        if cols.len() != 7 {
            return Err(WorkloadError::new(
                file,
                line,
                format!(
                    "expected 7 fields (sleep_before_submit_s n_reduces queue hdfs_input output_prefix \
                     extra_flops_map extra_flops_reduce), found {}",
                    cols.len()
                ),
            ));
        }
        let sleep = parse_secs(cols[0], "sleep_before_submit_s", file, line)?;
        let reduces = parse_u64(cols[1], "n_reduces", file, line)?;
        if reduces > MAX_TASKS_PER_JOB {
            return Err(WorkloadError::new(
                file,
                line,
                format!("n_reduces {reduces} is more than {MAX_TASKS_PER_JOB}"),
            ));
        }
        let flops_map = parse_u64(cols[5], "extra_flops_map", file, line)?;
        parse_u64(cols[6], "extra_flops_reduce", file, line)?;
        let class = class_of(cols[3], flops_map).ok_or_else(|| {
            WorkloadError::new(
                file,
                line,
                format!(
                    "input {:?} matches no Table 4.1 class (expected a path ending in -small, -medium, \
                     -mediumlong or -long)",
                    cols[3]
                ),
            )
        })?;
        let clock_ms = check_ms(self.clock_ms.saturating_add(secs_to_ms(sleep)), "submit time", file, line)?;
        let id = self.next_id;
        let job = self.opts.job(id, format!("{}.{id}", cols[4]), Time(clock_ms), cols[2], class, reduces);
        self.budget.admit(&job, 1, file, line)?;
        self.clock_ms = clock_ms;
        self.next_id += 1;
        Ok(job)
    }
}

impl<R: BufRead> Iterator for KairosJobs<R> {
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

/// New draws of the Kairos testbed workloads (delgado.md §3.7): `heavy`,
/// the heavy-tailed mix (Table 4.1's probabilities, Poisson arrivals with
/// mean 60 s) the shipped files were drawn from, and `uniform`, classes 1–3
/// only (0.35/0.35/0.30, mean gap 30 s; thesis K4). Jobs of categories 1–3
/// go to queue `short`, 4–5 to `long`, as Big-C ran them.
#[derive(Clone, Debug, PartialEq)]
pub struct KairosDrawOptions {
    pub uniform: bool,
    pub jobs: u64,
    pub seed: u64,
    pub mean_interarrival_s: f64,
    pub testbed: KairosOptions,
}

impl KairosDrawOptions {
    pub fn new(mix: &str, jobs: u64, seed: u64) -> Option<KairosDrawOptions> {
        let (uniform, gap) = match mix {
            "heavy" => (false, 60.0),
            "uniform" => (true, 30.0),
            _ => return None,
        };
        Some(KairosDrawOptions { uniform, jobs, seed, mean_interarrival_s: gap, testbed: KairosOptions::default() })
    }

    /// Sets one option by name: `jobs`, `seed`, `interarrival_s`.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let bad = || format!("kairos-draw option {key}: bad value {value:?}");
        match key {
            "jobs" => self.jobs = super::synthetic::job_count(key, value)?,
            "seed" => self.seed = value.parse().map_err(|_| bad())?,
            "interarrival_s" => self.mean_interarrival_s = super::synthetic::interarrival(key, value)?,
            // The task-time options of the testbed reader (its `seed` is
            // `spread_seed` here, `seed` being the draw's).
            "spread" | "spread_keeps" | "overhead_s" | "map_share" | "slots" | "container_mb" => {
                self.testbed.set(key, value)?
            }
            "spread_seed" => self.testbed.set("seed", value)?,
            _ => {
                return Err(format!(
                    "unknown kairos-draw option {key:?} (known: jobs, seed, interarrival_s, spread, spread_keeps, \
                     spread_seed, overhead_s, map_share, slots, container_mb)"
                ))
            }
        }
        Ok(())
    }
}

/// The jobs of a [`KairosDrawOptions`] draw.
pub struct KairosDraw {
    opts: KairosDrawOptions,
    rng: sojourn_core::Rng,
    clock_s: f64,
    next_id: u64,
}

impl KairosDraw {
    pub fn new(opts: KairosDrawOptions) -> KairosDraw {
        let rng = sojourn_core::Rng::seeded(opts.seed);
        KairosDraw { opts, rng, clock_s: 0.0, next_id: 0 }
    }
}

impl Iterator for KairosDraw {
    type Item = JobSpec;

    fn next(&mut self) -> Option<JobSpec> {
        if self.next_id >= self.opts.jobs {
            return None;
        }
        self.clock_s += self.rng.exponential(self.opts.mean_interarrival_s);
        // Classes 1-3 only, or Table 4.1's whole mix.
        let weights: Vec<f64> =
            if self.opts.uniform { vec![0.35, 0.35, 0.30] } else { TABLE_4_1.iter().map(|c| c.probability).collect() };
        let class = &TABLE_4_1[pick_weighted(&mut self.rng, &weights)];
        let id = self.next_id;
        self.next_id += 1;
        let queue = if class.short { "short" } else { "long" };
        let name = format!("kairos-{}-{id}", class.name.replace(' ', "-"));
        Some(self.opts.testbed.job(id, name, Time::from_secs_f64(self.clock_s), queue, class, class.reduces as u64))
    }
}

/// Opens a Kairos workload file as a job stream.
pub fn open(path: impl AsRef<Path>, opts: KairosOptions) -> Result<KairosJobs<BufReader<File>>, WorkloadError> {
    let path = path.as_ref();
    Ok(KairosJobs::from_reader(open_file(path)?, path.display().to_string(), opts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn read(name: &str) -> Vec<JobSpec> {
        let path = format!("{}/../../../shared/traces/kairos/{name}", env!("CARGO_MANIFEST_DIR"));
        open(path, KairosOptions::default()).unwrap().map(|j| j.unwrap()).collect()
    }

    /// New draws follow Table 4.1's probabilities (heavy) or the uniform
    /// mix of classes 1–3, at their mean gaps, with Big-C's queues.
    #[test]
    fn draws_follow_the_table_and_the_uniform_mix() {
        let heavy: Vec<JobSpec> = KairosDraw::new(KairosDrawOptions::new("heavy", 20_000, 5).unwrap()).collect();
        let c = category_counts(&heavy);
        for (i, class) in TABLE_4_1.iter().enumerate() {
            let share = c[i] as f64 / 20_000.0;
            assert!((share - class.probability).abs() < 0.015, "class {}: {share}", i + 1);
        }
        let gap = heavy.last().unwrap().submit.as_secs_f64() / 20_000.0;
        assert!((gap - 60.0).abs() < 2.0, "mean gap {gap}");
        assert!(heavy.iter().all(|j| (j.queue == "long") == (j.groups[0].durations_ms.len() > 30)));
        let uniform: Vec<JobSpec> = KairosDraw::new(KairosDrawOptions::new("uniform", 20_000, 5).unwrap()).collect();
        let c = category_counts(&uniform);
        assert_eq!((c[3], c[4]), (0, 0));
        assert!((c[0] as f64 / 20_000.0 - 0.35).abs() < 0.015, "{c:?}");
        assert!(KairosDrawOptions::new("bimodal", 1, 1).is_none());
    }

    fn category_counts(jobs: &[JobSpec]) -> [usize; 5] {
        let mut c = [0; 5];
        for j in jobs {
            let i = TABLE_4_1.iter().position(|k| k.maps as usize == j.groups[0].durations_ms.len()).unwrap();
            // Classes 1 and 2 share the map count; tell them by map time.
            let i = if i == 0 && j.groups[0].durations_ms[0] > 42_500 { 1 } else { i };
            c[i] += 1;
        }
        c
    }

    #[test]
    fn kairos_and_bigc_draws_are_31_31_33_2_3() {
        for name in ["generated_workload_kairos", "generated_workload_bigc", "generated_workload_bigc_miest1job"] {
            let jobs = read(name);
            assert_eq!(jobs.len(), 100);
            assert_eq!(category_counts(&jobs), [31, 31, 33, 2, 3], "{name}");
            // Mean gap 59.4 s.
            assert_eq!(jobs.last().unwrap().submit, Time(5_942_000), "{name}");
            assert!(jobs.windows(2).all(|w| w[0].submit <= w[1].submit));
        }
        let bigc = read("generated_workload_bigc");
        assert_eq!(bigc.iter().filter(|j| j.queue == "short").count(), 95);
        let miest = read("generated_workload_bigc_miest1job");
        assert_eq!(miest.iter().filter(|j| j.queue == "short").count(), 96);
    }

    #[test]
    fn generated_workload_draw() {
        let jobs = read("generated_workload");
        assert_eq!(category_counts(&jobs), [25, 27, 26, 17, 5]);
        assert_eq!(jobs[0].submit, Time(56_000));
        assert_eq!(jobs[0].queue, "default");
        assert_eq!(jobs[0].name, "wordcount.256mb.small.out.0");
        assert_eq!(jobs.last().unwrap().submit, Time(5_044_000));
    }

    #[test]
    fn alone_on_the_testbed_each_class_lasts_its_table_duration() {
        let o = KairosOptions::default();
        for c in &TABLE_4_1 {
            let (m, r) = o.task_ms(c, c.reduces as u64);
            let waves = |n: u32| (n as u64).div_ceil(120);
            assert_eq!(m * waves(c.maps) + r * waves(c.reduces), c.duration_s as u64 * 1000, "{}", c.name);
        }
        assert_eq!(o.task_ms(&TABLE_4_1[4], 60), (293_750, 587_500));
        let sum: f64 = TABLE_4_1.iter().map(|c| c.probability).sum();
        assert!((sum - 1.0).abs() < 1e-9);
    }

    /// `spread=0` (whatever the seed) is the equal-times model; a spread
    /// keeps each phase's mean time (the job's work) and has the stated
    /// log-deviation, and its draws follow the seed, not the policy run.
    #[test]
    fn spread_keeps_the_mean_and_has_the_stated_deviation() {
        let class = &TABLE_4_1[4]; // 224 maps of 293.75 s, 60 reduces of 587.5 s
        let mut flat = KairosOptions::default();
        flat.set("spread", "0").unwrap();
        flat.set("seed", "9").unwrap();
        let base = KairosOptions::default().job(3, "j".into(), Time(0), "q", class, 60);
        assert_eq!(flat.job(3, "j".into(), Time(0), "q", class, 60), base);
        assert_eq!(base.groups[0].durations_ms, vec![293_750; 224]);

        let mut o = KairosOptions::default();
        o.set("spread", "0.5").unwrap();
        let (mut logs, mut ratio_sum, mut n) = (Vec::new(), 0.0, 0.0);
        for id in 0..200 {
            let j = o.job(id, "j".into(), Time(0), "q", class, 60);
            for (g, phase_ms) in j.groups.iter().zip([293_750.0, 587_500.0]) {
                for d in &g.durations_ms {
                    ratio_sum += *d as f64 / phase_ms;
                    n += 1.0;
                    logs.push((*d as f64 / phase_ms).ln());
                }
            }
        }
        // 56,800 factors: the mean's standard error is about 0.002.
        assert!((ratio_sum / n - 1.0).abs() < 0.01, "mean factor {}", ratio_sum / n);
        let mean_log = logs.iter().sum::<f64>() / n;
        let sd = (logs.iter().map(|l| (l - mean_log).powi(2)).sum::<f64>() / n).sqrt();
        assert!((sd - 0.5).abs() < 0.01, "log deviation {sd}");
        assert!((mean_log + 0.125).abs() < 0.01, "log mean {mean_log}");
        // Same seed and id, same times; another seed, others.
        assert_eq!(o.job(7, "a".into(), Time(0), "q", class, 60), o.job(7, "a".into(), Time(0), "q", class, 60));
        let mut other = o.clone();
        other.set("seed", "2").unwrap();
        assert_ne!(
            other.job(7, "a".into(), Time(0), "q", class, 60).groups,
            o.job(7, "a".into(), Time(0), "q", class, 60).groups
        );
    }

    /// The phase alone: tasks start in order on the core that frees first.
    #[test]
    fn a_phase_alone_fills_the_core_that_frees_first() {
        assert_eq!(phase_alone_ms(&[5, 3, 4, 1], 2), 7); // 5 | 3, 4 at 3 → 7 | 1 at 5
        assert_eq!(phase_alone_ms(&[5, 3, 4, 1], 10), 5);
        assert_eq!(phase_alone_ms(&[5, 3, 4, 1], 1), 13);
        assert_eq!(phase_alone_ms(&[], 4), 0);
        assert_eq!(phase_alone_ms(&[100; 240], 120), 200);
    }

    /// With `spread_keeps=alone`, every class's job alone (longest map plus
    /// longest reduce; class 5's 224 maps in two waves on 120 cores) lasts
    /// what it lasts without spread, for any seed and job, while its tasks
    /// still differ by the drawn factors.
    #[test]
    fn spread_keeping_alone_times_gives_each_class_its_alone_time() {
        for (spread, overhead) in [("0.25", "0"), ("0.25", "5"), ("0.5", "5")] {
            let mut o = KairosOptions::default();
            for (k, v) in [("spread", spread), ("overhead_s", overhead), ("spread_keeps", "alone")] {
                o.set(k, v).unwrap();
            }
            let mut mean = o.clone();
            mean.set("spread_keeps", "mean").unwrap();
            let mut flat = o.clone();
            flat.set("spread", "0").unwrap();
            for class in &TABLE_4_1 {
                let r = class.reduces as u64;
                let no_spread = flat.job(0, "j".into(), Time(0), "q", class, r);
                let alone_of = |j: &JobSpec| -> u64 {
                    let (maps, reduces) = (&j.groups[0].durations_ms, &j.groups[1].durations_ms);
                    let map_phase =
                        if maps.len() <= 120 { *maps.iter().max().unwrap() } else { phase_alone_ms(maps, 120) };
                    map_phase + reduces.iter().max().unwrap()
                };
                let target = alone_of(&no_spread);
                assert_eq!(target, ((class.duration_s as f64 - overhead.parse::<f64>().unwrap()) * 1000.0) as u64);
                for seed in 1..=5 {
                    o.seed = seed;
                    mean.seed = seed;
                    for id in [0, 7, 99] {
                        let kept = o.job(id, "j".into(), Time(0), "q", class, r);
                        let drawn = mean.job(id, "j".into(), Time(0), "q", class, r);
                        let alone = alone_of(&kept);
                        assert!(
                            alone.abs_diff(target) < 1000,
                            "{} seed {seed} job {id}: {alone} vs {target} ms",
                            class.name
                        );
                        // The same draw, one factor per phase: the ratio of
                        // any two tasks of a phase is the drawn one.
                        for (k, d) in kept.groups.iter().zip(&drawn.groups) {
                            let (a, b) = (&k.durations_ms, &d.durations_ms);
                            let f = a.iter().sum::<u64>() as f64 / b.iter().sum::<u64>() as f64;
                            assert!(f < 1.0, "{}: the spread lengthens a phase alone", class.name);
                            assert!(a.iter().zip(b).all(|(x, y)| (*x as f64 / *y as f64 - f).abs() < 1e-4));
                            assert!(a.iter().max() > a.iter().min());
                        }
                        // Under `mean` the spread stretches the job alone.
                        assert!(alone_of(&drawn) > target + 10_000, "{}", class.name);
                    }
                }
            }
        }
    }

    /// `spread_keeps=mean` (the default) is today's draw, value for value;
    /// `alone` without spread is the equal-times model; bad values are named.
    #[test]
    fn spread_keeps_mean_is_the_default_draw() {
        let mut o = KairosOptions::default();
        o.set("spread", "0.25").unwrap();
        let base = o.job(24, "j".into(), Time(0), "q", &TABLE_4_1[4], 60);
        o.set("spread_keeps", "mean").unwrap();
        assert_eq!(o.job(24, "j".into(), Time(0), "q", &TABLE_4_1[4], 60), base);
        // The first maps and reduce of job 24 (seed 1) as drawn before the option existed.
        assert_eq!(base.groups[0].durations_ms[..3], [237_589, 229_656, 229_438]);
        assert_eq!(base.groups[1].durations_ms[0], 776_985);
        let mut flat = KairosOptions::default();
        flat.set("spread_keeps", "alone").unwrap();
        assert_eq!(
            flat.job(3, "j".into(), Time(0), "q", &TABLE_4_1[4], 60),
            KairosOptions::default().job(3, "j".into(), Time(0), "q", &TABLE_4_1[4], 60)
        );
        let e = KairosOptions::default().set("spread_keeps", "median").unwrap_err();
        assert!(e.contains("spread_keeps") && e.contains("\"median\""), "{e}");
        let mut d = KairosDrawOptions::new("heavy", 10, 1).unwrap();
        d.set("spread_keeps", "alone").unwrap();
        assert_eq!(d.testbed.spread_keeps, SpreadKeeps::Alone);
    }

    #[test]
    fn overhead_comes_off_the_table_makespan_before_the_split() {
        let mut o = KairosOptions::default();
        o.set("overhead_s", "15").unwrap();
        // Class 1: (85 - 15) s over one map and one reduce wave.
        assert_eq!(o.task_ms(&TABLE_4_1[0], 15), (35_000, 35_000));
        // Class 5: (1175 - 15) s; maps in 2 waves, reduces in 1.
        assert_eq!(o.task_ms(&TABLE_4_1[4], 60), (290_000, 580_000));
        for (k, v) in [("overhead_s", "85"), ("overhead_s", "-1"), ("spread", "3.5"), ("spread", "x"), ("seed", "-1")] {
            let e = KairosOptions::default().set(k, v).unwrap_err();
            assert!(e.contains(k), "{e}");
        }
        let mut d = KairosDrawOptions::new("heavy", 10, 1).unwrap();
        d.set("spread", "0.4").unwrap();
        d.set("spread_seed", "5").unwrap();
        assert_eq!((d.testbed.spread, d.testbed.seed, d.seed), (0.4, 5, 1));
    }

    #[test]
    fn sleeps_adding_up_past_the_horizon_are_refused() {
        let line = "20000000 15 default /random100char-256mb-small out 0 0\n";
        let v: Vec<_> = KairosJobs::from_reader(Cursor::new(line.repeat(2)), "w", KairosOptions::default()).collect();
        assert!(v[0].is_ok());
        let e = v[1].as_ref().unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("w", 2));
        assert!(e.message.contains("submit time: 40000000000 ms is past the limit"), "{e}");
    }

    #[test]
    fn malformed_lines_name_the_line() {
        let text = "56  15   default /random100char-256mb-small   out 0 0\n10 x default /a-small out 0 0\n";
        let v: Vec<_> = KairosJobs::from_reader(Cursor::new(text), "w", KairosOptions::default()).collect();
        let e = v[1].as_ref().unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("w", 2));
        assert!(e.message.contains("n_reduces"), "{e}");
        let v: Vec<_> =
            KairosJobs::from_reader(Cursor::new("1 2 q /in-huge o 0 0\n"), "w", KairosOptions::default()).collect();
        assert!(v[0].as_ref().unwrap_err().message.contains("no Table 4.1 class"));
        let v: Vec<_> =
            KairosJobs::from_reader(Cursor::new("1 2 q /in-small o 0\n"), "w", KairosOptions::default()).collect();
        assert!(v[0].as_ref().unwrap_err().message.contains("found 6"));
    }
}
