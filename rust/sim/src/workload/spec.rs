//! Workload specs: one string naming a trace file or a generator, with
//! options, as a command line or a config file gives it (see
//! [`WorkloadSpec::parse`]).

use super::limits::Guarded;
use super::{
    dag_csv, eagle, kairos, pigmix_dag, rumen, sort_by_submit, swim, synthetic, text, JobSpec, JobStream, WorkloadError,
};
use std::path::{Path, PathBuf};

/// Where jobs come from: a trace file of a known format, or a generator.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    Swim(PathBuf, swim::SwimOptions),
    Eagle(PathBuf, eagle::EagleOptions),
    Kairos(PathBuf, kairos::KairosOptions),
    Sls(PathBuf),
    Rumen(PathBuf),
    /// SLS or Rumen, told apart by the first object when opened.
    Json(PathBuf),
    /// The job-DAG CSV `sojourn export-dag` writes.
    DagCsv(PathBuf, dag_csv::DagCsvOptions),
    Synthetic(synthetic::SyntheticOptions),
    GridMix(synthetic::GridMixOptions),
    PigMixDag(pigmix_dag::PigMixDagOptions),
    Sparrow(synthetic::SparrowOptions),
    KairosDraw(kairos::KairosDrawOptions),
}

/// A parsed workload spec.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSpec {
    pub source: Source,
    /// Keep only the first so many jobs of a file.
    pub limit: Option<u64>,
    /// Read the whole file and sort it by submit time (for unsorted traces;
    /// costs memory in proportion to the trace).
    pub sort: bool,
    /// Submit every job at time 0, as SLS 3.3 reads a Rumen trace: its
    /// `createAMForJob` takes each job's own submit time as the baseline, so
    /// the offsets between jobs are lost (seen in its `jobruntime.csv`).
    pub at_once: bool,
}

const FILE_KINDS: [&str; 7] = ["swim", "eagle", "kairos", "sls", "rumen", "json", "dag"];
const GENERATORS: [&str; 6] = ["synthetic", "gridmix", "pigmix", "pigmix-dag", "sparrow", "kairos-draw"];

impl WorkloadSpec {
    /// Parses a spec, segments separated by `:`:
    ///
    /// - `PATH[:key=value]...`: a trace file, its format from the name:
    ///   `.tsv` SWIM, `.tr` Hawk/Eagle, `.json` SLS or Rumen (sniffed from the
    ///   first object), `generated_workload*` Kairos;
    /// - `FORMAT:PATH[:key=value]...` with FORMAT one of `swim`, `eagle`,
    ///   `kairos`, `sls`, `rumen`, `json`, to force the format;
    /// - `synthetic:PROFILE[:key=value]...` with PROFILE `google`, `yahoo`,
    ///   `cloudera` or `facebook` (keys `jobs` (10000), `seed` (1),
    ///   `interarrival_s` (the profile's), `slot_mb` (1024));
    /// - `gridmix[:key=value]...` (keys `jobs` (100), `seed` (1),
    ///   `interarrival_s` (30), `sigma` (0.3: within-job log-normal spread of
    ///   task times), `time_scale` (1: a factor on every task time), and
    ///   per class (`small`, `medium`, `large`) `CLASS_map_s`,
    ///   `CLASS_reduce_s` (mean task times), `CLASS_maps`, `CLASS_reduces`
    ///   (`LO-HI` or `N`: task-count ranges), see `GridMixOptions::set`);
    /// - `pigmix:WORKLOAD[:key=value]...` with WORKLOAD `dev`, `test` or
    ///   `prod`, the HFSP testbed's PigMix-like workloads (keys as gridmix,
    ///   with classes `bin1`..`bin4`, e.g. `bin4_reduce_s=600`);
    /// - `pigmix-dag:WORKLOAD[:key=value]...`, the same workloads as PigMix
    ///   queries L1..L17 in turn, each the DAG of MapReduce jobs it compiles
    ///   to (keys `queries` (100), `parallel` (40: reduces of most jobs) and
    ///   pigmix's, without `jobs` and `CLASS_reduces`; see [`pigmix_dag`]);
    /// - `kairos-draw:MIX[:key=value]...` with MIX `heavy` or `uniform`, new
    ///   draws of the Kairos testbed workloads (keys `jobs` (100), `seed`,
    ///   `interarrival_s`, and the task-time keys of a Kairos file below,
    ///   with `spread_seed` for its `seed`);
    /// - `sparrow[:key=value]...`, the Sparrow motivation workload (keys
    ///   `jobs` (1000), `seed` (1), `interarrival_s` (50), `short_fraction`
    ///   (0.95)).
    ///
    /// A `.csv` file (or `dag:FILE`) is the job-DAG CSV `sojourn export-dag`
    /// writes (key `task_mb` (384), see [`dag_csv`]).
    ///
    /// Files take `jobs=N` (keep the first N), `sort=true`, `at_once=true`
    /// (every job submitted at 0, as SLS 3.3 reads Rumen traces) and their
    /// reader's options (`SwimOptions::set`, `EagleOptions::set`,
    /// `KairosOptions::set`: `slots` (120), `map_share` (0.5),
    /// `container_mb` (5120), and the calibration keys `spread` (0: per-task
    /// log-normal deviation, mean 1), `spread_keeps` (`mean`, or `alone`: each
    /// job alone lasts what it does without spread), `seed` (1) and `overhead_s` (0: seconds
    /// of each makespan that are not task work), see [`kairos`]). Unknown and repeated keys are errors. A
    /// generator's `jobs` is at most [`super::limits::MAX_JOBS_PER_RUN`] and
    /// its `interarrival_s` at most a year; every workload it opens is held
    /// within [`super::limits`].
    pub fn parse(spec: &str) -> Result<WorkloadSpec, WorkloadError> {
        let err = |msg: String| WorkloadError::new(spec, 0, msg);
        let segs: Vec<&str> = spec.split(':').collect();
        let (kind, body) = match segs[0] {
            k if GENERATORS.contains(&k) => (k, &segs[1..]),
            k if FILE_KINDS.contains(&k) && segs.len() > 1 => (k, &segs[1..]),
            _ => ("", &segs[..]),
        };
        // Trailing key=value segments are options; what precedes is the path
        // (which may itself hold a `:`) or the generator's profile.
        let n_opts = body.iter().rev().take_while(|s| s.contains('=')).count();
        let (main, opt_segs) = body.split_at(body.len() - n_opts);
        let opts: Vec<(&str, &str)> =
            opt_segs.iter().map(|s| s.split_once('=').unwrap_or((s, ""))).map(|(k, v)| (k.trim(), v.trim())).collect();
        for (i, (k, _)) in opts.iter().enumerate() {
            if opts[..i].iter().any(|(seen, _)| seen == k) {
                return Err(err(format!("key {k:?} is given twice")));
            }
        }

        if GENERATORS.contains(&kind) {
            let expected = usize::from(matches!(kind, "synthetic" | "pigmix" | "pigmix-dag" | "kairos-draw"));
            if main.len() > expected {
                return Err(err(format!("unexpected {:?}", main[expected])));
            }
            let apply = |set: &mut dyn FnMut(&str, &str) -> Result<(), String>| -> Result<(), WorkloadError> {
                opts.iter().try_for_each(|(k, v)| set(k, v).map_err(err))
            };
            let source = match kind {
                "synthetic" => {
                    let name = main.first().copied().unwrap_or("");
                    let p = synthetic::profile(name).ok_or_else(|| {
                        err(format!("unknown synthetic profile {name:?} (known: google, yahoo, cloudera, facebook)"))
                    })?;
                    let mut o = synthetic::SyntheticOptions::new(*p, 10_000, 1);
                    apply(&mut |k, v| o.set(k, v))?;
                    Source::Synthetic(o)
                }
                "kairos-draw" => {
                    let name = main.first().copied().unwrap_or("");
                    let mut o = kairos::KairosDrawOptions::new(name, 100, 1)
                        .ok_or_else(|| err(format!("unknown kairos-draw mix {name:?} (known: heavy, uniform)")))?;
                    apply(&mut |k, v| o.set(k, v))?;
                    Source::KairosDraw(o)
                }
                "pigmix" => {
                    let name = main.first().copied().unwrap_or("");
                    let mut o = synthetic::GridMixOptions::pigmix(name, 100, 1)
                        .ok_or_else(|| err(format!("unknown pigmix workload {name:?} (known: dev, test, prod)")))?;
                    apply(&mut |k, v| o.set(k, v))?;
                    Source::GridMix(o)
                }
                "pigmix-dag" => {
                    let name = main.first().copied().unwrap_or("");
                    let mut o = pigmix_dag::PigMixDagOptions::new(name, 100, 1)
                        .ok_or_else(|| err(format!("unknown pigmix-dag workload {name:?} (known: dev, test, prod)")))?;
                    apply(&mut |k, v| o.set(k, v))?;
                    Source::PigMixDag(o)
                }
                "gridmix" => {
                    let mut o = synthetic::GridMixOptions::new(100, 1);
                    apply(&mut |k, v| o.set(k, v))?;
                    Source::GridMix(o)
                }
                _ => {
                    let mut o = synthetic::SparrowOptions::new(1);
                    apply(&mut |k, v| o.set(k, v))?;
                    Source::Sparrow(o)
                }
            };
            return Ok(WorkloadSpec { source, limit: None, sort: false, at_once: false });
        }

        let path = PathBuf::from(main.join(":"));
        if path.as_os_str().is_empty() {
            return Err(err("no trace file given".into()));
        }
        let kind = match kind {
            "" => infer_kind(&path).ok_or_else(|| {
                err(format!(
                    "cannot tell the format of {}: name it .tsv (SWIM), .tr (Hawk/Eagle), .json (SLS/Rumen) or .csv \
                     (job DAGs, as export-dag writes), or prefix the path with swim:, eagle:, kairos:, sls:, \
                     rumen: or dag:",
                    path.display()
                ))
            })?,
            k => k,
        };
        let mut limit = None;
        let mut sort = false;
        let mut at_once = false;
        let mut swim_o = swim::SwimOptions::default();
        let mut eagle_o = eagle::EagleOptions::default();
        let mut kairos_o = kairos::KairosOptions::default();
        let mut dag_o = dag_csv::DagCsvOptions::default();
        let flag =
            |k: &str, v: &str| v.parse::<bool>().map_err(|_| err(format!("{k}: expected true or false, found {v:?}")));
        for (k, v) in opts {
            match (k, kind) {
                ("jobs", _) => {
                    limit = Some(v.parse().map_err(|_| err(format!("jobs: expected a whole number, found {v:?}")))?)
                }
                ("sort", _) => sort = flag(k, v)?,
                ("at_once", _) => at_once = flag(k, v)?,
                (_, "swim") => swim_o.set(k, v).map_err(err)?,
                (_, "eagle") => eagle_o.set(k, v).map_err(err)?,
                (_, "kairos") => kairos_o.set(k, v).map_err(err)?,
                (_, "dag") => dag_o.set(k, v).map_err(err)?,
                _ => return Err(err(format!("unknown key {k:?} for a {kind} trace (known: jobs, sort, at_once)"))),
            }
        }
        let source = match kind {
            "swim" => Source::Swim(path, swim_o),
            "eagle" => Source::Eagle(path, eagle_o),
            "kairos" => Source::Kairos(path, kairos_o),
            "sls" => Source::Sls(path),
            "rumen" => Source::Rumen(path),
            "dag" => Source::DagCsv(path, dag_o),
            _ => Source::Json(path),
        };
        Ok(WorkloadSpec { source, limit, sort, at_once })
    }

    /// Opens the workload as a stream of jobs in non-decreasing submit order.
    pub fn open(&self) -> Result<JobStream, WorkloadError> {
        let stream: JobStream = match &self.source {
            Source::Swim(p, o) => Box::new(swim::open(p, o.clone())?),
            Source::Eagle(p, o) => Box::new(eagle::open(p, o.clone())?),
            Source::Kairos(p, o) => Box::new(kairos::open(p, o.clone())?),
            Source::Sls(p) => Box::new(rumen::open_sls(p)?),
            Source::Rumen(p) => Box::new(rumen::open_rumen(p)?),
            Source::DagCsv(p, o) => Box::new(dag_csv::open(p, o)?),
            Source::Json(p) => {
                let file = p.display().to_string();
                match rumen::sniff(text::open_file(p)?, &file)? {
                    rumen::JsonKind::Sls => Box::new(rumen::open_sls(p)?),
                    rumen::JsonKind::Rumen => Box::new(rumen::open_rumen(p)?),
                    rumen::JsonKind::SlsNodes => {
                        return Err(WorkloadError::new(file, 0, "an SLS nodes file, not jobs: load it as the cluster"))
                    }
                }
            }
            Source::Synthetic(o) => Box::new(Guarded::new(
                synthetic::SyntheticJobs::new(o.clone()),
                format!("synthetic:{}", o.profile.name),
            )),
            Source::GridMix(o) => Box::new(Guarded::new(synthetic::GridMixJobs::new(o.clone()), o.prefix)),
            Source::PigMixDag(o) => {
                Box::new(Guarded::new(pigmix_dag::PigMixDagJobs::new(o.clone()), format!("{}-dag", o.mix.prefix)))
            }
            Source::KairosDraw(o) => Box::new(Guarded::new(kairos::KairosDraw::new(o.clone()), "kairos-draw")),
            Source::Sparrow(o) => Box::new(Guarded::new(synthetic::SparrowJobs::new(o.clone()), "sparrow")),
        };
        let stream = match self.limit {
            Some(n) => Box::new(stream.take(n as usize)),
            None => stream,
        };
        let stream: JobStream = if self.at_once {
            Box::new(stream.map(|j| j.map(|j| JobSpec { submit: sojourn_core::Time::ZERO, ..j })))
        } else {
            stream
        };
        if self.sort {
            sort_by_submit(stream)
        } else {
            Ok(stream)
        }
    }
}

fn infer_kind(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    match path.extension().and_then(|e| e.to_str()) {
        Some("tsv") => Some("swim"),
        Some("tr") => Some("eagle"),
        Some("json") => Some("json"),
        Some("csv") => Some("dag"),
        _ if name.starts_with("generated_workload") => Some("kairos"),
        _ => None,
    }
}
