//! A paper's reported figures, drawn on the report's CDFs beside the runs
//! (issue 20: "CDF plots ... beside the thesis's reported points"). A
//! point is a percentile of response time or slowdown that a paper gives,
//! e.g. the Kairos thesis's FIFO median of 808 s; on the CDF it sits at
//! (808 s, 0.5), where the run's curve should pass if it matches.
//!
//! Written `SOURCE:POLICY:QUANTITY:pN=VALUE[,pN=VALUE...][@CLASS]`:
//! `kairos-thesis:fifo:response:p50=808,p99=2061` or
//! `hfsp-thesis:fair:response:p50=290@bin3`. Response times are in seconds.
//! Without `@CLASS` the points go on the all-jobs plots.

use std::fmt;

/// Which CDF a point belongs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaperQuantity {
    /// Response time (s).
    Response,
    Slowdown,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PaperPoints {
    /// Where the figures come from (e.g. `kairos-thesis`).
    pub source: String,
    /// The policy they are of: the point takes that run's colour.
    pub policy: String,
    pub quantity: PaperQuantity,
    /// The job class's label as the report heads it; `None`: all jobs.
    pub class: Option<String>,
    /// (fraction of jobs, value): p50 = 808 is (0.5, 808.0).
    pub points: Vec<(f64, f64)>,
}

impl PaperPoints {
    /// Parses one `--paper-point`; the error names the part at fault.
    pub fn parse(spec: &str) -> Result<PaperPoints, String> {
        let bad = |why: &str| {
            format!("--paper-point '{spec}': {why} (expected SOURCE:POLICY:QUANTITY:pN=VALUE[,pN=VALUE...][@CLASS], e.g. kairos-thesis:fifo:response:p50=808,p99=2061)")
        };
        let (body, class) = match spec.split_once('@') {
            Some((b, c)) if !c.trim().is_empty() => (b, Some(c.trim().to_string())),
            Some(_) => return Err(bad("the class after '@' is empty")),
            None => (spec, None),
        };
        let parts: Vec<&str> = body.splitn(4, ':').collect();
        let [source, policy, quantity, figures] = parts[..] else {
            return Err(bad("four ':'-separated parts are needed"));
        };
        if source.trim().is_empty() || policy.trim().is_empty() {
            return Err(bad("the source and the policy must not be empty"));
        }
        let quantity = match quantity.trim() {
            "response" => PaperQuantity::Response,
            "slowdown" => PaperQuantity::Slowdown,
            other => return Err(bad(&format!("quantity '{other}' is neither 'response' nor 'slowdown'"))),
        };
        let mut points = Vec::new();
        for fig in figures.split(',') {
            let (pct, value) = fig.trim().split_once('=').ok_or_else(|| bad(&format!("'{fig}' is not pN=VALUE")))?;
            let pct: f64 = pct
                .strip_prefix('p')
                .and_then(|p| p.parse().ok())
                .filter(|p: &f64| *p > 0.0 && *p <= 100.0)
                .ok_or_else(|| bad(&format!("'{pct}' is not a percentile p1..p100")))?;
            let value: f64 = value
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v > 0.0)
                .ok_or_else(|| bad(&format!("'{value}' is not a positive number")))?;
            points.push((pct / 100.0, value));
        }
        Ok(PaperPoints { source: source.trim().into(), policy: policy.trim().into(), quantity, class, points })
    }
}

impl fmt::Display for PaperPoints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.policy, self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_thesis_figures() {
        let p = PaperPoints::parse("kairos-thesis:fifo:response:p50=808,p99=2061").expect("parses");
        assert_eq!((p.source.as_str(), p.policy.as_str()), ("kairos-thesis", "fifo"));
        assert_eq!((p.quantity, p.class.as_deref()), (PaperQuantity::Response, None));
        assert_eq!(p.points, vec![(0.5, 808.0), (0.99, 2061.0)]);
        let p = PaperPoints::parse("hfsp-thesis:fair:slowdown:p50=2.5@bin3").expect("parses");
        assert_eq!((p.quantity, p.class.as_deref(), p.points[0]), (PaperQuantity::Slowdown, Some("bin3"), (0.5, 2.5)));
    }

    #[test]
    fn refusals_name_the_part_at_fault() {
        for (spec, says) in [
            ("kairos:response:p50=1", "four ':'-separated parts"),
            ("t:fifo:latency:p50=1", "'latency' is neither"),
            ("t:fifo:response:p0=1", "'p0' is not a percentile"),
            ("t:fifo:response:50=1", "'50' is not a percentile"),
            ("t:fifo:response:p50=-3", "'-3' is not a positive number"),
            ("t:fifo:response:p50", "'p50' is not pN=VALUE"),
            ("t:fifo:response:p50=1@", "the class after '@' is empty"),
        ] {
            let e = PaperPoints::parse(spec).expect_err(spec);
            assert!(e.contains(says) && e.contains(spec), "{spec}: {e}");
        }
    }
}
