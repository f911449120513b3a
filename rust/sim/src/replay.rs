//! `sojourn replay`: re-runs a flight recording of a real ResourceManager
//! through a fresh core. The YARN shim's recorder writes three files:
//! `FILE` (the events, one `sojourn_core::Record` a line), `FILE.meta` (the
//! policy, parameters, seed, maximum allocation and network delay the RM
//! ran with) and `FILE.decisions` (what the core decided, one
//! `sojourn_core::Decision` a line). Replay takes its settings from the
//! `.meta` file (flags override them), prints the decisions it makes and, when
//! the `.decisions` file is there, compares: the core is deterministic, so a
//! recording replays to the decisions the RM saw, and any difference is
//! reported with its position.

use crate::engine::SimError;
use crate::workload::limits::MAX_RECORD_LINE_BYTES;
use crate::workload::text::Lines;
use sojourn_core::{Core, Decision, Record, RecordingMeta};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What the command line asks for; `None` takes the recording's own.
#[derive(Clone, Debug, Default)]
pub struct ReplayOptions {
    pub policy: Option<String>,
    pub params: Option<BTreeMap<String, String>>,
    pub seed: Option<u64>,
}

/// The outcome of a replay.
#[derive(Clone, Debug, PartialEq)]
pub struct Replayed {
    pub meta: RecordingMeta,
    pub records: usize,
    pub decisions: Vec<Decision>,
    /// Errors the core returned (the RM saw the same and carried on).
    pub errors: Vec<String>,
    /// The recorded decisions, when `FILE.decisions` exists.
    pub recorded: Option<Vec<Decision>>,
}

impl Replayed {
    /// The index of the first decision that differs from the recording
    /// (`None` when identical or nothing was recorded).
    pub fn first_difference(&self) -> Option<usize> {
        let rec = self.recorded.as_ref()?;
        (0..self.decisions.len().max(rec.len())).find(|&i| self.decisions.get(i) != rec.get(i))
    }
}

fn sibling(file: &Path, ext: &str) -> PathBuf {
    let mut s = file.as_os_str().to_owned();
    s.push(ext);
    PathBuf::from(s)
}

/// Each non-blank line of `file` as one `T`; errors name the file and line.
fn lines_of<T: serde::de::DeserializeOwned>(file: &Path, what: &str) -> Result<Vec<T>, SimError> {
    let mut lines = Lines::open(file)?.with_cap(MAX_RECORD_LINE_BYTES);
    let mut out = Vec::new();
    while let Some(line) = lines.next() {
        let (n, line) = line?;
        out.push(serde_json::from_str(&line).map_err(|e| lines.error(n, format!("not {what}: {e}")))?);
    }
    Ok(out)
}

/// Replays `file` with the settings of `FILE.meta`, overridden by `opts`.
pub fn replay(file: &Path, opts: &ReplayOptions) -> Result<Replayed, SimError> {
    let meta_path = sibling(file, ".meta");
    let mut meta = if meta_path.exists() {
        let text = std::fs::read_to_string(&meta_path)
            .map_err(|e| SimError::Config(format!("cannot read {}: {e}", meta_path.display())))?;
        serde_json::from_str::<RecordingMeta>(&text)
            .map_err(|e| SimError::Config(format!("{}: not a recording's settings: {e}", meta_path.display())))?
    } else {
        RecordingMeta {
            policy: "fifo".into(),
            params: BTreeMap::new(),
            seed: 0,
            max_allocation: None,
            network_delay_ms: 0,
            segment: 0,
            offload: false,
            max_assignments: None,
        }
    };
    if let Some(p) = &opts.policy {
        if *p != meta.policy && opts.params.is_none() {
            meta.params.clear(); // another policy's parameters would not validate
        }
        meta.policy = p.clone();
    }
    if let Some(p) = &opts.params {
        meta.params = p.clone();
    }
    if let Some(s) = opts.seed {
        meta.seed = s;
    }
    let mut core = Core::new(sojourn_policies::build(&meta.policy, &meta.params)?, meta.core_config());
    let records: Vec<Record> = lines_of(file, "a recorded step")?;
    let count = records.len();
    let sojourn_core::ReplayOutcome { decisions, refused } = core.replay(records)?;
    let errors = refused.into_iter().map(|(i, r)| format!("{}:{}: {}", file.display(), i + 1, r.error)).collect();
    let dec_path = sibling(file, ".decisions");
    let recorded = if dec_path.exists() { Some(lines_of(&dec_path, "a recorded decision")?) } else { None };
    Ok(Replayed { meta, records: count, decisions, errors, recorded })
}

/// The command's output: one JSON decision a line, `#` lines for errors and
/// the comparison. A difference from the recording is an error.
pub fn cli(file: &Path, opts: &ReplayOptions) -> Result<String, SimError> {
    let r = replay(file, opts)?;
    let mut out = String::new();
    for d in &r.decisions {
        out.push_str(&serde_json::to_string(d).unwrap_or_default());
        out.push('\n');
    }
    for e in &r.errors {
        out.push_str(&format!("# {e}\n"));
    }
    out.push_str(&format!(
        "# {} events replayed with policy {} (seed {}): {} decisions",
        r.records,
        r.meta.policy,
        r.meta.seed,
        r.decisions.len()
    ));
    match (&r.recorded, r.first_difference()) {
        (None, _) => out.push_str("; no recorded decisions to compare\n"),
        (Some(rec), None) => out.push_str(&format!(", identical to the {} recorded\n", rec.len())),
        (Some(rec), Some(i)) if r.meta.segment > 0 => out.push_str(&format!(
            "; differs from the {} recorded at decision {}, as expected: segment {} of a rotated recording starts mid-run\n",
            rec.len(),
            i + 1,
            r.meta.segment
        )),
        (Some(rec), Some(i)) => {
            let show =
                |d: Option<&Decision>| d.map_or("nothing".into(), |d| serde_json::to_string(d).unwrap_or_default());
            return Err(SimError::Config(format!(
                "{out}\nreplay differs from the recording at decision {} of {}: replayed {}, recorded {}",
                i + 1,
                rec.len(),
                show(r.decisions.get(i)),
                show(rec.get(i))
            )));
        }
    }
    Ok(out)
}
