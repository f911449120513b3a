//! Job dependencies: the jobs of a query (a DAG, `JobSpec::dag`) that wait
//! for their parents, and each query's submission and finish, from which
//! its response time is reported. Jobs without a DAG pass straight through.

use crate::run::QueryRecord;
use crate::workload::JobSpec;
use sojourn_core::Time;
use std::collections::{BTreeMap, BTreeSet};

/// One query's books.
struct QueryBook {
    /// Its first job's submission: the query's.
    submit: Time,
    /// The latest finish of its jobs so far.
    finish: Time,
    first_job: String,
    /// Ids of its jobs that have arrived, and of those that have finished.
    arrived: BTreeSet<u64>,
    finished: BTreeSet<u64>,
    /// Jobs that arrived before their parents finished, in arrival order.
    held: Vec<JobSpec>,
}

#[derive(Default)]
pub(super) struct DagBook {
    /// By query id (ordered, so the query records come out in id order).
    queries: BTreeMap<u64, QueryBook>,
    held: usize,
}

impl DagBook {
    /// A job from the stream: returned when it may be submitted now, kept
    /// (`None`) while a parent is unfinished. A parent that is not an
    /// earlier job of the same query is an error (it would never finish
    /// first).
    pub(super) fn admit(&mut self, spec: JobSpec) -> Result<Option<JobSpec>, String> {
        let Some(dag) = &spec.dag else { return Ok(Some(spec)) };
        let q = self.queries.entry(dag.query).or_insert_with(|| QueryBook {
            submit: spec.submit,
            finish: spec.submit,
            first_job: spec.name.clone(),
            arrived: BTreeSet::new(),
            finished: BTreeSet::new(),
            held: Vec::new(),
        });
        if let Some(p) = dag.parents.iter().find(|p| !q.arrived.contains(p)) {
            return Err(format!(
                "job {} ({}) names parent {p}, which is not an earlier job of its query {}",
                spec.id, spec.name, dag.query
            ));
        }
        q.arrived.insert(spec.id);
        if dag.parents.iter().all(|p| q.finished.contains(p)) {
            return Ok(Some(spec));
        }
        q.held.push(spec);
        self.held += 1;
        Ok(None)
    }

    /// Books the finish of `spec` at `now` and returns the jobs of its query
    /// whose last parent it was, in arrival order, to be submitted now.
    pub(super) fn finished(&mut self, spec: &JobSpec, now: Time) -> Vec<JobSpec> {
        let Some(dag) = &spec.dag else { return Vec::new() };
        let Some(q) = self.queries.get_mut(&dag.query) else { return Vec::new() };
        q.finished.insert(spec.id);
        q.finish = q.finish.max(now);
        let (ready, waiting): (Vec<JobSpec>, Vec<JobSpec>) = std::mem::take(&mut q.held)
            .into_iter()
            .partition(|j| j.dag.as_ref().is_some_and(|d| d.parents.iter().all(|p| q.finished.contains(p))));
        q.held = waiting;
        self.held -= ready.len();
        ready
    }

    /// Jobs still waiting for a parent.
    pub(super) fn held(&self) -> usize {
        self.held
    }

    /// The queries whose every arrived job finished, in id order, and the
    /// number of the others.
    pub(super) fn records(&self) -> (Vec<QueryRecord>, u64) {
        let mut done = Vec::new();
        let mut unfinished = 0;
        for (id, q) in &self.queries {
            if q.finished.len() == q.arrived.len() {
                done.push(QueryRecord {
                    id: *id,
                    first_job: q.first_job.clone(),
                    jobs: q.arrived.len() as u32,
                    submit: q.submit,
                    finish: q.finish,
                });
            } else {
                unfinished += 1;
            }
        }
        (done, unfinished)
    }
}
