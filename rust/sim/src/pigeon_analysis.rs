//! `sojourn pigeon-analysis`: the curves of Pigeon's queueing model
//! (pigeon.md §2, Figs 2–4) from `sojourn_policies::pigeon::analysis`.

use crate::engine::SimError;

/// Loads of the default table: 0.1 to 0.95 by 0.05 (Fig 2's and Fig 4's x axes).
pub const DEFAULT_LOADS: [f64; 18] =
    [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95];

/// The table, after checking the flags: loads in (0, 1], group sizes and
/// fanouts 1 to 100,000, a positive mean task time.
pub fn cli(loads: &[f64], group_sizes: &[u32], fanouts: &[u32], task_ms: f64) -> Result<String, SimError> {
    let bad = |m: String| Err(SimError::Config(m));
    if let Some(l) = loads.iter().find(|l| !(**l > 0.0 && **l <= 1.0)) {
        return bad(format!("--loads {l}: expected loads above 0 and at most 1"));
    }
    if let Some(n) = group_sizes.iter().find(|n| !(1..=100_000).contains(*n)) {
        return bad(format!("--group-sizes {n}: expected 1 to 100000 workers"));
    }
    if let Some(f) = fanouts.iter().find(|f| !(1..=100_000).contains(*f)) {
        return bad(format!("--fanouts {f}: expected 1 to 100000 tasks"));
    }
    if !(task_ms > 0.0 && task_ms.is_finite()) {
        return bad(format!("--task-ms {task_ms}: expected a positive duration"));
    }
    Ok(sojourn_policies::pigeon::analysis::curves(loads, group_sizes, fanouts, task_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_the_model_and_names_bad_flags() {
        let t = cli(&[0.9], &[100], &[100], 100.0).expect("table");
        assert!(t.contains("0.7831") && t.contains("2.169"), "{t}");
        assert!(cli(&[1.5], &[100], &[100], 100.0).unwrap_err().to_string().contains("--loads"));
        assert!(cli(&[0.5], &[0], &[100], 100.0).unwrap_err().to_string().contains("--group-sizes"));
        assert!(cli(&[0.5], &[10], &[0], 100.0).unwrap_err().to_string().contains("--fanouts"));
        assert!(cli(&[0.5], &[10], &[1], 0.0).unwrap_err().to_string().contains("--task-ms"));
    }
}
