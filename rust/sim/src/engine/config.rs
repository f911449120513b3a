//! How a run is set up beside the policy ([`SimConfig`]), node failures to
//! inject, and the simulator's error type.

use crate::workload::estimate_error::EstimateError;
use crate::workload::WorkloadError;
use sojourn_core::{CoreError, Resources, Time};
use std::collections::BTreeMap;
use std::fmt;

/// How a run is set up, beside the policy.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub policy: String,
    /// Policy parameters, without the `yarn.scheduler.sojourn.<policy>.` prefix.
    pub params: BTreeMap<String, String>,
    pub seed: u64,
    /// NodeManager heartbeat interval (YARN: 1000 ms); 0 = event-driven.
    pub heartbeat_ms: u64,
    /// Ask for an ApplicationMaster container of this size before a job's
    /// tasks, as YARN does; `None` runs tasks without an AM (the papers).
    pub am_container: Option<Resources>,
    /// Time from AM container start to its first task request (ms).
    pub am_startup_ms: u64,
    /// AMs talk to the RM every this many ms, from their job's submission
    /// (YARN and SLS: 1000). A container the RM allocates is launched, and a
    /// completion it reports is acted on, only at one of the AM's heartbeats.
    /// 0: AMs act the instant the RM decides (the papers' simulators).
    pub am_heartbeat_ms: u64,
    /// AM heartbeats between the allocate call that carries a response and
    /// the AM acting on it: 0 for MapReduce's AM (it launches containers as
    /// the response arrives); 1 for SLS's AM simulator, which queues each
    /// response and processes it on its next step (yarn.md §3.1).
    pub am_response_lag: u32,
    /// Hand each ask its mean task duration as an estimate.
    pub estimates: bool,
    /// Multiply each job's estimate by a seeded per-job factor (E9, H10);
    /// `None`: the exact mean.
    pub estimate_error: Option<EstimateError>,
    /// Network delay handed to distributed-scheduler emulations (ms).
    pub network_delay_ms: u64,
    /// Node failures: (at, node index, recover after ms or never).
    pub failures: Vec<NodeFailure>,
    /// Utilization and fairness sampling period (ms).
    pub sample_ms: u64,
    /// Stop at this simulated time (jobs not finished are counted unfinished).
    pub until: Option<Time>,
    /// Check the mirror's invariants after every event (slow; for tests).
    pub check_invariants: bool,
    /// MapReduce's reduce slowstart: a job asks for its reduces once this
    /// share of its maps has finished (`mapreduce.job.reduce.slowstart.
    /// completedmaps`). 1 (the default): after the last map, as SLS's AM
    /// simulator does; YARN's default is 0.05; the HFSP thesis used 0.8.
    pub slowstart: f64,
    /// Every running task reports its progress this often (ms; 0 = never).
    /// YARN's RM does not see task progress (only the AM does), so it is off
    /// by default; HFSP's Δ rule (hfsp.md §2) needs it, as Hadoop 1's
    /// JobTracker had it.
    pub progress_ms: u64,
    /// A reduce launched before its job's last map (slowstart < 1) holds its
    /// container idle until that map ends and only then starts its work, as
    /// a real reduce shuffles map outputs before it can reduce. Off: its
    /// work starts at launch (the simulator's original model).
    pub reduces_wait_for_maps: bool,
    /// The share of a core a suspended task keeps, so its work goes on at
    /// this rate while suspended. Kairos's and Big-C's YARN code suspend by
    /// `docker update --cpus 0.1`, not to zero (delgado.md §3.5). 0 (the
    /// default): suspension stops a task's work exactly. First-order: the
    /// share is not taken from the node's running tasks, and a suspended
    /// task never finishes before it is resumed (at least 1 ms stays).
    pub suspended_speed: f64,
    /// Container start-up time (JVM launch), before an AM's start-up or a
    /// task's work. Off by default.
    pub launch: super::LaunchModel,
    /// σ: a task placed off its job's preferred nodes runs σ × its trace
    /// duration (a `gpu` job's task on a node without GPUs, an `mpi` job's
    /// task outside the rack of its group's first task; `placement.rs`),
    /// the ground truth TetriSched's soft constraints plan for
    /// (tetrisched.md §3.3, A13). `None` (the default): every task runs its
    /// trace duration wherever it is placed. At least 1.
    pub placement_slowdown: Option<f64>,
    /// Run the policy's offloaded solves (TetriSched's MILPs) in this child
    /// process, one at a time and at the simulated time they are asked for,
    /// so that a solver's abort costs one solve (the policy falls back to
    /// its greedy plan), not the run (`offload.rs`). `None` (the default):
    /// solves run inline, in this process.
    pub isolate_solves: Option<OffloadChild>,
    /// At most this many containers placed per node heartbeat
    /// (`CoreConfig::max_assignments`, YARN's per-node-heartbeat
    /// maximum-container-assignments); what waits goes at later
    /// heartbeats. `None` (the default): no limit. Needs `heartbeat_ms > 0`:
    /// event-driven runs offer new demand to every node at once
    /// (`ScheduleAll`), which no per-heartbeat limit applies to.
    pub max_assignments: Option<u32>,
}

/// The child process that answers offloaded work
/// (`sojourn_policies::isolation::serve`).
#[derive(Clone, Debug, PartialEq)]
pub struct OffloadChild {
    pub command: std::path::PathBuf,
    pub args: Vec<String>,
    /// For tests of the isolation only: the piece with this number
    /// (1-based) is sent as the child's `test.abort` kind, which aborts the
    /// child as CBC's assertion did. `None` for every real run.
    pub abort_piece: Option<u64>,
}

impl OffloadChild {
    /// The hidden subcommand `sojourn` serves offloaded work with.
    pub const SUBCOMMAND: &'static str = "offload-worker";

    /// This executable (the `sojourn` binary) under
    /// [`OffloadChild::SUBCOMMAND`]: no path to configure.
    /// Refused when this is not the `sojourn` binary (a test or another
    /// program using the library), which would not serve the requests.
    pub fn this_executable() -> Result<OffloadChild, SimError> {
        let command = std::env::current_exe()
            .map_err(|e| SimError::Config(format!("--solves child: cannot find this executable ({e})")))?;
        if command.file_stem().and_then(|s| s.to_str()) != Some("sojourn") {
            return Err(SimError::Config(format!(
                "--solves child: this executable ({}) is not sojourn, whose {} answers the solves (use --solves inline)",
                command.display(),
                Self::SUBCOMMAND
            )));
        }
        Ok(OffloadChild::sojourn_at(command))
    }

    /// The `sojourn` executable at `command` under the subcommand.
    pub fn sojourn_at(command: std::path::PathBuf) -> OffloadChild {
        OffloadChild { command, args: vec![Self::SUBCOMMAND.to_string()], abort_piece: None }
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            policy: "fifo".into(),
            params: BTreeMap::new(),
            seed: 1,
            heartbeat_ms: 1000,
            am_container: None,
            am_startup_ms: 0,
            am_heartbeat_ms: 0,
            am_response_lag: 0,
            slowstart: 1.0,
            estimates: true,
            estimate_error: None,
            network_delay_ms: 0,
            failures: Vec::new(),
            sample_ms: 60_000,
            until: None,
            check_invariants: false,
            progress_ms: 0,
            reduces_wait_for_maps: false,
            suspended_speed: 0.0,
            launch: super::LaunchModel::default(),
            placement_slowdown: None,
            isolate_solves: None,
            max_assignments: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeFailure {
    pub at: Time,
    pub node: usize,
    pub recover_after_ms: Option<u64>,
}

#[derive(Debug)]
pub enum SimError {
    Workload(WorkloadError),
    Core(CoreError),
    Config(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Workload(e) => write!(f, "{e}"),
            SimError::Core(e) => write!(f, "{e}"),
            SimError::Config(m) => write!(f, "{m}"),
        }
    }
}
impl std::error::Error for SimError {}
impl From<WorkloadError> for SimError {
    fn from(e: WorkloadError) -> Self {
        SimError::Workload(e)
    }
}
impl From<CoreError> for SimError {
    fn from(e: CoreError) -> Self {
        SimError::Core(e)
    }
}
