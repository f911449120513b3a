//! The queries of a run of job DAGs (`queries.csv`, written by
//! `org.sojourn.yarn.gridmix.PigmixDagRunner` beside jobs.csv): one row per
//! query, columns found by name:
//!
//! `query,jobs,succeeded,submit_ms,finish_ms,response_ms`
//!
//! `submit_ms` is the query's first job's submission, `finish_ms` its last
//! job's finish (epoch ms, empty when not every job succeeded). A query
//! finished when all its `jobs` succeeded; its response is `finish − submit`,
//! as the simulator's queries (gridmix.md §5.2).

use std::io::BufRead;

use crate::engine::SimError;
use crate::metrics::Dist;
use crate::report::{Better, Metrics, Unit};
use crate::workload::text::Lines;

/// One query of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RealQuery {
    pub query: String,
    pub jobs: u64,
    pub succeeded: u64,
    pub submit_ms: Option<i64>,
    pub finish_ms: Option<i64>,
}

impl RealQuery {
    pub fn finished(&self) -> bool {
        self.succeeded == self.jobs && self.submit_ms.is_some() && self.finish_ms.is_some()
    }

    /// First job's submission to last job's finish (s), for a finished query.
    pub fn response_s(&self) -> Option<f64> {
        match (self.submit_ms, self.finish_ms) {
            (Some(s), Some(f)) if self.finished() => Some((f - s) as f64 / 1000.0),
            _ => None,
        }
    }
}

/// Parses a run's `queries.csv` (`file` names it in errors).
pub fn parse_queries_csv(text: &str, file: &str) -> Result<Vec<RealQuery>, SimError> {
    queries_csv(Lines::of_str(text, file))
}

fn queries_csv<R: BufRead>(mut lines: Lines<R>) -> Result<Vec<RealQuery>, SimError> {
    let ([c_query, c_jobs, c_ok, c_submit, c_finish], cols) =
        lines.columns(["query", "jobs", "succeeded", "submit_ms", "finish_ms"])?;
    let mut queries = Vec::new();
    while let Some(row) = lines.next() {
        let (n, line) = row?;
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let field = |c: usize| f.get(c).copied().ok_or_else(|| lines.error(n, format!("too few fields: '{line}'")));
        let num = |c: usize| {
            let s = field(c)?;
            s.parse::<i64>().map_err(|e| lines.error(n, format!("'{s}' in column {}: {e}", cols[c])))
        };
        // Empty: the query never got that far.
        let when = |c: usize| if field(c)?.is_empty() { Ok(None) } else { num(c).map(Some) };
        let count = |c: usize| {
            num(c).and_then(|v| u64::try_from(v).map_err(|_| lines.error(n, format!("negative {}: {v}", cols[c]))))
        };
        let q = RealQuery {
            query: field(c_query)?.to_string(),
            jobs: count(c_jobs)?,
            succeeded: count(c_ok)?,
            submit_ms: when(c_submit)?,
            finish_ms: when(c_finish)?,
        };
        if q.succeeded > q.jobs {
            return Err(lines
                .error(n, format!("query {}: {} of {} jobs succeeded", q.query, q.succeeded, q.jobs))
                .into());
        }
        if let (Some(s), Some(f)) = (q.submit_ms, q.finish_ms) {
            if f < s {
                return Err(lines.error(n, format!("query {} finished before it was submitted", q.query)).into());
            }
        }
        queries.push(q);
    }
    Ok(queries)
}

/// The "queries" section, with the simulator's keys (`query.finished`,
/// `query.unfinished`, `query.response_s.{mean,p50,p90,p99,max}`); every
/// figure is None for a run without queries.csv.
pub(crate) fn add_metrics(m: &mut Metrics, queries: Option<&[RealQuery]>) {
    use Better::*;
    use Unit::*;
    let sec = "queries";
    let finished = queries.map(|q| q.iter().filter(|q| q.finished()).count() as f64);
    let unfinished = queries.map(|q| q.iter().filter(|q| !q.finished()).count() as f64);
    m.add(sec, "query.finished", "queries finished", Count, Higher, true, finished);
    m.add(sec, "query.unfinished", "queries unfinished", Count, Lower, true, unfinished);
    let d = queries.and_then(|q| Dist::of(q.iter().filter_map(RealQuery::response_s).collect()));
    // As Metrics::dist, but with the max in the table: a few queries, whose slowest matters.
    for (stat, get) in [
        ("mean", (|d: &Dist| d.mean) as fn(&Dist) -> f64),
        ("p50", |d| d.p50),
        ("p90", |d| d.p90),
        ("p99", |d| d.p99),
        ("max", |d| d.max),
    ] {
        let label = format!("query response {stat} (s)");
        m.add(sec, format!("query.response_s.{stat}"), &label, Number, Lower, true, d.as_ref().map(get));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: &str = "query,jobs,succeeded,submit_ms,finish_ms,response_ms\n\
        0,1,1,1000,11000,10000\n\
        1,3,3,1000,31000,30000\n\
        2,3,2,2000,,\n\
        3,3,2,2000,9000,7000\n";

    #[test]
    fn reads_finished_and_unfinished_queries() {
        let q = parse_queries_csv(Q, "q.csv").unwrap();
        assert_eq!(q.len(), 4);
        // Query 3 has a finish, but one of its jobs did not succeed: unfinished.
        assert_eq!(q.iter().map(RealQuery::response_s).collect::<Vec<_>>(), [Some(10.0), Some(30.0), None, None]);
        assert!(!q[2].finished() && !q[3].finished());
        // Columns by name: reordered and extended, the same queries.
        let moved = "response_ms,extra,finish_ms,submit_ms,succeeded,jobs,query\n10000,x,11000,1000,1,1,0\n";
        let m = parse_queries_csv(moved, "m.csv").unwrap();
        assert_eq!(m[0], q[0]);
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let e = parse_queries_csv("query,jobs\n", "a/queries.csv").unwrap_err().to_string();
        assert!(e.contains("a/queries.csv") && e.contains("succeeded"), "{e}");
        let e = parse_queries_csv(&Q.replace("1,3,3,1000", "1,3,3,soon"), "b.csv").unwrap_err().to_string();
        assert!(e.contains("b.csv") && e.contains("'soon'") && e.contains("submit_ms"), "{e}");
        let e = parse_queries_csv(&Q.replace("2,3,2,", "2,3,4,"), "c.csv").unwrap_err().to_string();
        assert!(e.contains("4 of 3"), "{e}");
        let e = parse_queries_csv(&Q.replace("1000,31000", "31000,1000"), "d.csv").unwrap_err().to_string();
        assert!(e.contains("query 1") && e.contains("before"), "{e}");
    }
}
