#!/usr/bin/env bash
# HFSP's evaluation (results in integration/results/hfsp.md): the chapter-3
# single-server disciplines at Table 3.1's setting and on the FB-2010 day,
# then the cluster mode at the thesis's testbed shape (20 nodes of 2 x 1 GB
# map + 1 x 2 GB reduce: 4 GB, 3 vcores each) on the FB-2010 SWIM day scaled
# to that cluster and on the PigMix-like DEV/TEST/PROD workloads. Tasks report
# progress every 60 s (Hadoop 1 TaskTrackers did; HFSP's Δ rule needs it).
# Reduces start once 80% of their maps are done (the thesis ran slowstart 0.8).
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -q --release -p sojourn-sim
sojourn=target/release/sojourn
fb2010=rust/sim/workloads/FB-2010_samples_24_times_1hr_0.tsv
testbed="--nodes 20 --node-memory-mb 4096 --node-vcores 3 --progress-s 60 --slowstart 0.8 -q --no-wall-clock"
pick='^(vs|class|all)|offered|response (mean|p50|p90)|slowdown p50'
# The authors' code's behaviours (hfsp.md section 8.3, D1-D11), each an hfsp option.
code="-p aging_speed=0.5 -p training_order=progress -p round_robin_order=submission -p initial_mean=queued
  -p map_final=completed_mean -p reduce_final=sort_finish -p preempt_maps=false -p victims=heartbeat_node
  -p reserve_training_slots=true -p training_tasks=2"

echo "## Single server, Table 3.1 (Weibull shape 0.25, sigma 0.5, load 0.9, 10 x 10,000 jobs)"
$sojourn single-server --runs 10
echo
echo "## Single server, FB-2010 day (HFSP size formula, load 0.9, sigma 0.5)"
$sojourn single-server --workload "$fb2010"
echo
echo "## Cluster: FB-2010 day, bytes x 0.008, on the 20-node testbed"
$sojourn compare --workload "$fb2010:bytes_scale=0.008" $testbed --classes tasks:4,50,150 --policies fifo,fair,hfsp --baseline fair \
  | grep -E "$pick"
for w in dev test prod; do
  echo
  echo "## Cluster: PigMix-like $w (100 jobs) on the 20-node testbed"
  $sojourn compare --workload "pigmix:$w" $testbed --classes name:bin1,bin2,bin3,bin4 --policies fifo,fair,hfsp --baseline fair | grep -E "$pick"
  echo "hfsp with the trace's task times as its estimates (no training):"
  $sojourn simulate --policy hfsp --workload "pigmix:$w" $testbed --classes name:bin1,bin2,bin3,bin4 -p use_ask_estimates=true -p training_tasks=0 \
    | grep -E "^(all|class)|response p50"
  echo "hfsp with the authors' code's behaviours:"
  $sojourn simulate --policy hfsp --workload "pigmix:$w" $testbed --classes name:bin1,bin2,bin3,bin4 $code \
    | grep -E "^(all|class)|response p50"
done
