//! Writing a workload's job DAGs (`pigmix-dag:…`, or any workload) as a CSV
//! file that the real-cluster runner (`org.sojourn.yarn.gridmix.PigmixDagRunner`)
//! submits as Hadoop SleepJobs (`sojourn export-dag`, gridmix.md §5.3).
//!
//! One row per job, in stream order, after a header:
//!
//! `query,job,name,submit_ms,parents,maps,reduces,map_ms,reduce_ms`
//!
//! - `query`: the job's query ([`super::super::JobDag::query`]; an independent
//!   job is a query of its own, numbered by its id).
//! - `job`: the job's id; `parents`: the ids of the jobs it waits for,
//!   `;`-separated (empty: none), always earlier rows.
//! - `submit_ms`: the query's arrival, ms after the first job's, divided by
//!   `compress`.
//! - `maps`, `reduces`: task counts, capped at `max_maps`/`max_reduces`
//!   (a map-only job keeps 0 reduces).
//! - `map_ms`, `reduce_ms`: the MEAN task time of the job's maps and reduces
//!   (SleepJob sleeps every map, and every reduce, for the same time), divided
//!   by `compress`, then capped at `max_map_ms`/`max_reduce_ms`, at least 1 ms;
//!   0 when the job has no such tasks.
//!
//! Every cap is applied here, so the file is exactly what the runner runs.

use std::fmt::Write as _;

use sojourn_core::Phase;

use crate::engine::SimError;
use crate::workload::JobSpec;

/// How a workload is scaled down for a small real cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct DagExportOptions {
    /// Divides arrival times and task times (≥ 1).
    pub compress: f64,
    pub max_maps: Option<u64>,
    pub max_reduces: Option<u64>,
    pub max_map_ms: Option<u64>,
    pub max_reduce_ms: Option<u64>,
}

impl Default for DagExportOptions {
    fn default() -> Self {
        DagExportOptions { compress: 1.0, max_maps: None, max_reduces: None, max_map_ms: None, max_reduce_ms: None }
    }
}

/// The file's header; the runner checks it.
pub const DAG_HEADER: &str = "query,job,name,submit_ms,parents,maps,reduces,map_ms,reduce_ms";

impl DagExportOptions {
    fn check(&self) -> Result<(), SimError> {
        if !(self.compress.is_finite() && self.compress >= 1.0) {
            return Err(SimError::Config(format!("export-dag: --compress must be ≥ 1, got {}", self.compress)));
        }
        for (name, cap) in [
            ("--max-maps", self.max_maps),
            ("--max-reduces", self.max_reduces),
            ("--max-map-ms", self.max_map_ms),
            ("--max-reduce-ms", self.max_reduce_ms),
        ] {
            if cap == Some(0) {
                return Err(SimError::Config(format!("export-dag: {name} must be ≥ 1")));
            }
        }
        Ok(())
    }

    /// A phase's task count and mean task time (ms), scaled and capped.
    fn phase(&self, job: &JobSpec, phase: Phase) -> (u64, u64) {
        let times: Vec<u64> =
            job.groups.iter().filter(|g| g.phase == phase).flat_map(|g| g.durations_ms.iter().copied()).collect();
        if times.is_empty() {
            return (0, 0);
        }
        let (max_n, max_ms) =
            if phase == Phase::Map { (self.max_maps, self.max_map_ms) } else { (self.max_reduces, self.max_reduce_ms) };
        let mean = times.iter().sum::<u64>() as f64 / times.len() as f64 / self.compress;
        let n = (times.len() as u64).min(max_n.unwrap_or(u64::MAX));
        let ms = (mean.round() as u64).min(max_ms.unwrap_or(u64::MAX)).max(1);
        (n, ms)
    }
}

/// A name without the file's separators.
fn field(s: &str) -> String {
    s.replace([',', ';', '"', '\n', '\r'], " ")
}

/// The CSV of `jobs` (in stream order); errors when a job's parent is not an earlier job.
pub fn dag_csv(jobs: &[JobSpec], opts: &DagExportOptions) -> Result<String, SimError> {
    opts.check()?;
    let origin = jobs.iter().map(|j| j.submit.ms()).min().unwrap_or(0);
    let mut seen = std::collections::BTreeSet::new();
    let mut s = format!("{DAG_HEADER}\n");
    for j in jobs {
        let (query, parents) = match &j.dag {
            Some(d) => (d.query, d.parents.clone()),
            None => (j.id, Vec::new()),
        };
        if let Some(p) = parents.iter().find(|p| !seen.contains(*p)) {
            return Err(SimError::Config(format!(
                "export-dag: job {} ('{}') waits for job {p}, which is not an earlier job of the workload",
                j.id, j.name
            )));
        }
        if !seen.insert(j.id) {
            return Err(SimError::Config(format!("export-dag: job id {} appears twice", j.id)));
        }
        let submit = ((j.submit.ms() - origin) as f64 / opts.compress).round() as u64;
        let (maps, map_ms) = opts.phase(j, Phase::Map);
        let (reduces, reduce_ms) = opts.phase(j, Phase::Reduce);
        let parents: Vec<String> = parents.iter().map(u64::to_string).collect();
        let _ = writeln!(
            s,
            "{query},{},{},{submit},{},{maps},{reduces},{map_ms},{reduce_ms}",
            j.id,
            field(&j.name),
            parents.join(";")
        );
    }
    Ok(s)
}

/// `sojourn export-dag`: the workload `spec`'s jobs as [`dag_csv`]; returns the CSV and the job count.
pub fn export_dag(spec: &str, opts: &DagExportOptions) -> Result<(String, usize), SimError> {
    let jobs = crate::workload::open(spec)?.collect::<Result<Vec<JobSpec>, _>>()?;
    Ok((dag_csv(&jobs, opts)?, jobs.len()))
}

/// `sojourn export-dag`'s arguments.
#[derive(clap::Args, Debug)]
pub struct ExportDagArgs {
    /// The workload spec, as --workload takes (e.g. `pigmix-dag:dev:queries=6`).
    pub spec: String,
    /// Divide arrival times and task times by this (≥ 1).
    #[arg(long, default_value_t = 1.0)]
    pub compress: f64,
    /// Cap on each job's maps.
    #[arg(long)]
    pub max_maps: Option<u64>,
    /// Cap on each job's reduces.
    #[arg(long)]
    pub max_reduces: Option<u64>,
    /// Cap on a map's sleep (ms), after --compress.
    #[arg(long)]
    pub max_map_ms: Option<u64>,
    /// Cap on a reduce's sleep (ms), after --compress.
    #[arg(long)]
    pub max_reduce_ms: Option<u64>,
    /// The CSV to write.
    #[arg(short, long)]
    pub out: std::path::PathBuf,
}

/// `sojourn export-dag`: writes the CSV, returns what was written.
pub fn cli(a: &ExportDagArgs) -> Result<String, SimError> {
    let opts = DagExportOptions {
        compress: a.compress,
        max_maps: a.max_maps,
        max_reduces: a.max_reduces,
        max_map_ms: a.max_map_ms,
        max_reduce_ms: a.max_reduce_ms,
    };
    let (csv, n) = export_dag(&a.spec, &opts)?;
    std::fs::write(&a.out, csv).map_err(|e| SimError::Config(format!("cannot write {}: {e}", a.out.display())))?;
    Ok(format!("{n} jobs written to {}\n", a.out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(csv: &str) -> Vec<Vec<String>> {
        csv.lines().skip(1).map(|l| l.split(',').map(str::to_string).collect()).collect()
    }

    /// Three queries of pigmix-dag (L1, L2, L3): L3 is a diamond whose join
    /// waits for the two tagging jobs; counts and times follow the workload.
    #[test]
    fn pigmix_dag_rows_carry_queries_parents_and_task_shapes() {
        let spec = "pigmix-dag:dev:queries=3:sigma=0:seed=2";
        let (csv, n) = export_dag(spec, &DagExportOptions::default()).unwrap();
        let jobs = crate::workload::open(spec).unwrap().collect::<Result<Vec<_>, _>>().unwrap();
        assert_eq!(n, 5);
        assert_eq!(csv.lines().next(), Some(DAG_HEADER));
        let r = rows(&csv);
        assert_eq!(r.len(), 5);
        let col = |i: usize, c: usize| r[i][c].clone();
        assert_eq!((0..5).map(|i| col(i, 0)).collect::<Vec<_>>(), ["0", "1", "2", "2", "2"]);
        assert_eq!((col(4, 4), col(2, 4), col(0, 4)), ("2;3".to_string(), String::new(), String::new()));
        assert!(col(4, 2).contains("-q2-L3-"), "{}", col(4, 2));
        assert_eq!(col(0, 3), "0");
        assert_eq!(col(2, 3), (jobs[2].submit.ms() - jobs[0].submit.ms()).to_string());
        // L2 is map-only; the diamond's tagging jobs too, the users side with one map.
        assert_eq!((col(1, 6), col(1, 8)), ("0".to_string(), "0".to_string()));
        assert_eq!((col(3, 5), col(3, 6)), ("1".to_string(), "0".to_string()));
        for (i, j) in jobs.iter().enumerate() {
            assert_eq!(col(i, 5), j.groups[0].durations_ms.len().to_string());
            // sigma 0: every task takes its mean, which the row carries.
            assert_eq!(col(i, 7), j.groups[0].durations_ms[0].to_string());
        }
    }

    #[test]
    fn caps_and_compression_scale_the_rows() {
        let spec = "pigmix-dag:dev:queries=3:sigma=0:seed=2";
        let (plain, _) = export_dag(spec, &DagExportOptions::default()).unwrap();
        let opts = DagExportOptions {
            compress: 10.0,
            max_maps: Some(3),
            max_reduces: Some(2),
            max_map_ms: Some(4000),
            max_reduce_ms: Some(1),
        };
        let (small, _) = export_dag(spec, &opts).unwrap();
        let (p, s) = (rows(&plain), rows(&small));
        for (a, b) in p.iter().zip(&s) {
            let num = |r: &Vec<String>, c: usize| r[c].parse::<u64>().unwrap();
            assert_eq!(num(b, 3), (num(a, 3) as f64 / 10.0).round() as u64);
            assert_eq!(num(b, 5), num(a, 5).min(3));
            assert_eq!(num(b, 6), num(a, 6).min(2));
            assert_eq!(num(b, 7), ((num(a, 7) as f64 / 10.0).round() as u64).clamp(1, 4000));
            // A map-only job keeps 0 reduces and 0 reduce time.
            assert_eq!(num(b, 8), num(a, 8).min(1));
            // Query, id, name and parents are not scaled.
            assert_eq!((&a[..3], &a[4]), (&b[..3], &b[4]));
        }
    }

    #[test]
    fn bad_options_and_orphans_are_refused() {
        let o = DagExportOptions { compress: 0.5, ..Default::default() };
        assert!(export_dag("pigmix-dag:dev:queries=1", &o).unwrap_err().to_string().contains("--compress"));
        let o = DagExportOptions { max_maps: Some(0), ..Default::default() };
        assert!(export_dag("pigmix-dag:dev:queries=1", &o).unwrap_err().to_string().contains("--max-maps"));
        let mut jobs =
            crate::workload::open("pigmix-dag:dev:queries=3").unwrap().collect::<Result<Vec<_>, _>>().unwrap();
        // The join before its parents: the runner could never submit it.
        jobs.swap(2, 4);
        let e = dag_csv(&jobs, &DagExportOptions::default()).unwrap_err().to_string();
        assert!(e.contains("job 4") && e.contains("waits for job 2"), "{e}");
    }
}
