//! The `sojourn` command line: `simulate`, `compare`, `policies`, `replay`,
//! `to-sls`, `export-dag`, `sls-compare`, `real-compare`, `single-server`.

use crate::engine::{simulate, SimConfig, SimError};
use crate::metrics::{summarize_all, Classes};
use crate::report::{self, Description, WriteOptions};
use crate::run::RunResult;
use crate::workload::limits::{self, MAX_NODES, MAX_SAMPLES};
use crate::workload::slots::Hadoop1Slots;
use crate::workload::{self, ClusterSpec, JobSpec};
use clap::{Args, Parser, Subcommand};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use sojourn_core::{Resources, Time};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The workload `sojourn compare` runs with no arguments: one day of the
/// Facebook 2009 cluster (SWIM: 5,894 jobs, 233k tasks), shipped in
/// `rust/sim/workloads/`. The FB-2010 day beside it (24,442 jobs, 8.6M
/// tasks) takes about a minute per policy: `--workload` selects it.
pub const DEFAULT_WORKLOAD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/FB-2009_samples_24_times_1hr_0.tsv");

mod run_config;
use run_config::{cfg_err, sim_config};
pub use run_config::{check_run_args, parse_params};

#[derive(Parser, Debug)]
#[command(name = "sojourn", version, about = "Sojourn: YARN scheduling policies, simulated and compared")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one policy on one workload.
    Simulate {
        /// Policy name (see `sojourn policies`).
        #[arg(long, default_value = "fifo")]
        policy: String,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Run several policies on one workload and compare every metric with a
    /// baseline. With no arguments: the shipped SWIM FB-2009 day at load 0.9
    /// on every implemented policy.
    Compare {
        /// Comma-separated policies (default: all).
        #[arg(long, value_delimiter = ',')]
        policies: Vec<String>,
        /// The policy ratios are computed against.
        #[arg(long, default_value = "fifo")]
        baseline: String,
        /// Policies run in parallel on this many threads (default: cores).
        #[arg(long)]
        threads: Option<usize>,
        #[command(flatten)]
        run: RunArgs,
    },
    /// List the policies with their parameters, defaults and docs.
    Policies {
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Re-run a flight recording of a real RM (FILE, FILE.meta,
    /// FILE.decisions, as the YARN shim writes them) through the core, print
    /// its decisions and compare them with the recorded ones.
    Replay {
        file: PathBuf,
        /// Default: the recording's (FILE.meta), else fifo.
        #[arg(long)]
        policy: Option<String>,
        /// `key=value` policy parameters (as in yarn-site without the
        /// prefix); given, they replace the recording's.
        #[arg(short = 'p', long = "param")]
        params: Vec<String>,
        /// Default: the recording's, else 0.
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Write a workload (a trace file or a generator spec, as --workload
    /// takes) as an SLS JSON trace, with a time compression so that a day
    /// runs in minutes under SLS's wall clock, and an SLS nodes file.
    ToSls {
        /// The workload spec (e.g. `rust/sim/workloads/FB-2010_samples_24_times_1hr_0.tsv:jobs=200`).
        spec: String,
        /// Divide submit times and task durations by this (≥ 1).
        #[arg(long, default_value_t = 1.0)]
        compress: f64,
        /// Hosts the tasks are spread over (`/default-rack/node1..N`).
        #[arg(long, default_value_t = 4)]
        nodes: usize,
        /// The SLS trace to write.
        #[arg(short, long)]
        out: PathBuf,
        /// Also write the matching SLS nodes file here.
        #[arg(long)]
        nodes_out: Option<PathBuf>,
    },
    /// Write a workload's job DAGs as the CSV the real-cluster runner
    /// (integration/gridmix/pigmix-compare.sh) submits as SleepJobs.
    ExportDag(crate::workload::pigmix_dag::export::ExportDagArgs),
    /// How far the simulator is from the real RM: pairs the jobs of
    /// simulator runs with those of SLS runs, or of runs of real MapReduce
    /// jobs (the GridMix runner's), of the same trace, in submission order,
    /// and prints mean/p50/p90/p99 of both, the gaps and every job.
    Fidelity {
        /// `SIM_JOBS_CSV=REAL_DIR`: a `jobs-<policy>.csv` of `sojourn
        /// simulate --out` and either a directory with the `jobs.csv` of real
        /// jobs (`integration/gridmix/compare.sh`'s per-scheduler directory) or
        /// an SLS output directory (with jobruntime.csv).
        #[arg(required = true)]
        pairs: Vec<String>,
        /// Also write the summary (one row per pair) as CSV here.
        #[arg(long)]
        csv: Option<PathBuf>,
    },
    /// Compare runs of one trace under Hadoop's Scheduler Load Simulator
    /// (SLS) in `compare`'s table and report.
    ///
    /// Reads each SLS output directory (integration/sls/compare.sh makes
    /// them): response time per job and its distribution, utilization,
    /// running containers, containers and allocate calls per second, and
    /// the scheduler's handle p99. SLS has no slowdown.
    SlsCompare(SlsCompareArgs),
    /// Compare runs of one trace on a real YARN cluster (GridMix replays by
    /// integration/gridmix/compare.sh) in `compare`'s table and report.
    ///
    /// Reads each run directory's jobs.csv (the RM's application reports):
    /// applications that succeeded, makespan, response time and AM wait.
    RealCompare {
        /// A scheduler's name and its run directory (with jobs.csv), or the jobs.csv itself.
        #[arg(required = true, value_name = "NAME=RUN_DIR")]
        runs: Vec<String>,
        /// The run the ratios are computed against (default: the first).
        #[arg(long)]
        baseline: Option<String>,
        /// What the runs replayed (a trace's path), for the title.
        #[arg(long)]
        trace: Option<String>,
        /// Write one row per scheduler, every metric, here.
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Write the response time and AM wait of each job under each scheduler here.
        #[arg(long)]
        jobs_csv: Option<PathBuf>,
        /// Write the HTML report (plots) here: a directory (index.html in it) or a .html file.
        #[arg(long)]
        html: Option<PathBuf>,
    },
    /// The size-based disciplines of the HFSP thesis (chapter 3) on one
    /// server with exact processor sharing: FIFO, PS, LAS, SRPT, FSP, SRPTE,
    /// FSPE, FSPE+PS, PSBS; sizes from a SWIM trace or a Weibull generator.
    SingleServer(crate::single_server::cli::SingleServerArgs),
    /// Pigeon's queueing model (pigeon.md §2): P_task(0), mean queueing time
    /// and P_job(0) of Pigeon and of Sparrow with 2F probes, per load, group
    /// size and fanout: the curves of the paper's Figs 2–4 as a table.
    PigeonAnalysis {
        /// Loads ρ, comma-separated (default 0.1 to 0.95 by 0.05).
        #[arg(long, value_delimiter = ',', default_values_t = crate::pigeon_analysis::DEFAULT_LOADS)]
        loads: Vec<f64>,
        /// Workers per group N_w, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [100u32, 200])]
        group_sizes: Vec<u32>,
        /// Tasks per job F, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [50u32, 100])]
        fanouts: Vec<u32>,
        /// Mean (exponential) task duration T_e in ms.
        #[arg(long, default_value_t = 100.0)]
        task_ms: f64,
    },
    /// The child process of `--solves child`: answers offloaded work
    /// (solves) read from stdin, one JSON line each, until stdin closes.
    #[command(name = "offload-worker", hide = true)]
    OffloadWorker,
}

#[derive(Args, Debug, Clone)]
pub struct SlsCompareArgs {
    /// A scheduler's name and its SLS output directory (SLSRunner's -output).
    #[arg(required = true, value_name = "NAME=SLS_OUTPUT_DIR")]
    pub runs: Vec<String>,
    /// The run the ratios are computed against (default: the first).
    #[arg(long)]
    pub baseline: Option<String>,
    /// The trace the runs replayed (SLS JSON or Rumen): its tasks give the
    /// containers allocated per second.
    #[arg(long)]
    pub trace: Option<String>,
    /// Write one row per scheduler, every metric, here.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write the response time of each job under each scheduler here.
    #[arg(long)]
    pub jobs_csv: Option<PathBuf>,
    /// Write the HTML report (plots) here: a directory (index.html in it) or a .html file.
    #[arg(long)]
    pub html: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Trace file (.tsv SWIM, .tr Hawk/Eagle, .json SLS/Rumen) or generator
    /// (e.g. `synthetic:google:jobs=1000`). Default: the shipped FB-2009 day.
    #[arg(short, long)]
    pub workload: Option<String>,
    /// Number of nodes. Default: sized so that the workload's offered load is `--load`.
    #[arg(long)]
    pub nodes: Option<usize>,
    /// Offered load used to size the cluster when `--nodes` is not given.
    #[arg(long, default_value_t = 0.9)]
    pub load: f64,
    /// An SLS nodes file instead of identical nodes.
    #[arg(long)]
    pub nodes_file: Option<PathBuf>,
    #[arg(long, default_value_t = 8192)]
    pub node_memory_mb: u64,
    #[arg(long, default_value_t = 8)]
    pub node_vcores: u32,
    #[arg(long, default_value_t = 40)]
    pub nodes_per_rack: usize,
    /// Policy parameters `key=value`; in `compare`, `policy.key=value`.
    #[arg(short = 'p', long = "param")]
    pub params: Vec<String>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// NodeManager heartbeat interval in ms; 0 = event-driven (the papers' simulators).
    #[arg(long, default_value_t = 0)]
    pub heartbeat_ms: u64,
    /// At most N containers placed per NodeManager heartbeat (YARN's
    /// per-node-heartbeat maximum-container-assignments; the shim's
    /// `yarn.scheduler.sojourn.per-node-heartbeat.maximum-container-assignments`,
    /// 8 there by default). Needs heartbeats (`--heartbeat-ms` or
    /// `--sls-timing`). Default: no limit.
    #[arg(long, value_name = "N")]
    pub max_assignments: Option<u32>,
    /// Run an ApplicationMaster container (MB) per job before its tasks, as YARN does.
    #[arg(long)]
    pub am_mb: Option<u64>,
    /// With `--am-mb`: ms from an AM container's start to its first task
    /// request (MapReduce's AM start-up: JVM, job set-up), during which the
    /// AM holds its container and the job's tasks are not yet asked for.
    #[arg(long, default_value_t = 0)]
    pub am_startup_ms: u64,
    /// With `--am-mb`: the AM container's vcores. 0 models an AM that holds
    /// memory but no core slot: YARN's FifoScheduler and CapacityScheduler
    /// count memory only (DefaultResourceCalculator), and Kairos's YARN code
    /// leaves AMs outside its N running tasks (delgado.md §3.5).
    #[arg(long, default_value_t = 1)]
    pub am_vcores: u32,
    /// AMs call the RM every this many ms (YARN, SLS: 1000): containers are
    /// launched, and phases and jobs end, at an AM heartbeat; 0 = at once.
    #[arg(long, default_value_t = 0)]
    pub am_heartbeat_ms: u64,
    /// AM heartbeats between receiving an allocate response and acting on it
    /// (0: MapReduce's AM; 1: SLS's AM simulator).
    #[arg(long, default_value_t = 0)]
    pub am_response_lag: u32,
    /// Reduces are asked for once this share of a job's maps has finished
    /// (MapReduce's `reduce.slowstart.completedmaps`; YARN's default 0.05, the
    /// HFSP thesis 0.8). 1: after the last map, as SLS's AM simulator does.
    #[arg(long, default_value_t = 1.0)]
    pub slowstart: f64,
    /// A reduce started early (--slowstart below 1) holds its container idle
    /// until its job's last map ends, then runs its work, as a real reduce
    /// waits out the shuffle. Without it an early reduce's work starts at once.
    #[arg(long)]
    pub reduces_wait_for_maps: bool,
    /// Hadoop 1 slot-typed nodes, `MAPS:MAP_MB,REDUCES:REDUCE_MB` (the HFSP
    /// thesis's TaskTrackers: `2:1024,1:2048`): a map takes one of its
    /// node's map slots, a reduce one of its reduce slots, never the other
    /// type's room (`workload::slots`). Sets each node's shape (replacing
    /// --node-memory-mb and --node-vcores) and each task's size; no AMs.
    #[arg(long, value_name = "MAPS:MAP_MB,REDUCES:REDUCE_MB")]
    pub slots: Option<String>,
    /// Time jobs as Hadoop's SLS does, to compare with it: 1 s NM and AM
    /// heartbeats, 1024 MB AMs, responses acted on one AM heartbeat late.
    /// Sets those of the four flags above that are not given.
    #[arg(long)]
    pub sls_timing: bool,
    /// The share of a core a suspended task keeps: its work goes on at this
    /// rate until it resumes, as under Kairos's and Big-C's YARN suspension
    /// by `docker update --cpus 0.1` (delgado.md §3.5). 0: suspension stops
    /// the work. The share is not taken from the node's running tasks.
    #[arg(long, default_value_t = 0.0)]
    pub suspended_speed: f64,
    /// σ: a task placed off its job's preferred nodes runs σ × its
    /// duration: a job named `*gpu*` on a node without GPUs (nodes files
    /// give none, so every such task), `*mpi*` outside the rack of its
    /// phase's first task (TetriSched's soft constraints, tetrisched.md
    /// §3.3). Off: every task runs its duration wherever it is placed.
    #[arg(long, value_name = "SIGMA")]
    pub placement_slowdown: Option<f64>,
    /// Container start-up (JVM launch) in ms, before an AM's start-up or a
    /// task's work, plus --launch-per-concurrent-ms for every other
    /// container still starting when it does. 0: work starts at launch.
    #[arg(long, default_value_t = 0)]
    pub launch_ms: u64,
    /// With --launch-ms: extra start-up ms per container already starting
    /// on the same node (or host, --launch-scope cluster).
    #[arg(long, default_value_t = 0)]
    pub launch_per_concurrent_ms: u64,
    /// Where concurrent start-ups are counted: `node`, or `cluster` for
    /// NodeManagers sharing one host (a MiniYARNCluster).
    #[arg(long, default_value = "node")]
    pub launch_scope: String,
    /// Do not hand task-duration estimates to the policies.
    #[arg(long)]
    pub no_estimates: bool,
    /// Mis-estimate: multiply each job's task-runtime estimate by a factor
    /// drawn uniformly in [LO, HI] once per job (e.g. `0.1:1.9`, Hawk's
    /// H10; `0.3:1` under, `1:1.9` over, Eagle's E9); true durations are
    /// unchanged. Off: the exact mean.
    #[arg(long, value_name = "LO:HI")]
    pub estimate_error: Option<String>,
    /// Seed of --estimate-error's per-job factors (default: --seed).
    #[arg(long, value_name = "N")]
    pub estimate_error_seed: Option<u64>,
    /// Running tasks report their progress every this many seconds (0: never;
    /// HFSP's Δ rule needs it, e.g. 10).
    #[arg(long, default_value_t = 0)]
    pub progress_s: u64,
    /// Network delay for distributed-scheduler policies (ms).
    #[arg(long, default_value_t = 0)]
    pub network_delay_ms: u64,
    /// Inject a node failure: `AT_S:NODE[:RECOVER_AFTER_S]`.
    #[arg(long = "fail")]
    pub failures: Vec<String>,
    /// Only the first N jobs of the workload.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Job classes for the report: `none`, `cutoff:90s`, `tasks:10,100`, `work:1m,1h`.
    #[arg(long, default_value = "tasks:10,100,1000")]
    pub classes: String,
    /// Utilization sampling period (s).
    #[arg(long, default_value_t = 60)]
    pub sample_s: u64,
    /// Write JSON and CSV here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write an HTML report (CDF plots) here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// A paper's reported percentile, drawn on the report's CDFs:
    /// `SOURCE:POLICY:response|slowdown:pN=VALUE[,pN=VALUE...][@CLASS]`
    /// (response in s), e.g. `kairos-thesis:fifo:response:p50=808,p99=2061`.
    #[arg(long = "paper-point")]
    pub paper_points: Vec<String>,
    /// Where the policy's MILP solves (TetriSched's) run. `child` (the
    /// default): in a child process, this executable's hidden
    /// `offload-worker`, as the ResourceManager does, so a solver that
    /// aborts (CBC 2.10.8 does, on an assertion) costs one solve, which
    /// falls back to the greedy plan, not the whole run. `inline`: in this
    /// process. Decisions are the same while every solve succeeds.
    #[arg(long, value_name = "WHERE", default_value = "child", value_parser = ["child", "inline"])]
    pub solves: String,
    /// Leave wall-clock figures out of files and the printed table
    /// (byte-identical output per seed).
    #[arg(long)]
    pub no_wall_clock: bool,
    /// No progress bars.
    #[arg(short, long)]
    pub quiet: bool,
}

/// A workload read into memory once, and the cluster it runs on.
pub struct Scenario {
    pub name: String,
    pub jobs: Vec<JobSpec>,
    pub cluster: ClusterSpec,
    pub offered_load: f64,
}

/// Reads the workload and sizes the cluster (`--nodes`, `--nodes-file`, or
/// the node count that makes the offered load `--load`).
pub fn scenario(args: &RunArgs) -> Result<Scenario, SimError> {
    check_run_args(args)?;
    let name = args.workload.clone().unwrap_or_else(|| DEFAULT_WORKLOAD.to_string());
    let mut jobs = Vec::new();
    for j in workload::open(&name)? {
        jobs.push(j?);
        if args.limit.is_some_and(|l| jobs.len() >= l) {
            break;
        }
    }
    if jobs.is_empty() {
        return Err(cfg_err(format!("workload '{name}' has no jobs")));
    }
    let last = jobs.iter().map(|j| j.submit.ms()).max().unwrap_or(0);
    let horizon = limits::run_horizon_ms(args.sample_s * 1000);
    if last > horizon {
        let need = last.div_ceil(MAX_SAMPLES * 1000);
        return Err(cfg_err(format!(
            "--sample-s {}: a run keeps at most {MAX_SAMPLES} samples, so it stops after {}, but the last job \
             of '{name}' arrives after {}: use --sample-s {need} or more",
            args.sample_s,
            limits::days(horizon),
            limits::days(last)
        )));
    }
    let slots = run_config::slots(args)?;
    if let Some(s) = &slots {
        for j in &mut jobs {
            s.apply(j).map_err(cfg_err)?;
        }
    }
    let node = slots.map_or(Resources::new(args.node_memory_mb, args.node_vcores), |s| s.node());
    let cluster = if let Some(f) = &args.nodes_file {
        workload::load_cluster(f)?
    } else {
        let n = match args.nodes {
            Some(n) => n,
            None => {
                let n = nodes_for_load(&jobs, node, slots.as_ref(), args.load);
                if n > MAX_NODES {
                    return Err(cfg_err(format!(
                        "--load {} needs {n} nodes of {node} for '{name}', more than the limit of {MAX_NODES}: \
                         raise --load or give --nodes",
                        args.load
                    )));
                }
                n
            }
        };
        ClusterSpec::uniform(n, node, args.nodes_per_rack)
    };
    let offered_load = offered_load(&jobs, &cluster, slots.as_ref());
    let short = name.rsplit('/').next().unwrap_or(&name).to_string();
    Ok(Scenario { name: short, jobs, cluster, offered_load })
}

/// Node-seconds the workload asks for: each task's duration times the
/// largest fraction of a node (memory or vcores) its container takes.
/// With Hadoop 1 slots, the busier pool's: map slot-seconds over M, or
/// reduce slot-seconds over R (the two pools do not share room).
fn demand_node_ms(jobs: &[JobSpec], node: Resources, slots: Option<&Hadoop1Slots>) -> f64 {
    if let Some(s) = slots {
        return s.demand_node_ms(jobs);
    }
    jobs.iter()
        .flat_map(|j| j.groups.iter())
        .map(|g| {
            let frac = (g.resources.memory_mb as f64 / node.memory_mb as f64)
                .max(g.resources.vcores as f64 / node.vcores.max(1) as f64);
            frac * g.durations_ms.iter().sum::<u64>() as f64
        })
        .sum()
}

fn span_ms(jobs: &[JobSpec]) -> f64 {
    let first = jobs.iter().map(|j| j.submit).min().unwrap_or(Time::ZERO);
    let last = jobs.iter().map(|j| j.submit).max().unwrap_or(Time::ZERO);
    (last.since(first) as f64).max(1000.0)
}

/// The node count at which the workload's demand over its submission span
/// is `load` of the cluster.
/// (Saturates at `usize::MAX`: callers check it against [`MAX_NODES`].)
pub fn nodes_for_load(jobs: &[JobSpec], node: Resources, slots: Option<&Hadoop1Slots>, load: f64) -> usize {
    ((demand_node_ms(jobs, node, slots) / (span_ms(jobs) * load)).ceil() as usize).max(1)
}

/// Demand over the submission span, as a fraction of the cluster (taking
/// the first node's shape for a heterogeneous cluster's fractions).
pub fn offered_load(jobs: &[JobSpec], cluster: &ClusterSpec, slots: Option<&Hadoop1Slots>) -> f64 {
    let Some(first) = cluster.nodes.first() else { return 0.0 };
    demand_node_ms(jobs, first.capacity, slots) / (span_ms(jobs) * cluster.nodes.len() as f64)
}

fn bar(mp: &MultiProgress, len: usize, label: &str, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = mp.add(ProgressBar::new(len as u64));
    pb.set_style(
        ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} jobs {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_prefix(label.to_string());
    pb
}

/// Runs each (label, config) on the scenario, up to `threads` at once.
fn run_all(sc: &Scenario, configs: Vec<SimConfig>, threads: usize, quiet: bool) -> Result<Vec<RunResult>, SimError> {
    let mp = MultiProgress::new();
    let mut results: Vec<Option<Result<RunResult, SimError>>> = (0..configs.len()).map(|_| None).collect();
    let threads = threads.max(1);
    for (chunk_i, chunk) in configs.chunks(threads).enumerate() {
        let out: Vec<Result<RunResult, SimError>> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|cfg| {
                    let pb = bar(&mp, sc.jobs.len(), &cfg.policy, quiet);
                    s.spawn(move || {
                        let mut tick = |done: usize| pb.set_position(done as u64);
                        let stream = Box::new(sc.jobs.clone().into_iter().map(Ok));
                        let r = simulate(&sc.cluster, stream, &sc.name, cfg, Some(&mut tick));
                        pb.finish_and_clear();
                        r
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(cfg_err("a simulation thread panicked"))))
                .collect()
        });
        for (i, r) in out.into_iter().enumerate() {
            results[chunk_i * threads + i] = Some(r);
        }
    }
    results.into_iter().map(|r| r.unwrap_or_else(|| Err(cfg_err("run missing")))).collect()
}

fn describe(
    sc: &Scenario,
    args: &RunArgs,
    runs: &[(RunResult, crate::metrics::Summary)],
    baseline: &str,
) -> Description {
    let mut d = Description::of(runs, baseline);
    d.push("tasks", &sc.jobs.iter().map(|j| j.task_count()).sum::<usize>().to_string());
    let total = sc.cluster.total();
    d.push("cluster", &format!("{} nodes, {total}", sc.cluster.nodes.len()));
    d.push("offered load", &format!("{:.3}", sc.offered_load));
    let (hb, am_mb, am_hb, lag) = args.timing();
    d.push("heartbeat", &if hb == 0 { "event-driven".to_string() } else { format!("{hb} ms") });
    d.push("AM containers", &am_mb.map_or("none".to_string(), |m| format!("{m} MB")));
    if am_mb.is_some() && args.am_startup_ms > 0 {
        d.push("AM start-up", &format!("{} ms", args.am_startup_ms));
    }
    if args.reduces_wait_for_maps {
        d.push("early reduces", "wait for the last map");
    }
    if let Ok(Some(s)) = run_config::slots(args) {
        d.push("slots", &s.describe());
    }
    if args.launch_ms > 0 || args.launch_per_concurrent_ms > 0 {
        let scope = if args.launch_scope == "cluster" { "on the host" } else { "on the node" };
        d.push(
            "container start-up",
            &format!("{} ms + {} ms per other start-up {scope}", args.launch_ms, args.launch_per_concurrent_ms),
        );
    }
    if args.suspended_speed > 0.0 {
        d.push("suspended tasks", &format!("work on at {} of a core", args.suspended_speed));
    }
    if let Some(sigma) = args.placement_slowdown {
        d.push("off preferred nodes", &format!("gpu and mpi jobs' tasks run {sigma} × longer"));
    }
    if let Some(n) = args.max_assignments {
        d.push("per heartbeat", &format!("at most {n} containers placed"));
    }
    if am_mb.is_some() && args.am_vcores != 1 {
        d.push("AM vcores", &args.am_vcores.to_string());
    }
    if am_hb > 0 {
        d.push("AM heartbeat", &format!("{am_hb} ms, acts {lag} heartbeat(s) after a response"));
    }
    // (Only losses are said: a run whose isolated solves all succeed reads
    // as the inline run.)
    for (r, _) in runs.iter().filter(|(r, _)| r.lost_offloads > 0) {
        d.push(
            &format!("{} lost solves", r.policy),
            &format!("{} (the solver's process died or hung; greedy plans instead)", r.lost_offloads),
        );
    }
    d
}

fn emit(sc: &Scenario, args: &RunArgs, results: Vec<RunResult>, baseline: &str) -> Result<String, SimError> {
    let classes: Classes = args.classes.parse()?;
    let runs = summarize_all(results, &classes);
    let cmp = report::compare(baseline, &runs)?;
    let opts = WriteOptions { wall_clock: !args.no_wall_clock, paper_points: run_config::paper_points(args)? };
    let desc = describe(sc, args, &runs, baseline);
    let io = |e: std::io::Error| cfg_err(format!("writing output: {e}"));
    if let Some(dir) = &args.out {
        report::write_json(dir, &desc, &runs, &cmp, &opts).map_err(io)?;
        report::write_csv(dir, &runs, &cmp, &opts).map_err(io)?;
    }
    if let Some(dir) = &args.report {
        report::write_html(dir, &desc, &runs, &cmp, &opts).map_err(io)?;
    }
    // (--no-wall-clock also leaves the timing rows off the printed table, so
    // that a run's whole output is the same for the same seed)
    let printed = WriteOptions { wall_clock: opts.wall_clock, ..WriteOptions::default() };
    Ok(format!("{}\n{}", desc.to_text(), report::table(&cmp, &printed)))
}

/// Runs the CLI; returns the text to print.
pub fn run(cli: Cli) -> Result<String, SimError> {
    match cli.command {
        Command::Policies { json } => Ok(policies_text(json)),
        Command::Simulate { policy, run } => {
            let cfg = sim_config(&policy, parse_params(&run.params)?, &run)?;
            let sc = scenario(&run)?;
            let results = run_all(&sc, vec![cfg], 1, run.quiet)?;
            emit(&sc, &run, results, &policy)
        }
        Command::Compare { policies, baseline, threads, run } => {
            let policies: Vec<String> = if policies.is_empty() {
                sojourn_policies::catalog()
                    .iter()
                    .filter(|p| !sojourn_policies::NOT_COMPARED_BY_DEFAULT.contains(&p.name))
                    .map(|p| p.name.to_string())
                    .collect()
            } else {
                policies
            };
            if !policies.contains(&baseline) {
                return Err(cfg_err(format!(
                    "baseline '{baseline}' is not among the policies ({})",
                    policies.join(", ")
                )));
            }
            let all = parse_params(&run.params)?;
            let mut configs = Vec::new();
            for p in &policies {
                let mine: BTreeMap<String, String> = all
                    .iter()
                    .filter_map(|(k, v)| k.strip_prefix(&format!("{p}.")).map(|k| (k.to_string(), v.clone())))
                    .collect();
                configs.push(sim_config(p, mine, &run)?);
            }
            for k in all.keys() {
                if !policies.iter().any(|p| k.starts_with(&format!("{p}."))) {
                    return Err(cfg_err(format!(
                        "parameter '{k}' names none of the compared policies (use policy.key=value)"
                    )));
                }
            }
            let sc = scenario(&run)?;
            let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let results = run_all(&sc, configs, threads, run.quiet)?;
            emit(&sc, &run, results, &baseline)
        }
        Command::Replay { file, policy, params, seed } => {
            let params = if params.is_empty() { None } else { Some(parse_params(&params)?) };
            crate::replay::cli(&file, &crate::replay::ReplayOptions { policy, params, seed })
        }
        Command::ToSls { spec, compress, nodes, out, nodes_out } => {
            if !(1..=MAX_NODES).contains(&nodes) {
                return Err(cfg_err(format!("--nodes {nodes}: expected 1 to {MAX_NODES}")));
            }
            let opts = crate::workload::sls_writer::SlsWriteOptions::new(compress, nodes);
            let file = std::fs::File::create(&out).map_err(|e| cannot_write(&out, e))?;
            let n = crate::workload::sls_writer::convert_to_sls(&spec, &opts, std::io::BufWriter::new(file))?;
            if let Some(p) = &nodes_out {
                write_text(p, crate::workload::sls_writer::sls_nodes_json(nodes))?;
            }
            Ok(format!("{n} jobs written to {} (times / {compress}, {nodes} hosts)\n", out.display()))
        }
        Command::ExportDag(args) => crate::workload::pigmix_dag::export::cli(&args),
        Command::Fidelity { pairs, csv } => {
            let pairs = pairs.iter().map(|p| crate::fidelity::read_pair(p)).collect::<Result<Vec<_>, _>>()?;
            if let Some(path) = &csv {
                write_text(path, crate::fidelity::summary_csv(&pairs))?;
            }
            Ok(crate::fidelity::markdown(&pairs))
        }
        Command::SlsCompare(args) => sls_compare(&args),
        Command::RealCompare { runs, baseline, trace, csv, jobs_csv, html } => crate::real_results::cli(
            &runs,
            baseline.as_deref(),
            trace.as_deref(),
            csv.as_deref(),
            jobs_csv.as_deref(),
            html.as_deref(),
        ),
        Command::SingleServer(args) => crate::single_server::cli::cli_main(args),
        Command::PigeonAnalysis { loads, group_sizes, fanouts, task_ms } => {
            crate::pigeon_analysis::cli(&loads, &group_sizes, &fanouts, task_ms)
        }
        Command::OffloadWorker => {
            sojourn_policies::isolation::serve();
            Ok(String::new())
        }
    }
}

fn cannot_write(p: &std::path::Path, e: std::io::Error) -> SimError {
    cfg_err(format!("cannot write {}: {e}", p.display()))
}

/// Writes a whole output file, the error naming it.
fn write_text(p: &std::path::Path, text: String) -> Result<(), SimError> {
    std::fs::write(p, text).map_err(|e| cannot_write(p, e))
}

fn sls_compare(args: &SlsCompareArgs) -> Result<String, SimError> {
    let runs = args
        .runs
        .iter()
        .map(|r| match r.split_once('=') {
            Some((name, dir)) if !name.is_empty() && !dir.is_empty() => Ok((name.to_string(), PathBuf::from(dir))),
            _ => Err(cfg_err(format!("'{r}' is not NAME=SLS_OUTPUT_DIR"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let rep = crate::sls_results::SlsReport::read(&runs, args.trace.as_deref())?;
    let first = runs.first().map(|r| r.0.clone()).ok_or_else(|| cfg_err("no SLS runs to compare"))?;
    let baseline = args.baseline.clone().unwrap_or(first);
    let cmp = rep.compare(&baseline)?;
    if let Some(p) = &args.csv {
        write_text(p, report::wide_csv(&cmp, "scheduler"))?;
    }
    if let Some(p) = &args.jobs_csv {
        write_text(p, rep.comparison.jobs_csv())?;
    }
    if let Some(p) = &args.html {
        let (dir, name) = match (p.extension(), p.file_name()) {
            (Some(ext), Some(name)) if ext == "html" => {
                let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
                (dir.to_path_buf(), name.to_string_lossy().to_string())
            }
            _ => (p.clone(), "index.html".to_string()),
        };
        report::write_file(&dir, &name, &rep.html(&baseline)?)
            .map_err(|e| cfg_err(format!("writing the report: {e}")))?;
    }
    rep.text(&baseline)
}

fn policies_text(json: bool) -> String {
    let cat = sojourn_policies::catalog();
    if json {
        let v: Vec<serde_json::Value> =
            cat.iter().map(|p| serde_json::json!({ "name": p.name, "doc": p.doc, "params": p.params })).collect();
        return serde_json::to_string_pretty(&v).unwrap_or_default();
    }
    let mut s = String::new();
    for p in &cat {
        s.push_str(&format!("{}\n  {}\n", p.name, p.doc));
        if p.params.is_empty() {
            s.push_str("  (no parameters)\n");
        }
        for q in p.params {
            let default = if q.default.is_empty() { "-" } else { q.default };
            s.push_str(&format!("  {:<40} {:<10} {}\n", q.name, default, q.doc));
        }
        s.push('\n');
    }
    s.push_str("In yarn-site.xml: yarn.scheduler.sojourn.<policy>.<param>; in sojourn: -p <param>=<value>.\n");
    s.push_str(&format!(
        "`compare` runs every policy but {} unless named with --policies (too slow yet for trace replays).\n",
        sojourn_policies::NOT_COMPARED_BY_DEFAULT.join(", ")
    ));
    s
}
