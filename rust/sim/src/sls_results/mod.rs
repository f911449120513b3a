//! Reading the outputs of Hadoop's Scheduler Load Simulator (SLS) and comparing runs of one
//! trace under several schedulers (issue #6).
//!
//! One SLS run writes, in its output directory (research/yarn.md §3.1):
//!
//! - `jobruntime.csv`: `JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time`.
//!   `JobID` is the RM's application ID; the `real_*` columns are the *trace's* start and end
//!   (ms from the trace's start); the `simulate_*` columns are wall-clock epoch ms of the run.
//!   A job's response time is `simulate_end_time − simulate_start_time`. SLS 3.3 may write a
//!   job twice (its AM simulator records its last step twice); the first finish is kept.
//! - `metrics/counter.scheduler.operation.allocate.csv` (`t,count`, t in epoch seconds): the
//!   scheduler's `allocate()` calls, one per AM heartbeat; their rate is reported.
//! - `metrics/sampler.scheduler.operation.handle.timecost.csv`
//!   (`t,count,max,mean,min,stddev,p50,p75,p95,p98,p99,p999`, times in ns over SLS's sliding
//!   window of the last `yarn.sls.metrics.timer.window.size` events, default 100): the last
//!   row's p99 is reported, in ms.
//! - `metrics/variable.*.csv` (`t,value`, sampled each second): `running.container` (AMs
//!   included), `running.application` and `cluster.{allocated,available}.{memory,vcores}`,
//!   from which utilization is allocated / (allocated + available) ([`read_sls_series`]).
//!
//! SLS counts no containers allocated under every scheduler (only the CapacityScheduler's
//! commit counter does), so containers allocated are the trace's tasks plus one AM per job
//! ([`CONTAINERS_NOTE`], [`SlsReport::containers`]). [`SlsReport`] maps each run into the
//! simulator's metric types and `sojourn compare`'s rows, table and page
//! (`sojourn sls-compare`); slowdown is left out, as SLS does not know a job's ideal run time.
//!
//! Jobs are matched across runs by their application sequence number (`…_0003` → `app_0003`):
//! SLS submits the trace's jobs in trace order, so the n-th application is the same trace
//! job under every scheduler. Percentiles are nearest-rank ([`crate::metrics::percentile`]).
//!
//! The parts: `runs` reads a run's `jobruntime.csv` and counters, `series` its per-second
//! gauges, `jobs` matches jobs across runs, and `report` puts them in `sojourn compare`'s rows,
//! text and page.

mod jobs;
mod report;
mod runs;
mod series;

pub use jobs::{read_sls_runs, SlsComparison};
pub use report::{trace_counts, SlsReport, TraceCounts, CONTAINERS_NOTE};
pub use runs::{allocate_rate, parse_jobruntime, read_sls_run, timecost_p99_ms, SlsJob, SlsRun};
pub use series::{parse_gauge, read_sls_series, SlsSeries};

/// A `jobruntime.csv` of three jobs, one written twice, for the tests.
#[cfg(test)]
const JOBRUNTIME: &str = "JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time\n\
    application_1795465148441_0002,1000,6000,1795465151082,1795465158094\n\
    application_1795465148441_0002,1000,6000,1795465151082,1795465159083\n\
    application_1795465148441_0001,0,8000,1795465150082,1795465160084\n\
    application_1795465148441_0003,2000,9000,1795465152086,1795465171084\n";
