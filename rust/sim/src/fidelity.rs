//! How far the simulator is from the real ResourceManager (issue #6, fidelity): the same trace
//! through `sojourn simulate` and through Hadoop's SLS, compared job by job and in percentiles.
//!
//! The simulator's side is a `jobs-<policy>.csv` as `sojourn simulate --out` writes it; the
//! real RM's side is an SLS output directory (read by [`crate::sls_results`]). Jobs are paired
//! in submission order: the simulator's by (submit time, id), SLS's by (trace start, application
//! order), which is the order SLS submits them in. The gap is `(sim − SLS) / SLS`.

use std::fmt::Write as _;
use std::io::BufRead;
use std::path::Path;

use crate::engine::SimError;
use crate::metrics::Dist;
use crate::sls_results::{read_sls_run, SlsRun};
use crate::workload::text::Lines;

/// One job as the simulator reported it.
#[derive(Clone, Debug, PartialEq)]
pub struct SimJob {
    pub id: u64,
    pub submit_s: f64,
    pub response_s: f64,
}

/// Reads the `id`, `submit_s` and `response_s` columns of a simulator `jobs-<policy>.csv`.
pub fn parse_sim_jobs(text: &str, file: &str) -> Result<Vec<SimJob>, SimError> {
    sim_jobs(Lines::of_str(text, file))
}

/// [`parse_sim_jobs`] over any lines; errors name the file and the line.
fn sim_jobs<R: BufRead>(mut lines: Lines<R>) -> Result<Vec<SimJob>, SimError> {
    let (at, header) = lines.next().ok_or_else(|| lines.error(1, "empty file, expected a header"))??;
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |name: &str| {
        cols.iter().position(|c| *c == name).ok_or_else(|| lines.error(at, format!("no column {name:?} in the header")))
    };
    let (id, submit, response) = (col("id")?, col("submit_s")?, col("response_s")?);
    let mut jobs = Vec::new();
    while let Some(row) = lines.next() {
        let (n, line) = row?;
        let cells: Vec<&str> = line.split(',').collect();
        let num = |c: usize| {
            let cell = cells.get(c).map(|s| s.trim()).unwrap_or("");
            cell.parse::<f64>()
                .map_err(|_| lines.error(n, format!("{:?} in column {:?} is not a number", cell, cols[c])))
        };
        jobs.push(SimJob { id: num(id)? as u64, submit_s: num(submit)?, response_s: num(response)? });
    }
    Ok(jobs)
}

/// One trace job under both.
#[derive(Clone, Debug, PartialEq)]
pub struct JobGap {
    /// The simulator's job id.
    pub sim_id: u64,
    /// SLS's application (`app_NNNN`).
    pub sls_key: String,
    pub submit_s: f64,
    pub sim_s: f64,
    pub sls_s: f64,
}

/// One simulator run against one SLS run of the same trace.
#[derive(Clone, Debug)]
pub struct Fidelity {
    pub label: String,
    pub jobs: Vec<JobGap>,
}

/// `(a − b) / b` in percent.
fn gap_pct(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        (a - b) / b * 100.0
    }
}

impl Fidelity {
    /// Pairs the simulator's jobs with SLS's in submission order. Both must hold the same
    /// number of finished jobs.
    pub fn pair(label: &str, mut sim: Vec<SimJob>, sls: &SlsRun) -> Result<Fidelity, SimError> {
        if sim.len() != sls.jobs.len() {
            return Err(SimError::Config(format!(
                "{label}: the simulator finished {} jobs and SLS {}: not the same trace, or a run did not finish",
                sim.len(),
                sls.jobs.len()
            )));
        }
        sim.sort_by(|a, b| a.submit_s.total_cmp(&b.submit_s).then(a.id.cmp(&b.id)));
        let mut real: Vec<_> = sls.jobs.iter().enumerate().collect();
        real.sort_by_key(|(order, j)| (j.trace_start_ms, *order));
        let jobs = sim
            .iter()
            .zip(real)
            .map(|(s, (_, r))| JobGap {
                sim_id: s.id,
                sls_key: r.key.clone(),
                submit_s: s.submit_s,
                sim_s: s.response_s,
                sls_s: r.response_s(),
            })
            .collect();
        Ok(Fidelity { label: label.to_string(), jobs })
    }

    pub fn sim(&self) -> Option<Dist> {
        Dist::of(self.jobs.iter().map(|j| j.sim_s).collect())
    }

    pub fn sls(&self) -> Option<Dist> {
        Dist::of(self.jobs.iter().map(|j| j.sls_s).collect())
    }

    /// Per-job |sim − SLS| (s).
    pub fn abs_diff(&self) -> Option<Dist> {
        Dist::of(self.jobs.iter().map(|j| (j.sim_s - j.sls_s).abs()).collect())
    }
}

/// Reads a `SIM_JOBS_CSV=SLS_OUTPUT_DIR` pair. The label is the policy from the CSV's name
/// (`jobs-<policy>.csv`) and the SLS run's name (the output directory's parent, as
/// `integration/sls/compare.sh` lays runs out).
pub fn read_pair(spec: &str) -> Result<Fidelity, SimError> {
    let (csv, dir) = spec
        .split_once('=')
        .ok_or_else(|| SimError::Config(format!("{spec:?}: expected SIM_JOBS_CSV=SLS_OUTPUT_DIR")))?;
    let (csv, dir) = (Path::new(csv), Path::new(dir));
    let sim = sim_jobs(Lines::open(csv)?)?;
    let policy = csv
        .file_stem()
        .and_then(|s| s.to_str())
        .map(|s| s.strip_prefix("jobs-").unwrap_or(s).to_string())
        .unwrap_or_else(|| csv.display().to_string());
    let sls_name = dir
        .canonicalize()
        .ok()
        .and_then(|d| {
            let name = if d.file_name().is_some_and(|n| n == "out") { d.parent()?.file_name() } else { d.file_name() };
            name.and_then(|n| n.to_str()).map(str::to_string)
        })
        .unwrap_or_else(|| dir.display().to_string());
    let sls = read_sls_run(&sls_name, dir)?;
    Fidelity::pair(&format!("sim {policy} vs SLS {sls_name}"), sim, &sls)
}

fn cell(x: Option<f64>) -> String {
    x.map_or("—".to_string(), |v| format!("{v:.1}"))
}

fn signed(x: Option<f64>) -> String {
    x.map_or("—".to_string(), |v| format!("{v:+.1}%"))
}

/// The summary table (one row per pair) and, per pair, the per-job table, in markdown.
pub fn markdown(pairs: &[Fidelity]) -> String {
    let mut s = String::from(
        "| pair | jobs | mean sim (s) | mean SLS (s) | mean gap | p50 sim | p50 SLS | p90 sim | p90 SLS | p90 gap | p99 sim | p99 SLS | per-job abs diff p50 / max (s) |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for p in pairs {
        let (a, b, d) = (p.sim(), p.sls(), p.abs_diff());
        let both = |f: fn(&Dist) -> f64| a.as_ref().zip(b.as_ref()).map(|(a, b)| gap_pct(f(a), f(b)));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} |",
            p.label,
            p.jobs.len(),
            cell(a.as_ref().map(|d| d.mean)),
            cell(b.as_ref().map(|d| d.mean)),
            signed(both(|d| d.mean)),
            cell(a.as_ref().map(|d| d.p50)),
            cell(b.as_ref().map(|d| d.p50)),
            cell(a.as_ref().map(|d| d.p90)),
            cell(b.as_ref().map(|d| d.p90)),
            signed(both(|d| d.p90)),
            cell(a.as_ref().map(|d| d.p99)),
            cell(b.as_ref().map(|d| d.p99)),
            cell(d.as_ref().map(|d| d.p50)),
            cell(d.as_ref().map(|d| d.max)),
        );
    }
    for p in pairs {
        let _ = write!(
            s,
            "\n{}: response per job (s)\n\n| sim job | SLS app | submit (s) | sim | SLS | sim − SLS |\n|---:|---|---:|---:|---:|---:|\n",
            p.label
        );
        for j in &p.jobs {
            let _ = writeln!(
                s,
                "| {} | {} | {:.1} | {:.1} | {:.1} | {:+.1} |",
                j.sim_id,
                j.sls_key,
                j.submit_s,
                j.sim_s,
                j.sls_s,
                j.sim_s - j.sls_s
            );
        }
    }
    s
}

/// One CSV row per pair: the figures of the summary table.
pub fn summary_csv(pairs: &[Fidelity]) -> String {
    let mut s = String::from("pair,jobs,sim_mean_s,sls_mean_s,mean_gap_pct,sim_p90_s,sls_p90_s,p90_gap_pct\n");
    for p in pairs {
        if let (Some(a), Some(b)) = (p.sim(), p.sls()) {
            let _ = writeln!(
                s,
                "{},{},{:.3},{:.3},{:.2},{:.3},{:.3},{:.2}",
                p.label,
                p.jobs.len(),
                a.mean,
                b.mean,
                gap_pct(a.mean, b.mean),
                a.p90,
                b.p90,
                gap_pct(a.p90, b.p90)
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sls_results::SlsJob;

    fn sls(jobs: &[(&str, i64, i64, i64)]) -> SlsRun {
        SlsRun {
            name: "x".into(),
            jobs: jobs
                .iter()
                .map(|(k, trace, start, end)| SlsJob {
                    key: k.to_string(),
                    app_id: k.to_string(),
                    trace_start_ms: *trace,
                    start_ms: *start,
                    end_ms: *end,
                })
                .collect(),
            duplicate_rows: 0,
            allocate_calls_per_s: None,
            handle_p99_ms: None,
        }
    }

    const SIM: &str = "id,name,queue,submit_s,finish_s,response_s,slowdown\n\
        1,b,q,5.000,25.000,20.000,1\n\
        0,a,q,0.000,10.000,10.000,1\n";

    #[test]
    fn reads_the_simulators_job_table() {
        let jobs = parse_sim_jobs(SIM, "jobs-fifo.csv").unwrap();
        assert_eq!(jobs[0], SimJob { id: 1, submit_s: 5.0, response_s: 20.0 });
        let e = parse_sim_jobs("id,submit_s\n", "f.csv").unwrap_err().to_string();
        assert!(e.contains("f.csv:1") && e.contains("response_s"), "{e}");
        let e = parse_sim_jobs("id,submit_s,response_s\n0,x,1\n", "f.csv").unwrap_err().to_string();
        assert!(e.contains("f.csv:2") && e.contains("submit_s"), "{e}");
    }

    #[test]
    fn pairs_jobs_in_submission_order_and_measures_the_gap() {
        // SLS submitted the second trace job first (app_0001 starts at trace 5 s).
        let run = sls(&[("app_0001", 5000, 105_000, 127_000), ("app_0002", 0, 100_000, 108_000)]);
        let f = Fidelity::pair("t", parse_sim_jobs(SIM, "s").unwrap(), &run).unwrap();
        assert_eq!((f.jobs[0].sim_id, f.jobs[0].sls_key.as_str()), (0, "app_0002"));
        assert_eq!((f.jobs[1].sim_s, f.jobs[1].sls_s), (20.0, 22.0));
        // Mean 15 vs 15: no gap; |diff| 2 each.
        let csv = summary_csv(std::slice::from_ref(&f));
        assert!(csv.lines().nth(1).unwrap().starts_with("t,2,15.000,15.000,0.00,20.000,22.000,-9.09"), "{csv}");
        assert_eq!(f.abs_diff().unwrap().max, 2.0);
        let md = markdown(&[f]);
        assert!(md.contains("| t | 2 | 15.0 | 15.0 | +0.0% |"), "{md}");
        assert!(md.contains("| 1 | app_0001 | 5.0 | 20.0 | 22.0 | -2.0 |"), "{md}");
    }

    #[test]
    fn different_job_counts_are_an_error() {
        let run = sls(&[("app_0001", 0, 0, 1000)]);
        let e = Fidelity::pair("t", parse_sim_jobs(SIM, "s").unwrap(), &run).unwrap_err().to_string();
        assert!(e.contains("finished 2 jobs and SLS 1"), "{e}");
    }
}
