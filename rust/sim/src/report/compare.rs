//! Side-by-side comparison of runs: every metric of their [`Summary`]s, each
//! run's value and its ratio to a baseline run. The table, the summary CSV,
//! the JSON and the HTML page all show these rows.

use crate::engine::SimError;
use crate::metrics::{Dist, JobFigures, Summary, Utilization};
use crate::run::RunResult;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a metric's value is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// A whole number.
    Count,
    /// A plain number (seconds, slowdown, µs…; the label names the unit).
    Number,
    /// A fraction shown as a percentage.
    Percent,
}

/// Which direction is an improvement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Lower,
    Higher,
    Neither,
}

/// One metric across the compared runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Stable identifier, e.g. `all.response_s.p99`, `class[long].slowdown.mean`.
    pub key: String,
    /// Group heading ("all jobs", a class label, "cluster", "scheduler cost").
    pub section: String,
    /// Human label, with its unit.
    pub label: String,
    pub unit: Unit,
    pub better: Better,
    /// Shown in the terminal and HTML tables (files have every row).
    pub in_table: bool,
    /// Measured on the wall clock (differs between identical runs).
    pub wall_clock: bool,
    /// One per run, in run order; `None` when undefined (no jobs, no samples).
    pub values: Vec<Option<f64>>,
    /// Value over the baseline's; `None` when undefined (baseline 0 and value not 0).
    pub ratios: Vec<Option<f64>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub baseline: String,
    /// Run names (`RunResult::policy`), in run order.
    pub policies: Vec<String>,
    pub rows: Vec<Row>,
}

impl Comparison {
    pub fn baseline_index(&self) -> usize {
        self.policies.iter().position(|p| *p == self.baseline).unwrap_or(0)
    }
    pub fn row(&self, key: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.key == key)
    }
}

/// Compares `runs` against the run whose policy is `baseline`. Policy names
/// must be distinct and all summaries must use the same classes.
pub fn compare(baseline: &str, runs: &[(RunResult, Summary)]) -> Result<Comparison, SimError> {
    let policies: Vec<String> = runs.iter().map(|(_, s)| s.policy.clone()).collect();
    let Some(b) = policies.iter().position(|p| p == baseline) else {
        return Err(baseline_missing(baseline, &policies));
    };
    if let Some((_, s)) = runs.iter().find(|(_, s)| s.classes != runs[b].1.classes) {
        return Err(SimError::Config(format!(
            "runs '{}' and '{baseline}' split jobs into different classes ({} vs {})",
            s.policy, s.classes, runs[b].1.classes
        )));
    }
    // The policies' own figures: one row per name any run published (a
    // policy without it has no value there).
    let mut names: Vec<&String> = runs.iter().flat_map(|(_, s)| s.policy_figures.keys()).collect();
    names.sort();
    names.dedup();
    // Queries' rows only for workloads with job DAGs, so that other runs'
    // outputs stay as they were.
    let with_queries = runs.iter().any(|(r, _)| !r.queries.is_empty() || r.unfinished_queries > 0);
    let lists = runs
        .iter()
        .map(|(r, s)| {
            let mut m = metrics_of(s);
            if with_queries {
                m.queries(r);
            }
            m.policy_figures(&names, &s.policy_figures);
            m
        })
        .collect();
    Comparison::of_metrics(baseline, policies, lists)
}

fn baseline_missing(baseline: &str, policies: &[String]) -> SimError {
    SimError::Config(format!("baseline policy '{baseline}' is not among the runs ({})", policies.join(", ")))
}

impl Comparison {
    /// The rows of runs named `policies` (distinct, `baseline` among them),
    /// each described by its [`Metrics`]: the same keys in the same order.
    pub(crate) fn of_metrics(
        baseline: &str,
        policies: Vec<String>,
        lists: Vec<Metrics>,
    ) -> Result<Comparison, SimError> {
        let Some(b) = policies.iter().position(|p| p == baseline) else {
            return Err(baseline_missing(baseline, &policies));
        };
        for (i, p) in policies.iter().enumerate() {
            if policies[..i].contains(p) {
                return Err(SimError::Config(format!("two runs are named '{p}'; give each run a distinct name")));
            }
        }
        let first = lists.first().map_or(&[][..], |l| &l.0[..]);
        if let Some(l) = lists.iter().find(|l| l.0.len() != first.len()) {
            return Err(SimError::Config(format!("runs have {} and {} metrics", first.len(), l.0.len())));
        }
        let rows = first
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let values: Vec<Option<f64>> = lists.iter().map(|l| l.0[i].value).collect();
                let ratios = values.iter().map(|&v| ratio(v, values[b])).collect();
                Row {
                    key: m.key.clone(),
                    section: m.section.clone(),
                    label: m.label.clone(),
                    unit: m.unit,
                    better: m.better,
                    in_table: m.in_table,
                    wall_clock: m.wall_clock,
                    values,
                    ratios,
                }
            })
            .collect();
        Ok(Comparison { baseline: baseline.to_string(), policies, rows })
    }
}

fn ratio(v: Option<f64>, base: Option<f64>) -> Option<f64> {
    let (v, b) = (v?, base?);
    if b == 0.0 {
        (v == 0.0).then_some(1.0)
    } else {
        Some(v / b)
    }
}

/// A statistic of a distribution: name, getter, shown in tables.
type Stat = (&'static str, fn(&Dist) -> f64, bool);

pub(crate) struct Metric {
    key: String,
    section: String,
    label: String,
    unit: Unit,
    better: Better,
    in_table: bool,
    wall_clock: bool,
    value: Option<f64>,
}

/// The metrics of one run, in display order: what [`Comparison::of_metrics`] turns into rows.
#[derive(Default)]
pub(crate) struct Metrics(Vec<Metric>);

impl Metrics {
    /// One metric; `table`: shown in the terminal and HTML tables.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add(
        &mut self,
        section: &str,
        key: impl Into<String>,
        label: &str,
        unit: Unit,
        better: Better,
        table: bool,
        value: Option<f64>,
    ) {
        let key = key.into();
        self.0.push(Metric {
            wall_clock: WALL_CLOCK_KEYS.contains(&key.as_str()),
            key,
            section: section.to_string(),
            label: label.to_string(),
            unit,
            better,
            in_table: table,
            value,
        });
    }

    /// Mean, p50, p90, p99 (in tables) and max (files only) of `d`, lower is
    /// better: keys `{prefix}.{name}.{stat}`, labels `{label} {stat}{unit}`.
    pub(crate) fn dist(&mut self, section: &str, prefix: &str, name: &str, label: &str, unit: &str, d: Option<&Dist>) {
        let stats: [Stat; 5] = [
            ("mean", |d| d.mean, true),
            ("p50", |d| d.p50, true),
            ("p90", |d| d.p90, true),
            ("p99", |d| d.p99, true),
            ("max", |d| d.max, false),
        ];
        for (stat, get, table) in stats {
            let key = format!("{prefix}.{name}.{stat}");
            self.add(section, key, &format!("{label} {stat}{unit}"), Unit::Number, Better::Lower, table, d.map(get));
        }
    }
}

/// The metrics of one summary, in display order. Same classes → same rows.
fn metrics_of(s: &Summary) -> Metrics {
    let mut m = Metrics::default();
    use Better::*;
    use Unit::*;
    m.add("jobs", "finished", "finished", Count, Higher, true, Some(s.finished as f64));
    m.add("jobs", "unfinished", "unfinished", Count, Lower, true, Some(s.unfinished as f64));
    m.add("jobs", "makespan_s", "makespan (s)", Number, Lower, true, Some(s.makespan_s));
    let mut figures = |sec: &str, prefix: &str, f: &JobFigures, with_jobs: bool| {
        if with_jobs {
            m.add(sec, format!("{prefix}.jobs"), "jobs", Count, Neither, true, Some(f.jobs as f64));
        }
        m.dist(sec, prefix, "response_s", "response", " (s)", f.response_s.as_ref());
        m.dist(sec, prefix, "slowdown", "slowdown", "", f.slowdown.as_ref());
        // the Pigeon paper's percentile slowdown (pigeon.md §3.4)
        let ps = f.slowdown_of_percentiles;
        for (stat, v) in [("p50", ps.map(|p| p.p50)), ("p90", ps.map(|p| p.p90)), ("p99", ps.map(|p| p.p99))] {
            let key = format!("{prefix}.pct_slowdown.{stat}");
            m.add(sec, key, &format!("{stat} response / {stat} ideal"), Number, Lower, true, v);
        }
    };
    figures("all jobs", "all", &s.all, false);
    for c in &s.by_class {
        figures(&format!("class {}", c.label), &format!("class[{}]", c.label), &c.figures, true);
    }
    let u = &s.utilization;
    let p = &s.preemptions;
    let cl = "cluster";
    m.utilization(Some(u));
    m.add(cl, "fairness.mean", "fairness (Jain), mean", Number, Higher, true, s.fairness_mean);
    m.add(cl, "preempt.kill", "preemptions, kill", Count, Lower, true, Some(p.kill as f64));
    m.add(cl, "preempt.suspend", "preemptions, suspend", Count, Lower, true, Some(p.suspend as f64));
    m.add(cl, "lost_work_s", "lost work (s)", Number, Lower, true, Some(p.lost_work_s));
    m.add(cl, "lost_work_frac", "lost work / work", Percent, Lower, false, Some(p.lost_work_frac));
    let c = &s.cost;
    let w = c.wall;
    let sc = "scheduler cost";
    m.add(sc, "cost.core_events", "core events", Count, Lower, true, Some(c.core_events as f64));
    m.add(sc, "cost.task_events", "task events", Count, Neither, false, Some(c.task_events as f64));
    m.add(sc, "cost.core_us_per_event", "core µs / event", Number, Lower, true, w.map(|w| w.core_us_per_event));
    m.add(sc, "cost.core_ms", "core time (ms)", Number, Lower, true, w.map(|w| w.core_ms));
    m.add(sc, "cost.wall_s", "wall time (s)", Number, Lower, true, w.map(|w| w.wall_ms / 1000.0));
    m.add(sc, "cost.task_events_per_s", "task events / s", Number, Higher, true, w.map(|w| w.task_events_per_s));
    m
}

impl Metrics {
    /// The policy's own figures (`names`: the union over the compared runs),
    /// in the "policy" section. Counters and a distribution's mean, p50 and
    /// p99 are shown in tables; its count, p90 and max are in the files.
    pub(crate) fn policy_figures(&mut self, names: &[&String], figures: &BTreeMap<String, f64>) {
        for name in names {
            let in_table = !(name.ends_with(".count") || name.ends_with(".p90") || name.ends_with(".max"));
            let value = figures.get(*name).copied();
            let unit = if !name.contains('.') || name.ends_with(".count") { Unit::Count } else { Unit::Number };
            self.add("policy", format!("policy.{name}"), name, unit, Better::Neither, in_table, value);
        }
    }

    /// Finished and unfinished queries and the distribution of their
    /// response times (first job's submission to last job's finish), in the
    /// "queries" section.
    pub(crate) fn queries(&mut self, run: &RunResult) {
        use Better::*;
        let sec = "queries";
        let n = Some(run.queries.len() as f64);
        self.add(sec, "query.finished", "queries finished", Unit::Count, Higher, true, n);
        let left = Some(run.unfinished_queries as f64);
        self.add(sec, "query.unfinished", "queries unfinished", Unit::Count, Lower, true, left);
        let responses = Dist::of(run.queries.iter().map(|q| q.response_ms() as f64 / 1000.0).collect());
        self.dist(sec, "query", "response_s", "query response", " (s)", responses.as_ref());
    }

    /// Mean and max memory and vcores used, in the "cluster" section (undefined without samples).
    pub(crate) fn utilization(&mut self, u: Option<&Utilization>) {
        use Better::Higher;
        use Unit::Percent;
        let cl = "cluster";
        self.add(cl, "util.memory.mean", "memory used, mean", Percent, Higher, true, u.map(|u| u.mean_memory));
        self.add(cl, "util.memory.max", "memory used, max", Percent, Higher, false, u.map(|u| u.max_memory));
        self.add(cl, "util.vcores.mean", "vcores used, mean", Percent, Higher, true, u.map(|u| u.mean_vcores));
        self.add(cl, "util.vcores.max", "vcores used, max", Percent, Higher, false, u.map(|u| u.max_vcores));
    }
}

const WALL_CLOCK_KEYS: [&str; 4] = ["cost.core_us_per_event", "cost.core_ms", "cost.wall_s", "cost.task_events_per_s"];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Classes, Summary};
    use sojourn_core::Time;

    pub(crate) fn run(policy: &str, responses_s: &[u64]) -> RunResult {
        let jobs = responses_s
            .iter()
            .enumerate()
            .map(|(i, &r)| crate::run::JobRecord {
                id: i as u64,
                name: format!("j{i}"),
                queue: "q".into(),
                user: "u".into(),
                submit: Time(0),
                finish: Time(r * 1000),
                tasks: 1 + i as u32,
                work_ms: 1000 * (1 + i as u64),
                ideal_ms: 1000,
                mean_task_ms: 1000.0 * (1 + i) as f64,
            })
            .collect();
        RunResult { policy: policy.into(), workload: "w".into(), jobs, core_events: 100, ..RunResult::default() }
    }

    fn pairs(runs: Vec<RunResult>) -> Vec<(RunResult, Summary)> {
        crate::metrics::summarize_all(runs, &Classes::Cutoff(1500))
    }

    #[test]
    fn ratios_to_the_baseline() {
        let runs = pairs(vec![run("fifo", &[10, 20, 30]), run("fair", &[5, 10, 15]), run("hawk", &[20, 40, 60])]);
        let c = compare("fifo", &runs).unwrap();
        assert_eq!(c.policies, ["fifo", "fair", "hawk"]);
        let mean = c.row("all.response_s.mean").unwrap();
        assert_eq!(mean.values, [Some(20.0), Some(10.0), Some(40.0)]);
        assert_eq!(mean.ratios, [Some(1.0), Some(0.5), Some(2.0)]);
        let short = c.row("class[short].response_s.p50").unwrap();
        assert_eq!(short.ratios, [Some(1.0), Some(0.5), Some(2.0)]);
        // Zero over zero is "the same"; anything over zero is undefined.
        assert_eq!(c.row("preempt.kill").unwrap().ratios, [Some(1.0); 3]);
        assert_eq!(ratio(Some(3.0), Some(0.0)), None);
        // Against another baseline.
        let c = compare("fair", &runs).unwrap();
        assert_eq!(c.row("all.slowdown.max").unwrap().ratios, [Some(2.0), Some(1.0), Some(4.0)]);
        assert!(c.rows.iter().all(|r| r.values.len() == 3 && r.ratios.len() == 3));
    }

    #[test]
    fn bad_comparisons_are_errors() {
        let runs = pairs(vec![run("fifo", &[1]), run("fifo", &[2])]);
        assert!(compare("fifo", &runs).unwrap_err().to_string().contains("distinct"));
        assert!(compare("drf", &runs).unwrap_err().to_string().contains("'drf'"));
        let mut runs = pairs(vec![run("fifo", &[1]), run("fair", &[2])]);
        runs[1].1 = Summary::of(&runs[1].0, &Classes::None);
        assert!(compare("fifo", &runs).unwrap_err().to_string().contains("classes"));
    }
}
