//! What the `sojourn` CLI writes after its runs: a terminal table, JSON and
//! CSV files, and a self-contained HTML report (`--report DIR`).
//!
//! Everything here is deterministic: the same runs give byte-identical files.
//! The only figures that change between identical runs are those measured on
//! the wall clock (scheduler cost); [`WriteOptions::wall_clock`] = false
//! leaves them out.
//!
//! Files, in `dir`:
//! - `summary.json`: the description, each run's [`Summary`] and the [`Comparison`];
//! - `summary.csv`: `metric,policy,value,ratio_to_<baseline>`, one line per metric and run;
//! - `jobs-<policy>.csv`: one line per finished job, by id;
//! - `queries-<policy>.csv`: for a workload with job DAGs, one line per
//!   finished query, by id ([`queries_csv`]);
//! - `index.html`: the report ([`write_html`]).

mod compare;
mod html;
mod paper;
mod svg;
mod table;

pub(crate) use compare::Metrics;
pub use compare::{compare, Better, Comparison, Row, Unit};
pub(crate) use html::{cdf_plot, page, per_job_plot, time_unit};
pub use html::{html, write_html};
pub use paper::{PaperPoints, PaperQuantity};
pub(crate) use svg::{Axis, Draw, Plot, Series};
pub use table::table;

use crate::metrics::Summary;
use crate::run::RunResult;
use serde::Serialize;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// Options shared by the writers.
#[derive(Clone, Debug, PartialEq)]
pub struct WriteOptions {
    /// Include wall-clock figures (scheduler cost in time). Off for
    /// byte-identical outputs, e.g. in determinism tests.
    pub wall_clock: bool,
    /// A paper's reported percentiles, drawn on the HTML report's CDFs.
    pub paper_points: Vec<PaperPoints>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions { wall_clock: true, paper_points: Vec::new() }
    }
}

/// What was run, shown at the top of the report and in `summary.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Description {
    pub title: String,
    /// (name, value) lines, in order.
    pub items: Vec<(String, String)>,
}

impl Description {
    /// Workload, cluster size, seeds, policies, classes and baseline of `runs`;
    /// the CLI adds its own lines (heartbeat, AM containers…) with [`Description::push`].
    pub fn of(runs: &[(RunResult, Summary)], baseline: &str) -> Description {
        let distinct = |f: &dyn Fn(&RunResult) -> String| {
            let mut v: Vec<String> = Vec::new();
            for (r, _) in runs {
                let x = f(r);
                if !v.contains(&x) {
                    v.push(x);
                }
            }
            v.join(", ")
        };
        let workload = distinct(&|r| r.workload.clone());
        let mut d = Description { title: format!("Sojourn: {workload}"), items: Vec::new() };
        d.push("workload", &workload);
        if let Some((r, _)) = runs.first() {
            d.push("jobs", &(r.jobs.len() as u64 + r.unfinished).to_string());
        }
        d.push("nodes", &distinct(&|r| r.nodes.to_string()));
        d.push("seed", &distinct(&|r| r.seed.to_string()));
        d.push("policies", &distinct(&|r| r.policy.clone()));
        d.push("baseline", baseline);
        if let Some((_, s)) = runs.first() {
            d.push("job classes", &s.classes.to_string());
        }
        d
    }

    pub fn push(&mut self, name: &str, value: &str) {
        self.items.push((name.to_string(), value.to_string()));
    }

    /// One line per item, `name: value`, under the title.
    pub fn to_text(&self) -> String {
        let mut s = format!("{}\n", self.title);
        let w = self.items.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
        for (k, v) in &self.items {
            let _ = writeln!(s, "  {k:<w$}  {v}");
        }
        s
    }
}

/// The comparison as written: without wall-clock rows unless asked for.
pub(crate) fn visible(cmp: &Comparison, opts: &WriteOptions) -> Comparison {
    let mut c = cmp.clone();
    c.rows.retain(|r| opts.wall_clock || !r.wall_clock);
    c
}

#[derive(Serialize)]
struct JsonOut<'a> {
    description: &'a Description,
    summaries: Vec<Summary>,
    comparison: Comparison,
}

/// Writes `dir/summary.json`: description, summaries, comparison.
pub fn write_json(
    dir: &Path,
    desc: &Description,
    runs: &[(RunResult, Summary)],
    cmp: &Comparison,
    opts: &WriteOptions,
) -> io::Result<PathBuf> {
    let summaries =
        runs.iter().map(|(_, s)| if opts.wall_clock { s.clone() } else { s.without_wall_clock() }).collect();
    let out = JsonOut { description: desc, summaries, comparison: visible(cmp, opts) };
    let mut text = serde_json::to_string_pretty(&out).map_err(io::Error::other)?;
    text.push('\n');
    write_file(dir, "summary.json", &text)
}

/// Writes `dir/summary.csv` and one `dir/jobs-<policy>.csv` per run; returns the paths.
pub fn write_csv(
    dir: &Path,
    runs: &[(RunResult, Summary)],
    cmp: &Comparison,
    opts: &WriteOptions,
) -> io::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    let c = visible(cmp, opts);
    let mut s = format!("metric,policy,value,{}\n", csv_field(&format!("ratio_to_{}", c.baseline)));
    for row in &c.rows {
        for (i, p) in c.policies.iter().enumerate() {
            let num = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
            let _ =
                writeln!(s, "{},{},{},{}", csv_field(&row.key), csv_field(p), num(row.values[i]), num(row.ratios[i]));
        }
    }
    paths.push(write_file(dir, "summary.csv", &s)?);
    for (name, (run, summary)) in file_names(runs).into_iter().zip(runs) {
        paths.push(write_file(dir, &format!("jobs-{name}.csv"), &jobs_csv(run, summary))?);
        if !run.queries.is_empty() {
            paths.push(write_file(dir, &format!("queries-{name}.csv"), &queries_csv(run))?);
        }
    }
    Ok(paths)
}

/// The comparison with one row per run: `<name>,<key>,<key>,…` (every row's key; empty
/// where undefined).
pub fn wide_csv(cmp: &Comparison, name: &str) -> String {
    let mut s = csv_field(name);
    for row in &cmp.rows {
        let _ = write!(s, ",{}", csv_field(&row.key));
    }
    s.push('\n');
    for (i, p) in cmp.policies.iter().enumerate() {
        s.push_str(&csv_field(p));
        for row in &cmp.rows {
            let _ = write!(s, ",{}", row.values[i].map_or(String::new(), |x| x.to_string()));
        }
        s.push('\n');
    }
    s
}

/// Per-job CSV of one run, sorted by job id.
pub fn jobs_csv(run: &RunResult, summary: &Summary) -> String {
    let mut jobs: Vec<_> = run.jobs.iter().collect();
    jobs.sort_by_key(|j| (j.id, j.submit));
    let secs = |ms: u64| format!("{}.{:03}", ms / 1000, ms % 1000);
    let mut s = String::from(
        "id,name,queue,submit_s,finish_s,response_s,slowdown,tasks,class,user,work_s,ideal_s,mean_task_s\n",
    );
    for j in jobs {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{:.4},{},{},{},{},{},{:.3}",
            j.id,
            csv_field(&j.name),
            csv_field(&j.queue),
            secs(j.submit.ms()),
            secs(j.finish.ms()),
            secs(j.response_ms()),
            j.slowdown(),
            j.tasks,
            csv_field(&summary.classes.label_of(j)),
            csv_field(&j.user),
            secs(j.work_ms),
            secs(j.ideal_ms),
            j.mean_task_ms / 1000.0,
        );
    }
    s
}

/// Per-query CSV of a run with job DAGs, by query id: each finished query's
/// submission (its first job's), finish (its last job's) and response time.
pub fn queries_csv(run: &RunResult) -> String {
    let secs = |ms: u64| format!("{}.{:03}", ms / 1000, ms % 1000);
    let mut s = String::from("query,first_job,jobs,submit_s,finish_s,response_s\n");
    for q in &run.queries {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{}",
            q.id,
            csv_field(&q.first_job),
            q.jobs,
            secs(q.submit.ms()),
            secs(q.finish.ms()),
            secs(q.response_ms())
        );
    }
    s
}

/// RFC 4180 quoting when needed.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A file-name-safe, distinct name per run (`[A-Za-z0-9._-]`).
pub(crate) fn file_names(runs: &[(RunResult, Summary)]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (_, s) in runs {
        let base: String = s
            .policy
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
            .collect();
        let mut name = base.clone();
        let mut k = 2;
        while names.contains(&name) {
            name = format!("{base}-{k}");
            k += 1;
        }
        names.push(name);
    }
    names
}

pub(crate) fn write_file(dir: &Path, name: &str, text: &str) -> io::Result<PathBuf> {
    let ctx = |p: &Path, e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", p.display()));
    std::fs::create_dir_all(dir).map_err(|e| ctx(dir, e))?;
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| ctx(&path, e))?;
    Ok(path)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::metrics::{summarize_all, Classes};
    use crate::run::{JobRecord, UtilSample};
    use sojourn_core::Time;

    /// Three policies on the same 40 jobs; `fair` is twice as fast, `hawk` has a slow tail.
    pub(crate) fn sample_runs() -> Vec<(RunResult, Summary)> {
        let make = |policy: &str, factor: f64, tail: u64| {
            let jobs = (0..40u64)
                .map(|i| {
                    let task_ms = if i % 4 == 0 { 200_000 } else { 2_000 + 500 * i };
                    let resp = ((task_ms as f64) * (1.0 + factor * (i % 7) as f64)) as u64 + tail * (i / 38);
                    JobRecord {
                        id: i,
                        name: format!("job,{i}"),
                        queue: if i % 2 == 0 { "a".into() } else { "b".into() },
                        user: "u".into(),
                        submit: Time(i * 10_000),
                        finish: Time(i * 10_000 + resp),
                        tasks: 1 + (i as u32 % 5) * 20,
                        work_ms: task_ms * (1 + (i % 5) * 20),
                        ideal_ms: task_ms,
                        mean_task_ms: task_ms as f64,
                    }
                })
                .collect();
            let utilization = (0..50u64)
                .map(|k| UtilSample {
                    t: Time(k * 60_000),
                    memory: ((k as f64 * factor).sin().abs() * 0.9).min(1.0),
                    vcores: 0.5,
                    running_jobs: 3,
                    pending_containers: 0,
                })
                .collect();
            RunResult {
                policy: policy.into(),
                workload: "synthetic <test>".into(),
                seed: 7,
                nodes: 10,
                jobs,
                utilization,
                fairness: vec![0.9, 0.8],
                core_events: 1234,
                task_events: 5000,
                core_ms: 12.5,
                wall_ms: 250.0,
                makespan: Time(3_000_000),
                ..RunResult::default()
            }
        };
        let runs = vec![make("fifo", 0.5, 0), make("fair", 0.25, 0), make("hawk", 0.3, 900_000)];
        summarize_all(runs, &Classes::Cutoff(90_000))
    }

    #[test]
    fn csv_files_have_one_row_per_job_and_metric() {
        let runs = sample_runs();
        let cmp = compare("fifo", &runs).unwrap();
        let dir = std::env::temp_dir().join(format!("sojourn-csv-test-{}", std::process::id()));
        let opts = WriteOptions { wall_clock: false, ..WriteOptions::default() };
        let paths = write_csv(&dir, &runs, &cmp, &opts).unwrap();
        assert_eq!(paths.len(), 4);
        let jobs = std::fs::read_to_string(dir.join("jobs-hawk.csv")).unwrap();
        assert_eq!(jobs.lines().count(), 1 + 40);
        assert!(jobs.lines().nth(1).unwrap().starts_with("0,\"job,0\",a,0.000,"));
        assert!(jobs.contains(",long,") && jobs.contains(",short,"));
        let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
        let rows = cmp.rows.iter().filter(|r| !r.wall_clock).count();
        assert_eq!(summary.lines().count(), 1 + 3 * rows);
        assert!(!summary.contains("wall_s"));
        assert!(summary.starts_with("metric,policy,value,ratio_to_fifo\n"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn outputs_are_deterministic_without_wall_clock() {
        let opts = WriteOptions { wall_clock: false, ..WriteOptions::default() };
        let write = |tag: &str, runs: &[(RunResult, Summary)]| {
            let dir = std::env::temp_dir().join(format!("sojourn-det-test-{}-{tag}", std::process::id()));
            let cmp = compare("fifo", runs).unwrap();
            let desc = Description::of(runs, "fifo");
            write_json(&dir, &desc, runs, &cmp, &opts).unwrap();
            write_csv(&dir, runs, &cmp, &opts).unwrap();
            write_html(&dir, &desc, runs, &cmp, &opts).unwrap();
            let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
            files.sort();
            let out: Vec<(PathBuf, Vec<u8>)> =
                files.iter().map(|p| (p.file_name().unwrap().into(), std::fs::read(p).unwrap())).collect();
            std::fs::remove_dir_all(&dir).unwrap();
            (out, table(&cmp, &opts))
        };
        let a = sample_runs();
        let mut b = sample_runs();
        for (r, s) in &mut b {
            // Another wall clock, the same simulation.
            r.wall_ms *= 3.0;
            *s = Summary::of(r, &s.classes);
        }
        assert_eq!(write("a", &a), write("b", &b));
        // With the wall clock, the figures are there.
        let dir = std::env::temp_dir().join(format!("sojourn-json-test-{}", std::process::id()));
        let cmp = compare("fifo", &a).unwrap();
        let p = write_json(&dir, &Description::of(&a, "fifo"), &a, &cmp, &WriteOptions::default()).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(text.contains("\"wall_ms\": 250.0") && text.contains("\"cost.wall_s\""));
        assert!(table(&cmp, &WriteOptions::default()).contains("wall time (s)"));
    }

    #[test]
    fn file_names_are_safe_and_distinct() {
        let mut runs = sample_runs();
        runs[0].1.policy = "fair/a b".into();
        runs[1].1.policy = "fair?a b".into();
        assert_eq!(file_names(&runs), ["fair_a_b", "fair_a_b-2", "hawk"]);
    }
}
