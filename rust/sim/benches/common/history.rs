//! The benchmarks' history files: CSV rows stamped with the date and the
//! commit they measured, appended so that a figure can be compared with the
//! same case's earlier rows (`--record`).

use std::io::Write;

fn output_of(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Appends `rows` (CSV without the stamp) to `path` as `date,rev,<row>`;
/// a new file starts with `date,rev,<header>`.
pub fn append(path: &str, header: &str, rows: &[String]) {
    let date = output_of("date", &["+%F"]);
    let rev = output_of("git", &["rev-parse", "--short", "HEAD"]);
    let new = !std::path::Path::new(path).exists();
    let mut f = match std::fs::OpenOptions::new().create(true).append(true).open(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("cannot append to {path}: {e}");
            std::process::exit(1);
        }
    };
    if new {
        let _ = writeln!(f, "date,rev,{header}");
    }
    for r in rows {
        let _ = writeln!(f, "{date},{rev},{r}");
    }
}

/// The process's peak resident memory (VmHWM), MiB; NaN where /proc has none.
#[allow(dead_code)] // not every benchmark prints it
pub fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}
