#!/usr/bin/env bash
# The simulator against real MapReduce jobs (issue 19, item 4; results in
# integration/results/gridmix.md, "Simulator against the real jobs"): the SWIM-derived
# 20-job trace that integration/gridmix/compare.sh replayed with GridMix on 4 NodeManagers
# (integration/gridmix/results/swim20-4nm/), through `sojourn simulate` with the real
# cluster's settings, paired job by job with `sojourn fidelity`.
#
#   bash integration/experiments/gridmix-fidelity.sh      # a few seconds; no cluster needed
#   bash integration/experiments/gridmix-fidelity.sh dag  # the PigMix DAG run instead (§5.3):
#     the 14 jobs of integration/gridmix/results/pigmix-dag-dev-q10-4nm/dag.csv, read back by
#     the simulator as a workload, paired with the real run by job name
#   REAL=integration/gridmix/results/pigmix-dag-dev-q10-4nm-5sched bash ...gridmix-fidelity.sh dag
#     the same DAG's second run (§5.3b); the simulator's capacity is paired with Sojourn
#     capacity's real run where the run has one, else with YARN's CapacityScheduler's
#
# The real cluster's settings the simulator is given (GridmixRunner, compare.sh):
#   4 NodeManagers of 2048 MB / 8 vcores; MR AMs of 512 MB; maps and reduces of 384 MB (the
#   SLS trace's 1024/2048 MB rewritten); NM and AM heartbeats of 1 s (YARN's and
#   MapReduce's defaults); reduces asked for at 5% of maps (MapReduce's slowstart default);
#   the policies' settings as compare.sh gives them (hfsp: preemption wait, 5 training
#   tasks, tiny threshold 5, 512 MB slots; capacity: maximum_am_resource_percent 0.5).
# Environment: OUT (default /tmp/sojourn-gridmix-fidelity), TRACES (../shared/traces),
#   LAUNCH_MS: extra run time per task and AM, in ms, standing for container and JVM
#   start-up (default 0: the simulator's own model).
#   SIM_FLAGS: more `sojourn simulate` flags, e.g. the start-up model that grows with
#   concurrent start-ups on the one host:
#   SIM_FLAGS="--launch-ms 3000 --launch-per-concurrent-ms 1500 --launch-scope cluster"
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
traces=$(readlink -f "${TRACES:-../shared/traces}")
out=${OUT:-/tmp/sojourn-gridmix-fidelity}
launch=${LAUNCH_MS:-0}
target=${CARGO_TARGET_DIR:-$repo/target}
mkdir -p "$out"
cargo build -q --release -p sojourn-sim
sojourn=$target/release/sojourn
# The same cluster and policy settings for both runs.
common=(--nodes 4 --node-memory-mb 2048 --node-vcores 8 --am-mb 512 --heartbeat-ms 1000 --am-heartbeat-ms 1000
  --slowstart 0.05 -q --no-wall-clock)
# shellcheck disable=SC2206
common+=(${SIM_FLAGS:-})
policies() { # workload, out dir
  "$sojourn" simulate -w "$1" "${common[@]}" --policy hfsp -p preemption=wait -p training_tasks=5 \
    -p tiny_threshold=5 -p map_slot_mb=512 -p reduce_slot_mb=512 --out "$2" >/dev/null
  "$sojourn" simulate -w "$1" "${common[@]}" --policy fair --out "$2" >/dev/null
  "$sojourn" simulate -w "$1" "${common[@]}" --policy capacity -p maximum_am_resource_percent=0.5 --out "$2" >/dev/null
}
if [ "${1:-}" = dag ]; then
  # dag.csv is exactly what PigmixDagRunner ran: 384 MB SleepJob tasks (the reader's default).
  real=$(readlink -f "${REAL:-$repo/integration/gridmix/results/pigmix-dag-dev-q10-4nm}")
  capacity=$real/capacity
  [ -d "$real/sojourn-capacity" ] && capacity=$real/sojourn-capacity
  policies "$real/dag.csv" "$out/sim-dag"
  "$sojourn" fidelity --csv "$out/fidelity-dag.csv" \
    "$out/sim-dag/jobs-hfsp.csv=$real/sojourn-hfsp" \
    "$out/sim-dag/jobs-fair.csv=$real/sojourn-fair" \
    "$out/sim-dag/jobs-capacity.csv=$capacity" | tee "$out/fidelity-dag.md"
  exit 0
fi
real=$repo/integration/gridmix/results/swim20-4nm
"$sojourn" to-sls "$traces/swim/FB-2009_samples_24_times_1hr_0.tsv:jobs=20" --compress 8 --nodes 4 \
  -o "$out/swim20.sls.json" >/dev/null
# GridMix ran every task in a 384 MB container and capped sleeps at 5 s (MAX_MAP_MS, and
# GridMix's own reduce cap); LAUNCH_MS is added to every task's run time.
python3 - "$out/swim20.sls.json" "$out/swim20-384.sls.json" "$launch" <<'PY'
import json, sys
src, dst, launch = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(src) as f, open(dst, "w") as g:
    for line in f:
        if not line.strip():
            continue
        job = json.loads(line)
        for t in job["job.tasks"]:
            t["container.memory-mb"] = 384
            t["container.duration.ms"] = min(t["container.duration.ms"], 5000) + launch
        g.write(json.dumps(job) + "\n")
PY
policies "$out/swim20-384.sls.json" "$out/sim"
"$sojourn" fidelity --csv "$out/fidelity.csv" \
  "$out/sim/jobs-hfsp.csv=$real/sojourn-hfsp" \
  "$out/sim/jobs-fair.csv=$real/sojourn-fair" \
  "$out/sim/jobs-capacity.csv=$real/capacity" | tee "$out/fidelity.md"
