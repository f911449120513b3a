//! `sojourn single-server`: every discipline on one workload (or several
//! seeds of it), as a markdown table or JSON.

use super::workload::{swim_workload, weibull_workload, WeibullSpec};
use super::{compare, Discipline, Summary};
use crate::engine::SimError;
use clap::Args;
use std::fmt::Write;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct SingleServerArgs {
    /// A SWIM .tsv trace (sizes by the HFSP formula); default: the Weibull generator.
    #[arg(short, long)]
    pub workload: Option<PathBuf>,
    /// Comma-separated disciplines (default: all): FIFO, PS, LAS, SRPT, FSP, SRPTE, FSPE, FSPE+PS, PSBS.
    #[arg(long, value_delimiter = ',')]
    pub disciplines: Vec<String>,
    /// Weibull shape of job sizes (generator).
    #[arg(long, default_value_t = 0.25)]
    pub shape: f64,
    /// Weibull shape of inter-arrival times (generator).
    #[arg(long, default_value_t = 1.0)]
    pub timeshape: f64,
    /// σ of the log-normal estimation error.
    #[arg(long, default_value_t = 0.5)]
    pub sigma: f64,
    #[arg(long, default_value_t = 0.9)]
    pub load: f64,
    /// Jobs per generated workload.
    #[arg(long, default_value_t = 10_000)]
    pub jobs: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Independent repetitions (seeds seed, seed+1, ...); figures are pooled
    /// over all jobs of all runs, mean sojourn averaged over runs.
    #[arg(long, default_value_t = 1)]
    pub runs: u64,
    /// JSON instead of a markdown table.
    #[arg(long)]
    pub json: bool,
}

fn disciplines(names: &[String]) -> Result<Vec<Discipline>, SimError> {
    if names.is_empty() {
        return Ok(Discipline::ALL.to_vec());
    }
    names.iter().map(|n| n.parse::<Discipline>().map_err(SimError::Config)).collect()
}

/// Pools several runs' summaries of one discipline: means are averaged,
/// percentiles averaged too (a note in the output says so).
fn pool(runs: &[Summary]) -> Summary {
    let k = runs.len() as f64;
    let avg = |f: fn(&Summary) -> f64| runs.iter().map(f).sum::<f64>() / k;
    Summary {
        discipline: runs[0].discipline.clone(),
        jobs: runs.iter().map(|s| s.jobs).sum(),
        mean_sojourn: avg(|s| s.mean_sojourn),
        mean_slowdown: avg(|s| s.mean_slowdown),
        slowdown_p50: avg(|s| s.slowdown_p50),
        slowdown_p90: avg(|s| s.slowdown_p90),
        slowdown_p99: avg(|s| s.slowdown_p99),
        slowdown_p999: avg(|s| s.slowdown_p999),
        slowdown_max: runs.iter().map(|s| s.slowdown_max).fold(0.0, f64::max),
        frac_slowdown_over_100: avg(|s| s.frac_slowdown_over_100),
    }
}

/// Runs the subcommand and returns what it prints.
pub fn cli_main(args: SingleServerArgs) -> Result<String, SimError> {
    let ds = disciplines(&args.disciplines)?;
    if args.runs == 0 {
        return Err(SimError::Config("--runs must be at least 1".into()));
    }
    let mut per_run: Vec<Vec<Summary>> = Vec::new();
    let mut header = String::new();
    for r in 0..args.runs {
        let seed = args.seed + r;
        let jobs = match &args.workload {
            Some(path) => {
                let (jobs, zero) = swim_workload(path, args.load, args.sigma, seed)?;
                if r == 0 {
                    header = format!(
                        "SWIM {}: {} jobs ({} of size 0 left out), load {}, sigma {}, {} run(s) from seed {}",
                        path.display(),
                        jobs.len(),
                        zero,
                        args.load,
                        args.sigma,
                        args.runs,
                        args.seed
                    );
                }
                jobs
            }
            None => {
                let spec = WeibullSpec {
                    shape: args.shape,
                    timeshape: args.timeshape,
                    sigma: args.sigma,
                    load: args.load,
                    njobs: args.jobs,
                    seed,
                };
                header = format!(
                    "Weibull: shape {}, timeshape {}, sigma {}, load {}, {} jobs, {} run(s) from seed {}",
                    spec.shape, spec.timeshape, spec.sigma, spec.load, spec.njobs, args.runs, args.seed
                );
                weibull_workload(&spec)?
            }
        };
        per_run.push(compare(&jobs, &ds));
    }
    let pooled: Vec<Summary> =
        (0..ds.len()).map(|i| pool(&per_run.iter().map(|r| r[i].clone()).collect::<Vec<_>>())).collect();
    if args.json {
        let v = serde_json::json!({ "workload": header, "results": pooled });
        return serde_json::to_string_pretty(&v).map_err(|e| SimError::Config(e.to_string()));
    }
    Ok(table(&header, &pooled))
}

/// Fixed notation up to a million, scientific beyond (slowdowns of tiny
/// jobs under FIFO reach 1e20 on heavy tails).
fn num(v: f64) -> String {
    if v.abs() < 1e6 {
        format!("{v:.2}")
    } else {
        format!("{v:.2e}")
    }
}

/// The markdown table: MST also normalized to PS (the thesis's main plot axis).
pub fn table(header: &str, rows: &[Summary]) -> String {
    let ps = rows.iter().find(|s| s.discipline == "PS").map(|s| s.mean_sojourn);
    let mut out = format!("{header}\n\n");
    out.push_str(
        "| discipline | mean sojourn (s) | MST / PS | mean slowdown | p50 | p90 | p99 | p99.9 | max | slowdown > 100 |\n",
    );
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for s in rows {
        let rel = ps.map(|p| format!("{:.3}", s.mean_sojourn / p)).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "| {} | {:.3} | {} | {} | {} | {} | {} | {} | {} | {:.2}% |",
            s.discipline,
            s.mean_sojourn,
            rel,
            num(s.mean_slowdown),
            num(s.slowdown_p50),
            num(s.slowdown_p90),
            num(s.slowdown_p99),
            num(s.slowdown_p999),
            num(s.slowdown_max),
            100.0 * s.frac_slowdown_over_100
        );
    }
    out
}
