//! An [`SlsReport`]: SLS runs of one trace with their gauges, in `sojourn
//! compare`'s rows, text and page (`sojourn sls-compare`). Containers
//! allocated come from the trace's task count ([`CONTAINERS_NOTE`]).

use std::path::PathBuf;

use super::jobs::{read_sls_runs, SlsComparison};
use super::runs::SlsJob;
use super::series::{read_sls_series, SlsSeries};
use crate::engine::SimError;
use crate::metrics::Utilization;
use crate::report::{
    self, cdf_plot, time_unit, Axis, Better, Comparison, Description, Draw, Metrics, Plot, Series, Unit, WriteOptions,
};

/// Jobs and tasks of the trace the runs replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceCounts {
    pub jobs: usize,
    pub tasks: usize,
}

/// Counts the jobs and tasks of an SLS or Rumen trace (any spec `sojourn simulate --workload` takes).
pub fn trace_counts(spec: &str) -> Result<TraceCounts, SimError> {
    let mut c = TraceCounts { jobs: 0, tasks: 0 };
    for job in crate::workload::open(spec)? {
        c.jobs += 1;
        c.tasks += job?.task_count();
    }
    Ok(c)
}

/// How containers per second are defined, as the reports say it.
pub const CONTAINERS_NOTE: &str = "containers allocated = the trace's tasks + one AM per job, counted only when \
    every job of the trace finished (SLS runs each task in one container and writes no container count of its \
    own; the CapacityScheduler's commit counter agrees); containers/s = that over the makespan, first \
    submission to last finish. allocate calls/s counts the AMs' allocate() heartbeats, not containers.";

/// `text`'s words in lines of at most `width` characters (a longer word stands alone).
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split_whitespace() {
        let n = word.chars().count();
        if line > 0 && line + 1 + n > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += n;
    }
    out
}

/// SLS runs of one trace with their gauges, reported like `sojourn compare`.
#[derive(Clone, Debug, PartialEq)]
pub struct SlsReport {
    pub comparison: SlsComparison,
    /// One per run, in run order.
    pub series: Vec<SlsSeries>,
    /// The trace (name, counts), when given.
    pub trace: Option<(String, TraceCounts)>,
}

impl SlsReport {
    /// Reads each `(name, SLS output dir)` run, and counts `trace`'s jobs and tasks when given.
    pub fn read(dirs: &[(String, PathBuf)], trace: Option<&str>) -> Result<SlsReport, SimError> {
        let comparison = read_sls_runs(dirs)?;
        let series = dirs.iter().map(|(_, d)| read_sls_series(d)).collect::<Result<Vec<_>, _>>()?;
        let trace = trace.map(|t| Ok::<_, SimError>((t.to_string(), trace_counts(t)?))).transpose()?;
        Ok(SlsReport { comparison, series, trace })
    }

    /// Containers the scheduler allocated in run `i` ([`CONTAINERS_NOTE`]); None without the
    /// trace or when some of its jobs did not finish.
    pub fn containers(&self, i: usize) -> Option<u64> {
        let (_, t) = self.trace.as_ref()?;
        let run = self.comparison.runs.get(i)?;
        (run.jobs.len() == t.jobs).then_some((t.tasks + t.jobs) as u64)
    }

    /// Run `i`'s gauges from its first submission to its last finish.
    fn window(&self, i: usize) -> SlsSeries {
        let (Some(run), Some(series)) = (self.comparison.runs.get(i), self.series.get(i)) else {
            return SlsSeries::default();
        };
        let start = run.jobs.iter().map(|j| j.start_ms).min().unwrap_or(0);
        let end = run.jobs.iter().map(|j| j.end_ms).max().unwrap_or(0);
        series.window((start as f64 / 1000.0).floor(), (end as f64 / 1000.0).ceil())
    }

    /// The metrics SLS supports, in `sojourn compare`'s rows (no slowdown: SLS does not know
    /// a job's run time on an empty cluster).
    fn metrics(&self, i: usize) -> Metrics {
        use Better::*;
        use Unit::*;
        let mut m = Metrics::default();
        let Some(run) = self.comparison.runs.get(i) else { return m };
        let makespan = run.makespan_s();
        m.add("jobs", "finished", "finished", Count, Higher, true, Some(run.jobs.len() as f64));
        m.add("jobs", "makespan_s", "makespan (s)", Number, Lower, true, makespan);
        m.dist("all jobs", "all", "response_s", "response", " (s)", run.response().as_ref());
        let w = self.window(i);
        let util = (!w.utilization.is_empty()).then(|| Utilization::of(&w.utilization));
        m.utilization(util.as_ref());
        let running: Vec<f64> = w.running_containers.iter().map(|p| p.1).collect();
        let mean = (!running.is_empty()).then(|| running.iter().sum::<f64>() / running.len() as f64);
        let max = running.iter().copied().reduce(f64::max);
        let cl = "cluster";
        m.add(cl, "containers.running.mean", "running containers, mean", Number, Higher, true, mean);
        m.add(cl, "containers.running.max", "running containers, max", Count, Higher, false, max);
        let sc = "scheduler";
        let containers = self.containers(i).map(|c| c as f64);
        let per_s = containers.zip(makespan).and_then(|(c, s)| (s > 0.0).then(|| c / s));
        m.add(sc, "containers.allocated", "containers allocated", Count, Neither, true, containers);
        m.add(sc, "containers.per_s", "containers / s", Number, Higher, true, per_s);
        m.add(sc, "allocate_calls.per_s", "allocate calls / s", Number, Neither, true, run.allocate_calls_per_s);
        m.add(sc, "handle.p99_ms", "handle p99 (ms)", Number, Lower, true, run.handle_p99_ms);
        m
    }

    /// Every run's metrics against the run named `baseline`.
    pub fn compare(&self, baseline: &str) -> Result<Comparison, SimError> {
        let names = self.comparison.runs.iter().map(|r| r.name.clone()).collect();
        let lists = (0..self.comparison.runs.len()).map(|i| self.metrics(i)).collect();
        Comparison::of_metrics(baseline, names, lists)
    }

    /// What was compared, for the top of the text and the page.
    pub fn description(&self, baseline: &str) -> Description {
        let names: Vec<&str> = self.comparison.runs.iter().map(|r| r.name.as_str()).collect();
        let title = match &self.trace {
            Some((t, _)) => format!("SLS: {}", t.rsplit('/').next().unwrap_or(t)),
            None => format!("SLS: {}", names.join(", ")),
        };
        let mut d = Description { title, items: Vec::new() };
        if let Some((t, c)) = &self.trace {
            d.push("trace", &format!("{t} ({} jobs, {} tasks)", c.jobs, c.tasks));
        }
        d.push("schedulers", &names.join(", "));
        d.push("baseline", baseline);
        d.push("time", "wall clock (SLS runs the real ResourceManager)");
        d
    }

    /// The notes under the tables: definitions and what was dropped.
    pub fn notes(&self) -> String {
        let mut s = format!(
            "Response time is simulate_end − simulate_start of jobruntime.csv (wall clock); percentiles are \
             nearest-rank. Utilization and running containers are SLS's per-second samples from the first \
             submission to the last finish. {CONTAINERS_NOTE} handle p99 is over SLS's last window of 100 events."
        );
        if self.trace.is_none() {
            s.push_str(" No --trace given, so no container counts.");
        }
        if let Some(note) = self.comparison.duplicates_note() {
            s.push(' ');
            s.push_str(&note);
        }
        s
    }

    /// The text `sojourn sls-compare` prints: description, the comparison table, the per-job table, notes.
    pub fn text(&self, baseline: &str) -> Result<String, SimError> {
        let cmp = self.compare(baseline)?;
        Ok(format!(
            "{}\n{}\nResponse time per job (s):\n\n{}\n{}\n",
            self.description(baseline).to_text(),
            report::table(&cmp, &WriteOptions::default()),
            self.comparison.jobs_markdown(),
            wrap(&self.notes(), 100)
        ))
    }

    /// The report page: the summary table, a CDF of response time, response time per job and
    /// running containers over time.
    pub fn html(&self, baseline: &str) -> Result<String, SimError> {
        let cmp = self.compare(baseline)?;
        let runs = &self.comparison.runs;
        let mut body = String::from("<h2>Response time</h2>\n<div class=\"plots\">\n");
        let responses = runs.iter().map(|r| (r.name.clone(), r.jobs.iter().map(SlsJob::response_s).collect()));
        body.push_str(
            &cdf_plot("CDF of response time".into(), "response time (s, log scale)", responses.collect()).render(),
        );
        body.push_str(&self.per_job_plot().render());
        body.push_str("</div>\n");
        if self.series.iter().any(|s| !s.running_containers.is_empty()) {
            body.push_str("<h2>Running containers over time</h2>\n<div class=\"plots\">\n");
            body.push_str(&self.running_plot().render());
            body.push_str("</div>\n");
        }
        Ok(report::page(&self.description(baseline), &cmp, &self.notes(), &body))
    }

    /// Response time per job, one colour per scheduler.
    fn per_job_plot(&self) -> Plot {
        let keys = self.comparison.job_keys();
        let runs = self
            .comparison
            .runs
            .iter()
            .map(|r| {
                let times = keys.iter().map(|(key, _)| Some(r.jobs.iter().find(|j| j.key == *key)?.response_s()));
                (r.name.clone(), times.collect())
            })
            .collect();
        report::per_job_plot("job (application order)", runs)
    }

    /// Running containers from each run's first submission.
    fn running_plot(&self) -> Plot {
        let mut series = Vec::new();
        let (mut t_max, mut y_max): (f64, f64) = (0.0, 0.0);
        for (i, r) in self.comparison.runs.iter().enumerate() {
            let start = r.jobs.iter().map(|j| j.start_ms).min().unwrap_or(0) as f64;
            let points: Vec<(f64, f64)> =
                self.window(i).running_containers.iter().map(|&(t, v)| ((t * 1000.0 - start).max(0.0), v)).collect();
            for &(t, v) in &points {
                (t_max, y_max) = (t_max.max(t), y_max.max(v));
            }
            series.push((r.name.clone(), points));
        }
        let (unit, per) = time_unit(t_max);
        let series = series
            .into_iter()
            .map(|(name, pts)| Series { name, points: pts.into_iter().map(|(t, v)| (t / per, v)).collect() })
            .collect();
        Plot {
            title: "Running containers".into(),
            class: "running",
            x: Axis::linear(&format!("time since the first submission ({unit})"), 0.0, t_max / per),
            y: Axis::linear("running containers", 0.0, (y_max * 1.05).max(1.0)),
            draw: Draw::Line,
            series,
            marks: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::runs::{parse_jobruntime, SlsRun};
    use super::super::JOBRUNTIME;
    use super::*;

    /// The jobs of [`JOBRUNTIME`] (9 tasks in all, as integration/sls/tiny-trace.json) with
    /// the gauges above.
    fn report(trace: Option<TraceCounts>) -> SlsReport {
        let (jobs, duplicate_rows) = parse_jobruntime(JOBRUNTIME).unwrap();
        let base = 1795465150; // the first submission's second
        let running: Vec<(f64, f64)> =
            [0.0, 2.0, 8.0, 6.0].iter().enumerate().map(|(i, &v)| ((base + i) as f64, v)).collect();
        let run = SlsRun {
            name: "a".into(),
            jobs,
            duplicate_rows,
            allocate_calls_per_s: Some(1.5),
            handle_p99_ms: Some(2.0),
        };
        let mut b = run.clone();
        b.name = "b".into();
        b.jobs.pop();
        SlsReport {
            comparison: SlsComparison { runs: vec![run, b] },
            series: vec![SlsSeries { running_containers: running, utilization: Vec::new() }, SlsSeries::default()],
            trace: trace.map(|t| ("tiny-trace.json".to_string(), t)),
        }
    }

    #[test]
    fn containers_count_only_complete_runs() {
        let tiny = TraceCounts { jobs: 3, tasks: 9 };
        let r = report(Some(tiny));
        // 9 tasks + 3 AMs; run b lost a job, so its count is unknown.
        assert_eq!((r.containers(0), r.containers(1)), (Some(12), None));
        assert_eq!(report(None).containers(0), None);
        let c = r.compare("a").unwrap();
        let v = |key: &str| c.row(key).unwrap().values.clone();
        // Makespan of a: 1795465150082 → 1795465171084, 21.002 s.
        assert_eq!(v("makespan_s"), [Some(21.002), Some(10.002)]);
        assert_eq!(v("containers.per_s"), [Some(12.0 / 21.002), None]);
        assert_eq!(v("allocate_calls.per_s"), [Some(1.5), Some(1.5)]);
        // Responses 10.002, 7.012, 18.998 (b: the first two).
        assert_eq!(v("all.response_s.p50"), [Some(10.002), Some(7.012)]);
        assert_eq!(v("all.response_s.max"), [Some(18.998), Some(10.002)]);
        // Running containers 0, 2, 8, 6 over the run: mean 4, max 8; b has no samples.
        assert_eq!(v("containers.running.mean"), [Some(4.0), None]);
        assert_eq!(v("containers.running.max"), [Some(8.0), None]);
        assert_eq!(v("util.memory.mean"), [None, None]);
        // No slowdown: SLS does not know a job's run time on an empty cluster.
        assert!(c.rows.iter().all(|row| !row.key.contains("slowdown")));
        assert!(r.compare("zzz").unwrap_err().to_string().contains("'zzz'"));
    }

    #[test]
    fn text_and_page() {
        let r = report(Some(TraceCounts { jobs: 3, tasks: 9 }));
        let t = r.text("a").unwrap();
        assert!(t.starts_with("SLS: tiny-trace.json\n"), "{t}");
        assert!(
            t.contains("vs a") && t.contains("containers / s") && t.contains("| app_0003 | 2.000 | 18.998 | — |"),
            "{t}"
        );
        assert!(t.lines().all(|l| l.chars().count() <= 100), "{t}");
        let h = r.html("a").unwrap();
        assert_eq!(h.matches("<svg ").count(), 3);
        assert!(
            h.contains("class=\"plot cdf\"")
                && h.contains("class=\"plot jobs\"")
                && h.contains("class=\"plot running\"")
        );
        // Per job: a has three dots, b two.
        assert!(h.contains("<title>a</title>") && h.matches("h0").count() == 5, "{h}");
        // Without gauges, no running-container plot.
        let mut r = r;
        r.series = vec![SlsSeries::default(); 2];
        assert_eq!(r.html("b").unwrap().matches("<svg ").count(), 2);
    }

    #[test]
    fn trace_counts_read_sls_json() {
        let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/../../integration/sls/tiny-trace.json");
        assert_eq!(trace_counts(trace).unwrap(), TraceCounts { jobs: 3, tasks: 9 });
        assert!(trace_counts("/nonexistent/trace.json").is_err());
    }

    #[test]
    fn notes_wrap() {
        assert_eq!(wrap("aa bb cc", 5), "aa bb\ncc");
        assert_eq!(wrap("aaaaaaa b", 3), "aaaaaaa\nb");
    }
}
