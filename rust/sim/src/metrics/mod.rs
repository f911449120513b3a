//! Metrics of one simulation run: what every report, table and comparison is
//! computed from (ARCHITECTURE.md, "Evaluation is part of the product").
//!
//! - Job response time (sojourn: finish − submit) and slowdown (response over
//!   the job's run time on an empty cluster), as mean, p50, p90, p99 and max,
//!   over all finished jobs and per class ([`Classes`]).
//! - Percentiles use the **nearest-rank** method: the p-th percentile of `n`
//!   sorted values is the value of rank `⌈p/100 · n⌉` (1-based, at least 1).
//!   It is always one of the observed values, and p100 is the maximum.
//! - Utilization is the time-weighted mean of the samples (each holds until
//!   the next), and their maximum.
//! - Fairness is the mean of the run's Jain's indices ([`jain_index`]).
//! - Scheduler cost: events the core handled (deterministic) and, measured on
//!   the wall clock, the time spent in the core and the simulation speed.
//!   Wall-clock figures are kept apart ([`WallCost`]) so that files can omit
//!   them and stay byte-identical across runs.
//!
//! Unfinished jobs have no response time: they are counted, not measured.

use crate::engine::SimError;
use crate::run::{JobRecord, RunResult, UtilSample};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// How jobs are split into classes for per-class figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Classes {
    /// No classes: overall figures only.
    #[default]
    None,
    /// Short and long jobs, the Hawk/Eagle convention: a job is long iff its
    /// mean task duration (ms) is greater than the cutoff.
    Cutoff(u64),
    /// Size bins. Bin `i` holds the jobs with `edges[i-1] < size <= edges[i]`;
    /// a last bin holds those above the last edge. Edges strictly increase.
    Bins { by: SizeBy, edges: Vec<u64> },
    /// By name: a job belongs to the first class whose word its name
    /// contains (generators name jobs after their class, e.g. PigMix's
    /// `pigmix-test-bin3-17`); a last class `other` holds the rest.
    Names(Vec<String>),
}

/// What a size bin measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeBy {
    /// Tasks per job.
    Tasks,
    /// Work: the sum of task durations (ms).
    Work,
}

impl Classes {
    /// Class labels, in class order (empty for [`Classes::None`]).
    pub fn labels(&self) -> Vec<String> {
        match self {
            Classes::None => Vec::new(),
            Classes::Cutoff(_) => vec!["short".into(), "long".into()],
            Classes::Names(words) => words.iter().cloned().chain(["other".to_string()]).collect(),
            Classes::Bins { by, edges } => {
                let unit = |n: u64| match by {
                    SizeBy::Tasks => n.to_string(),
                    SizeBy::Work => fmt_ms(n),
                };
                let suffix = match by {
                    SizeBy::Tasks => "tasks",
                    SizeBy::Work => "work",
                };
                let mut out = Vec::with_capacity(edges.len() + 1);
                let mut lo: Option<u64> = None;
                for &hi in edges {
                    out.push(match (by, lo) {
                        (SizeBy::Tasks, None) if hi <= 1 => "1 task".to_string(),
                        (SizeBy::Tasks, None) => format!("1-{hi} {suffix}"),
                        (SizeBy::Tasks, Some(l)) if l + 1 == hi => format!("{hi} {suffix}"),
                        (SizeBy::Tasks, Some(l)) => format!("{}-{hi} {suffix}", l + 1),
                        (SizeBy::Work, None) => format!("0-{} {suffix}", unit(hi)),
                        (SizeBy::Work, Some(l)) => format!("{}-{} {suffix}", unit(l), unit(hi)),
                    });
                    lo = Some(hi);
                }
                out.push(format!(">{} {suffix}", lo.map_or_else(|| "0".into(), unit)));
                out
            }
        }
    }

    /// The class index of `job` (0 for [`Classes::None`]).
    pub fn classify(&self, job: &JobRecord) -> usize {
        match self {
            Classes::None => 0,
            Classes::Cutoff(c) => usize::from(job.mean_task_ms > *c as f64),
            Classes::Names(words) => words.iter().position(|w| job.name.contains(w.as_str())).unwrap_or(words.len()),
            Classes::Bins { by, edges } => {
                let size = match by {
                    SizeBy::Tasks => u64::from(job.tasks),
                    SizeBy::Work => job.work_ms,
                };
                edges.iter().position(|&e| size <= e).unwrap_or(edges.len())
            }
        }
    }

    /// The label of `job`'s class ("all" for [`Classes::None`]).
    pub fn label_of(&self, job: &JobRecord) -> String {
        self.labels().into_iter().nth(self.classify(job)).unwrap_or_else(|| "all".into())
    }
}

impl fmt::Display for Classes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Classes::None => write!(f, "none"),
            Classes::Cutoff(c) => write!(f, "short/long: long iff mean task duration > {}", fmt_ms(*c)),
            Classes::Names(words) => write!(f, "by job name: {}, other", words.join(", ")),
            Classes::Bins { by, .. } => {
                let by = if *by == SizeBy::Tasks { "tasks per job" } else { "work per job" };
                write!(f, "size bins on {by}: {}", self.labels().join(", "))
            }
        }
    }
}

/// Parses `none`, `cutoff:<dur>`, `tasks:<n>,<n>,..`, `work:<dur>,<dur>,..`
/// or `name:<word>,<word>,..`.
/// A duration is an integer with a unit `ms`, `s`, `m` or `h`; without a
/// unit it is in ms. Examples: `cutoff:90s`, `tasks:10,100,1000`, `work:1h,10h`.
impl FromStr for Classes {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Self, SimError> {
        let bad = |why: &str| {
            SimError::Config(format!(
                "job classes '{s}': {why} (expected none, cutoff:<duration>, tasks:<n>,<n>,.., work:<duration>,.. or name:<word>,..)"
            ))
        };
        let s = s.trim();
        if s == "none" {
            return Ok(Classes::None);
        }
        let (kind, rest) = s.split_once(':').ok_or_else(|| bad("no ':'"))?;
        if kind == "name" {
            let words: Vec<String> = rest.split(',').map(|w| w.trim().to_string()).collect();
            if words.iter().any(|w| w.is_empty()) {
                return Err(bad("empty name"));
            }
            return Ok(Classes::Names(words));
        }
        let list = |parse: &dyn Fn(&str) -> Option<u64>| -> Result<Vec<u64>, SimError> {
            let v = rest.split(',').map(|x| parse(x.trim()).ok_or_else(|| bad(&format!("bad value '{x}'"))));
            let v = v.collect::<Result<Vec<u64>, _>>()?;
            if v.windows(2).any(|w| w[0] >= w[1]) {
                return Err(bad("edges must strictly increase"));
            }
            Ok(v)
        };
        match kind.trim() {
            "cutoff" => Ok(Classes::Cutoff(parse_ms(rest.trim()).ok_or_else(|| bad("bad duration"))?)),
            "tasks" => Ok(Classes::Bins { by: SizeBy::Tasks, edges: list(&|x| x.parse().ok().filter(|&n| n > 0))? }),
            "work" => Ok(Classes::Bins { by: SizeBy::Work, edges: list(&parse_ms)? }),
            other => Err(bad(&format!("unknown kind '{other}'"))),
        }
    }
}

/// `90s` → 90000. Units: ms, s, m, h; none = ms.
fn parse_ms(s: &str) -> Option<u64> {
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: u64 = n.parse().ok()?;
    let mult = match unit {
        "" | "ms" => 1,
        "s" => 1000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// A duration in ms as its largest whole unit: `1500ms`, `90s`, `10m`, `2h`.
pub fn fmt_ms(ms: u64) -> String {
    if ms == 0 {
        return "0".into();
    }
    let whole = [("h", 3_600_000), ("m", 60_000), ("s", 1000)].into_iter().find(|&(_, size)| ms / size * size == ms);
    match whole {
        Some((unit, size)) => format!("{}{unit}", ms / size),
        None => format!("{ms}ms"),
    }
}

/// The nearest-rank `p`-th percentile (0 < p ≤ 100) of ascending `sorted`
/// values: the value of rank ⌈p/100 · n⌉. NaN for an empty slice.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let n = sorted.len();
    // The small epsilon keeps p·n exact when floating error lifts it just above an integer.
    let rank = ((p / 100.0 * n as f64) - 1e-9).ceil().clamp(1.0, n as f64) as usize;
    sorted[rank - 1]
}

/// Jain's fairness index (Σx)² / (n·Σx²): 1 when all shares are equal, 1/n
/// when one of n holds everything. 1 for an empty or all-zero input.
pub fn jain_index(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        1.0
    } else {
        s * s / (xs.len() as f64 * s2)
    }
}

/// Distribution figures of one quantity.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dist {
    pub n: u64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Dist {
    /// Figures of `values` (any order); `None` when empty.
    pub fn of(mut values: Vec<f64>) -> Option<Dist> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        Some(Dist {
            n: n as u64,
            mean: values.iter().sum::<f64>() / n as f64,
            p50: percentile(&values, 50.0),
            p90: percentile(&values, 90.0),
            p99: percentile(&values, 99.0),
            max: values[n - 1],
        })
    }
}

/// Response time (s) and slowdown of a set of jobs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobFigures {
    pub jobs: u64,
    pub response_s: Option<Dist>,
    pub slowdown: Option<Dist>,
    /// The Pigeon paper's percentile slowdown (ratio of percentiles).
    #[serde(default)]
    pub slowdown_of_percentiles: Option<PctSlowdown>,
}

impl JobFigures {
    pub fn of<'a>(jobs: impl IntoIterator<Item = &'a JobRecord> + Clone) -> JobFigures {
        let (resp, slow): (Vec<f64>, Vec<f64>) =
            jobs.clone().into_iter().map(|j| (j.response_ms() as f64 / 1000.0, j.slowdown())).unzip();
        JobFigures {
            jobs: resp.len() as u64,
            response_s: Dist::of(resp),
            slowdown: Dist::of(slow),
            slowdown_of_percentiles: PctSlowdown::of(jobs),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassFigures {
    pub label: String,
    #[serde(flatten)]
    pub figures: JobFigures,
}

/// Cluster utilization, as fractions of capacity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Utilization {
    pub mean_memory: f64,
    pub max_memory: f64,
    pub mean_vcores: f64,
    pub max_vcores: f64,
}

impl Utilization {
    /// Time-weighted mean (each sample holds until the next; the samples'
    /// plain mean if they all share one instant) and maximum.
    pub fn of(samples: &[UtilSample]) -> Utilization {
        let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
            return Utilization::default();
        };
        let span = last.t.since(first.t) as f64;
        let mean = |f: fn(&UtilSample) -> f64| {
            if span == 0.0 {
                samples.iter().map(f).sum::<f64>() / samples.len() as f64
            } else {
                samples.windows(2).map(|w| f(&w[0]) * w[1].t.since(w[0].t) as f64).sum::<f64>() / span
            }
        };
        let max = |f: fn(&UtilSample) -> f64| samples.iter().map(f).fold(0.0, f64::max);
        Utilization {
            mean_memory: mean(|s| s.memory),
            max_memory: max(|s| s.memory),
            mean_vcores: mean(|s| s.vcores),
            max_vcores: max(|s| s.vcores),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Preemptions {
    pub kill: u64,
    pub suspend: u64,
    /// Task time thrown away by kills and lost nodes (s).
    pub lost_work_s: f64,
    /// Lost work over the work of the finished jobs.
    pub lost_work_frac: f64,
}

/// What the scheduler cost, beside wall-clock figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// Events the core handled.
    pub core_events: u64,
    /// Simulated task events (task starts and finishes).
    pub task_events: u64,
    /// Wall-clock figures; `None` once [`Summary::without_wall_clock`] dropped them.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub wall: Option<WallCost>,
}

/// Figures measured on the wall clock: they differ from run to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WallCost {
    pub wall_ms: f64,
    pub core_ms: f64,
    /// Time in the core per core event (µs).
    pub core_us_per_event: f64,
    /// Simulation speed: task events per wall-clock second.
    pub task_events_per_s: f64,
}

/// Everything the reports say about one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub policy: String,
    pub workload: String,
    pub seed: u64,
    pub nodes: usize,
    pub classes: Classes,
    pub finished: u64,
    pub unfinished: u64,
    pub makespan_s: f64,
    /// All finished jobs.
    pub all: JobFigures,
    /// One entry per class of `classes`, in class order (empty for none).
    pub by_class: Vec<ClassFigures>,
    pub utilization: Utilization,
    pub preemptions: Preemptions,
    /// Mean of the run's Jain's indices; `None` without samples.
    pub fairness_mean: Option<f64>,
    pub cost: Cost,
    /// The policy's own figures, flat (`sojourn_core::Metrics::flat`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub policy_figures: BTreeMap<String, f64>,
}

impl Summary {
    pub fn of(run: &RunResult, classes: &Classes) -> Summary {
        let labels = classes.labels();
        let mut members: Vec<Vec<&JobRecord>> = vec![Vec::new(); labels.len()];
        if !labels.is_empty() {
            for j in &run.jobs {
                members[classes.classify(j)].push(j);
            }
        }
        let by_class = labels
            .into_iter()
            .zip(members)
            .map(|(label, js)| ClassFigures { label, figures: JobFigures::of(js) })
            .collect();
        let work_ms: u64 = run.jobs.iter().map(|j| j.work_ms).sum();
        let per = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        let fairness_mean =
            (!run.fairness.is_empty()).then(|| run.fairness.iter().sum::<f64>() / run.fairness.len() as f64);
        Summary {
            policy: run.policy.clone(),
            workload: run.workload.clone(),
            seed: run.seed,
            nodes: run.nodes,
            classes: classes.clone(),
            finished: run.jobs.len() as u64,
            unfinished: run.unfinished,
            makespan_s: run.makespan.as_secs_f64(),
            all: JobFigures::of(&run.jobs),
            by_class,
            utilization: Utilization::of(&run.utilization),
            preemptions: Preemptions {
                kill: run.preemptions_kill,
                suspend: run.preemptions_suspend,
                lost_work_s: run.lost_work_ms as f64 / 1000.0,
                lost_work_frac: per(run.lost_work_ms as f64, work_ms as f64),
            },
            fairness_mean,
            policy_figures: run.policy_metrics.flat(),
            cost: Cost {
                core_events: run.core_events,
                task_events: run.task_events,
                wall: Some(WallCost {
                    wall_ms: run.wall_ms,
                    core_ms: run.core_ms,
                    core_us_per_event: per(run.core_ms * 1000.0, run.core_events as f64),
                    task_events_per_s: per(run.task_events as f64, run.wall_ms / 1000.0),
                }),
            },
        }
    }

    /// The same summary without wall-clock figures (for byte-identical files).
    pub fn without_wall_clock(&self) -> Summary {
        let mut s = self.clone();
        s.cost.wall = None;
        s
    }
}

/// Summaries of several runs, paired with them, in the given order.
pub fn summarize_all(runs: Vec<RunResult>, classes: &Classes) -> Vec<(RunResult, Summary)> {
    runs.into_iter()
        .map(|r| {
            let s = Summary::of(&r, classes);
            (r, s)
        })
        .collect()
}

pub mod fairness;
pub mod pct_slowdown;
pub use fairness::{FairnessBooks, QueueSlot};
pub use pct_slowdown::PctSlowdown;

#[cfg(test)]
mod tests {
    use super::*;
    use sojourn_core::Time;

    pub(crate) fn job(id: u64, submit_ms: u64, finish_ms: u64, tasks: u32, task_ms: u64) -> JobRecord {
        JobRecord {
            id,
            name: format!("job{id}"),
            queue: "default".into(),
            user: "u".into(),
            submit: Time(submit_ms),
            finish: Time(finish_ms),
            tasks,
            work_ms: tasks as u64 * task_ms,
            ideal_ms: task_ms,
            mean_task_ms: task_ms as f64,
        }
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 5.0);
        assert_eq!(percentile(&v, 90.0), 9.0);
        assert_eq!(percentile(&v, 99.0), 10.0);
        assert_eq!(percentile(&v, 100.0), 10.0);
        assert_eq!(percentile(&v, 1.0), 1.0);
        assert_eq!(percentile(&[7.0], 50.0), 7.0);
        assert!(percentile(&[], 50.0).is_nan());
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!((percentile(&v, 50.0), percentile(&v, 90.0), percentile(&v, 99.0)), (50.0, 90.0, 99.0));
        let d = Dist::of(vec![15.0, 20.0, 35.0, 40.0, 50.0]).unwrap();
        // The textbook example: ranks ⌈0.5·5⌉ = 3, ⌈0.9·5⌉ = 5.
        assert_eq!((d.p50, d.p90, d.max, d.mean, d.n), (35.0, 50.0, 50.0, 32.0, 5));
        assert_eq!(Dist::of(vec![]), None);
    }

    #[test]
    fn slowdown_and_classes_on_hand_made_jobs() {
        // Submitted at 0: a 1-task job of 10 s that took 30 s; a 100-task job of 200 s tasks that took 400 s.
        let short = job(1, 0, 30_000, 1, 10_000);
        let long = job(2, 0, 400_000, 100, 200_000);
        assert_eq!((short.slowdown(), long.slowdown()), (3.0, 2.0));
        let run = RunResult { policy: "p".into(), jobs: vec![short.clone(), long.clone()], ..RunResult::default() };

        let s = Summary::of(&run, &Classes::Cutoff(90_000));
        assert_eq!(s.by_class.iter().map(|c| c.label.as_str()).collect::<Vec<_>>(), ["short", "long"]);
        assert_eq!(s.by_class[0].figures.response_s.unwrap().mean, 30.0);
        assert_eq!(s.by_class[1].figures.slowdown.unwrap().max, 2.0);
        assert_eq!(s.all.slowdown.unwrap().mean, 2.5);
        // Hawk/Eagle: long iff mean task duration > cutoff, so equal is short.
        assert_eq!(Classes::Cutoff(10_000).classify(&short), 0);
        assert_eq!(Classes::Cutoff(9_999).classify(&short), 1);

        let bins: Classes = "tasks:1,10,100".parse().unwrap();
        assert_eq!(bins.labels(), ["1 task", "2-10 tasks", "11-100 tasks", ">100 tasks"]);
        assert_eq!((bins.classify(&short), bins.classify(&long)), (0, 2));
        let s = Summary::of(&run, &bins);
        assert_eq!(s.by_class.iter().map(|c| c.figures.jobs).collect::<Vec<_>>(), [1, 0, 1, 0]);
        assert_eq!(s.by_class[1].figures.response_s, None);

        let work: Classes = "work:1m,1h".parse().unwrap();
        assert_eq!(work.labels(), ["0-1m work", "1m-1h work", ">1h work"]);
        assert_eq!((work.classify(&short), work.classify(&long)), (0, 2));
        assert_eq!("tasks:10,100".parse::<Classes>().unwrap().labels()[0], "1-10 tasks");
        assert_eq!("cutoff:90s".parse::<Classes>().unwrap(), Classes::Cutoff(90_000));
        assert!("tasks:10,5".parse::<Classes>().is_err());
        assert!("cutoff:9x".parse::<Classes>().is_err());
        assert!("size:1".parse::<Classes>().is_err());

        let mut named = short.clone();
        named.name = "pigmix-test-bin2-7".into();
        let names: Classes = "name:bin1,bin2".parse().unwrap();
        assert_eq!(names.labels(), ["bin1", "bin2", "other"]);
        assert_eq!((names.classify(&named), names.classify(&long)), (1, 2));
        assert!("name:a,,b".parse::<Classes>().is_err());
    }

    #[test]
    fn jain_index_bounds() {
        assert_eq!(jain_index(&[0.25; 4]), 1.0);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0, 0.0]) - 0.2).abs() < 1e-12);
        assert!((jain_index(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
        assert_eq!(jain_index(&[]), 1.0);
    }

    #[test]
    fn utilization_is_time_weighted_and_costs_derived() {
        let at = |t, m| UtilSample { t: Time(t), memory: m, vcores: m / 2.0, running_jobs: 0, pending_containers: 0 };
        // 1.0 for 1 s, then 0.0 for 3 s: mean 0.25; the last sample only closes the span.
        let u = Utilization::of(&[at(0, 1.0), at(1000, 0.0), at(4000, 0.5)]);
        assert_eq!((u.mean_memory, u.max_memory, u.mean_vcores), (0.25, 1.0, 0.125));
        let run = RunResult {
            core_events: 1000,
            core_ms: 2.0,
            wall_ms: 500.0,
            task_events: 5000,
            lost_work_ms: 1500,
            fairness: vec![1.0, 0.5],
            jobs: vec![job(1, 0, 10, 3, 1000)],
            ..RunResult::default()
        };
        let s = Summary::of(&run, &Classes::None);
        let w = s.cost.wall.unwrap();
        assert_eq!((w.core_us_per_event, w.task_events_per_s), (2.0, 10_000.0));
        assert_eq!((s.preemptions.lost_work_s, s.preemptions.lost_work_frac), (1.5, 0.5));
        assert_eq!(s.fairness_mean, Some(0.75));
        assert!(s.by_class.is_empty());
        assert_eq!(s.without_wall_clock().cost.wall, None);
    }
}
