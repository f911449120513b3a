#!/usr/bin/env bash
# PigMix's query DAGs (the simulator's `pigmix-dag` workload, integration/results/gridmix.md
# §5.2) as real MapReduce jobs on a local cluster of real daemons, under each scheduler in
# turn: `sojourn export-dag` writes the DAG (per job its query, parents, task counts and
# mean task times, scaled down and capped for a small cluster), then compare.sh runs it
# with PigmixDagRunner (a Hadoop SleepJob per DAG job, submitted once its query has arrived
# and its parents have succeeded) and `sojourn real-compare` compares jobs and queries.
#
#   integration/gridmix/pigmix-compare.sh WORKLOAD|DAG.csv [SCHEDULERS]
#
#   WORKLOAD    a workload spec for `sojourn export-dag`, e.g. pigmix-dag:dev:queries=8:seed=1
#   DAG.csv     or a DAG file export-dag wrote (used as it is: the caps below do not apply)
#   SCHEDULERS  as compare.sh's (default "sojourn:hfsp,sojourn:fair,capacity,fair")
#
# Environment (the export's scaling, applied in the DAG file, not in the runner):
#   COMPRESS             divides arrival times and task times (default 10)
#   MAX_MAPS, MAX_REDUCES       cap on each job's task counts (default 4, 2)
#   MAX_MAP_MS, MAX_REDUCE_MS   cap on each task's sleep after COMPRESS (default 10000, 10000)
#   OUT, NODES, NM_MB, NM_VCORES, RUN_TIMEOUT_S, RUNNER_HEAP, GRIDMIX_CLASSPATH, NATIVE_DIR,
#   COMPARE              as compare.sh's; the DAG is written to OUT/dag.csv
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
if [ $# -lt 1 ]; then
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
target=${CARGO_TARGET_DIR:-$repo/target}
if [ -f "$1" ]; then
  exec "$here/compare.sh" "$1" "${2:-sojourn:hfsp,sojourn:fair,capacity,fair}"
fi
out=${OUT:-$repo/build/gridmix/$(echo "$1" | tr -c 'A-Za-z0-9=.-' '-' | sed 's/-*$//')-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(readlink -f "$out")
(cd "$repo" && cargo build -q --release -p sojourn-sim --bin sojourn)
"$target/release/sojourn" export-dag "$1" --out "$out/dag.csv" --compress "${COMPRESS:-10}" \
  --max-maps "${MAX_MAPS:-4}" --max-reduces "${MAX_REDUCES:-2}" \
  --max-map-ms "${MAX_MAP_MS:-10000}" --max-reduce-ms "${MAX_REDUCE_MS:-10000}" >&2
OUT=$out exec "$here/compare.sh" "$out/dag.csv" "${2:-sojourn:hfsp,sojourn:fair,capacity,fair}"
