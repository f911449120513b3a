//! Pigeon's queueing model (pigeon.md §2; paper Section 3, L104–169): each
//! master with its N_w workers is an M/M/N_w queue fed λ_t = λF/N_g tasks per
//! unit of time, at load ρ = λ_t·T_e/N_w. Everything is computed in log
//! space: N_w! overflows an f64 from N_w = 171 on.
//!
//! - [`p_task_zero`], eq. (1): the probability that a task does not queue
//!   (the complement of Erlang C).
//! - [`mean_queueing`], eq. (2): mean queueing time T_q.
//! - [`p_job_pigeon`], eq. (3): a job of F equal tasks does not queue.
//! - [`p_job_sparrow`], eq. (4): Sparrow with 2F probes: at least F of the
//!   2F probed workers are idle.
//! - [`p_job_exponential`], eq. (6): F exponential tasks, the job's
//!   completion equals its longest task's duration.
//! - [`curves`]: the curves of Figs 2–4 as a text table (`sojourn
//!   pigeon-analysis`).

/// ln k! for k = 0..=n.
fn ln_factorials(n: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(n + 1);
    let mut acc = 0.0;
    out.push(0.0);
    for k in 1..=n {
        acc += (k as f64).ln();
        out.push(acc);
    }
    out
}

/// ln Σ exp(x_i), stable.
fn log_sum_exp(xs: impl Iterator<Item = f64> + Clone) -> f64 {
    let m = xs.clone().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + xs.map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// Erlang C: the probability that a task waits in an M/M/`n` queue at
/// load `rho` (1 at ρ ≥ 1, 0 at ρ ≤ 0 or n = 0).
pub fn erlang_c(n: u32, rho: f64) -> f64 {
    if n == 0 || rho.is_nan() {
        return 1.0;
    }
    if rho <= 0.0 {
        return 0.0;
    }
    if rho >= 1.0 {
        return 1.0;
    }
    let n_us = n as usize;
    let a = n as f64 * rho;
    let lf = ln_factorials(n_us);
    // (N!/(Nρ)^N) Σ_{k<N} (Nρ)^k/k!  =  Σ_{k<N} exp((k−N) ln a + ln N! − ln k!)
    let ln_ratio = log_sum_exp((0..n_us).map(|k| (k as f64 - n as f64) * a.ln() + lf[n_us] - lf[k]));
    // C = 1 / (1 + (1−ρ)·ratio), in log space for ratios past f64's range
    let ln_x = (1.0 - rho).ln() + ln_ratio;
    if ln_x > 700.0 {
        return (-ln_x).exp();
    }
    1.0 / (1.0 + ln_x.exp())
}

/// Eq. (1): P_task(0) = 1 − Erlang C.
pub fn p_task_zero(n_w: u32, rho: f64) -> f64 {
    1.0 - erlang_c(n_w, rho)
}

/// Eq. (2): T_q = (1 − P_task(0)) / (N_w/T_e − λ_t), with λ_t = ρN_w/T_e;
/// in the unit of `t_e`. Infinite at ρ ≥ 1.
pub fn mean_queueing(n_w: u32, rho: f64, t_e: f64) -> f64 {
    if rho >= 1.0 {
        return f64::INFINITY;
    }
    if n_w == 0 {
        return f64::INFINITY;
    }
    erlang_c(n_w, rho) * t_e / (n_w as f64 * (1.0 - rho))
}

/// Eq. (3): P_job^PI(0) = P_task(0)^F (tasks of a job of equal duration).
pub fn p_job_pigeon(n_w: u32, rho: f64, f: u32) -> f64 {
    p_task_zero(n_w, rho).powi(f as i32)
}

/// Eq. (4): P_job^SP(0) = Σ_{i=F}^{2F} C(2F,i)(1−ρ)^i ρ^{2F−i}: at least F
/// of Sparrow's 2F probes find an idle worker.
pub fn p_job_sparrow(rho: f64, f: u32) -> f64 {
    if f == 0 || rho <= 0.0 {
        return 1.0;
    }
    if rho >= 1.0 {
        return 0.0;
    }
    let n = 2 * f as usize;
    let lf = ln_factorials(n);
    let (lp, lq) = ((1.0 - rho).ln(), rho.ln());
    let terms = (f as usize..=n).map(|i| lf[n] - lf[i] - lf[n - i] + i as f64 * lp + (n - i) as f64 * lq);
    log_sum_exp(terms).exp().min(1.0)
}

/// Eq. (6): P_job^dt(0) ≈ P_task(0)·e^{−T_q/T_e} (exponential task times).
pub fn p_job_exponential(n_w: u32, rho: f64) -> f64 {
    let t_q = mean_queueing(n_w, rho, 1.0);
    p_task_zero(n_w, rho) * (-t_q).exp()
}

/// The analytic curves: for each load, N_w and F, P_task(0), T_q (in units
/// of `t_e_ms`, shown in ms), P_job(0) for Pigeon (eq. 3), Sparrow (eq. 4)
/// and exponential tasks (eq. 6). Figs 2 (P_job(0) vs load, F = 50, 100,
/// N_w = 100, 200), 3 (vs N_w) and 4 (P^dt and mean wait vs load) are
/// slices of it.
pub fn curves(loads: &[f64], group_sizes: &[u32], fanouts: &[u32], t_e_ms: f64) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "# Pigeon's M/M/N_w model (pigeon.md §2), T_e = {t_e_ms} ms: P_task(0) eq. 1, T_q eq. 2, \
         P_job(0) Pigeon eq. 3, Sparrow with 2F probes eq. 4, exponential tasks eq. 6\n"
    ));
    s.push_str(&format!(
        "{:>6} {:>6} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        "load", "N_w", "F", "P_task0", "T_q_ms", "P_job_PI", "P_job_SP", "P_job_dt"
    ));
    for &rho in loads {
        for &n_w in group_sizes {
            for &f in fanouts {
                s.push_str(&format!(
                    "{:>6.2} {:>6} {:>5} {:>10.4} {:>10.3} {:>10.4} {:>10.4} {:>10.4}\n",
                    rho,
                    n_w,
                    f,
                    p_task_zero(n_w, rho),
                    mean_queueing(n_w, rho, t_e_ms),
                    p_job_pigeon(n_w, rho, f),
                    p_job_sparrow(rho, f),
                    p_job_exponential(n_w, rho),
                ));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// pigeon.md §2's [computed] reference table, T_e = 100 ms: (ρ, N_w,
    /// P_task(0), T_q ms, P^PI F=50, P^PI F=100, P^SP F=50, P^SP F=100, P^dt).
    type Row = (f64, u32, f64, f64, f64, f64, f64, f64, f64);
    #[rustfmt::skip]
    const TABLE: &[Row] = &[
        (0.5, 100, 1.0000, 0.0, 1.0, 1.0, 0.5398, 0.5282, 1.0000),
        (0.6, 100, 1.0000, 0.000, 0.9999, 0.9998, 0.0271, 0.0026, 1.0000),
        (0.7, 100, 0.9995, 0.002, 0.9773, 0.9551, 0.0000, 0.0000, 0.9995),
        (0.8, 100, 0.9804, 0.098, 0.3708, 0.1375, 0.0, 0.0, 0.9794),
        (0.9, 100, 0.7831, 2.169, 0.0000, 0.0000, 0.0, 0.0, 0.7663),
        (0.9, 50, 0.6361, 7.277, 0.0, 0.0, 0.0, 0.0, 0.5915),
        (0.8, 200, 0.9986, 0.003, 0.9334, 0.8713, 0.0, 0.0, 0.9986),
        (0.9, 200, 0.9055, 0.472, 0.0070, 0.0000, 0.0, 0.0, 0.9013),
        (0.95, 100, 0.4935, 10.129, 0.0, 0.0, 0.0, 0.0, 0.4460),
    ];

    #[test]
    fn the_reference_table_of_section_2() {
        for &(rho, n_w, pt, tq, pi50, pi100, sp50, sp100, dt) in TABLE {
            let at = format!("ρ = {rho}, N_w = {n_w}");
            assert!(close(p_task_zero(n_w, rho), pt, 5e-5), "{at}: P_task(0) {}", p_task_zero(n_w, rho));
            assert!(close(mean_queueing(n_w, rho, 100.0), tq, 5e-4), "{at}: T_q {}", mean_queueing(n_w, rho, 100.0));
            assert!(close(p_job_pigeon(n_w, rho, 50), pi50, 5e-5), "{at}: P^PI F=50 {}", p_job_pigeon(n_w, rho, 50));
            assert!(close(p_job_pigeon(n_w, rho, 100), pi100, 5e-5), "{at}: P^PI F=100");
            assert!(close(p_job_sparrow(rho, 50), sp50, 5e-5), "{at}: P^SP F=50 {}", p_job_sparrow(rho, 50));
            assert!(close(p_job_sparrow(rho, 100), sp100, 5e-5), "{at}: P^SP F=100 {}", p_job_sparrow(rho, 100));
            assert!(close(p_job_exponential(n_w, rho), dt, 5e-5), "{at}: P^dt {}", p_job_exponential(n_w, rho));
        }
    }

    #[test]
    fn sparrow_at_load_0_4() {
        assert!(close(p_job_sparrow(0.4, 50), 0.9832, 5e-5), "{}", p_job_sparrow(0.4, 50));
        assert!(close(p_job_sparrow(0.4, 100), 0.9983, 5e-5), "{}", p_job_sparrow(0.4, 100));
    }

    /// Log space: N_w far past 170 (where N_w! overflows) stays finite and
    /// agrees with the trend (bigger groups queue less at the same load);
    /// a small case agrees with the closed form of M/M/1 (C = ρ) and M/M/2
    /// (C = 2ρ²/(1+ρ)).
    #[test]
    fn large_groups_and_closed_forms() {
        for n in [171, 500, 2000, 10_000] {
            let p = p_task_zero(n, 0.95);
            assert!(p.is_finite() && (0.0..=1.0).contains(&p), "N_w = {n}: {p}");
        }
        assert!(p_task_zero(2000, 0.95) > p_task_zero(500, 0.95));
        assert!(p_task_zero(500, 0.95) > p_task_zero(200, 0.95));
        assert!(close(erlang_c(1, 0.3), 0.3, 1e-12));
        assert!(close(erlang_c(2, 0.5), 2.0 * 0.25 / 1.5, 1e-12));
        assert_eq!((erlang_c(10, 1.0), erlang_c(10, 0.0)), (1.0, 0.0));
        assert!(mean_queueing(10, 1.0, 1.0).is_infinite());
    }

    /// The text's claims (L130–137, L169): Sparrow's P_job(0) is near 0 by
    /// load 0.6; Pigeon's (N_w = 100) still near 1 at 0.7 and dropping by
    /// 0.8; N_w = 200 keeps it up 0.1 longer; P^dt ≈ 1 at 80 %, ≈ 0.7 at
    /// 90 %, and T_q < 4 % of T_e at 90 %.
    #[test]
    fn the_shapes_the_text_states() {
        assert!(p_job_sparrow(0.6, 100) < 0.01);
        assert!(p_job_pigeon(100, 0.7, 100) > 0.95 && p_job_pigeon(100, 0.8, 100) < 0.2);
        assert!(p_job_pigeon(200, 0.8, 100) > 0.85);
        assert!(p_job_exponential(100, 0.8) > 0.97);
        assert!(close(p_job_exponential(100, 0.9), 0.7, 0.07));
        assert!(mean_queueing(100, 0.9, 1.0) < 0.04);
        let text = curves(&[0.8, 0.9], &[100], &[100], 100.0);
        assert_eq!(text.lines().count(), 4);
        assert!(text.contains("0.7663"), "{text}");
    }
}
