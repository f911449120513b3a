#!/usr/bin/env bash
# Simulator fidelity against the real ResourceManager (issue #6; results in
# integration/results/sls.md). Two traces run through Hadoop's SLS under Sojourn (fifo, fair,
# capacity) and YARN's CapacityScheduler and FairScheduler (integration/sls/compare.sh), and
# through `sojourn simulate` (fifo, fair, capacity) with SLS's timing (--sls-timing) and
# without AM heartbeats (the simulator's model before this comparison). Prints the SLS
# comparison and the fidelity tables, and writes everything under OUT.
#
#   bash integration/experiments/sls-fidelity.sh          # about 30 min (the two traces in parallel)
#
# Traces:
#   rumen  ../shared/traces/sls/2jobs2min-rumen-jh.json as SLS reads it: both jobs at time 0
#          (the simulator gets `:at_once=true`), on its 4 hosts of 10 GB / 10 vcores.
#   swim   the first 40 jobs of the SWIM FB-2009 day, times / 8 (`sojourn to-sls`), 4 nodes.
# Environment: OUT (default /tmp/sojourn-sls-fidelity), TRACES (../shared/traces),
# SLS_CLASSPATH (default: resolved once with `gradle slsClasspath`), SCHEDULERS,
# REUSE_SLS=1 (keep the SLS runs already in OUT; only the simulator and the tables run again).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
traces=$(readlink -f "${TRACES:-../shared/traces}")
out=${OUT:-/tmp/sojourn-sls-fidelity}
scheds=${SCHEDULERS:-sojourn:fifo,sojourn:fair,sojourn:capacity,capacity,fair}
target=${CARGO_TARGET_DIR:-$repo/target}
reuse=${REUSE_SLS:-0}
[ "$reuse" = 1 ] || rm -rf "$out"
mkdir -p "$out"
out=$(readlink -f "$out")

cargo build -q --release -p sojourn-sim -p sojourn-jni
sojourn=$target/release/sojourn
if [ -z "${SLS_CLASSPATH:-}" ] && [ "$reuse" != 1 ]; then
  gradle -q --no-daemon slsClasspath -PcargoTargetDir="$target" | tail -1 > "$out/classpath.txt"
  SLS_CLASSPATH=$(cat "$out/classpath.txt")
fi
export SLS_CLASSPATH=${SLS_CLASSPATH:-}

"$sojourn" to-sls "$traces/swim/FB-2009_samples_24_times_1hr_0.tsv:jobs=40" --compress 8 --nodes 4 \
  -o "$out/swim40.json" --nodes-out "$out/swim40-nodes.json" >/dev/null

# name, SLS trace, nodes file, the simulator's workload spec, queue
traces_table=(
  "rumen|$traces/sls/2jobs2min-rumen-jh.json|$repo/integration/sls/2jobs2min-nodes.json|$traces/sls/2jobs2min-rumen-jh.json:at_once=true|sls_queue_1"
  "swim|$out/swim40.json|$out/swim40-nodes.json|$out/swim40.json|default"
)

if [ "$reuse" != 1 ]; then
  # SLS: both traces at once (SLS runs in wall-clock time and mostly sleeps).
  mkdir -p "$out/rumen" "$out/swim"
  pids=()
  for t in "${traces_table[@]}"; do
    IFS='|' read -r name trace nodes _ _ <<< "$t"
    OUT="$out/$name/sls" bash integration/sls/compare.sh "$trace" "$nodes" "$scheds" \
      > "$out/$name/sls.md" 2> "$out/$name-sls.log" &
    pids+=($!)
  done
  status=0
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  [ $status -eq 0 ] || { echo "sls-fidelity: an SLS run failed; see $out/*-sls.log" >&2; exit 1; }
fi

for t in "${traces_table[@]}"; do
  IFS='|' read -r name trace nodes spec queue <<< "$t"
  sim="--workload $spec --nodes-file $nodes -q --no-wall-clock"
  # The settings compare.sh gives YARN's schedulers and Sojourn's capacity and fair.
  cap="-p capacity.queue.root.queues=$queue -p capacity.queue.root.$queue.user_limit_factor=100
    -p capacity.maximum_am_resource_percent=0.5 -p fair.assign_multiple=true"
  "$sojourn" compare $sim --sls-timing --policies fifo,fair,capacity $cap \
    --out "$out/$name/sim" >/dev/null
  "$sojourn" compare $sim --heartbeat-ms 1000 --am-mb 1024 --policies fifo,fair,capacity $cap \
    --out "$out/$name/sim-no-am-heartbeats" >/dev/null
  s=$out/$name/sls
  # The comparison of every scheduler's run (again, so that runs redone one by one join it).
  runs=()
  for spec in ${scheds//,/ }; do runs+=("$spec=$s/${spec//:/-}/out"); done
  "$sojourn" sls-compare --trace "$trace" --csv "$s/comparison.csv" --jobs-csv "$s/jobs.csv" --html "$s" \
    "${runs[@]}" > "$s/comparison.txt"
  echo "## $name: SLS, every scheduler (plots: $s/index.html)"
  echo
  echo '```'
  sed '/^Response time per job/,$d' "$s/comparison.txt"
  echo '```'
  echo "## $name: simulator (--sls-timing) against SLS"
  echo
  "$sojourn" fidelity --csv "$out/$name/fidelity.csv" \
    "$out/$name/sim/jobs-fifo.csv=$s/sojourn-fifo/out" \
    "$out/$name/sim/jobs-fair.csv=$s/sojourn-fair/out" \
    "$out/$name/sim/jobs-capacity.csv=$s/sojourn-capacity/out" \
    "$out/$name/sim/jobs-fair.csv=$s/fair/out" \
    "$out/$name/sim/jobs-capacity.csv=$s/capacity/out" > "$out/$name/fidelity.md"
  sed -n '/^| pair/,/^$/p' "$out/$name/fidelity.md"
  echo "## $name: simulator without AM heartbeats against SLS"
  echo
  "$sojourn" fidelity \
    "$out/$name/sim-no-am-heartbeats/jobs-fifo.csv=$s/sojourn-fifo/out" \
    "$out/$name/sim-no-am-heartbeats/jobs-fair.csv=$s/sojourn-fair/out" \
    "$out/$name/sim-no-am-heartbeats/jobs-capacity.csv=$s/sojourn-capacity/out" \
    > "$out/$name/fidelity-no-am-heartbeats.md"
  sed -n '/^| pair/,/^$/p' "$out/$name/fidelity-no-am-heartbeats.md"
done
echo "sls-fidelity: per-job tables in $out/*/fidelity.md, SLS runs in $out/*/sls" >&2
