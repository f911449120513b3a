#!/usr/bin/env bash
# TetriSched in the simulator (results in integration/results/tetrisched.md):
# a GS_MIX-like SLO mix (tetrisched.md §5, Table 1: 70% SLO, 30% BE,
# unconstrained) on 40 one-slot nodes at ~100% offered load, three seeds,
# TetriSched vs its NG and NP ablations vs the Rayon/CapacityScheduler
# baseline (`rayon`), capacity and fifo; the estimate-error sweep (every
# job's estimate × 0.5 … 1.5, true durations unchanged: TetriSched, NG and
# rayon, accepted / total / without-reservation SLO attainment and mean BE
# latency, §5.4–5.5); GS_HET (75% SLO jobs, half GPU, half MPI, 25% BE) on
# RC80 (8 racks of 10, 2 GPU racks), 100 jobs, a task σ = 1.5 or 2 × slower off its
# job's preferred nodes, TetriSched vs NH, NG, NP and rayon at estimates
# × 0.5, 1, 1.5 (§5.6 rows 7–10); then the solver sizing micro-benchmark
# (§8.2); GR_MIX and GR_SLO on RC256 (§5.6 rows 1, 3–5). The workloads and the deadlines are
# generated in rust/sim/tests/common/gs_mix.rs: the `sojourn simulate` CLI's
# trace readers carry no deadlines. Prints markdown tables.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench -q -p sojourn-sim --bench tetrisched -- slo_mix 2>&1 | grep '^|'
cargo bench -q -p sojourn-sim --bench tetrisched -- estimate_error 2>&1 | grep '^|'
cargo bench -q -p sojourn-sim --bench tetrisched -- gs_het 2>&1 | grep '^|'
cargo bench -q -p sojourn-sim --bench tetrisched -- solver_sizing 2>&1 | grep '^|'
# GR_MIX and GR_SLO on RC256 (256 one-slot nodes, 8 racks of 32), 1,000 jobs,
# estimates × 0.5 … 1.5, TetriSched, NG and rayon: about 15 min a seed each
# on 2 cores (GR_SEEDS=1,2,3 for three seeds; GR_JOBS, GR_FACTORS).
GR_SEEDS=${GR_SEEDS:-1,2,3} cargo bench -q -p sojourn-sim --bench tetrisched -- gr_mix 2>&1 | grep '^|'
cargo bench -q -p sojourn-sim --bench tetrisched -- gr_slo 2>&1 | grep '^|'
# The plan-ahead sweep on GS_HET (RC80, σ = 2, windows of 4 s to 160 s).
cargo bench -q -p sojourn-sim --bench tetrisched -- plan_ahead 2>&1 | grep '^|'
