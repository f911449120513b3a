#!/usr/bin/env bash
# Kairos's evaluation in the simulator (results in integration/results/kairos.md):
# the YARN testbed (Table 4.1 workload, 30 nodes x 4 cores) with fifo, bigc and
# kairos and its sensitivity runs, then the thesis's simulation setting (the
# Yahoo sub-trace on 4,000 one-core nodes). Prints markdown tables.
set -euo pipefail
cd "$(dirname "$0")/../.."
traces=${TRACES:-../shared/traces}
out=${OUT:-/tmp/sojourn-kairos}
cargo build -q --release -p sojourn-sim
sojourn=target/release/sojourn
rm -rf "$out"; mkdir -p "$out"

# p50, p90, p99 (nearest rank) and max of column 6 (response_s) of a jobs CSV.
stats() {
  tail -n +2 "$1" | cut -d, -f6 | sort -g | awk '{v[NR]=$1} END {
    n=NR; split("50 90 99", q, " ");
    for (i=1;i<=3;i++) { k=int((q[i]*n+99)/100); if (k<1) k=1; printf "%.0f | ", v[k] }
    printf "%.0f", v[n] }'
}
row() { echo "| $1 | $(stats "$2") |"; }

testbed="--workload $traces/kairos/generated_workload_bigc --node-vcores 4 --classes none -q --no-wall-clock"

# The three policies on the testbed workload with `nodes` nodes, as a table.
three() { # title, nodes, output name
  echo "## $1"
  echo
  echo "| policy | p50 (s) | p90 (s) | p99 (s) | worst (s) |"
  echo "|---|---|---|---|---|"
  $sojourn compare $testbed --nodes "$2" --node-memory-mb 40960 --policies fifo,bigc,kairos --out "$out/$3" >/dev/null
  for p in fifo bigc kairos; do row "$p" "$out/$3/jobs-$p.csv"; done
  echo
}
three "Testbed: 30 nodes x 4 vcores, 40 GB (room for N + Q = 8 containers of 5 GB)" 30 testbed
three "Testbed, offered load 0.86 (36 nodes)" 36 n36
echo "## Kairos sensitivity on the testbed (30 nodes)"
echo
echo "| setting | p50 (s) | p90 (s) | p99 (s) | worst (s) |"
echo "|---|---|---|---|---|"
run() { # name, memory, params...
  local name=$1 mem=$2; shift 2
  $sojourn simulate --policy kairos $testbed --nodes 30 --node-memory-mb "$mem" "$@" --out "$out/$name" >/dev/null
  row "$name" "$out/$name/jobs-kairos.csv"
}
run "Var, Q=4, W=50 s (default)" 40960
run "Random tie-break" 40960 -p tie_break=random
run "Sum tie-break" 40960 -p tie_break=sum
run "Q=2" 40960 -p extra_tasks=2
run "Q=8 (60 GB nodes)" 61440 -p extra_tasks=8
run "W=10 s" 40960 -p quantum_ms=10000
run "W=100 s" 40960 -p quantum_ms=100000
run "no starvation guard" 40960 -p starvation_quanta=0
run "authors' code (h=W/2, preempted-count guard)" 40960 -p hysteresis_ms=25000 -p starvation=preempted
echo
echo "## New draws: the heavy-tailed mix and the uniform one (thesis K4), 100 jobs, 30 nodes"
echo
echo "| workload | policy | p50 (s) | p90 (s) | p99 (s) | worst (s) |"
echo "|---|---|---|---|---|---|"
for mix in heavy uniform; do
  $sojourn compare --workload "kairos-draw:$mix" --node-vcores 4 --classes none -q --no-wall-clock --nodes 30 \
    --node-memory-mb 40960 --policies fifo,bigc,kairos --out "$out/draw-$mix" >/dev/null
  for p in fifo bigc kairos; do echo "| $mix | $p | $(stats "$out/draw-$mix/jobs-$p.csv") |"; done
done
echo
echo "## Simulation setting: YH2_sub.tr, 4,000 one-core nodes, Q=2, W=100 s"
echo
$sojourn compare --workload "$traces/eagle/YH2_sub.tr" --node-vcores 1 --node-memory-mb 3072 --nodes 4000 \
  --policies fifo,kairos -p kairos.extra_tasks=2 -p kairos.quantum_ms=100000 --classes cutoff:90s -q --no-wall-clock \
  --out "$out/yahoo" | grep -E '^(vs|class|all)|response p(50|90|99)'
