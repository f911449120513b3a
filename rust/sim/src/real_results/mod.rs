//! Comparing runs of one trace on a real YARN cluster (issue #19): GridMix replays of a Rumen
//! trace under Sojourn, the CapacityScheduler and the FairScheduler, read from the `jobs.csv`
//! each run writes (integration/gridmix/compare.sh, `org.sojourn.yarn.gridmix.GridmixRunner`)
//! and reported in `sojourn compare`'s table, CSV and page (`sojourn real-compare`).
//!
//! `jobs.csv` has one row per application the ResourceManager knew at the end of the run,
//! from its application reports; columns are found by name, so more may be added:
//!
//! `app_id,name,queue,user,state,final_status,submit_ms,launch_ms,finish_ms,response_ms`
//!
//! `submit_ms` is the report's start time (the RM accepted the submission), `launch_ms` when
//! the AM container was launched (0: never), `finish_ms` when the application finished
//! (0: never), all epoch ms. A job's response time is `finish_ms − submit_ms`; its wait is
//! `launch_ms − submit_ms`, the time the scheduler kept its AM waiting. Only jobs whose
//! `final_status` is SUCCEEDED count in the response-time figures; the others are counted
//! as failed.
//!
//! Jobs are matched across runs by name when every name in a run is distinct (GridMix names
//! its jobs after their place in the trace), else by the application's sequence number.
//! Percentiles are nearest-rank ([`crate::metrics::Dist`]).
//!
//! A run of job DAGs (PigMix's queries, integration/gridmix/pigmix-compare.sh) also has a
//! `queries.csv` ([`queries`]); when any run has one, the comparison gets a "queries"
//! section (queries finished, query response mean/p50/p90/p99/max) and the text a table of
//! response time per query. Without it the output is what it was.

pub mod queries;

use std::fmt::Write as _;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::engine::SimError;
use crate::metrics::Dist;
use crate::report::{self, cdf_plot, Better, Comparison, Description, Metrics, Plot, Unit};
use crate::workload::text::Lines;
use queries::RealQuery;

/// One application of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RealJob {
    /// The same trace job in every run: its name, or `app_NNNN` ([`RealRun::keys_by_name`]).
    pub key: String,
    pub app_id: String,
    pub name: String,
    pub final_status: String,
    /// Epoch ms; `launch_ms`/`finish_ms` are None when the RM reported 0 (never happened).
    pub submit_ms: i64,
    pub launch_ms: Option<i64>,
    pub finish_ms: Option<i64>,
}

impl RealJob {
    pub fn succeeded(&self) -> bool {
        self.final_status == "SUCCEEDED" && self.finish_ms.is_some()
    }

    /// Submission to finish (s), for a job that succeeded.
    pub fn response_s(&self) -> Option<f64> {
        let f = self.finish_ms.filter(|_| self.succeeded())?;
        Some((f - self.submit_ms) as f64 / 1000.0)
    }

    /// Submission to the AM's launch (s).
    pub fn wait_s(&self) -> Option<f64> {
        self.launch_ms.map(|l| (l - self.submit_ms) as f64 / 1000.0)
    }
}

/// One run: a scheduler's name and its jobs in application order.
#[derive(Clone, Debug, PartialEq)]
pub struct RealRun {
    pub name: String,
    pub jobs: Vec<RealJob>,
    /// The run's queries.csv, when it has one (a run of job DAGs).
    pub queries: Option<Vec<RealQuery>>,
}

impl RealRun {
    pub fn succeeded(&self) -> impl Iterator<Item = &RealJob> {
        self.jobs.iter().filter(|j| j.succeeded())
    }

    pub fn response(&self) -> Option<Dist> {
        Dist::of(self.jobs.iter().filter_map(RealJob::response_s).collect())
    }

    pub fn wait(&self) -> Option<Dist> {
        Dist::of(self.jobs.iter().filter_map(RealJob::wait_s).collect())
    }

    /// First submission to last finish of the jobs that succeeded (s).
    pub fn makespan_s(&self) -> Option<f64> {
        let start = self.jobs.iter().map(|j| j.submit_ms).min()?;
        let end = self.succeeded().filter_map(|j| j.finish_ms).max()?;
        Some((end - start) as f64 / 1000.0)
    }
}

/// The key of an application ID: `application_…_0003` → `app_0003`.
fn app_key(app_id: &str) -> String {
    format!("app_{}", app_id.rsplit('_').next().unwrap_or(app_id))
}

/// Parses a run's `jobs.csv` (`file` names it in errors): jobs in application order.
pub fn parse_jobs_csv(text: &str, file: &str) -> Result<Vec<RealJob>, SimError> {
    jobs_csv(Lines::of_str(text, file))
}

fn jobs_csv<R: BufRead>(mut lines: Lines<R>) -> Result<Vec<RealJob>, SimError> {
    let ([c_id, c_name, c_status, c_submit, c_launch, c_finish], cols) =
        lines.columns(["app_id", "name", "final_status", "submit_ms", "launch_ms", "finish_ms"])?;
    let mut jobs = Vec::new();
    while let Some(row) = lines.next() {
        let (n, line) = row?;
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let field = |c: usize| f.get(c).copied().ok_or_else(|| lines.error(n, format!("too few fields: '{line}'")));
        let num = |c: usize| {
            let s = field(c)?;
            s.parse::<i64>().map_err(|e| lines.error(n, format!("'{s}' in column {}: {e}", cols[c])))
        };
        // The RM reports 0 for what never happened.
        let when = |c: usize| num(c).map(|v| (v > 0).then_some(v));
        let app_id = field(c_id)?.to_string();
        if app_id.is_empty() {
            return Err(lines.error(n, "empty app_id").into());
        }
        let submit_ms = num(c_submit)?;
        let (launch_ms, finish_ms) = (when(c_launch)?, when(c_finish)?);
        if finish_ms.is_some_and(|f| f < submit_ms) {
            return Err(lines.error(n, format!("{app_id} finished before it was submitted")).into());
        }
        jobs.push(RealJob {
            key: app_key(&app_id),
            app_id,
            name: field(c_name)?.to_string(),
            final_status: field(c_status)?.to_string(),
            submit_ms,
            launch_ms,
            finish_ms,
        });
    }
    // Application order: YARN pads sequence numbers to four digits and no further.
    jobs.sort_by(|a, b| (a.key.len(), &a.key).cmp(&(b.key.len(), &b.key)));
    Ok(jobs)
}

impl RealRun {
    /// Keys jobs by name when every name is distinct and non-empty (GridMix's job names say
    /// which trace job each is, whatever order the RM numbered them in).
    pub fn keys_by_name(mut self) -> RealRun {
        let mut seen = std::collections::BTreeSet::new();
        if self.jobs.iter().all(|j| !j.name.is_empty() && seen.insert(j.name.clone())) {
            for j in &mut self.jobs {
                j.key = j.name.clone();
            }
        }
        self
    }
}

/// Reads `DIR/jobs.csv` of each `(name, DIR)`.
pub fn read_real_runs(dirs: &[(String, PathBuf)]) -> Result<Vec<RealRun>, SimError> {
    let mut names = std::collections::BTreeSet::new();
    dirs.iter()
        .map(|(name, dir)| {
            if !names.insert(name.clone()) {
                return Err(SimError::Config(format!("run name '{name}' given twice")));
            }
            let path = if dir.is_dir() { dir.join("jobs.csv") } else { dir.clone() };
            let text = std::fs::read_to_string(&path)
                .map_err(|e| SimError::Config(format!("cannot read {} (run '{name}'): {e}", path.display())))?;
            let jobs = parse_jobs_csv(&text, &path.display().to_string())?;
            let queries_path = path.with_file_name("queries.csv");
            let queries = if queries_path.is_file() {
                let text = std::fs::read_to_string(&queries_path).map_err(|e| {
                    SimError::Config(format!("cannot read {} (run '{name}'): {e}", queries_path.display()))
                })?;
                Some(queries::parse_queries_csv(&text, &queries_path.display().to_string())?)
            } else {
                None
            };
            Ok(RealRun { name: name.clone(), jobs, queries }.keys_by_name())
        })
        .collect()
}

fn opt(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map(|v| format!("{v:.3}")).unwrap_or_default()
}

/// Runs of one trace on a real cluster, reported like `sojourn compare`.
#[derive(Clone, Debug, PartialEq)]
pub struct RealReport {
    pub runs: Vec<RealRun>,
    /// What the runs replayed, for the title (a trace's path, or any label).
    pub label: Option<String>,
}

impl RealReport {
    pub fn read(dirs: &[(String, PathBuf)], label: Option<&str>) -> Result<RealReport, SimError> {
        Ok(RealReport { runs: read_real_runs(dirs)?, label: label.map(str::to_string) })
    }

    /// Every job key of any run, in trace order: GridMix's names (`GRIDMIX%06d`) and
    /// `app_NNNN` keys both sort by length, then text.
    pub fn job_keys(&self) -> Vec<String> {
        let keys: std::collections::BTreeSet<(usize, &str)> =
            self.runs.iter().flat_map(|r| r.jobs.iter().map(|j| (j.key.len(), j.key.as_str()))).collect();
        keys.into_iter().map(|(_, k)| k.to_string()).collect()
    }

    fn job<'a>(run: &'a RealRun, key: &str) -> Option<&'a RealJob> {
        run.jobs.iter().find(|j| j.key == key)
    }

    /// Whether any run has queries (the "queries" section and table are shown).
    pub fn has_queries(&self) -> bool {
        self.runs.iter().any(|r| r.queries.is_some())
    }

    fn metrics(run: &RealRun, with_queries: bool) -> Metrics {
        use Better::*;
        use Unit::*;
        let mut m = Metrics::default();
        let ok = run.succeeded().count();
        m.add("jobs", "jobs", "applications", Count, Neither, true, Some(run.jobs.len() as f64));
        m.add("jobs", "succeeded", "succeeded", Count, Higher, true, Some(ok as f64));
        m.add("jobs", "failed", "did not succeed", Count, Lower, true, Some((run.jobs.len() - ok) as f64));
        m.add("jobs", "makespan_s", "makespan (s)", Number, Lower, true, run.makespan_s());
        m.dist("all jobs", "all", "response_s", "response", " (s)", run.response().as_ref());
        m.dist("all jobs", "all", "wait_s", "AM wait", " (s)", run.wait().as_ref());
        if with_queries {
            queries::add_metrics(&mut m, run.queries.as_deref());
        }
        m
    }

    /// Every run's metrics against the run named `baseline`.
    pub fn compare(&self, baseline: &str) -> Result<Comparison, SimError> {
        let names = self.runs.iter().map(|r| r.name.clone()).collect();
        let q = self.has_queries();
        Comparison::of_metrics(baseline, names, self.runs.iter().map(|r| Self::metrics(r, q)).collect())
    }

    pub fn description(&self, baseline: &str) -> Description {
        let names: Vec<&str> = self.runs.iter().map(|r| r.name.as_str()).collect();
        let title = match &self.label {
            Some(t) => format!("Real cluster: {}", t.rsplit('/').next().unwrap_or(t)),
            None => format!("Real cluster: {}", names.join(", ")),
        };
        let mut d = Description { title, items: Vec::new() };
        if let Some(t) = &self.label {
            d.push("trace", t);
        }
        d.push("schedulers", &names.join(", "));
        d.push("baseline", baseline);
        d.push("time", "wall clock (a real ResourceManager and NodeManagers running MapReduce jobs)");
        d
    }

    pub fn notes(&self) -> String {
        let mut n = String::from(
            "Response time is finish − submission of the RM's application report, for applications whose final \
             status is SUCCEEDED; AM wait is submission to the AM container's launch. Percentiles are nearest-rank. \
             Jobs are matched across runs by name (GridMix's GRIDMIXnnnnnn, a DAG's job names), else by \
             application number.",
        );
        if self.has_queries() {
            n.push_str(" A query's response runs from its first job's submission to its last job's finish.");
        }
        n
    }

    /// One row per job: `job,<scheduler>_response_s,…` (empty where a job did not succeed).
    pub fn jobs_csv(&self) -> String {
        let mut s = String::from("job");
        for r in &self.runs {
            let _ = write!(s, ",{}_response_s,{}_wait_s", r.name, r.name);
        }
        s.push('\n');
        for key in self.job_keys() {
            s.push_str(&key);
            for r in &self.runs {
                let j = Self::job(r, &key);
                let _ = write!(s, ",{},{}", opt(j.and_then(RealJob::response_s)), opt(j.and_then(RealJob::wait_s)));
            }
            s.push('\n');
        }
        s
    }

    /// One row per job, one column per scheduler: response time (s), "—" where it did not succeed.
    pub fn jobs_markdown(&self) -> String {
        let mut s = String::from("| job |");
        for r in &self.runs {
            let _ = write!(s, " {} |", r.name);
        }
        s.push_str("\n|---|");
        s.push_str(&"---:|".repeat(self.runs.len()));
        s.push('\n');
        for key in self.job_keys() {
            let _ = write!(s, "| {key} |");
            for r in &self.runs {
                let v = Self::job(r, &key).and_then(RealJob::response_s);
                let _ = write!(s, " {} |", v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "—".into()));
            }
            s.push('\n');
        }
        s
    }

    /// One row per query (in the first run's order), one column per scheduler: response
    /// time (s), "—" where the query did not finish.
    pub fn queries_markdown(&self) -> String {
        let mut keys: Vec<&str> = Vec::new();
        for q in self.runs.iter().filter_map(|r| r.queries.as_ref()).flatten() {
            if !keys.contains(&q.query.as_str()) {
                keys.push(&q.query);
            }
        }
        let mut s = String::from("| query |");
        for r in &self.runs {
            let _ = write!(s, " {} |", r.name);
        }
        s.push_str("\n|---|");
        s.push_str(&"---:|".repeat(self.runs.len()));
        s.push('\n');
        for key in keys {
            let _ = write!(s, "| {key} |");
            for r in &self.runs {
                let q = r.queries.iter().flatten().find(|q| q.query == key);
                let v = q.and_then(RealQuery::response_s);
                let _ = write!(s, " {} |", v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "—".into()));
            }
            s.push('\n');
        }
        s
    }

    /// What `sojourn real-compare` prints: description, comparison table, per-job table,
    /// per-query table (runs of job DAGs only), notes.
    pub fn text(&self, baseline: &str) -> Result<String, SimError> {
        let cmp = self.compare(baseline)?;
        let per_query = if self.has_queries() {
            format!("Response time per query (s):\n\n{}\n", self.queries_markdown())
        } else {
            String::new()
        };
        Ok(format!(
            "{}\n{}\nResponse time per job (s):\n\n{}\n{per_query}{}\n",
            self.description(baseline).to_text(),
            report::table(&cmp, &report::WriteOptions::default()),
            self.jobs_markdown(),
            self.notes()
        ))
    }

    /// The page: the summary table, a CDF of response time and response time per job.
    pub fn html(&self, baseline: &str) -> Result<String, SimError> {
        let cmp = self.compare(baseline)?;
        let responses =
            self.runs.iter().map(|r| (r.name.clone(), r.jobs.iter().filter_map(RealJob::response_s).collect()));
        let mut body = String::from("<h2>Response time</h2>\n<div class=\"plots\">\n");
        body.push_str(
            &cdf_plot("CDF of response time".into(), "response time (s, log scale)", responses.collect()).render(),
        );
        body.push_str(&self.per_job_plot().render());
        body.push_str("</div>\n");
        Ok(report::page(&self.description(baseline), &cmp, &self.notes(), &body))
    }

    /// Response time per job, one colour per scheduler.
    fn per_job_plot(&self) -> Plot {
        let keys = self.job_keys();
        let runs = self
            .runs
            .iter()
            .map(|r| (r.name.clone(), keys.iter().map(|key| Self::job(r, key)?.response_s()).collect()))
            .collect();
        report::per_job_plot("job (trace order)", runs)
    }
}

/// `sojourn real-compare`: reads the runs, writes the files asked for, returns the text.
pub fn cli(
    runs: &[String],
    baseline: Option<&str>,
    label: Option<&str>,
    csv: Option<&Path>,
    jobs_csv: Option<&Path>,
    html: Option<&Path>,
) -> Result<String, SimError> {
    let dirs = runs
        .iter()
        .map(|r| match r.split_once('=') {
            Some((name, dir)) if !name.is_empty() && !dir.is_empty() => Ok((name.to_string(), PathBuf::from(dir))),
            _ => Err(SimError::Config(format!("'{r}' is not NAME=RUN_DIR"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let first = dirs.first().map(|d| d.0.clone()).ok_or_else(|| SimError::Config("no runs to compare".into()))?;
    let baseline = baseline.map(str::to_string).unwrap_or(first);
    let rep = RealReport::read(&dirs, label)?;
    let cmp = rep.compare(&baseline)?;
    let write = |p: &Path, text: String| {
        std::fs::write(p, text).map_err(|e| SimError::Config(format!("cannot write {}: {e}", p.display())))
    };
    if let Some(p) = csv {
        write(p, report::wide_csv(&cmp, "scheduler"))?;
    }
    if let Some(p) = jobs_csv {
        write(p, rep.jobs_csv())?;
    }
    if let Some(p) = html {
        let (dir, name) = match (p.extension(), p.file_name()) {
            (Some(ext), Some(name)) if ext == "html" => {
                let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
                (dir.to_path_buf(), name.to_string_lossy().to_string())
            }
            _ => (p.to_path_buf(), "index.html".to_string()),
        };
        report::write_file(&dir, &name, &rep.html(&baseline)?)
            .map_err(|e| SimError::Config(format!("writing the report: {e}")))?;
    }
    rep.text(&baseline)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three GridMix jobs; the RM numbered the second and third the other way round.
    const A: &str = "app_id,name,queue,user,state,final_status,submit_ms,launch_ms,finish_ms,response_ms\n\
        application_1_0001,GRIDMIX000000,default,u,FINISHED,SUCCEEDED,1000,2000,11000,10000\n\
        application_1_0003,GRIDMIX000001,default,u,FINISHED,SUCCEEDED,3000,3500,8000,5000\n\
        application_1_0002,GRIDMIX000002,default,u,FINISHED,SUCCEEDED,2000,6000,22000,20000\n";
    /// The same trace; job 2 failed, and a column more.
    const B: &str = "app_id,name,queue,user,state,final_status,submit_ms,launch_ms,finish_ms,response_ms,extra\n\
        application_2_0001,GRIDMIX000000,default,u,FINISHED,SUCCEEDED,1000,1500,5000,4000,x\n\
        application_2_0002,GRIDMIX000001,default,u,FINISHED,SUCCEEDED,3000,3200,4000,1000,x\n\
        application_2_0003,GRIDMIX000002,default,u,FINISHED,FAILED,2000,0,0,,x\n";

    fn report() -> RealReport {
        let run = |name: &str, text: &str| RealRun {
            name: name.into(),
            jobs: parse_jobs_csv(text, name).unwrap(),
            queries: None,
        };
        RealReport { runs: vec![run("capacity", A).keys_by_name(), run("sojourn:fifo", B).keys_by_name()], label: None }
    }

    #[test]
    fn parses_and_keys_jobs_by_name() {
        let r = report();
        let a = &r.runs[0];
        assert_eq!(
            a.jobs.iter().map(|j| j.app_id.as_str()).collect::<Vec<_>>(),
            ["application_1_0001", "application_1_0002", "application_1_0003"]
        );
        assert_eq!(a.jobs[1].key, "GRIDMIX000002");
        assert_eq!(r.runs[1].jobs[2].response_s(), None);
        assert_eq!(r.runs[1].jobs[2].launch_ms, None);
        assert_eq!(r.job_keys(), ["GRIDMIX000000", "GRIDMIX000001", "GRIDMIX000002"]);
        // Names repeated: keys stay the application numbers.
        let dup = A.replace("GRIDMIX000002", "GRIDMIX000001");
        let run = RealRun { name: "d".into(), jobs: parse_jobs_csv(&dup, "d").unwrap(), queries: None }.keys_by_name();
        assert_eq!(run.jobs[0].key, "app_0001");
    }

    #[test]
    fn figures_and_ratios() {
        let r = report();
        let c = r.compare("capacity").unwrap();
        let v = |key: &str| c.row(key).unwrap().values.clone();
        assert_eq!(v("succeeded"), [Some(3.0), Some(2.0)]);
        assert_eq!(v("failed"), [Some(0.0), Some(1.0)]);
        // capacity: responses 10, 20, 5; sojourn:fifo: 4, 1.
        assert_eq!(v("all.response_s.mean"), [Some(35.0 / 3.0), Some(2.5)]);
        assert_eq!(v("all.response_s.p50"), [Some(10.0), Some(1.0)]);
        assert_eq!(v("all.response_s.p90"), [Some(20.0), Some(4.0)]);
        // AM waits 1, 4, 0.5 and 0.5, 0.2 (the failed job never launched).
        assert_eq!(v("all.wait_s.max"), [Some(4.0), Some(0.5)]);
        // makespan: 1000 → 22000 and 1000 → 5000 (the failed job does not count).
        assert_eq!(v("makespan_s"), [Some(21.0), Some(4.0)]);
        let ratio = c.row("all.response_s.mean").unwrap().ratios.clone();
        assert_eq!(ratio[0], Some(1.0));
        assert!(r.compare("fair").unwrap_err().to_string().contains("'fair'"));
    }

    #[test]
    fn text_csv_and_page() {
        let r = report();
        let t = r.text("capacity").unwrap();
        assert!(t.starts_with("Real cluster: capacity, sojourn:fifo\n"), "{t}");
        assert!(t.contains("vs capacity") && t.contains("| GRIDMIX000002 | 20.000 | — |"), "{t}");
        // No queries.csv: no queries section, no per-query table, no query columns.
        assert!(!t.contains("quer"), "{t}");
        assert!(!report::wide_csv(&r.compare("capacity").unwrap(), "scheduler").contains("query"));
        let csv = r.jobs_csv();
        assert!(csv.starts_with("job,capacity_response_s,capacity_wait_s,sojourn:fifo_response_s"), "{csv}");
        assert!(csv.contains("\nGRIDMIX000002,20.000,4.000,,\n"), "{csv}");
        let h = r.html("capacity").unwrap();
        assert_eq!(h.matches("<svg ").count(), 2);
        assert!(h.contains("class=\"plot cdf\"") && h.contains("class=\"plot jobs\""));
    }

    #[test]
    fn errors_name_the_file_line_and_field() {
        let e = parse_jobs_csv("app_id,name\n", "x/jobs.csv").unwrap_err().to_string();
        assert!(e.contains("x/jobs.csv") && e.contains("final_status"), "{e}");
        let bad = A.replace("3000,3500", "3000,soon");
        let e = parse_jobs_csv(&bad, "y.csv").unwrap_err().to_string();
        assert!(e.contains("y.csv") && e.contains("'soon'") && e.contains("launch_ms"), "{e}");
        let e = parse_jobs_csv("", "z.csv").unwrap_err().to_string();
        assert!(e.contains("z.csv"), "{e}");
        let short = "app_id,name,final_status,submit_ms,launch_ms,finish_ms\napplication_1_0001,a\n";
        let e = parse_jobs_csv(short, "s.csv").unwrap_err().to_string();
        assert!(e.contains("s.csv") && e.contains("too few fields"), "{e}");
        let back = A.replace("2000,6000,22000", "2000,6000,1500");
        let e = parse_jobs_csv(&back, "b.csv").unwrap_err().to_string();
        assert!(e.contains("application_1_0002") && e.contains("before"), "{e}");
        let e = cli(&["nodir".into()], None, None, None, None, None).unwrap_err().to_string();
        assert!(e.contains("'nodir'"), "{e}");
        let e = cli(&["a=/nonexistent/run".into()], None, None, None, None, None).unwrap_err().to_string();
        assert!(e.contains("/nonexistent/run") && e.contains("'a'"), "{e}");
    }

    /// Two DAG runs read from directories: queries.csv beside jobs.csv gives the
    /// "queries" section (ratios to the baseline) and the per-query table.
    #[test]
    fn queries_csv_beside_jobs_csv_adds_the_queries_section() {
        let root = std::env::temp_dir().join(format!("sojourn-real-queries-{}", std::process::id()));
        let write = |run: &str, queries: &str| {
            let d = root.join(run);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("jobs.csv"), A).unwrap();
            std::fs::write(d.join("queries.csv"), queries).unwrap();
            format!("{run}={}", d.display())
        };
        let h = "query,jobs,succeeded,submit_ms,finish_ms,response_ms\n";
        let fifo = write("fifo", &format!("{h}0,1,1,1000,11000,10000\n1,2,2,2000,42000,40000\n"));
        let hfsp = write("hfsp", &format!("{h}0,1,1,1000,6000,5000\n1,2,1,2000,,\n"));
        let csv = root.join("cmp.csv");
        let t = cli(&[fifo, hfsp], None, None, Some(&csv), None, None).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert!(t.contains("queries finished") && t.contains("query response max (s)"), "{t}");
        assert!(t.contains("| 1 | 40.000 | — |"), "{t}");
        let r = RealReport { runs: Vec::new(), label: None };
        assert!(!r.has_queries());
        // fifo: responses 10, 40; hfsp: 5 (query 1 unfinished).
        let runs = vec![
            RealRun {
                name: "fifo".into(),
                jobs: Vec::new(),
                queries: Some(parse_q(h, "0,1,1,1000,11000,\n1,2,2,2000,42000,\n")),
            },
            RealRun {
                name: "hfsp".into(),
                jobs: Vec::new(),
                queries: Some(parse_q(h, "0,1,1,1000,6000,\n1,2,1,2000,,\n")),
            },
        ];
        let c = RealReport { runs, label: None }.compare("fifo").unwrap();
        let v = |key: &str| c.row(key).unwrap().values.clone();
        assert_eq!(v("query.finished"), [Some(2.0), Some(1.0)]);
        assert_eq!(v("query.unfinished"), [Some(0.0), Some(1.0)]);
        assert_eq!(v("query.response_s.mean"), [Some(25.0), Some(5.0)]);
        assert_eq!(v("query.response_s.max"), [Some(40.0), Some(5.0)]);
        assert_eq!(c.row("query.response_s.mean").unwrap().ratios, [Some(1.0), Some(0.2)]);
    }

    fn parse_q(header: &str, rows: &str) -> Vec<RealQuery> {
        queries::parse_queries_csv(&format!("{header}{rows}"), "q").unwrap()
    }
}
