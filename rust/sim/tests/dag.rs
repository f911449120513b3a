//! Job dependencies (`JobSpec::dag`) through the whole simulator: a job with
//! parents is submitted when the last of them finishes, and a query (a DAG)
//! is reported from its submission to its last job's finish.

mod common;
use common::{job, map_reduce_job};
use proptest::prelude::*;
use sojourn_core::{Resources, Time};
use sojourn_sim::engine::{simulate, SimConfig};
use sojourn_sim::run::{QueryRecord, RunResult};
use sojourn_sim::workload::{self, ClusterSpec, JobDag, JobSpec};
use std::collections::BTreeMap;

fn in_query(mut j: JobSpec, query: u64, parents: &[u64]) -> JobSpec {
    j.dag = Some(JobDag { query, parents: parents.to_vec() });
    j
}

fn run(policy: &str, cluster: &ClusterSpec, jobs: Vec<JobSpec>, heartbeat_ms: u64) -> RunResult {
    let cfg = SimConfig { policy: policy.into(), heartbeat_ms, check_invariants: true, ..SimConfig::default() };
    simulate(cluster, Box::new(jobs.into_iter().map(Ok)), "dag", &cfg, None).expect("run")
}

/// (id, submit s, finish s) of every finished job, by id.
fn times(r: &RunResult) -> Vec<(u64, f64, f64)> {
    let mut v: Vec<_> = r.jobs.iter().map(|j| (j.id, j.submit.as_secs_f64(), j.finish.as_secs_f64())).collect();
    v.sort_by_key(|x| x.0);
    v
}

/// A diamond on one node with two slots, under fifo, event-driven. A (one
/// 10 s map) and B (one 4 s map) start at 0; the unrelated job D (one 2 s
/// map, submitted at 1) takes B's slot at 4 and ends at 6. The join C (a 3 s
/// map, a 5 s reduce) is held although a slot is free from 6: it is
/// submitted when A, its last parent, ends at 10; its map runs 10–13 and its
/// reduce 13–18. The query runs from 0 to 18.
#[test]
fn the_join_of_a_diamond_waits_for_both_parents() {
    let cluster = ClusterSpec::uniform(1, Resources::new(2048, 2), 1);
    let jobs = vec![
        in_query(job(0, 0, &[10]), 7, &[]),
        in_query(job(1, 0, &[4]), 7, &[]),
        in_query(map_reduce_job(2, 0, &[3], &[5]), 7, &[0, 1]),
        job(3, 1, &[2]),
    ];
    let r = run("fifo", &cluster, jobs, 0);
    assert_eq!(r.unfinished, 0);
    assert_eq!(times(&r), vec![(0, 0.0, 10.0), (1, 0.0, 4.0), (2, 10.0, 18.0), (3, 1.0, 6.0)]);
    let q = QueryRecord { id: 7, first_job: "job0".into(), jobs: 3, submit: Time(0), finish: Time(18_000) };
    assert_eq!(r.queries, vec![q]);
    assert_eq!(r.queries[0].response_ms(), 18_000);
    assert_eq!(r.unfinished_queries, 0);
}

/// A job submitted after its parents finished is not delayed: it starts at
/// its own submit time.
#[test]
fn a_job_whose_parents_are_done_enters_at_its_own_submit_time() {
    let cluster = ClusterSpec::uniform(1, Resources::new(2048, 2), 1);
    let jobs = vec![in_query(job(0, 0, &[3]), 1, &[]), in_query(job(1, 5, &[2]), 1, &[0])];
    let r = run("fifo", &cluster, jobs, 0);
    assert_eq!(times(&r), vec![(0, 0.0, 3.0), (1, 5.0, 7.0)]);
    assert_eq!(r.queries[0].response_ms(), 7_000);
}

/// A parent that is not an earlier job of the same query would never be
/// waited for correctly: the run refuses it, naming the job.
#[test]
fn a_parent_outside_the_query_is_an_error() {
    let cluster = ClusterSpec::uniform(1, Resources::new(2048, 2), 1);
    for jobs in [
        vec![in_query(job(0, 0, &[3]), 1, &[]), in_query(job(1, 0, &[2]), 2, &[0])],
        vec![in_query(job(0, 0, &[3]), 1, &[1]), in_query(job(1, 0, &[2]), 1, &[])],
    ] {
        let cfg = SimConfig { heartbeat_ms: 0, ..SimConfig::default() };
        let e = simulate(&cluster, Box::new(jobs.into_iter().map(Ok)), "dag", &cfg, None).unwrap_err();
        assert!(e.to_string().contains("names parent"), "{e}");
    }
}

/// Without DAGs a run has no query records (and its outputs no query rows).
#[test]
fn independent_jobs_make_no_queries() {
    let cluster = ClusterSpec::uniform(1, Resources::new(2048, 2), 1);
    let r = run("fifo", &cluster, vec![job(0, 0, &[3]), job(1, 0, &[2])], 0);
    assert!(r.queries.is_empty() && r.unfinished_queries == 0);
}

/// Two rounds of L1..L17 from the generator spec: 58 jobs in 34 queries.
#[test]
fn the_generator_spec_gives_whole_rounds() {
    let jobs: Vec<JobSpec> =
        workload::open("pigmix-dag:dev:queries=34:seed=2").unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(jobs.len(), 58);
    let with_parents = jobs.iter().filter(|j| j.dag.as_ref().is_some_and(|d| !d.parents.is_empty())).count();
    assert_eq!(with_parents, 10);
    assert!(workload::open("pigmix-dag:dev:jobs=3").err().unwrap().message.contains("queries=N"));
    assert!(workload::open("pigmix-dag:nope").err().unwrap().message.contains("unknown pigmix-dag workload"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Under fifo, fair, capacity and hfsp, with NM heartbeats or without:
    /// every job is submitted no earlier than its parents' last finish (and
    /// no job starts before its submission), every job and query finishes,
    /// and each query spans its jobs' first submission to last finish.
    #[test]
    fn no_job_enters_before_its_parents_finish(
        seed in 0u64..1000,
        mix in prop_oneof![Just("dev"), Just("test"), Just("prod")],
        nodes in 1usize..4,
        heartbeat in prop_oneof![Just(0u64), Just(1000u64)],
    ) {
        // Small bins keep a case quick; the shapes are the queries' own.
        let spec = format!(
            "pigmix-dag:{mix}:queries=20:seed={seed}:parallel=3:interarrival_s=10:bin2_maps=2-6:bin3_maps=3-8:bin4_maps=4-10"
        );
        let jobs: Vec<JobSpec> = workload::open(&spec).unwrap().collect::<Result<_, _>>().unwrap();
        let by_id: BTreeMap<u64, &JobSpec> = jobs.iter().map(|j| (j.id, j)).collect();
        let cluster = ClusterSpec::uniform(nodes, Resources::new(8192, 8), 2);
        for policy in ["fifo", "fair", "capacity", "hfsp"] {
            let r = run(policy, &cluster, jobs.clone(), heartbeat);
            prop_assert_eq!(r.unfinished, 0, "{}", policy);
            prop_assert_eq!(r.queries.len(), 20, "{}", policy);
            let rec: BTreeMap<u64, _> = r.jobs.iter().map(|j| (j.id, j)).collect();
            for j in &r.jobs {
                let spec = by_id[&j.id];
                let parents = &spec.dag.as_ref().unwrap().parents;
                let last = parents.iter().map(|p| rec[p].finish).max().unwrap_or(Time::ZERO);
                prop_assert!(j.submit >= last.max(spec.submit), "{}: job {} entered at {} before {}", policy, j.id, j.submit, last);
                if !parents.is_empty() {
                    prop_assert_eq!(j.submit, last.max(spec.submit), "{}: job {} held too long", policy, j.id);
                }
            }
            for q in &r.queries {
                let of_q: Vec<_> = r.jobs.iter().filter(|j| by_id[&j.id].dag.as_ref().unwrap().query == q.id).collect();
                prop_assert_eq!(q.jobs as usize, of_q.len());
                prop_assert_eq!(Some(q.submit), of_q.iter().map(|j| j.submit).min());
                prop_assert_eq!(Some(q.finish), of_q.iter().map(|j| j.finish).max());
            }
        }
    }
}
