//! Reading back the job-DAG CSV that `sojourn export-dag` writes and the
//! real-cluster runner (`PigmixDagRunner`) runs (gridmix.md §5.3), so the
//! simulator runs exactly the jobs a real run ran and the two can be paired
//! job by job (issue 19, item 4). Columns, after the header
//! [`DAG_HEADER`]: `query,job,name,submit_ms,parents,maps,reduces,map_ms,reduce_ms`.
//! Every map of a row sleeps `map_ms` and every reduce `reduce_ms`, as
//! Hadoop's SleepJob does; each task asks for `task_mb` MB and one vcore
//! (the runner's `mapreduce.map.memory.mb` and `.reduce.memory.mb`, 384).

use std::collections::BTreeSet;
use std::path::Path;

use sojourn_core::{Resources, Time};

use super::pigmix_dag::export::DAG_HEADER;
use super::text::Lines;
use super::{synthetic, JobDag, JobSpec, TaskGroup, WorkloadError};

/// `dag:FILE[:task_mb=N]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DagCsvOptions {
    /// Memory of each map and reduce container (MB).
    pub task_mb: u64,
}

impl Default for DagCsvOptions {
    fn default() -> Self {
        DagCsvOptions { task_mb: 384 }
    }
}

impl DagCsvOptions {
    pub fn set(&mut self, k: &str, v: &str) -> Result<(), String> {
        match k {
            "task_mb" => {
                self.task_mb = v
                    .parse()
                    .ok()
                    .filter(|mb| *mb > 0)
                    .ok_or_else(|| format!("task_mb: expected a positive whole number of MB, found {v:?}"))?
            }
            _ => return Err(format!("unknown key {k:?} for a job-DAG CSV (known: jobs, task_mb)")),
        }
        Ok(())
    }
}

/// The jobs of the file, in its row order (parents before their children).
pub fn open(
    path: &Path,
    opts: &DagCsvOptions,
) -> Result<std::vec::IntoIter<Result<JobSpec, WorkloadError>>, WorkloadError> {
    let mut lines = Lines::open(path)?;
    let jobs = read(&mut lines, opts)?;
    Ok(jobs.into_iter().map(Ok).collect::<Vec<_>>().into_iter())
}

fn read<R: std::io::BufRead>(lines: &mut Lines<R>, opts: &DagCsvOptions) -> Result<Vec<JobSpec>, WorkloadError> {
    let (at, header) = lines.next().ok_or_else(|| lines.error(1, "empty file, expected the job-DAG header"))??;
    if header.trim() != DAG_HEADER {
        return Err(lines.error(at, format!("the header is not the job-DAG header {DAG_HEADER:?}")));
    }
    let size = Resources::new(opts.task_mb, 1);
    let mut seen = BTreeSet::new();
    let mut jobs = Vec::new();
    while let Some(row) = lines.next() {
        let (n, line) = row?;
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 9 {
            return Err(lines.error(n, format!("{} columns, expected 9", f.len())));
        }
        let num = |c: usize, what: &str| {
            f[c].parse::<u64>().map_err(|_| lines.error(n, format!("{what} {:?} is not a whole number", f[c])))
        };
        let (query, id, submit) = (num(0, "query")?, num(1, "job")?, num(3, "submit_ms")?);
        let mut parents = Vec::new();
        for p in f[4].split(';').filter(|p| !p.is_empty()) {
            let p = p.parse::<u64>().map_err(|_| lines.error(n, format!("parent {p:?} is not a job id")))?;
            if !seen.contains(&p) {
                return Err(lines.error(n, format!("job {id} waits for job {p}, which is not an earlier row")));
            }
            parents.push(p);
        }
        if !seen.insert(id) {
            return Err(lines.error(n, format!("job id {id} appears twice")));
        }
        let (maps, reduces) = (num(5, "maps")?, num(6, "reduces")?);
        let (map_ms, reduce_ms) = (num(7, "map_ms")?, num(8, "reduce_ms")?);
        if maps == 0 {
            return Err(lines.error(n, "a job needs at least one map"));
        }
        if maps > 1_000_000 || reduces > 1_000_000 {
            return Err(lines.error(n, "more than 1,000,000 maps or reduces"));
        }
        let mut groups = vec![TaskGroup::maps(size, vec![map_ms.max(1); maps as usize])];
        if reduces > 0 {
            groups.push(TaskGroup::reduces(size, vec![reduce_ms.max(1); reduces as usize]));
        }
        let job = synthetic::job(id, f[2].to_string(), Time(submit), groups);
        jobs.push(JobSpec { dag: Some(JobDag { query, parents }), ..job });
    }
    // Rows are in query order; a later query may not arrive earlier.
    jobs.sort_by_key(|j| (j.submit, j.id));
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::pigmix_dag::export::{dag_csv, DagExportOptions};

    fn parse(text: &str) -> Result<Vec<JobSpec>, WorkloadError> {
        read(&mut Lines::of_str(text, "dag.csv"), &DagCsvOptions::default())
    }

    /// What export-dag writes reads back as the same queries, parents,
    /// arrivals and task shapes.
    #[test]
    fn an_exported_dag_reads_back() {
        let spec = "pigmix-dag:dev:queries=4:sigma=0:seed=2";
        let jobs = crate::workload::open(spec).unwrap().collect::<Result<Vec<_>, _>>().unwrap();
        let csv = dag_csv(&jobs, &DagExportOptions::default()).unwrap();
        let back = parse(&csv).unwrap();
        assert_eq!(back.len(), jobs.len());
        let origin = jobs[0].submit.ms();
        for (a, b) in jobs.iter().zip(&back) {
            assert_eq!((a.id, &a.name, a.dag.clone()), (b.id, &b.name, b.dag.clone()));
            assert_eq!(a.submit.ms() - origin, b.submit.ms());
            // sigma 0: each task takes its mean, as the file's one figure per phase says.
            let shape = |j: &JobSpec| j.groups.iter().map(|g| (g.phase, g.durations_ms.clone())).collect::<Vec<_>>();
            assert_eq!(shape(a), shape(b));
            assert!(b.groups.iter().all(|g| g.resources == Resources::new(384, 1)));
        }
        assert!(back.iter().any(|j| j.dag.as_ref().is_some_and(|d| d.parents.len() == 2)), "a diamond's join");
    }

    #[test]
    fn refusals_name_the_line() {
        let h = format!("{DAG_HEADER}\n");
        for (text, says) in [
            ("query,job\n".to_string(), "not the job-DAG header"),
            (format!("{h}0,0,a,0,,1,0,5\n"), "dag.csv:2: 8 columns"),
            (format!("{h}0,0,a,0,1,1,0,5,0\n"), "dag.csv:2: job 0 waits for job 1, which is not an earlier row"),
            (format!("{h}0,0,a,0,,1,0,5,0\n0,0,b,0,,1,0,5,0\n"), "dag.csv:3: job id 0 appears twice"),
            (format!("{h}0,0,a,x,,1,0,5,0\n"), "submit_ms \"x\" is not a whole number"),
            (format!("{h}0,0,a,0,,0,1,5,5\n"), "at least one map"),
        ] {
            let e = parse(&text).expect_err(&text).to_string();
            assert!(e.contains(says) && e.contains("dag.csv"), "{text}: {e}");
        }
    }
}
