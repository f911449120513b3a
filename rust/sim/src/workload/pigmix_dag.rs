//! PigMix's queries as job DAGs (`pigmix-dag:WORKLOAD`): each query is the
//! chain of MapReduce jobs PigMix's native MapReduce implementation of it
//! builds (integration/results/gridmix.md §5.1), its tasks sized by the HFSP
//! testbed's bins as the `pigmix:WORKLOAD` mix sizes independent jobs
//! ([`super::job_mixes::PIGMIX_BINS`], with the same per-bin keys).
//!
//! Queries arrive as the `pigmix` mix's jobs do (Poisson, mean 30 s for
//! `dev`, 60 s for `test` and `prod`) and cycle through L1..L17 in order;
//! each draws its bin (the data set's size) from the workload's bin weights.
//! Every job of a query is submitted with it; a job with parents waits for
//! them in the simulator (`JobSpec::dag`). A full L1..L17 round is 29 jobs.
//!
//! Map counts follow each job's input (our reading of §5.1): a job over
//! page_views draws its maps from the bin's range; L11's widerow is 1/40 of
//! page_views (25 GB to 1 TB) and L17's widegroupbydata 3×; a small input
//! (users, L13's 250-row side) has one map; a job that reads its parents'
//! outputs has one map per output file, i.e. per reduce of a parent, or per
//! map of a map-only parent. Reduce counts are the queries': `parallel` (40,
//! PigMix's runner) except L2 (map-only), L8 (1) and L9, L10 (40).

use super::job_mixes::{lognormal_times, uniform_in, GridMixOptions};
use super::synthetic::{job, job_count, streams, whole, Poisson};
use super::{pick_weighted, JobDag, JobSpec, TaskGroup};
use sojourn_core::Rng;
use std::collections::VecDeque;

pub mod export;

/// Where a job's maps come from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Input {
    /// page_views scaled by this factor: maps drawn from the bin's range, times the factor (at least 1).
    PageViews(f64),
    /// A small table: one map.
    Small,
    /// The outputs of its parents: one map per file they wrote.
    Parents,
}

/// A job's reduce count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reduces {
    /// The query's `parallel` argument.
    Parallel,
    Fixed(u32),
}

/// One job of a query: its input, reduces, and parents (indices of earlier jobs of the query).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DagJob {
    pub input: Input,
    pub reduces: Reduces,
    pub parents: &'static [usize],
}

const PV: Input = Input::PageViews(1.0);
const ONE: DagJob = DagJob { input: PV, reduces: Reduces::Parallel, parents: &[] };
/// Two map-only tagging jobs, then a reduce-side join of their outputs.
const DIAMOND: [DagJob; 3] = [
    DagJob { input: PV, reduces: Reduces::Fixed(0), parents: &[] },
    DagJob { input: Input::Small, reduces: Reduces::Fixed(0), parents: &[] },
    DagJob { input: Input::Parents, reduces: Reduces::Parallel, parents: &[0, 1] },
];

/// The jobs of query L`n` (1..=17), from gridmix.md §5.1.
pub fn query_jobs(n: usize) -> Vec<DagJob> {
    match n {
        2 => vec![DagJob { input: PV, reduces: Reduces::Fixed(0), parents: &[] }],
        3 | 5 | 13 | 14 => DIAMOND.to_vec(),
        8 => vec![DagJob { input: PV, reduces: Reduces::Fixed(1), parents: &[] }],
        9 | 10 => vec![DagJob { input: PV, reduces: Reduces::Fixed(40), parents: &[] }],
        11 => vec![
            ONE,
            DagJob { input: Input::PageViews(1.0 / 40.0), reduces: Reduces::Parallel, parents: &[] },
            DagJob { input: Input::Parents, reduces: Reduces::Parallel, parents: &[0, 1] },
        ],
        12 => vec![ONE; 3],
        17 => vec![DagJob { input: Input::PageViews(3.0), ..ONE }],
        _ => vec![ONE],
    }
}

/// Queries L1..L17.
pub const QUERIES: usize = 17;

#[derive(Clone, Debug, PartialEq)]
pub struct PigMixDagOptions {
    /// The `pigmix:WORKLOAD` mix: bins and their weights, arrivals, seed, task times.
    pub mix: GridMixOptions,
    pub queries: u64,
    /// PigMix's `parallel` argument: the reduce count of most jobs.
    pub parallel: u32,
}

impl PigMixDagOptions {
    /// The DAG form of `pigmix:WORKLOAD` (`dev`, `test`, `prod`): 100 queries, `parallel` 40.
    pub fn new(workload: &str, queries: u64, seed: u64) -> Option<PigMixDagOptions> {
        let mix = GridMixOptions::pigmix(workload, 0, seed)?;
        Some(PigMixDagOptions { mix, queries, parallel: 40 })
    }

    /// Sets one option by name: `queries`, `parallel`, or a key of the
    /// `pigmix` mix ([`GridMixOptions::set`]) other than `jobs` and the
    /// per-bin reduce counts, which the queries' shapes fix.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "queries" => self.queries = job_count(key, value)?,
            "parallel" => {
                let n = whole(key, value)?;
                if !(1..=100_000).contains(&n) {
                    return Err(format!("parallel: expected 1 to 100000 reduces, found {value:?}"));
                }
                self.parallel = n as u32;
            }
            "jobs" => return Err("pigmix-dag counts queries, not jobs: use queries=N".into()),
            k if k.ends_with("_reduces") => {
                return Err(format!("{k}: pigmix-dag's reduce counts are the queries' own (set parallel)"))
            }
            _ => self.mix.set(key, value)?,
        }
        Ok(())
    }
}

/// The job stream: queries' jobs in order, each query's at its arrival.
#[derive(Clone, Debug)]
pub struct PigMixDagJobs {
    opts: PigMixDagOptions,
    arrivals: Poisson,
    rng: Rng,
    next_query: u64,
    next_id: u64,
    pending: VecDeque<JobSpec>,
}

impl PigMixDagJobs {
    pub fn new(opts: PigMixDagOptions) -> PigMixDagJobs {
        let (a, rng) = streams(opts.mix.seed);
        let arrivals = Poisson::new(a, opts.mix.mean_interarrival_s);
        PigMixDagJobs { opts, arrivals, rng, next_query: 0, next_id: 0, pending: VecDeque::new() }
    }

    /// Draws query `q` (L`q mod 17 + 1`) into `pending`.
    fn draw_query(&mut self, q: u64) {
        let submit = self.arrivals.next();
        let n = (q % QUERIES as u64) as usize + 1;
        let weights: Vec<f64> = self.opts.mix.classes.iter().map(|c| c.weight).collect();
        let bin = self.opts.mix.classes[pick_weighted(&mut self.rng, &weights)];
        let (sigma, f) = (self.opts.mix.sigma, self.opts.mix.time_scale);
        let first_id = self.next_id;
        // Files each job writes: its reduces, or its maps when map-only.
        let mut outputs: Vec<usize> = Vec::new();
        for (k, shape) in query_jobs(n).into_iter().enumerate() {
            let maps = match shape.input {
                Input::PageViews(scale) => {
                    ((uniform_in(&mut self.rng, bin.maps) as f64 * scale).ceil() as usize).max(1)
                }
                Input::Small => 1,
                Input::Parents => shape.parents.iter().map(|p| outputs[*p]).sum::<usize>().max(1),
            };
            let reduces = match shape.reduces {
                Reduces::Parallel => self.opts.parallel as usize,
                Reduces::Fixed(r) => r as usize,
            };
            outputs.push(if reduces > 0 { reduces } else { maps });
            let mut groups = vec![TaskGroup::maps(
                self.opts.mix.map_container,
                lognormal_times(&mut self.rng, maps, bin.map_s * f, sigma),
            )];
            if reduces > 0 {
                let times = lognormal_times(&mut self.rng, reduces, bin.reduce_s * f, sigma);
                groups.push(TaskGroup::reduces(self.opts.mix.reduce_container, times));
            }
            let id = self.next_id;
            self.next_id += 1;
            let name = format!("{}-dag-q{q}-L{n}-{}-{k}", self.opts.mix.prefix, bin.name);
            let mut j = job(id, name, submit, groups);
            j.dag = Some(JobDag { query: q, parents: shape.parents.iter().map(|p| first_id + *p as u64).collect() });
            self.pending.push_back(j);
        }
    }
}

impl Iterator for PigMixDagJobs {
    type Item = JobSpec;

    fn next(&mut self) -> Option<JobSpec> {
        if self.pending.is_empty() && self.next_query < self.opts.queries {
            let q = self.next_query;
            self.next_query += 1;
            self.draw_query(q);
        }
        self.pending.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(spec: &[(&str, &str)]) -> Vec<JobSpec> {
        let mut o = PigMixDagOptions::new("test", 17, 3).unwrap();
        for (k, v) in spec {
            o.set(k, v).unwrap();
        }
        PigMixDagJobs::new(o).collect()
    }

    /// One L1..L17 round: 29 jobs, 9 of them map-only; the five diamonds'
    /// third job waits for the two before it, and nothing else waits.
    #[test]
    fn one_round_has_the_queries_shapes() {
        let jobs = draw(&[]);
        assert_eq!(jobs.len(), 29);
        let map_only = jobs.iter().filter(|j| j.groups.len() == 1).count();
        assert_eq!(map_only, 9);
        let of = |n: usize| -> Vec<&JobSpec> { jobs.iter().filter(|j| j.name.contains(&format!("-L{n}-"))).collect() };
        for n in 1..=17 {
            let js = of(n);
            let want = match n {
                3 | 5 | 11 | 12 | 13 | 14 => 3,
                _ => 1,
            };
            assert_eq!(js.len(), want, "L{n}");
            let q = js[0].dag.as_ref().unwrap().query;
            assert!(js.iter().all(|j| j.dag.as_ref().unwrap().query == q && j.submit == js[0].submit), "L{n}");
            for (k, j) in js.iter().enumerate() {
                let parents = &j.dag.as_ref().unwrap().parents;
                if [3, 5, 11, 13, 14].contains(&n) && k == 2 {
                    assert_eq!(parents, &vec![js[0].id, js[1].id], "L{n}");
                } else {
                    assert!(parents.is_empty(), "L{n} job {k}");
                }
            }
        }
        let reduces = |n: usize, k: usize| of(n)[k].groups.get(1).map_or(0, |g| g.durations_ms.len());
        assert_eq!((reduces(2, 0), reduces(8, 0), reduces(9, 0), reduces(10, 0)), (0, 1, 40, 40));
        assert_eq!((reduces(3, 0), reduces(3, 1), reduces(3, 2)), (0, 0, 40));
        assert_eq!((reduces(11, 0), reduces(11, 1), reduces(11, 2)), (40, 40, 40));
        // A join reads one split per file its parents wrote.
        let maps = |n: usize, k: usize| of(n)[k].groups[0].durations_ms.len();
        assert_eq!(maps(3, 1), 1);
        assert_eq!(maps(3, 2), maps(3, 0) + 1);
        assert_eq!(maps(11, 2), 80);
        // `parallel` changes the reduce counts it governs only.
        let p = draw(&[("parallel", "7")]);
        let count =
            |js: &[JobSpec]| js.iter().map(|j| j.groups.get(1).map_or(0, |g| g.durations_ms.len())).sum::<usize>();
        assert_eq!(count(&p), 7 * 17 + 1 + 40 + 40);
        assert_eq!(count(&jobs), 40 * 17 + 1 + 40 + 40);
    }

    #[test]
    fn queries_cycle_and_ids_follow_the_stream() {
        let mut o = PigMixDagOptions::new("dev", 40, 1).unwrap();
        o.set("sigma", "0").unwrap();
        let jobs: Vec<JobSpec> = PigMixDagJobs::new(o).collect();
        assert!(jobs.iter().enumerate().all(|(i, j)| j.id == i as u64));
        assert!(jobs.windows(2).all(|w| w[0].submit <= w[1].submit));
        let queries: Vec<u64> = jobs.iter().map(|j| j.dag.as_ref().unwrap().query).collect();
        assert_eq!(*queries.last().unwrap(), 39);
        assert!(jobs[29].name.contains("-q17-L1-"), "{}", jobs[29].name);
        // With sigma 0 every task takes its bin's mean.
        for j in &jobs {
            let bin = super::super::job_mixes::PIGMIX_BINS.iter().find(|b| j.name.contains(b.name)).unwrap();
            assert!(j.groups[0].durations_ms.iter().all(|d| *d == (bin.map_s * 1000.0) as u64));
        }
    }

    #[test]
    fn keys_that_the_shapes_fix_are_refused() {
        let mut o = PigMixDagOptions::new("test", 1, 1).unwrap();
        assert!(o.set("jobs", "3").unwrap_err().contains("queries=N"));
        assert!(o.set("bin2_reduces", "3").unwrap_err().contains("parallel"));
        assert!(o.set("parallel", "0").unwrap_err().contains("parallel"));
        assert!(o.set("bin9_map_s", "3").unwrap_err().contains("unknown key"));
        o.set("bin2_map_s", "3").unwrap();
        assert!(PigMixDagOptions::new("stage", 1, 1).is_none());
    }
}
