//! Pigeon's per-task metrics, gathered during one call of the policy and
//! handed to the core's [`Metrics`] at its end: a task costs three to five
//! of them, and each `Metrics::count`/`observe` looks its name up in an
//! ordered map of strings. What the core holds after every call is what
//! it held when each was recorded at once (counters are sums; each
//! distribution gets its values in the order they were recorded, so even
//! its floating-point sum is the same).

use sojourn_core::Metrics;

/// Pigeon's counters (module doc of `pigeon`, Metrics).
#[derive(Clone, Copy, Debug)]
pub(super) enum Count {
    BatchesSent,
    QueuedShort,
    QueuedLong,
    ShortTasks,
    LongTasks,
    ReservedStarts,
    TasksDropped,
    WfqLongTurns,
}

const COUNTS: usize = 8;

impl Count {
    fn name(self) -> &'static str {
        match self {
            Count::BatchesSent => "batches_sent",
            Count::QueuedShort => "queued_short",
            Count::QueuedLong => "queued_long",
            Count::ShortTasks => "short_tasks",
            Count::LongTasks => "long_tasks",
            Count::ReservedStarts => "reserved_starts",
            Count::TasksDropped => "tasks_dropped",
            Count::WfqLongTurns => "wfq_long_turns",
        }
    }

    const ALL: [Count; COUNTS] = [
        Count::BatchesSent,
        Count::QueuedShort,
        Count::QueuedLong,
        Count::ShortTasks,
        Count::LongTasks,
        Count::ReservedStarts,
        Count::TasksDropped,
        Count::WfqLongTurns,
    ];
}

#[derive(Default)]
pub(super) struct Tally {
    counts: [u64; COUNTS],
    /// Queue delays (ms) of dispatched tasks and whether each was long, in
    /// dispatch order.
    delays: Vec<(f64, bool)>,
}

impl Tally {
    pub(super) fn count(&mut self, c: Count) {
        self.counts[c as usize] += 1;
    }

    /// `queue_delay_ms` and `queue_delay_{short,long}_ms`.
    pub(super) fn delay(&mut self, ms: f64, long: bool) {
        self.delays.push((ms, long));
    }

    /// Hands everything gathered to `m`; a name nothing was recorded
    /// under stays absent, as before.
    pub(super) fn flush(&mut self, m: &mut Metrics) {
        for c in Count::ALL {
            let n = std::mem::take(&mut self.counts[c as usize]);
            if n > 0 {
                m.count(c.name(), n);
            }
        }
        if self.delays.is_empty() {
            return;
        }
        for (name, which) in
            [("queue_delay_ms", None), ("queue_delay_short_ms", Some(false)), ("queue_delay_long_ms", Some(true))]
        {
            let mut values = self.delays.iter().filter(|(_, long)| which.is_none_or(|w| w == *long)).peekable();
            if values.peek().is_none() {
                continue;
            }
            let d = m.distributions.entry(name.to_string()).or_default();
            for (ms, _) in values {
                d.record(*ms);
            }
        }
        self.delays.clear();
    }
}
