//! Fuzzing of every workload reader, the workload spec and the run flags,
//! with proptest (`cargo fuzz` needs a nightly toolchain; this runs in the
//! ordinary test suite). Each target feeds small inputs from memory, half
//! built to look valid (right field counts, numbers around the caps,
//! repeated names) and half malformed (random bytes, truncations, single-
//! byte mutations of the valid-looking ones), and asserts:
//!
//! - no input makes a reader panic;
//! - every error names the input (`fuzz.tsv:3: ...`): the file, and a line
//!   from 1 except for errors about the whole file (no nodes, empty trace);
//! - every accepted job is within `workload::limits` (times, tasks per job,
//!   tasks per workload, container sizes), and accepted flags are within
//!   theirs.
//!
//! `SOJOURN_FUZZ_CASES` sets the inputs per target (default 100,000) and
//! `SOJOURN_FUZZ_SEED` fixes the seed (default: a new one each run). Each
//! target prints `fuzz <target>: N inputs, 0 panics, A accepted, R refused
//! (seed S)` to stderr, past the test harness's capture; a failure prints
//! the smallest failing input proptest found.

use clap::Parser;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use sojourn_sim::cli::{self, Cli, Command};
use sojourn_sim::workload::limits::{
    MAX_AM_RESPONSE_LAG, MAX_LOAD, MAX_NODES, MAX_NODE_MEMORY_MB, MAX_NODE_VCORES, MAX_PERIOD_MS, MAX_TASKS_PER_JOB,
    MAX_TASKS_PER_RUN, MAX_TIME_MS,
};
use sojourn_sim::workload::{eagle, kairos, nodes, rumen, swim, JobSpec, Source, WorkloadError, WorkloadSpec};
use std::cell::Cell;
use std::hash::{BuildHasher, Hasher};
use std::io::{Cursor, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Jobs read from one input at most: enough to see the caps at work (an
/// SLS `job.count` may ask for 10^6 copies, all admitted before the first).
const JOBS_PER_INPUT: usize = 64;

/// Tasks read from one input at most, to keep a case fast.
const TASKS_PER_INPUT: u64 = 4_000_000;

/// A text input, shown as text when proptest reports it.
#[derive(Clone)]
struct Input(Vec<u8>);

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.0))
    }
}

fn cases() -> u32 {
    std::env::var("SOJOURN_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000)
}

fn seed() -> u64 {
    std::env::var("SOJOURN_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.finish()
    })
}

#[derive(Default)]
struct Tally {
    inputs: Cell<u64>,
    panics: Cell<u64>,
    accepted: Cell<u64>,
    refused: Cell<u64>,
}

/// Runs `check` on `cases()` inputs of `strategy`; `check` returns whether
/// the input was accepted, or a broken property.
fn fuzz<S: Strategy>(target: &str, strategy: S, check: impl Fn(&S::Value) -> Result<bool, String>)
where
    S::Value: std::fmt::Debug,
{
    let (n, seed) = (cases(), seed());
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config { cases: n, failure_persistence: None, max_shrink_iters: 2_000, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
    let tally = Tally::default();
    let started = std::time::Instant::now();
    let result = runner.run(&strategy, |input| {
        tally.inputs.set(tally.inputs.get() + 1);
        match catch_unwind(AssertUnwindSafe(|| check(&input))) {
            Ok(Ok(true)) => tally.accepted.set(tally.accepted.get() + 1),
            Ok(Ok(false)) => tally.refused.set(tally.refused.get() + 1),
            Ok(Err(broken)) => return Err(TestCaseError::fail(broken)),
            Err(_) => {
                tally.panics.set(tally.panics.get() + 1);
                return Err(TestCaseError::fail("the reader panicked"));
            }
        }
        Ok(())
    });
    let _ = writeln!(
        std::io::stderr(),
        "fuzz {target}: {} inputs, {} panics, {} accepted, {} refused, {:.1} s (seed {seed})",
        tally.inputs.get(),
        tally.panics.get(),
        tally.accepted.get(),
        tally.refused.get(),
        started.elapsed().as_secs_f64()
    );
    if let Err(e) = result {
        panic!("fuzz {target} (seed {seed}, SOJOURN_FUZZ_SEED={seed} to replay): {e}");
    }
    assert!(tally.inputs.get() >= n as u64, "fuzz {target}: only {} inputs", tally.inputs.get());
}

// ------------------------------------------------------------ checks

/// An error names `file` and a line (from 1, or 0 for whole-file errors).
fn check_error(e: &WorkloadError, file: &str, whole_file: &[&str]) -> Result<(), String> {
    if e.file != file {
        return Err(format!("error names {:?}, not {file:?}: {e}", e.file));
    }
    if e.line == 0 && !whole_file.iter().any(|m| e.message.contains(m)) {
        return Err(format!("error without a line: {e}"));
    }
    if !e.to_string().starts_with(&format!("{file}:")) || e.message.is_empty() {
        return Err(format!("error does not lead with the file: {e}"));
    }
    Ok(())
}

/// Reads up to [`JOBS_PER_INPUT`] jobs, checking each accepted one against
/// the caps and the error (if any) against [`check_error`].
fn drain(
    jobs: impl Iterator<Item = Result<JobSpec, WorkloadError>>,
    file: &str,
    whole_file: &[&str],
) -> Result<bool, String> {
    let mut tasks = 0u64;
    for j in jobs.take(JOBS_PER_INPUT) {
        match j {
            Ok(j) => {
                check_job(&j)?;
                tasks += j.task_count() as u64;
                if tasks > MAX_TASKS_PER_RUN {
                    return Err(format!("{tasks} tasks accepted"));
                }
                if tasks > TASKS_PER_INPUT {
                    break;
                }
            }
            Err(e) => {
                check_error(&e, file, whole_file)?;
                return Ok(false);
            }
        }
    }
    Ok(true)
}

fn check_job(j: &JobSpec) -> Result<(), String> {
    if j.submit.ms() > MAX_TIME_MS {
        return Err(format!("job {} accepted at {} ms", j.name, j.submit.ms()));
    }
    if j.task_count() as u64 > MAX_TASKS_PER_JOB {
        return Err(format!("job {} accepted with {} tasks", j.name, j.task_count()));
    }
    for g in &j.groups {
        if let Some(d) = g.durations_ms.iter().find(|d| **d > MAX_TIME_MS || **d == 0) {
            return Err(format!("job {} accepted with a task of {d} ms", j.name));
        }
        if g.resources.memory_mb > MAX_NODE_MEMORY_MB || g.resources.vcores > MAX_NODE_VCORES {
            return Err(format!("job {} accepted with a container of {}", j.name, g.resources));
        }
        if !g.hosts.is_empty() && g.hosts.len() != g.durations_ms.len() {
            return Err(format!("job {}: {} hosts for {} tasks", j.name, g.hosts.len(), g.durations_ms.len()));
        }
    }
    Ok(())
}

// ------------------------------------------------------------ inputs

/// Numbers at and around the caps, and the values that break parsers.
const EDGES: &[&str] = &[
    "0",
    "1",
    "-1",
    "0.5",
    "1e3",
    "12.0",
    "31536000",
    "31536000.001",
    "31536001",
    "31536000000",
    "31536000001",
    "1e10",
    "1e13",
    "134217729",
    "2147483648",
    "1e14",
    "999999",
    "1000000",
    "1000001",
    "50000000",
    "4096",
    "4097",
    "16777216",
    "16777217",
    "9223372036854775807",
    "-9223372036854775808",
    "9000000000000000000",
    "-9000000000000000000",
    "18446744073709551615",
    "18446744073709551616",
    "1e308",
    "-0",
    "NaN",
    "inf",
    "-inf",
    "",
    " ",
    "x",
    "1x",
    "0x10",
];

/// One field: mostly small numbers, then edges, random numbers and junk.
fn field() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        4 => (0u32..2_000).prop_map(|n| n.to_string()),
        3 => proptest::sample::select(EDGES).prop_map(str::to_string),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => any::<f64>().prop_map(|f| f.to_string()),
        1 => "[ -~]{0,6}",
    ]
}

/// A JSON value in text: numbers raw and quoted, and the wrong shapes.
fn json_value() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        4 => (0u32..100_000).prop_map(|n| n.to_string()),
        3 => proptest::sample::select(EDGES).prop_map(|s| if s.trim().is_empty() { "null".to_string() } else { s.to_string() }),
        2 => field().prop_map(|s| format!("{s:?}")),
        1 => proptest::sample::select(&["null", "true", "[]", "{}", "[1, 2]", "{\"a\": [1]}", "\"\""][..]).prop_map(str::to_string),
    ]
}

/// `{"k": v, ...}` with keys from `keys` (some repeated, some unknown),
/// plus `extra` members already written.
fn json_object(keys: &'static [&'static str], extra: Vec<String>) -> impl Strategy<Value = String> + Clone {
    (proptest::collection::vec((proptest::sample::select(keys), json_value()), 0..7), Just(extra)).prop_map(
        |(members, extra)| {
            let mut m: Vec<String> = members.into_iter().map(|(k, v)| format!("{k:?}: {v}")).collect();
            m.extend(extra);
            format!("{{{}}}", m.join(", "))
        },
    )
}

/// Valid-looking text, malformed text, or a mutation of valid-looking text.
fn text_input(valid: impl Strategy<Value = String> + Clone + 'static) -> impl Strategy<Value = Input> {
    prop_oneof![
        5 => valid.clone().prop_map(String::into_bytes),
        2 => (valid.clone(), any::<prop::sample::Index>(), any::<u8>()).prop_map(|(t, i, b)| {
            let mut v = t.into_bytes();
            if !v.is_empty() {
                let at = i.index(v.len());
                v[at] = b;
            }
            v
        }),
        2 => (valid, any::<prop::sample::Index>()).prop_map(|(t, i)| {
            let v = t.into_bytes();
            let at = i.index(v.len() + 1);
            v[..at].to_vec()
        }),
        1 => proptest::collection::vec(any::<u8>(), 0..200),
    ]
    .prop_map(Input)
}

/// Lines from `line`, some blank, with `\n` or `\r\n` endings.
fn lines(line: impl Strategy<Value = String> + Clone + 'static) -> impl Strategy<Value = String> + Clone {
    (proptest::collection::vec(prop_oneof![9 => line, 1 => Just(String::new())], 0..6), any::<bool>())
        .prop_map(|(ls, crlf)| ls.join(if crlf { "\r\n" } else { "\n" }))
}

fn swim_line() -> impl Strategy<Value = String> + Clone {
    let name = prop_oneof![3 => proptest::sample::select(&["job0", "job1", "job2"][..]).prop_map(str::to_string), 1 => field()];
    (name, proptest::collection::vec(field(), 4..8), any::<bool>()).prop_map(|(n, f, tabs)| {
        format!("{n}{}{}", if tabs { "\t" } else { " " }, f.join(if tabs { "\t" } else { " " }))
    })
}

fn eagle_line() -> impl Strategy<Value = String> + Clone {
    (field(), field(), proptest::collection::vec(field(), 0..6), any::<bool>()).prop_map(|(at, mean, d, honest)| {
        let n = if honest { d.len().to_string() } else { (d.len() + 1).to_string() };
        format!("{at} {n} {mean} {}", d.join(" "))
    })
}

fn kairos_line() -> impl Strategy<Value = String> + Clone {
    let input = proptest::sample::select(
        &["/in-256mb-small", "/in-1gb-medium", "/in-mediumlong", "/in-long", "/in-huge", "x"][..],
    );
    (field(), field(), input, field(), proptest::collection::vec(field(), 0..4)).prop_map(
        |(sleep, reduces, input, flops, rest)| format!("{sleep} {reduces} q {input} out {flops} {}", rest.join(" ")),
    )
}

const SLS_JOB_KEYS: &[&str] =
    &["job.start.ms", "job.queue.name", "job.id", "job.user", "job.count", "num.nodes", "num.racks", "x"];
const SLS_TASK_KEYS: &[&str] = &[
    "count",
    "container.host",
    "container.start.ms",
    "container.end.ms",
    "container.duration.ms",
    "duration.ms",
    "container.priority",
    "container.type",
    "container.memory-mb",
    "container.vcores",
];

fn sls_job() -> impl Strategy<Value = String> + Clone {
    proptest::collection::vec(json_object(SLS_TASK_KEYS, vec![]), 0..4)
        .prop_flat_map(|tasks| json_object(SLS_JOB_KEYS, vec![format!("\"job.tasks\": [{}]", tasks.join(", "))]))
}

fn rumen_job() -> impl Strategy<Value = String> + Clone {
    let attempt = json_object(&["hostName", "startTime", "finishTime"], vec![]);
    let task = proptest::collection::vec(attempt, 0..3).prop_map(|a| format!("{{\"attempts\": [{}]}}", a.join(", ")));
    (proptest::collection::vec(task.clone(), 0..3), proptest::collection::vec(task, 0..2)).prop_flat_map(|(m, r)| {
        json_object(
            &["jobID", "jobName", "user", "queue", "submitTime", "submitTime"],
            vec![format!("\"mapTasks\": [{}]", m.join(", ")), format!("\"reduceTasks\": [{}]", r.join(", "))],
        )
    })
}

fn nodes_rack() -> impl Strategy<Value = String> + Clone {
    let size = || prop_oneof![3 => (1u32..5_000).prop_map(|n| n.to_string()), 1 => json_value()];
    let sizes = (proptest::option::of(size()), proptest::option::of(size()), proptest::option::of(json_value()))
        .prop_map(|(m, v, l)| {
            let members: Vec<String> = [("memory-mb", m), ("vcores", v), ("labels", l)]
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| format!("{k:?}: {v}")))
                .collect();
            format!("{{{}}}", members.join(", "))
        });
    let name = prop_oneof![
        3 => (0u32..1000).prop_map(|i| format!("node{i}")),
        1 => proptest::sample::select(&["n1", "/r/n1", "", " "][..]).prop_map(str::to_string),
    ];
    let node = (name, sizes).prop_map(|(name, rest)| match rest.strip_prefix('{') {
        Some("}") | None => format!("{{\"node\": {name:?}}}"),
        Some(members) => format!("{{\"node\": {name:?}, {members}"),
    });
    let rack = prop_oneof![3 => Just("\"r1\"".to_string()), 1 => json_value()];
    (rack, proptest::collection::vec(node, 0..4))
        .prop_map(|(rack, nodes)| format!("{{\"rack\": {rack}, \"nodes\": [{}]}}", nodes.join(", ")))
}

fn json_stream(object: impl Strategy<Value = String> + Clone + 'static) -> impl Strategy<Value = String> + Clone {
    proptest::collection::vec(object, 0..4).prop_map(|o| o.join("\n"))
}

// ------------------------------------------------------------ targets

#[test]
fn fuzz_swim() {
    fuzz("swim", text_input(lines(swim_line())), |input| {
        let jobs = swim::SwimJobs::from_reader(Cursor::new(input.0.clone()), "fuzz.tsv", swim::SwimOptions::default());
        drain(jobs, "fuzz.tsv", &[])
    });
}

#[test]
fn fuzz_eagle() {
    fuzz("eagle", (text_input(lines(eagle_line())), any::<bool>()), |(input, original)| {
        let mode = if *original { eagle::EagleMode::Original } else { eagle::EagleMode::Exact };
        let opts = eagle::EagleOptions { mode, ..eagle::EagleOptions::default() };
        drain(eagle::EagleJobs::from_reader(Cursor::new(input.0.clone()), "fuzz.tr", opts), "fuzz.tr", &[])
    });
}

#[test]
fn fuzz_kairos() {
    fuzz("kairos", text_input(lines(kairos_line())), |input| {
        let jobs =
            kairos::KairosJobs::from_reader(Cursor::new(input.0.clone()), "fuzz_w", kairos::KairosOptions::default());
        drain(jobs, "fuzz_w", &[])
    });
}

#[test]
fn fuzz_sls_json() {
    fuzz("sls", text_input(json_stream(sls_job())), |input| {
        drain(rumen::SlsJobs::from_reader(input.0.as_slice(), "fuzz.json"), "fuzz.json", &[])
    });
}

#[test]
fn fuzz_rumen_json() {
    fuzz("rumen", text_input(json_stream(rumen_job())), |input| {
        let sniffed = rumen::sniff(input.0.as_slice(), "fuzz.json");
        if let Err(e) = &sniffed {
            check_error(e, "fuzz.json", &["empty JSON trace"])?;
        }
        drain(rumen::RumenJobs::from_reader(input.0.as_slice(), "fuzz.json"), "fuzz.json", &[])
    });
}

#[test]
fn fuzz_sls_nodes() {
    fuzz("nodes", text_input(json_stream(nodes_rack())), |input| {
        match nodes::read_nodes(input.0.as_slice(), "fuzz-nodes.json", nodes::SLS_NODE) {
            Ok(c) => {
                if c.nodes.is_empty() || c.nodes.len() > MAX_NODES {
                    return Err(format!("{} nodes accepted", c.nodes.len()));
                }
                for n in &c.nodes {
                    let r = n.capacity;
                    if r.memory_mb == 0
                        || r.vcores == 0
                        || r.memory_mb > MAX_NODE_MEMORY_MB
                        || r.vcores > MAX_NODE_VCORES
                    {
                        return Err(format!("node {} accepted with {r}", n.name));
                    }
                }
                Ok(true)
            }
            Err(e) => check_error(&e, "fuzz-nodes.json", &["no nodes"]).map(|_| false),
        }
    });
}

#[test]
fn fuzz_workload_specs() {
    let kind = proptest::sample::select(
        &[
            "synthetic",
            "gridmix",
            "pigmix",
            "sparrow",
            "kairos-draw",
            "swim",
            "eagle",
            "sls",
            "rumen",
            "json",
            "kairos",
            "x.tr",
            "",
        ][..],
    );
    let main = proptest::sample::select(
        &["google", "yahoo", "facebook", "heavy", "uniform", "dev", "prod", "f.tsv", "a:b", ""][..],
    );
    let key = proptest::sample::select(
        &[
            "jobs",
            "seed",
            "interarrival_s",
            "slot_mb",
            "short_fraction",
            "sort",
            "at_once",
            "mode",
            "rebase",
            "slots",
            "map_mib_s",
            "nope",
        ][..],
    );
    let spec = (kind, main, proptest::collection::vec((key, field()), 0..4)).prop_map(|(k, m, opts)| {
        let mut segs: Vec<String> = [k, m].iter().filter(|s| !s.is_empty()).map(|s| s.to_string()).collect();
        segs.extend(opts.into_iter().map(|(k, v)| format!("{k}={v}")));
        segs.join(":")
    });
    let spec = prop_oneof![4 => spec, 1 => "[ -~]{0,24}"];
    fuzz("spec", spec, |spec| {
        let parsed = match WorkloadSpec::parse(spec) {
            Ok(p) => p,
            Err(e) => {
                if e.file != *spec || e.message.is_empty() {
                    return Err(format!("error does not name the spec: {e}"));
                }
                return Ok(false);
            }
        };
        // Generators only: a file spec would open whatever path it names.
        let generator = matches!(
            parsed.source,
            Source::Synthetic(_) | Source::GridMix(_) | Source::Sparrow(_) | Source::KairosDraw(_)
        );
        if !generator {
            return Ok(true);
        }
        match parsed.open() {
            Ok(jobs) => {
                let name = spec.split(':').next().unwrap_or("").to_string();
                let name = if name == "pigmix" { "pigmix-" } else { name.as_str() };
                let mut ok = true;
                for j in jobs.take(8) {
                    match j {
                        Ok(j) => check_job(&j)?,
                        Err(e) => {
                            if !e.file.starts_with(name) || e.line != 0 || !e.message.contains("limit") {
                                return Err(format!("generator error {e:?} for {spec}"));
                            }
                            ok = false;
                            break;
                        }
                    }
                }
                Ok(ok)
            }
            Err(e) => Err(format!("a parsed generator spec does not open: {e}")),
        }
    });
}

#[test]
fn fuzz_run_flags() {
    let flag = proptest::sample::select(
        &[
            "--nodes",
            "--load",
            "--node-memory-mb",
            "--node-vcores",
            "--nodes-per-rack",
            "--heartbeat-ms",
            "--am-heartbeat-ms",
            "--am-response-lag",
            "--am-mb",
            "--network-delay-ms",
            "--progress-s",
            "--sample-s",
            "--limit",
            "--fail",
            "--slowstart",
        ][..],
    );
    let value = prop_oneof![3 => field(), 1 => (field(), field()).prop_map(|(a, b)| format!("{a}:{b}"))];
    fuzz("flags", proptest::collection::vec((flag, value), 0..5), |pairs| {
        let mut args = vec!["sojourn".to_string(), "simulate".to_string()];
        for (f, v) in pairs {
            args.push(format!("{f}={v}"));
        }
        let Ok(cli) = Cli::try_parse_from(&args) else { return Ok(false) };
        let Command::Simulate { run, .. } = cli.command else { return Err("not simulate".into()) };
        match cli::check_run_args(&run) {
            Ok(()) => {
                let nodes_ok = run.nodes.is_none_or(|n| (1..=MAX_NODES).contains(&n));
                let sizes_ok = (1..=MAX_NODE_MEMORY_MB).contains(&run.node_memory_mb)
                    && (1..=MAX_NODE_VCORES).contains(&run.node_vcores)
                    && run.am_mb.is_none_or(|m| (1..=MAX_NODE_MEMORY_MB).contains(&m));
                let periods_ok = run.heartbeat_ms <= MAX_PERIOD_MS
                    && run.am_heartbeat_ms <= MAX_PERIOD_MS
                    && run.network_delay_ms <= MAX_PERIOD_MS
                    && run.progress_s * 1000 <= MAX_PERIOD_MS
                    && (1..=MAX_PERIOD_MS / 1000).contains(&run.sample_s)
                    && run.am_response_lag <= MAX_AM_RESPONSE_LAG;
                let load_ok = run.load > 0.0 && run.load <= MAX_LOAD;
                if nodes_ok && sizes_ok && periods_ok && load_ok && run.limit != Some(0) {
                    Ok(true)
                } else {
                    Err(format!("accepted out of range: {run:?}"))
                }
            }
            Err(e) => {
                let msg = e.to_string();
                if msg.starts_with("--") {
                    Ok(false)
                } else {
                    Err(format!("the error names no flag: {msg}"))
                }
            }
        }
    });
}
