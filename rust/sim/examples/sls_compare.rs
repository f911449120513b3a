//! Compares SLS runs of one trace (issue #6), until the `sojourn` CLI has a subcommand for it.
//!
//!   sls_compare [--csv SUMMARY.csv] [--jobs-csv JOBS.csv] NAME=SLS_OUTPUT_DIR...
//!
//! Prints the markdown tables of `sojourn_sim::sls_results::compare_sls_runs`; with `--csv`
//! and `--jobs-csv` also writes the summary (one row per scheduler) and per-job CSVs.
//! `integration/sls/compare.sh` runs it after its SLS runs.

use std::path::PathBuf;
use std::process::ExitCode;

use sojourn_sim::sls_results::read_sls_runs;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut csv, mut jobs_csv, mut runs) = (None, None, Vec::new());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--csv" => csv = args.next().map(PathBuf::from),
            "--jobs-csv" => jobs_csv = args.next().map(PathBuf::from),
            _ => match a.split_once('=') {
                Some((name, dir)) => runs.push((name.to_string(), PathBuf::from(dir))),
                None => {
                    eprintln!("usage: sls_compare [--csv F] [--jobs-csv F] NAME=SLS_OUTPUT_DIR...");
                    return ExitCode::from(2);
                }
            },
        }
    }
    let c = match read_sls_runs(&runs) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sls_compare: {e}");
            return ExitCode::FAILURE;
        }
    };
    for (path, text) in [(csv, c.summary_csv()), (jobs_csv, c.jobs_csv())] {
        if let Some(p) = path {
            if let Err(e) = std::fs::write(&p, text) {
                eprintln!("sls_compare: {}: {e}", p.display());
                return ExitCode::FAILURE;
            }
        }
    }
    print!("{}", c.markdown());
    ExitCode::SUCCESS
}
