//! Routes the core's `log` records to Java. A process-wide logger appends
//! each record to a buffer of the thread that emitted it; every native call
//! drains its thread's buffer into its response, and the shim logs the lines
//! through the RM's own logger (slf4j/log4j) at the same level. Nothing is
//! written to stderr.

use serde::Serialize;
use std::cell::{Cell, RefCell};

/// One log record as Java receives it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LogLine {
    /// `ERROR`, `WARN`, `INFO`, `DEBUG` or `TRACE`.
    pub level: &'static str,
    pub target: String,
    pub message: String,
}

/// Lines kept per thread between two drains; more are counted, not kept.
const MAX_LINES: usize = 10_000;

thread_local! {
    static LINES: RefCell<Vec<LogLine>> = const { RefCell::new(Vec::new()) };
    static DROPPED: Cell<u64> = const { Cell::new(0) };
}

struct BufferLogger;

static LOGGER: BufferLogger = BufferLogger;

impl log::Log for BufferLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        push(LogLine {
            level: record.level().as_str(),
            target: record.target().to_string(),
            message: record.args().to_string(),
        });
    }

    fn flush(&self) {}
}

fn push(line: LogLine) {
    LINES.with(|l| {
        let mut l = l.borrow_mut();
        if l.len() < MAX_LINES {
            l.push(line);
        } else {
            DROPPED.with(|d| d.set(d.get() + 1));
        }
    });
}

/// Installs the buffering logger (once per process) and sets the level:
/// 0 off, 1 error, 2 warn, 3 info, 4 debug, 5 trace. The shim passes the
/// level its own logger is enabled for, so disabled records cost nothing.
pub fn install(level: i32) {
    // A second call finds the logger already set: only the level changes.
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(level_filter(level));
}

pub fn level_filter(level: i32) -> log::LevelFilter {
    match level {
        i32::MIN..=0 => log::LevelFilter::Off,
        1 => log::LevelFilter::Error,
        2 => log::LevelFilter::Warn,
        3 => log::LevelFilter::Info,
        4 => log::LevelFilter::Debug,
        _ => log::LevelFilter::Trace,
    }
}

/// Replaces the default panic hook (which prints to stderr) with one that
/// logs the panic as an ERROR line; the panic itself is caught at the JNI
/// boundary and thrown as a Java exception.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        push(LogLine { level: "ERROR", target: "sojourn_jni::panic".to_string(), message: info.to_string() });
    }));
}

/// Takes this thread's buffered lines.
pub fn drain() -> Vec<LogLine> {
    let mut lines = LINES.with(|l| std::mem::take(&mut *l.borrow_mut()));
    let dropped = DROPPED.with(|d| d.replace(0));
    if dropped > 0 {
        lines.push(LogLine {
            level: "WARN",
            target: "sojourn_jni".to_string(),
            message: format!("{dropped} native log lines were dropped (more than {MAX_LINES} in one call)"),
        });
    }
    lines
}
