#!/usr/bin/env bash
# Replays one Rumen trace with Hadoop's GridMix (SLEEPJOB mode: real MapReduce jobs whose
# tasks sleep for their trace run time, no input data) on a local cluster of real daemons
# (MiniMRYarnCluster: a ResourceManager, N NodeManagers launching real AM and task JVMs)
# under each scheduler in turn, then compares the runs with `sojourn real-compare`:
# applications that succeeded, makespan, response time and AM wait (mean/p50/p90/p99/max).
#
#   integration/gridmix/compare.sh TRACE [SCHEDULERS]
#
#   TRACE       a Rumen trace (JSON job objects, e.g. /work/shared/traces/sls/2jobs2min-rumen-jh.json),
#               or a DAG of sleep jobs as `sojourn export-dag` writes it (integration/gridmix/pigmix-compare.sh
#               makes one from a workload spec): run by PigmixDagRunner, a SleepJob per DAG job submitted
#               once its query has arrived and its parents have succeeded; each run also writes
#               queries.csv and the comparison gets a "queries" section. MAX_*_MS and SUBMISSION do not
#               apply (the DAG file carries its own, capped, task times)
#   SCHEDULERS  comma- or space-separated, default "sojourn:hfsp,sojourn:fair,capacity,fair":
#               sojourn:<policy>  org.sojourn.yarn.SojournScheduler with that policy
#               capacity          YARN's CapacityScheduler
#               fair              YARN's FairScheduler
#
# Environment:
#   OUT=DIR              where runs go (default build/gridmix/<trace>-<time>); one subdirectory
#                        per scheduler (conf/, jobs.csv, run.json, runner.log, and cpu.txt: the
#                        runner JVM's CPU seconds, i.e. the RM's and NodeManagers', the host's busy
#                        CPU seconds, wall seconds and load average over the run), and
#                        comparison.txt (printed), comparison.csv, jobs.csv, index.html beside them
#   NODES                NodeManagers (default 4)
#   NM_MB, NM_VCORES     each NodeManager's resources (default 4096, 4)
#   SUBMISSION           GridMix's submission policy: REPLAY (trace times), SERIAL, STRESS (default REPLAY)
#   SUBMIT_MULTIPLIER    REPLAY's gap scale: 0.1 submits ten times faster (default 1.0)
#   MAX_MAP_MS, MAX_REDUCE_MS   cap on each task's sleep (default 10000, 10000)
#   RUN_TIMEOUT_S        per-scheduler limit (default 1800)
#   RUNNER_HEAP          the runner JVM's heap: RM, NMs, JobHistoryServer, GridMix (default 1g)
#   GRIDMIX_CLASSPATH=CP classpath of the runner (default: `gradle gridmixClasspath`, cached in OUT)
#   NATIVE_DIR=DIR       where libsojourn_jni.so is (default $CARGO_TARGET_DIR/release or ./target/release)
#   COMPARE=CMD          the gatherer (default: the sojourn binary, built here, as `sojourn real-compare`)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
if [ $# -lt 1 ]; then
  sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
[ -f "$1" ] || { echo "compare.sh: no trace $1" >&2; exit 2; }
trace=$(readlink -f "$1")
dag_header='query,job,name,submit_ms,parents,maps,reduces,map_ms,reduce_ms'
if [ "$(head -1 "$trace" | tr -d '\r')" = "$dag_header" ]; then
  mode=dag
elif grep -q '"jobID"' "$trace"; then
  mode=gridmix
else
  echo "compare.sh: $1 is neither a Rumen trace (no \"jobID\") nor a DAG file (first line '$dag_header')" >&2
  exit 2
fi
scheds=${2:-sojourn:hfsp,sojourn:fair,capacity,fair}
scheds=${scheds//,/ }

out=${OUT:-$repo/build/gridmix/$(basename "${trace%.*}")-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(readlink -f "$out")
target=${CARGO_TARGET_DIR:-$repo/target}
native=${NATIVE_DIR:-$target/release}
timeout_s=${RUN_TIMEOUT_S:-1800}

for spec in $scheds; do
  case "$spec" in
    sojourn:?*|capacity|fair) ;;
    *) echo "compare.sh: unknown scheduler '$spec' (sojourn:<policy>, capacity, fair)" >&2; exit 2 ;;
  esac
done

if [ -z "${GRIDMIX_CLASSPATH:-}" ]; then
  if [ ! -s "$out/classpath.txt" ]; then
    echo "compare.sh: resolving the GridMix classpath (gradle gridmixClasspath)..." >&2
    (cd "$repo" && gradle -q --no-daemon gridmixClasspath -PcargoTargetDir="$target") | tail -1 > "$out/classpath.txt"
  fi
  GRIDMIX_CLASSPATH=$(cat "$out/classpath.txt")
fi
[ -f "$native/libsojourn_jni.so" ] || case " $scheds " in *" sojourn:"*)
  echo "compare.sh: no $native/libsojourn_jni.so (cargo build --release -p sojourn-jni, or NATIVE_DIR)" >&2; exit 2 ;; esac

# Java 17 (research/yarn.md section 4), for the runner JVM (RM, NMs in-process).
jflags=(--add-exports java.base/sun.net.dns=ALL-UNNAMED --add-exports java.base/sun.net.util=ALL-UNNAMED
  --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED
  --add-opens java.base/java.lang.reflect=ALL-UNNAMED --add-opens java.base/java.net=ALL-UNNAMED
  --add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang.invoke=ALL-UNNAMED
  --add-opens java.base/java.util.concurrent.atomic=ALL-UNNAMED)

prop() { printf '  <property><name>%s</name><value>%s</value></property>\n' "$1" "$2"; }

write_conf() { # $1 = scheduler spec, $2 = conf dir
  local spec=$1 conf=$2 cls
  mkdir -p "$conf"
  case "$spec" in
    sojourn:*) cls=org.sojourn.yarn.SojournScheduler ;;
    capacity) cls=org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler ;;
    fair) cls=org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler ;;
  esac
  # GridMix submits every job to one queue, "default" (the trace's queues do not exist here).
  {
    echo '<?xml version="1.0"?><configuration>'
    prop yarn.resourcemanager.scheduler.class "$cls"
    # The RM's stores under this run, not /tmp/hadoop-yarn-$USER shared by every run.
    prop yarn.node-attribute.fs-store.root-dir "file://$(dirname "$conf")/hadoop-tmp/node-attribute"
    prop yarn.node-labels.fs-store.root-dir "file://$(dirname "$conf")/hadoop-tmp/node-labels"
    prop yarn.scheduler.fair.allocation.file "$conf/fair-scheduler.xml"
    prop yarn.scheduler.fair.assignmultiple true
    # FairScheduler rounds every request up to a multiple of this (default 1024 MB): the
    # runner's 512 MB AMs and 384 MB tasks would take 1024 MB each under it alone, half the
    # AMs and 40 % of the tasks the others fit (gridmix.md §5.3c). The others step by the
    # minimum allocation (128 MB, RealCluster); this makes the FairScheduler step by it too.
    prop yarn.resource-types.memory-mb.increment-allocation 128
    if [ "${spec%%:*}" = sojourn ]; then
      local policy=${spec#sojourn:}
      prop yarn.scheduler.sojourn.policy "$policy"
      prop yarn.scheduler.sojourn.queue.root.queues default
      case "$policy" in
        fair) prop yarn.scheduler.sojourn.fair.assign_multiple true ;;
        capacity)
          prop yarn.scheduler.sojourn.capacity.queue.root.queues default
          prop yarn.scheduler.sojourn.capacity.queue.root.default.capacity 100
          prop yarn.scheduler.sojourn.capacity.maximum_am_resource_percent 0.5 ;;
        hfsp)
          # As hadoop-conf/sojourn-hfsp.xml, with slots of the runner's 384 MB tasks.
          prop yarn.scheduler.sojourn.hfsp.preemption wait
          prop yarn.scheduler.sojourn.hfsp.tiny_threshold 5
          prop yarn.scheduler.sojourn.hfsp.training_tasks 5
          prop yarn.scheduler.sojourn.hfsp.map_slot_mb 512
          prop yarn.scheduler.sojourn.hfsp.reduce_slot_mb 512
          prop yarn.scheduler.sojourn.am-progress.interval-ms 3000 ;;
      esac
    fi
    echo '</configuration>'
  } > "$conf/yarn-site.xml"
  {
    echo '<?xml version="1.0"?><configuration>'
    prop yarn.scheduler.capacity.root.queues default
    prop yarn.scheduler.capacity.root.default.capacity 100
    prop yarn.scheduler.capacity.root.default.maximum-capacity 100
    prop yarn.scheduler.capacity.root.default.user-limit-factor 100
    prop yarn.scheduler.capacity.maximum-am-resource-percent 0.5
    echo '</configuration>'
  } > "$conf/capacity-scheduler.xml"
  {
    echo '<?xml version="1.0"?><allocations>'
    echo '  <queue name="default"/>'
    echo '  <queueMaxAMShareDefault>0.5</queueMaxAMShareDefault>'
    # FairScheduler's default placement ignores a submission to "default" and places the
    # application in "root", a parent queue, which rejects it: place everything in root.default.
    echo '  <queuePlacementPolicy><rule name="default" queue="root.default"/></queuePlacementPolicy>'
    echo '</allocations>'
  } > "$conf/fair-scheduler.xml"
  {
    echo '<?xml version="1.0"?><configuration>'
    prop hadoop.tmp.dir "$(dirname "$conf")/hadoop-tmp"
    echo '</configuration>'
  } > "$conf/core-site.xml"
  cat > "$conf/log4j.properties" <<'L4J'
log4j.rootLogger=INFO,file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=${gridmix.log.file}
log4j.appender.file.Append=false
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.org.apache.hadoop.yarn.server.resourcemanager.RMAuditLogger=WARN
log4j.logger.org.apache.hadoop.yarn.server.nodemanager.containermanager.monitor=WARN
L4J
}

# CPU accounting, to tell the RM's own CPU from the host's load (gridmix.md §2c): the
# runner JVM holds the RM and the NodeManagers (the AM and task JVMs are other processes),
# so its CPU differs between schedulers by what the scheduler costs. cpu.txt gets the
# runner JVM's CPU seconds (user + system, sampled each second until it exits), the
# host's busy CPU seconds over the run (every process: the JVMs, and anything else the
# host ran), the wall time, and the 1-minute load average sampled each second (mean, max).
host_busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8; exit}' /proc/stat; }
watch_cpu() { # $1 = the runner's pid (timeout's, which execs nothing: its child is the JVM), $2 = file
  local pid=$1 file=$2 jvm ticks=0 t loads=()
  while kill -0 "$pid" 2>/dev/null; do
    for jvm in $(pgrep -P "$pid" java) ; do
      t=$(awk '{print $14+$15}' "/proc/$jvm/stat" 2>/dev/null) && [ -n "$t" ] && ticks=$t
    done
    loads+=("$(cut -d' ' -f1 /proc/loadavg)")
    sleep 1
  done
  {
    echo "runner_cpu_s $(( ticks / $(getconf CLK_TCK) ))"
    printf '%s\n' "${loads[@]}" | awk '{s+=$1; if($1>m)m=$1} END{if(NR) printf "load1_mean %.2f\nload1_max %.2f\n", s/NR, m}'
  } > "$file"
}

pairs=()
status=0
for spec in $scheds; do
  name=${spec//:/-}
  dir=$out/$name
  rm -rf "$dir"
  mkdir -p "$dir"
  write_conf "$spec" "$dir/conf"
  if [ "$mode" = dag ]; then
    what="the DAG $(basename "$trace")"
    runner=(org.sojourn.yarn.gridmix.PigmixDagRunner --dag "$trace")
  else
    what="GridMix on $(basename "$trace")"
    runner=(org.sojourn.yarn.gridmix.GridmixRunner --trace "$trace" --submission "${SUBMISSION:-REPLAY}"
      --submit-multiplier "${SUBMIT_MULTIPLIER:-1.0}"
      --max-map-ms "${MAX_MAP_MS:-10000}" --max-reduce-ms "${MAX_REDUCE_MS:-10000}")
  fi
  echo "compare.sh: $spec: $what, ${NODES:-4} NodeManagers ..." >&2
  start=$(date +%s)
  rc=0
  host_busy_before=$(host_busy_ticks)
  (cd "$dir" && exec timeout "$timeout_s" java -Xmx"${RUNNER_HEAP:-1g}" "${jflags[@]}" \
      -Djava.library.path="$native" -Dgridmix.log.file="$dir/hadoop.log" \
      -Dlog4j.configuration="file:$dir/conf/log4j.properties" \
      -cp "$dir/conf:$GRIDMIX_CLASSPATH" "${runner[@]}" \
      --out "$dir" --name "$name" --nodes "${NODES:-4}" \
      --nm-mb "${NM_MB:-4096}" --nm-vcores "${NM_VCORES:-4}" \
      > "$dir/runner.log" 2>&1) &
  runner_pid=$!
  watch_cpu "$runner_pid" "$dir/cpu.txt" &
  watcher=$!
  wait "$runner_pid" || rc=$?
  wait "$watcher" || true
  secs=$(( $(date +%s) - start ))
  echo "host_busy_s $(( ($(host_busy_ticks) - host_busy_before) / $(getconf CLK_TCK) ))" >> "$dir/cpu.txt"
  echo "wall_s $secs" >> "$dir/cpu.txt"
  jobs_done=0
  if [ -f "$dir/jobs.csv" ]; then jobs_done=$(grep -c ',SUCCEEDED,' "$dir/jobs.csv" || true); fi
  echo "compare.sh: $spec: exit $rc after ${secs}s, $jobs_done applications succeeded" >&2
  if [ "$rc" -ne 0 ]; then
    status=1
    grep -E 'GridmixRunner|PigmixDagRunner|Exception|ERROR' "$dir/runner.log" | head -20 >&2 || true
  fi
  echo "$rc $secs" > "$dir/exit"
  [ -f "$dir/jobs.csv" ] && pairs+=("$spec=$dir")
done

if [ ${#pairs[@]} -eq 0 ]; then
  echo "compare.sh: no run wrote jobs.csv" >&2
  exit 1
fi
compare=${COMPARE:-}
if [ -z "$compare" ]; then
  (cd "$repo" && cargo build -q --release -p sojourn-sim --bin sojourn)
  compare="$target/release/sojourn real-compare"
fi
$compare --trace "$trace" --csv "$out/comparison.csv" --jobs-csv "$out/jobs.csv" --html "$out" \
  "${pairs[@]}" | tee "$out/comparison.txt"
echo "compare.sh: results in $out" >&2
exit $status
