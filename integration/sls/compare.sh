#!/usr/bin/env bash
# Runs one trace and nodes file through Hadoop's Scheduler Load Simulator (SLS: the real
# ResourceManager, simulated NMs and AMs, wall-clock time) under each scheduler, then
# compares the runs with `sojourn sls-compare`: per-job response time, mean/p50/p90/p99,
# utilization, containers allocated/s, allocate calls/s, handle p99, and plots.
#
#   integration/sls/compare.sh TRACE NODES [SCHEDULERS]
#
#   TRACE       an SLS JSON trace, or a Rumen trace (detected by its "jobID" keys)
#   NODES       an SLS nodes file ({"rack": .., "nodes": [{"node": ..}, ..]} ..)
#   SCHEDULERS  comma- or space-separated, default "sojourn:fifo,sojourn:fair,capacity,fair":
#               sojourn:<policy>  org.sojourn.yarn.sls.SLSSojournScheduler with that policy
#               capacity          YARN's CapacityScheduler (SLS swaps in SLSCapacityScheduler)
#               fair              YARN's FairScheduler (SLS swaps in SLSFairScheduler)
#
# Environment:
#   OUT=DIR            where runs go (default build/sls/<trace>-<time>); one
#                      subdirectory per scheduler (conf/, out/ = SLS's output, sls.log), and
#                      comparison.txt (printed), comparison.csv, jobs.csv and index.html
#                      (plots) beside them
#   SLS_CLASSPATH=CP   classpath for SLSRunner (default: `gradle slsClasspath`, cached in OUT)
#   NATIVE_DIR=DIR     where libsojourn_jni.so is (default $CARGO_TARGET_DIR/release or ./target/release)
#   NM_MB, NM_VCORES   resources of each simulated node without its own (default 10240, 10)
#   NM_HEARTBEAT_MS, AM_HEARTBEAT_MS   SLS heartbeats (default 1000, 1000)
#   RUN_TIMEOUT_S      per-scheduler limit (default 900)
#   SLS_HEAP           JVM heap per run (default 1g)
#   COMPARE=CMD        the gatherer (default: the sojourn binary, built here, as `sojourn sls-compare`)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
if [ $# -lt 2 ]; then
  sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
trace=$(readlink -f "$1")
nodes=$(readlink -f "$2")
scheds=${3:-sojourn:fifo,sojourn:fair,capacity,fair}
scheds=${scheds//,/ }
[ -f "$trace" ] || { echo "compare.sh: no trace $1" >&2; exit 2; }
[ -f "$nodes" ] || { echo "compare.sh: no nodes file $2" >&2; exit 2; }

out=${OUT:-$repo/build/sls/$(basename "$trace" .json)-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(readlink -f "$out")
target=${CARGO_TARGET_DIR:-$repo/target}
native=${NATIVE_DIR:-$target/release}
nm_mb=${NM_MB:-10240}
nm_vcores=${NM_VCORES:-10}
timeout_s=${RUN_TIMEOUT_S:-900}
heap=${SLS_HEAP:-1g}

if [ -z "${SLS_CLASSPATH:-}" ]; then
  if [ ! -s "$out/classpath.txt" ]; then
    echo "compare.sh: resolving the SLS classpath (gradle slsClasspath)..." >&2
    (cd "$repo" && gradle -q --no-daemon slsClasspath -PcargoTargetDir="$target") | tail -1 > "$out/classpath.txt"
  fi
  SLS_CLASSPATH=$(cat "$out/classpath.txt")
fi

if grep -q '"jobID"' "$trace"; then tracetype=RUMEN; else tracetype=SLS; fi

# The queues the trace submits to; every scheduler gets the same flat set.
queues=$(grep -oE '"(job\.queue\.name|queue)" *: *"[^"]*"' "$trace" | sed -E 's/.*: *"([^"]*)"/\1/' \
  | sed -E 's/^root\.//' | sort -u | tr '\n' ' ')
[ -n "${queues// /}" ] || queues=default
nq=$(echo $queues | wc -w)

# Java 17 (research/yarn.md section 4).
jflags=(--add-exports java.base/sun.net.dns=ALL-UNNAMED --add-exports java.base/sun.net.util=ALL-UNNAMED
  --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED
  --add-opens java.base/java.lang.reflect=ALL-UNNAMED --add-opens java.base/java.net=ALL-UNNAMED
  --add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang.invoke=ALL-UNNAMED
  --add-opens java.base/java.util.concurrent.atomic=ALL-UNNAMED)

prop() { printf '  <property><name>%s</name><value>%s</value></property>\n' "$1" "$2"; }

free_port() {
  local p
  for p in $(seq 20000 20999 | shuf -n 50); do
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "$p"; return; fi
  done
  echo 10001
}

# "queue capacity" lines: the trace's queues share 100% equally (the last takes the rounding).
queue_caps() {
  local i=0 cap
  for q in $queues; do
    i=$((i + 1))
    if [ $i -lt $nq ]; then cap=$(awk -v n=$nq 'BEGIN{printf "%.2f", int(10000/n)/100}'); else
      cap=$(awk -v n=$nq 'BEGIN{printf "%.2f", 100 - (n-1)*int(10000/n)/100}'); fi
    echo "$q $cap"
  done
}

write_conf() { # $1 = scheduler spec, $2 = conf dir
  local spec=$1 conf=$2 cls
  mkdir -p "$conf"
  case "$spec" in
    sojourn:*) cls=org.sojourn.yarn.sls.SLSSojournScheduler ;;
    capacity) cls=org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler ;;
    fair) cls=org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler ;;
    *) echo "compare.sh: unknown scheduler '$spec' (sojourn:<policy>, capacity, fair)" >&2; exit 2 ;;
  esac
  {
    echo '<?xml version="1.0"?><configuration>'
    prop yarn.resourcemanager.scheduler.class "$cls"
    for k in address scheduler.address resource-tracker.address admin.address webapp.address; do
      prop "yarn.resourcemanager.$k" 127.0.0.1:0
    done
    prop yarn.resourcemanager.scheduler.monitor.enable false
    # The RM keeps node attributes (and labels) under /tmp/hadoop-yarn-$USER by default: one
    # store per run, or two compare.sh at once fail each other's RM start-up.
    prop yarn.node-attribute.fs-store.root-dir "file://$(dirname "$conf")/hadoop-tmp/node-attribute"
    prop yarn.node-labels.fs-store.root-dir "file://$(dirname "$conf")/hadoop-tmp/node-labels"
    prop yarn.acl.enable false
    prop yarn.scheduler.fair.allocation.file "$conf/fair-scheduler.xml"
    prop yarn.scheduler.fair.assignmultiple true
    # Sojourn's fair policy gets the same FairScheduler settings.
    prop yarn.scheduler.sojourn.fair.assign_multiple true
    prop yarn.scheduler.sojourn.policy "${spec#sojourn:}"
    prop yarn.scheduler.sojourn.queue.root.queues "$(echo $queues | tr ' ' ',')"
    # Sojourn's capacity policy gets the CapacityScheduler's queues below.
    prop yarn.scheduler.sojourn.capacity.queue.root.queues "$(echo $queues | tr ' ' ',')"
    queue_caps | while read -r q cap; do
      prop "yarn.scheduler.sojourn.capacity.queue.root.$q.capacity" "$cap"
      prop "yarn.scheduler.sojourn.capacity.queue.root.$q.maximum_capacity" 100
      prop "yarn.scheduler.sojourn.capacity.queue.root.$q.user_limit_factor" 100
    done
    prop yarn.scheduler.sojourn.capacity.maximum_am_resource_percent 0.5
    echo '</configuration>'
  } > "$conf/yarn-site.xml"
  {
    echo '<?xml version="1.0"?><configuration>'
    prop yarn.scheduler.capacity.root.queues "$(echo $queues | tr ' ' ',')"
    queue_caps | while read -r q cap; do
      prop "yarn.scheduler.capacity.root.$q.capacity" "$cap"
      prop "yarn.scheduler.capacity.root.$q.maximum-capacity" 100
      prop "yarn.scheduler.capacity.root.$q.user-limit-factor" 100
    done
    prop yarn.scheduler.capacity.maximum-am-resource-percent 0.5
    echo '</configuration>'
  } > "$conf/capacity-scheduler.xml"
  {
    echo '<?xml version="1.0"?><allocations>'
    for q in $queues; do echo "  <queue name=\"$q\"/>"; done
    echo '  <queueMaxAMShareDefault>0.5</queueMaxAMShareDefault>'
    echo '</allocations>'
  } > "$conf/fair-scheduler.xml"
  {
    echo '<?xml version="1.0"?><configuration>'
    prop yarn.sls.runner.pool.size 20
    prop yarn.sls.nm.memory.mb "$nm_mb"
    prop yarn.sls.nm.vcores "$nm_vcores"
    prop yarn.sls.nm.heartbeat.interval.ms "${NM_HEARTBEAT_MS:-1000}"
    prop yarn.sls.am.heartbeat.interval.ms "${AM_HEARTBEAT_MS:-1000}"
    prop yarn.sls.am.type.mapreduce org.apache.hadoop.yarn.sls.appmaster.MRAMSimulator
    prop yarn.sls.container.memory.mb 1024
    prop yarn.sls.container.vcores 1
    prop yarn.sls.metrics.switch true
    prop yarn.sls.metrics.web.address.port "$(free_port)"
    prop yarn.sls.metrics.record.interval.ms 1000
    echo '</configuration>'
  } > "$conf/sls-runner.xml"
  # SLS's node names (node1, ..) do not resolve: container tokens must carry host names.
  {
    echo '<?xml version="1.0"?><configuration>'
    prop hadoop.security.token.service.use_ip false
    # Hadoop's scratch space, one per run (the RM's own stores are set in yarn-site.xml).
    prop hadoop.tmp.dir "$(dirname "$conf")/hadoop-tmp"
    echo '</configuration>'
  } > "$conf/core-site.xml"
  cat > "$conf/log4j.properties" <<'L4J'
log4j.rootLogger=INFO,file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=${sls.log.file}
log4j.appender.file.Append=false
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.org.apache.hadoop.yarn.sls=INFO
log4j.logger.org.apache.hadoop.yarn.server.resourcemanager.RMAuditLogger=WARN
L4J
}

pairs=()
status=0
for spec in $scheds; do
  name=${spec//:/-}
  dir=$out/$name
  rm -rf "$dir/out" "$dir/hadoop-tmp"
  mkdir -p "$dir/out"
  write_conf "$spec" "$dir/conf"
  echo "compare.sh: $spec: SLS on $(basename "$trace") ($tracetype) ..." >&2
  start=$(date +%s)
  rc=0
  (cd "$dir" && timeout "$timeout_s" java -Xmx"$heap" "${jflags[@]}" \
      -Djava.library.path="$native" -Dsls.log.file="$dir/sls.log" \
      -Dlog4j.configuration="file:$dir/conf/log4j.properties" \
      -cp "$dir/conf:$SLS_CLASSPATH" org.apache.hadoop.yarn.sls.SLSRunner \
      -tracetype "$tracetype" -tracelocation "$trace" -nodes "$nodes" -output "$dir/out" \
      > "$dir/stdout.log" 2>&1) || rc=$?
  secs=$(( $(date +%s) - start ))
  jobs_done=0
  if [ -f "$dir/out/jobruntime.csv" ]; then jobs_done=$(( $(wc -l < "$dir/out/jobruntime.csv") - 1 )); fi
  echo "compare.sh: $spec: exit $rc after ${secs}s, $jobs_done jobs in jobruntime.csv" >&2
  echo "$rc $secs" > "$dir/exit"
  if [ "$rc" -ne 0 ]; then status=1; fi
  pairs+=("$spec=$dir/out")
done

compare=${COMPARE:-}
if [ -z "$compare" ]; then
  (cd "$repo" && cargo build -q --release -p sojourn-sim --bin sojourn)
  compare="$target/release/sojourn sls-compare"
fi
$compare --trace "$trace" --csv "$out/comparison.csv" --jobs-csv "$out/jobs.csv" --html "$out" \
  "${pairs[@]}" | tee "$out/comparison.txt"
echo "compare.sh: results in $out" >&2
exit $status
