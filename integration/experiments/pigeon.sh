#!/usr/bin/env bash
# Pigeon vs Eagle, Sparrow and Hawk in the simulator (results in
# integration/results/pigeon.md): YH2_sub.tr (3,363 jobs of the Yahoo trace)
# on one-slot nodes, short/long by the Yahoo cutoff (90.5811 s), at three
# cluster sizes; the Google-like generator (GJOBS jobs, seed 1, Google cutoff
# 1129.532 s and reservations, pigeon 9 %, eagle 17 %) at GSIZES; then Pigeon's W sweep (20, 5, inf), reservation and group
# sizes at 4,000 workers; the paper's percentile slowdown (p-th response
# over p-th ideal, pigeon.md §3.4) beside the per-job slowdown percentiles.
# Prints markdown tables.
set -euo pipefail
cd "$(dirname "$0")/../.."
traces=${TRACES:-../shared/traces}
out=${OUT:-/tmp/sojourn-pigeon}
sizes=${SIZES:-4000 4500 6000}
gsizes=${GSIZES:-20000 26000 32000 42500}
gjobs=${GJOBS:-10000}
# SOJOURN=path: an already built binary (skips the build)
if [ -z "${SOJOURN:-}" ]; then
  cargo build -q --release -p sojourn-sim
fi
sojourn=${SOJOURN:-${CARGO_TARGET_DIR:-target}/release/sojourn}
rm -rf "$out"; mkdir -p "$out"
common="--workload $traces/eagle/YH2_sub.tr --node-vcores 1 --node-memory-mb 3072 --classes cutoff:90581ms -q --no-wall-clock"

# value of metric $2 for policy $3 in summary.csv $1, 2 decimals
v() { awk -F, -v k="$2" -v p="$3" '$1==k && $2==p {printf "%.2f", $3}' "$1"; }
# row NAME CSV POLICY: short and long, paper's slowdown then per-job slowdown, p50/p90/p99
row() {
  local s=$2 p=$3 c line="| $1 |"
  for c in short long; do
    line="$line $(v "$s" "class[$c].pct_slowdown.p50" "$p") / $(v "$s" "class[$c].pct_slowdown.p90" "$p") / $(v "$s" "class[$c].pct_slowdown.p99" "$p") |"
    line="$line $(v "$s" "class[$c].slowdown.p50" "$p") / $(v "$s" "class[$c].slowdown.p90" "$p") / $(v "$s" "class[$c].slowdown.p99" "$p") |"
  done
  echo "$line"
}
header() {
  echo "| $1 | short: p50/p90/p99 resp ÷ same pct ideal | short: per-job slowdown p50/p90/p99 | long: pct ratio | long: per-job |"
  echo "|---|---|---|---|---|"
}

for n in $sizes; do
  $sojourn compare --policies pigeon,eagle,sparrow,hawk --baseline pigeon --nodes "$n" $common --out "$out/cmp-$n" > "$out/cmp-$n.txt"
  load=$(awk '/offered load/ {print $3}' "$out/cmp-$n.txt")
  echo "## YH2_sub, $n workers (offered load $load)"
  echo
  header policy
  for p in pigeon eagle sparrow hawk; do row "$p" "$out/cmp-$n/summary.csv" "$p"; done
  echo
done

# Google-like: pigeon and eagle take the Google cutoff and reservation
# (trace=google), the report's classes the same cutoff.
gcommon="--workload synthetic:google:jobs=$gjobs:seed=1 --node-vcores 1 --node-memory-mb 3072 --classes cutoff:1129532ms -q --no-wall-clock"
for n in $gsizes; do
  $sojourn compare --policies pigeon,eagle,sparrow --baseline pigeon --nodes "$n" $gcommon \
    -p pigeon.trace=google -p eagle.trace=google --out "$out/gcmp-$n" > "$out/gcmp-$n.txt"
  load=$(awk '/offered load/ {print $3}' "$out/gcmp-$n.txt")
  echo "## Google-like ($gjobs jobs), $n workers (offered load $load)"
  echo
  header policy
  for p in pigeon eagle sparrow; do row "$p" "$out/gcmp-$n/summary.csv" "$p"; done
  echo
done

# sim NAME PARAMS...: pigeon at 4,000 workers
sim() {
  local name=$1; shift
  $sojourn simulate --policy pigeon --nodes 4000 $common "$@" --out "$out/$name" > "$out/$name.txt"
  row "$name" "$out/$name/summary.csv" pigeon
}
echo "## Pigeon at 4,000 workers: W, reservation, group size"
echo
header "pigeon run"
sim "W=20 (default)"
sim "W=5" -p wfq_weight=5
sim "W=inf" -p wfq_weight=inf
sim "W=20, pigeon_sim" -p wfq_mode=pigeon_sim
sim "reserved 5%" -p reserved_pct=5
sim "reserved 0%" -p reserved_pct=0
sim "reserved 0%, W=5" -p reserved_pct=0 -p wfq_weight=5
sim "reserved 0%, W=inf" -p reserved_pct=0 -p wfq_weight=inf
sim "N_w=50" -p workers_per_group=50
sim "N_w=200" -p workers_per_group=200
sim "centralized (N_w=4000)" -p workers_per_group=4000
echo
# esim NAME POLICY PARAMS...: eagle or hawk at 4,000 workers, one mechanism off
# (why the paper's Eagle is > 70 on Yahoo short jobs and ours is not)
esim() {
  local name=$1 policy=$2; shift 2
  $sojourn simulate --policy "$policy" --nodes 4000 $common "$@" --out "$out/$name" > "$out/$name.txt"
  row "$name" "$out/$name/summary.csv" "$policy"
}
echo "## Eagle at 4,000 workers with one mechanism off"
echo
header "eagle run"
esim "eagle (default)" eagle
esim "eagle, no SSS" eagle -p sss=false
esim "eagle, no sticky probing" eagle -p sticky=false
esim "eagle, no SSS, no sticky" eagle -p sss=false -p sticky=false
esim "eagle, FIFO node queues" eagle -p queue_order=fifo
esim "eagle, no stealing" eagle -p steal_attempts=0
esim "eagle, no short partition" eagle -p short_partition_pct=0
esim "hawk, no stealing" hawk -p steal_attempts=0
echo
echo "## Pigeon's counters, 4,000 workers, W=20"
echo
awk '/^policy/ {on=1; next} on && NF==2 {print "    " $0}' "$out/W=20 (default).txt"
echo
echo "## Time of one pigeon run at 4,000 workers (user CPU s, whole sojourn simulate)"
/usr/bin/time -f "%U s user, %e s elapsed" $sojourn simulate --policy pigeon --nodes 4000 $common > /dev/null
