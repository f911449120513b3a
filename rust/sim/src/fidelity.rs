//! How far the simulator is from the real ResourceManager (issue #6, fidelity; issue 19 for
//! real jobs): the same trace through `sojourn simulate` and through a real RM, compared job
//! by job and in percentiles.
//!
//! The simulator's side is a `jobs-<policy>.csv` as `sojourn simulate --out` writes it. The
//! real side is either an SLS output directory (read by [`crate::sls_results`]: simulated
//! NodeManagers and AMs) or a directory with the `jobs.csv` of a run of real MapReduce jobs
//! (the GridMix runner's, read by [`crate::real_results`]; its succeeded jobs). Jobs are
//! paired in submission order: the simulator's by (submit time, id), SLS's by (trace start,
//! application order), which is the order SLS submits them in, the real run's by (submission,
//! job name; GridMix names jobs in trace order). The gap is `(sim − real) / real`.

use std::fmt::Write as _;
use std::io::BufRead;
use std::path::Path;

use crate::engine::SimError;
use crate::metrics::Dist;
use crate::real_results::read_real_runs;
use crate::sls_results::{read_sls_run, SlsRun};
use crate::workload::text::Lines;

/// One job as the simulator reported it.
#[derive(Clone, Debug, PartialEq)]
pub struct SimJob {
    pub id: u64,
    /// The job's name (empty when the CSV has no `name` column).
    pub name: String,
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
    let name = cols.iter().position(|c| *c == "name");
    let mut jobs = Vec::new();
    while let Some(row) = lines.next() {
        let (n, line) = row?;
        let cells: Vec<&str> = line.split(',').collect();
        let num = |c: usize| {
            let cell = cells.get(c).map(|s| s.trim()).unwrap_or("");
            cell.parse::<f64>()
                .map_err(|_| lines.error(n, format!("{:?} in column {:?} is not a number", cell, cols[c])))
        };
        let name = name.and_then(|c| cells.get(c)).map_or(String::new(), |s| s.trim().to_string());
        jobs.push(SimJob { id: num(id)? as u64, name, submit_s: num(submit)?, response_s: num(response)? });
    }
    Ok(jobs)
}

/// One trace job under both.
#[derive(Clone, Debug, PartialEq)]
pub struct JobGap {
    /// The simulator's job id.
    pub sim_id: u64,
    /// The real run's job: SLS's application (`app_NNNN`) or the job's name (`GRIDMIX000003`).
    pub real_key: String,
    pub submit_s: f64,
    pub sim_s: f64,
    pub real_s: f64,
}

/// One real job, in the real run's submission order.
#[derive(Clone, Debug, PartialEq)]
pub struct RealSide {
    pub key: String,
    pub response_s: f64,
}

/// One simulator run against one real run of the same trace.
#[derive(Clone, Debug)]
pub struct Fidelity {
    pub label: String,
    /// What the real side is: `SLS` or `real` (real MapReduce jobs).
    pub kind: &'static str,
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
    pub fn pair(label: &str, sim: Vec<SimJob>, sls: &SlsRun) -> Result<Fidelity, SimError> {
        let mut real: Vec<_> = sls.jobs.iter().enumerate().collect();
        real.sort_by_key(|(order, j)| (j.trace_start_ms, *order));
        let real = real.into_iter().map(|(_, j)| RealSide { key: j.key.clone(), response_s: j.response_s() });
        Fidelity::pair_ordered(label, "SLS", sim, real.collect())
    }

    /// Pairs the simulator's jobs, in submission order, with `real`, already in the real
    /// run's submission order.
    pub fn pair_ordered(
        label: &str,
        kind: &'static str,
        mut sim: Vec<SimJob>,
        real: Vec<RealSide>,
    ) -> Result<Fidelity, SimError> {
        if sim.len() != real.len() {
            return Err(SimError::Config(format!(
                "{label}: the simulator finished {} jobs and {kind} {}: not the same trace, or a run did not finish",
                sim.len(),
                real.len()
            )));
        }
        sim.sort_by(|a, b| a.submit_s.total_cmp(&b.submit_s).then(a.id.cmp(&b.id)));
        let jobs = sim
            .iter()
            .zip(real)
            .map(|(s, r)| JobGap {
                sim_id: s.id,
                real_key: r.key,
                submit_s: s.submit_s,
                sim_s: s.response_s,
                real_s: r.response_s,
            })
            .collect();
        Ok(Fidelity { label: label.to_string(), kind, jobs })
    }

    pub fn sim(&self) -> Option<Dist> {
        Dist::of(self.jobs.iter().map(|j| j.sim_s).collect())
    }

    pub fn real(&self) -> Option<Dist> {
        Dist::of(self.jobs.iter().map(|j| j.real_s).collect())
    }

    /// Per-job |sim − real| (s).
    pub fn abs_diff(&self) -> Option<Dist> {
        Dist::of(self.jobs.iter().map(|j| (j.sim_s - j.real_s).abs()).collect())
    }
}

/// Reads a `SIM_JOBS_CSV=REAL_DIR` pair. `REAL_DIR` holding a `jobs.csv` is a run of real
/// jobs (the GridMix runner's layout), else an SLS output directory. The label is the policy
/// from the CSV's name (`jobs-<policy>.csv`) and the real run's name (the directory's name, or
/// for SLS's `out` its parent's, as `integration/sls/compare.sh` lays runs out).
pub fn read_pair(spec: &str) -> Result<Fidelity, SimError> {
    let (csv, dir) =
        spec.split_once('=').ok_or_else(|| SimError::Config(format!("{spec:?}: expected SIM_JOBS_CSV=REAL_DIR")))?;
    let (csv, dir) = (Path::new(csv), Path::new(dir));
    let sim = sim_jobs(Lines::open(csv)?)?;
    let policy = csv
        .file_stem()
        .and_then(|s| s.to_str())
        .map(|s| s.strip_prefix("jobs-").unwrap_or(s).to_string())
        .unwrap_or_else(|| csv.display().to_string());
    let real_name = dir
        .canonicalize()
        .ok()
        .and_then(|d| {
            let name = if d.file_name().is_some_and(|n| n == "out") { d.parent()?.file_name() } else { d.file_name() };
            name.and_then(|n| n.to_str()).map(str::to_string)
        })
        .unwrap_or_else(|| dir.display().to_string());
    if dir.join("jobs.csv").is_file() {
        let run = read_real_runs(&[(real_name.clone(), dir.to_path_buf())])?.remove(0);
        let failed = run.jobs.iter().filter(|j| !j.succeeded()).count();
        if failed > 0 {
            log::warn!("{real_name}: {failed} job(s) did not succeed and are left out of the pairing");
        }
        let mut ok: Vec<_> = run.succeeded().collect();
        ok.sort_by(|a, b| (a.submit_ms, &a.key).cmp(&(b.submit_ms, &b.key)));
        let real: Vec<RealSide> = ok
            .into_iter()
            .filter_map(|j| j.response_s().map(|r| RealSide { key: j.key.clone(), response_s: r }))
            .collect();
        let label = format!("sim {policy} vs real {real_name}");
        let real = by_sim_names(&sim, real);
        return Fidelity::pair_ordered(&label, "real", sim, real);
    }
    let sls = read_sls_run(&real_name, dir)?;
    Fidelity::pair(&format!("sim {policy} vs SLS {real_name}"), sim, &sls)
}

/// `real` in the order of the simulator's jobs (submission order, as
/// [`Fidelity::pair_ordered`] sorts them) when each simulated job's name is
/// exactly one real job's: a job-DAG run's children are submitted when their
/// parents finish, so the two runs' submission orders can differ. Otherwise
/// `real` as given (GridMix and SLS runs name jobs by trace order).
fn by_sim_names(sim: &[SimJob], real: Vec<RealSide>) -> Vec<RealSide> {
    let mut order: Vec<&SimJob> = sim.iter().collect();
    order.sort_by(|a, b| a.submit_s.total_cmp(&b.submit_s).then(a.id.cmp(&b.id)));
    let mut by_name: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, r) in real.iter().enumerate() {
        if by_name.insert(r.key.as_str(), i).is_some() {
            return real; // a name twice: no pairing by name
        }
    }
    let picks: Option<Vec<usize>> = order.iter().map(|j| by_name.get(j.name.as_str()).copied()).collect();
    match picks {
        Some(p) if p.len() == real.len() => {
            let mut slots: Vec<Option<RealSide>> = real.into_iter().map(Some).collect();
            p.into_iter().filter_map(|i| slots[i].take()).collect()
        }
        _ => real,
    }
}

fn cell(x: Option<f64>) -> String {
    x.map_or("—".to_string(), |v| format!("{v:.1}"))
}

fn signed(x: Option<f64>) -> String {
    x.map_or("—".to_string(), |v| format!("{v:+.1}%"))
}

/// The summary table (one row per pair) and, per pair, the per-job table, in markdown.
pub fn markdown(pairs: &[Fidelity]) -> String {
    // The real side's name in the headers: SLS, real, or both.
    let mut kinds: Vec<&str> = pairs.iter().map(|p| p.kind).collect();
    kinds.dedup();
    let real = if kinds.len() == 1 { kinds[0] } else { "real/SLS" };
    let mut s = format!(
        "| pair | jobs | mean sim (s) | mean {real} (s) | mean gap | p50 sim | p50 {real} | p90 sim | p90 {real} | p90 gap | p99 sim | p99 {real} | per-job abs diff p50 / max (s) |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for p in pairs {
        let (a, b, d) = (p.sim(), p.real(), p.abs_diff());
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
            "\n{}: response per job (s)\n\n| sim job | {k} job | submit (s) | sim | {k} | sim − {k} |\n|---:|---|---:|---:|---:|---:|\n",
            p.label,
            k = p.kind
        );
        for j in &p.jobs {
            let _ = writeln!(
                s,
                "| {} | {} | {:.1} | {:.1} | {:.1} | {:+.1} |",
                j.sim_id,
                j.real_key,
                j.submit_s,
                j.sim_s,
                j.real_s,
                j.sim_s - j.real_s
            );
        }
    }
    s
}

/// One CSV row per pair: the figures of the summary table.
pub fn summary_csv(pairs: &[Fidelity]) -> String {
    let mut s = String::from("pair,jobs,sim_mean_s,real_mean_s,mean_gap_pct,sim_p90_s,real_p90_s,p90_gap_pct\n");
    for p in pairs {
        if let (Some(a), Some(b)) = (p.sim(), p.real()) {
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
        assert_eq!(jobs[0], SimJob { id: 1, name: "b".into(), submit_s: 5.0, response_s: 20.0 });
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
        assert_eq!((f.jobs[0].sim_id, f.jobs[0].real_key.as_str()), (0, "app_0002"));
        assert_eq!((f.jobs[1].sim_s, f.jobs[1].real_s), (20.0, 22.0));
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

    /// A GridMix runner's directory: jobs paired by submission, a failed job left out (so
    /// the counts must still agree), the real side named by job name.
    #[test]
    fn pairs_a_run_of_real_jobs_by_submission() {
        let dir = std::env::temp_dir().join(format!("sojourn-fidelity-real-{}", std::process::id()));
        let run = dir.join("sojourn-hfsp");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(
            run.join("jobs.csv"),
            "app_id,name,queue,user,state,final_status,submit_ms,launch_ms,finish_ms,response_ms\n\
             application_1_0002,GRIDMIX000001,default,u,FINISHED,SUCCEEDED,6000,7000,31000,25000\n\
             application_1_0001,GRIDMIX000000,default,u,FINISHED,SUCCEEDED,1000,2000,13000,12000\n",
        )
        .unwrap();
        let csv = dir.join("jobs-hfsp.csv");
        std::fs::write(&csv, SIM).unwrap();
        let f = read_pair(&format!("{}={}", csv.display(), run.display())).unwrap();
        assert_eq!(f.label, "sim hfsp vs real sojourn-hfsp");
        assert_eq!(f.kind, "real");
        // sim job 0 (submitted first, 10 s) against GRIDMIX000000 (12 s); job 1 (20 s) against 25 s.
        let got: Vec<_> = f.jobs.iter().map(|j| (j.sim_id, j.real_key.as_str(), j.sim_s, j.real_s)).collect();
        assert_eq!(got, vec![(0, "GRIDMIX000000", 10.0, 12.0), (1, "GRIDMIX000001", 20.0, 25.0)]);
        let md = markdown(std::slice::from_ref(&f));
        assert!(
            md.contains("| mean real (s) |") && md.contains("| 0 | GRIDMIX000000 | 0.0 | 10.0 | 12.0 | -2.0 |"),
            "{md}"
        );
        // A failed job is not paired: 2 sim jobs against 1 succeeded real job is an error.
        std::fs::write(
            run.join("jobs.csv"),
            "app_id,name,queue,user,state,final_status,submit_ms,launch_ms,finish_ms,response_ms\n\
             application_1_0002,GRIDMIX000001,default,u,FINISHED,FAILED,6000,7000,31000,25000\n\
             application_1_0001,GRIDMIX000000,default,u,FINISHED,SUCCEEDED,1000,2000,13000,12000\n",
        )
        .unwrap();
        let e = read_pair(&format!("{}={}", csv.display(), run.display())).unwrap_err().to_string();
        assert!(e.contains("the simulator finished 2 jobs and real 1"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A job-DAG run submits a child when its parents finish, so the real
    /// submission order can differ from the simulator's: jobs pair by name
    /// when every simulated job's name is exactly one real job's.
    #[test]
    fn dag_jobs_pair_by_name_when_names_match_one_to_one() {
        let sim = |name: &str, id: u64, submit_s: f64| SimJob { id, name: name.into(), submit_s, response_s: 1.0 };
        let real = |key: &str| RealSide { key: key.into(), response_s: 2.0 };
        let sims = vec![sim("join", 2, 5.0), sim("left", 0, 0.0), sim("right", 1, 0.0)];
        let got = by_sim_names(&sims, vec![real("right"), real("join"), real("left")]);
        let keys: Vec<&str> = got.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["left", "right", "join"], "the simulator's submission order, by name");
        let f = Fidelity::pair_ordered("t", "real", sims.clone(), got).unwrap();
        assert!(f.jobs.iter().all(|g| sims.iter().any(|s| s.id == g.sim_id && s.name == g.real_key)));
        // A name the real run lacks, or one it has twice: the real order as given.
        let as_given = by_sim_names(&sims, vec![real("right"), real("join"), real("other")]);
        assert_eq!(as_given.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(), ["right", "join", "other"]);
        let twice = by_sim_names(&sims, vec![real("left"), real("left"), real("join")]);
        assert_eq!(twice.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(), ["left", "left", "join"]);
    }
}
