//! The terminal table: one row per metric, one column per run, each value
//! followed by its ratio to the baseline in parentheses.

use super::{visible, Comparison, Unit, WriteOptions};
use std::fmt::Write as _;

/// The comparison as an aligned plain-text table (rows with `in_table` only).
pub fn table(cmp: &Comparison, opts: &WriteOptions) -> String {
    let c = visible(cmp, opts);
    let b = c.baseline_index();
    let rows: Vec<_> = c.rows.iter().filter(|r| r.in_table).collect();
    // Cells: (value, ratio) per row and run; the baseline column has no ratios.
    let cells: Vec<Vec<(String, String)>> = rows
        .iter()
        .map(|r| {
            (0..c.policies.len())
                .map(|i| {
                    let v = fmt_value(r.values[i], r.unit);
                    let ratio = if i == b { String::new() } else { format!("({})", fmt_ratio(r.ratios[i])) };
                    (v, ratio)
                })
                .collect()
        })
        .collect();
    let width = |s: &str| s.chars().count();
    let head = format!("vs {}", c.baseline);
    // Wall-clock rows say so: they differ between identical runs.
    let labels: Vec<String> =
        rows.iter().map(|r| if r.wall_clock { format!("{} (wall clock)", r.label) } else { r.label.clone() }).collect();
    let label_w = labels
        .iter()
        .map(|l| 2 + width(l))
        .chain(rows.iter().map(|r| width(&r.section)))
        .fold(width(&head), usize::max);
    // Per column: value width, ratio width, total width.
    let cols: Vec<(usize, usize, usize)> = (0..c.policies.len())
        .map(|i| {
            let vw = cells.iter().map(|row| width(&row[i].0)).max().unwrap_or(0);
            let rw = cells.iter().map(|row| width(&row[i].1)).max().unwrap_or(0);
            let body = vw + if rw > 0 { 1 + rw } else { 0 };
            (vw, rw, body.max(width(&c.policies[i])))
        })
        .collect();
    let mut out = String::new();
    let _ = write!(out, "{head:<label_w$}");
    for (p, &(_, _, w)) in c.policies.iter().zip(&cols) {
        // Right-align names over the values (left of the ratio column).
        let _ = write!(out, "  {p:>w$}");
    }
    out.push('\n');
    let mut section = "";
    for ((r, row), label) in rows.iter().zip(&cells).zip(&labels) {
        if r.section != section {
            section = &r.section;
            let _ = writeln!(out, "{section}");
        }
        let _ = write!(out, "  {:<w$}", label, w = label_w - 2);
        for ((v, ratio), &(_, rw, w)) in row.iter().zip(&cols) {
            let ratio_w = if rw > 0 { rw + 1 } else { 0 };
            let _ = write!(out, "  {v:>vw$}", vw = w - ratio_w);
            if rw > 0 {
                let _ = write!(out, " {ratio:>rw$}");
            }
        }
        // No trailing blanks.
        let trimmed = out.trim_end_matches(' ').len();
        out.truncate(trimmed);
        out.push('\n');
    }
    if rows.iter().any(|r| r.wall_clock) {
        out.push_str(
            "(wall clock): measured on this machine's clock while it ran; these vary from run to run \
             (--no-wall-clock leaves them out)\n",
        );
    }
    out
}

/// A value as shown in tables: counts whole, fractions as %, other numbers
/// to about four significant digits; "-" when undefined.
pub fn fmt_value(v: Option<f64>, unit: Unit) -> String {
    let Some(v) = v else { return "-".into() };
    match unit {
        Unit::Count => format!("{v:.0}"),
        Unit::Percent => format!("{:.1}%", v * 100.0),
        Unit::Number => fmt_num(v),
    }
}

pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".into()
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.001 {
        format!("{v:.3}")
    } else {
        format!("{v:.1e}")
    }
}

/// A ratio to the baseline: two decimals from 0.1 up, and below that two
/// significant digits (0.0042, not 0.00: a large improvement must show).
pub fn fmt_ratio(r: Option<f64>) -> String {
    match r {
        None => "-".into(),
        Some(r) if r >= 100.0 => format!("{r:.0}"),
        Some(r) if r >= 10.0 => format!("{r:.1}"),
        Some(r) if r >= 0.1 || r <= 0.0 || !r.is_finite() => format!("{r:.2}"),
        Some(r) => {
            // Digits after the point so that two significant ones show.
            let digits = (-r.log10()).floor() as usize + 2;
            format!("{r:.digits$}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{compare, tests::sample_runs};

    #[test]
    fn table_is_aligned_with_ratios() {
        let runs = sample_runs();
        let cmp = compare("fifo", &runs).unwrap();
        let t = table(&cmp, &WriteOptions { wall_clock: false, ..WriteOptions::default() });
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("vs fifo") && lines[0].ends_with("hawk"));
        let mean = lines.iter().find(|l| l.trim_start().starts_with("response mean (s)")).unwrap();
        assert!(mean.contains("(0.") && mean.matches('(').count() == 3, "{mean}");
        // Columns line up: every metric row is as long as the header (values right-aligned).
        let full = lines.iter().filter(|l| l.starts_with("  ") && l.ends_with(')')).map(|l| l.chars().count());
        let lens: Vec<usize> = full.collect();
        assert!(lens.windows(2).all(|w| w[0] == w[1]), "{t}");
        assert!(t.contains("class short\n") && t.contains("class long\n") && !t.contains("wall time"));
        assert!(!t.lines().any(|l| l.ends_with(' ')));
        println!("{t}");
        let w = table(&cmp, &WriteOptions::default());
        if w.contains("wall time") {
            assert!(w.contains("wall time (s) (wall clock)") && w.contains("vary from run to run"), "{w}");
        }
    }

    #[test]
    fn number_formats() {
        assert_eq!(fmt_num(1234.56), "1235");
        assert_eq!(fmt_num(123.456), "123.5");
        assert_eq!(fmt_num(1.2345), "1.23");
        assert_eq!(fmt_num(0.01234), "0.012");
        assert_eq!(fmt_value(Some(0.6321), Unit::Percent), "63.2%");
        assert_eq!(fmt_value(None, Unit::Count), "-");
        assert_eq!(fmt_ratio(Some(0.5)), "0.50");
        assert_eq!(fmt_ratio(Some(0.1)), "0.10");
        assert_eq!(fmt_ratio(Some(0.0165)), "0.017");
        assert_eq!(fmt_ratio(Some(0.00421)), "0.0042");
        assert_eq!(fmt_ratio(Some(0.099)), "0.099");
        assert_eq!(fmt_ratio(Some(0.0)), "0.00");
    }
}
