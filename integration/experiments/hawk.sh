#!/usr/bin/env bash
# Hawk vs Sparrow, and Eagle vs Hawk and DLWL+SRPT, in the simulator
# (results in integration/results/hawk.md):
# YH2_sub.tr (3,363 jobs of the Yahoo trace Hawk and Eagle used) on 4,000
# one-slot nodes, short/long by the Yahoo cutoff (90.5811 s), with FIFO and
# Kairos (its simulation setting) for reference, the centralized and split
# baselines, and Hawk's ablations (delgado.md §1.8); Eagle, its ablations
# and DLWL+SRPT (§2.6, §2.7). Prints markdown tables.
set -euo pipefail
cd "$(dirname "$0")/../.."
traces=${TRACES:-../shared/traces}
out=${OUT:-/tmp/sojourn-hawk}
nodes=${NODES:-4000}
[ -n "${SOJOURN:-}" ] || cargo build -q --release -p sojourn-sim
sojourn=${SOJOURN:-${CARGO_TARGET_DIR:-target}/release/sojourn}
rm -rf "$out"; mkdir -p "$out"
common="--workload $traces/eagle/YH2_sub.tr --nodes $nodes --node-vcores 1 --node-memory-mb 3072 --classes cutoff:90581ms -q --no-wall-clock"

# mean, p50, p90, p99 (nearest rank) of response_s (column 6) for class $2 of a jobs CSV.
stats() {
  awk -F, -v c="$2" 'NR>1 && $9==c {print $6}' "$1" | sort -g | awk '{v[NR]=$1; s+=$1} END {
    n=NR; printf "%.0f | ", s/n; split("50 90 99", q, " ");
    for (i=1;i<=3;i++) { k=int((q[i]*n+99)/100); if (k<1) k=1; printf "%.0f", v[k]; if (i<3) printf " | " } }'
}
# run NAME POLICY PARAMS...: simulate, print a row, keep the wall time
run() {
  local name=$1 policy=$2; shift 2
  local t0 t1
  t0=$(date +%s.%N)
  $sojourn simulate --policy "$policy" $common "$@" --out "$out/$name" > "$out/$name.txt"
  t1=$(date +%s.%N)
  echo "| $name | $(stats "$out/$name/jobs-$policy.csv" short) | $(stats "$out/$name/jobs-$policy.csv" long) | $(echo "$t1 - $t0" | bc | xargs printf %.1f) |"
}
# Google-like runs (delgado.md §4: Google at 15,000-23,000 nodes; E4-E9).
# The real Google trace is not in shared/traces: the seeded generator
# synthetic:google (rust/sim/src/workload/synthetic.rs), GJOBS jobs, seeds
# 1-3 (workload and simulator), the Google cutoff (1129.532 s) for the
# classes and trace=google for the policies (17 % short partition, DLWL
# heartbeat 3 s). PART=google runs only this; PART=sweep only the sweep; PART=e9 only E9.
gjobs=${GJOBS:-10000}
gsizes=${GSIZES:-"15000 17000 20000"}
gseeds=${GSEEDS:-"1 2 3"}
# pct FILE CLASS Q: nearest-rank percentile of response_s for a class
pct() { awk -F, -v c="$2" 'NR>1 && $9==c {print $6}' "$1" | sort -g | awk -v q="$3" '{v[NR]=$1} END {k=int((q*NR+99)/100); if (k<1) k=1; printf "%.0f", v[k]}'; }
# grun NAME NODES SEED POLICY PARAMS...: one Google-like run, one row
grun() {
  local name=$1 n=$2 s=$3 policy=$4; shift 4
  local d="$out/g-$name-$n-$s" t0 t1 f
  t0=$(date +%s.%N)
  $sojourn simulate --policy "$policy" -p trace=google --workload "synthetic:google:jobs=$gjobs:seed=$s" --seed "$s" \
    --nodes "$n" --node-vcores 1 --node-memory-mb 3072 --classes cutoff:1129532ms -q --no-wall-clock "$@" \
    --out "$d" > "$d.txt"
  t1=$(date +%s.%N)
  f="$d/jobs-$policy.csv"
  echo "| $name | $n | $s | $(awk '$1=="offered" {print $3}' "$d.txt") | $(pct "$f" short 50) / $(pct "$f" short 90) / $(pct "$f" short 99) | $(pct "$f" long 50) / $(pct "$f" long 90) / $(pct "$f" long 99) | $(echo "$t1 - $t0" | bc | xargs printf %.0f) |"
}
google() {
  echo "## Google-like, $gjobs jobs: response times (s), p50 / p90 / p99"
  echo
  echo "| policy | nodes | seed | offered load | short p50/p90/p99 | long p50/p90/p99 | wall (s) |"
  echo "|---|---|---|---|---|---|---|"
  for n in $gsizes; do
    for s in $gseeds; do
      for p in eagle hawk sparrow dlwl_srpt; do grun "$p" "$n" "$s" "$p"; done
    done
  done | tee "$out/google-rows.md"
  echo
  echo "### Mean over seeds (s for eagle; others as ratio to eagle, >1 = eagle better)"
  echo
  echo "| nodes | eagle short p50/p90/p99 | eagle long p50/p90/p99 | hawk/eagle short | hawk/eagle long | sparrow/eagle short | sparrow/eagle long | dlwl_srpt/eagle short | dlwl_srpt/eagle long |"
  echo "|---|---|---|---|---|---|---|---|---|"
  gsummary "$out/google-rows.md"
}
# gsummary ROWS...: per (nodes, policy) the mean over seeds of each
# percentile of grun's rows, eagle's in s and the others as ratios to it.
gsummary() {
  cat "$@" | awk -F'|' 'NF>7 && $3+0>0 {p=$2; gsub(/ /,"",p); n=$3+0; split($6,s,"/"); split($7,l,"/");
    k=n" "p; c[k]++; for(i=1;i<=3;i++){S[k,i]+=s[i]; L[k,i]+=l[i]}; ns[n]=1}
    END {split("eagle hawk sparrow dlwl_srpt", P, " ");
      for (n in ns) { printf "| %d |", n; e=n" eagle";
        for (pi=1; pi<=4; pi++) { k=n" "P[pi];
          if (pi==1) printf " %.0f / %.0f / %.0f | %.0f / %.0f / %.0f |", S[k,1]/c[k], S[k,2]/c[k], S[k,3]/c[k], L[k,1]/c[k], L[k,2]/c[k], L[k,3]/c[k];
          else printf " %.2f / %.2f / %.2f | %.2f / %.2f / %.2f |", S[k,1]/S[e,1], S[k,2]/S[e,2], S[k,3]/S[e,3], L[k,1]/L[e,1], L[k,2]/L[e,2], L[k,3]/L[e,3] }
        printf "\n" } }' | sort -n
}
# E4-E8's variants and the sweeps (Eagle's SRPT starvation bound, thesis
# 5, delgado.md §2.5; its short partition, E5: 17 % -> 20 %), Google-like,
# GSWEEP_NODES nodes, seed 1.
sweep() {
  echo "## Google-like variants and sweeps, $gjobs jobs, seed 1"
  echo
  echo "| run | nodes | seed | offered load | short p50/p90/p99 | long p50/p90/p99 | wall (s) |"
  echo "|---|---|---|---|---|---|---|"
  for n in ${GSWEEP_NODES:-15000 17000}; do
    grun eagle "$n" 1 eagle
    grun eagle-no-sss "$n" 1 eagle -p sss=false
    grun eagle-no-sbp-srpt "$n" 1 eagle -p sticky=false -p queue_order=fifo
    grun eagle-no-minprobes "$n" 1 eagle -p min_probes=0
    grun lwl-partition17 "$n" 1 lwl -p short_partition_pct=17
    grun dlwl_srpt-hb3 "$n" 1 dlwl_srpt
    grun dlwl_srpt-hb5 "$n" 1 dlwl_srpt -p heartbeat_s=5
    grun dlwl_srpt-hb7 "$n" 1 dlwl_srpt -p heartbeat_s=7
    for q in 10 20 25; do grun "eagle-partition$q" "$n" 1 eagle -p short_partition_pct=$q; done
    for f in 1 2 10 20; do grun "eagle-starvation$f" "$n" 1 eagle -p starvation_factor=$f; done
  done
}
# E9 and H10, mis-estimation (delgado.md §1 "Mis-estimation", §2 §3.6.5):
# each job's estimate (its mean task duration) times a factor drawn
# uniformly in [LO, HI] once per job (--estimate-error, seeded by --seed);
# true durations unchanged. Eagle's under- ([0.x, 1]) and over-estimates
# ([1, 1.x]), x in {3, 6, 9}, and Hawk's [0.1, 1.9]; Google-like,
# GE9_NODES nodes, seeds GE9_SEEDS.
e9() {
  echo "## Google-like mis-estimation (E9, H10), $gjobs jobs"
  echo
  echo "| run | nodes | seed | offered load | short p50/p90/p99 | long p50/p90/p99 | wall (s) |"
  echo "|---|---|---|---|---|---|---|"
  for n in ${GE9_NODES:-15000}; do
    for s in ${GE9_SEEDS:-1}; do
      for p in eagle hawk; do
        grun "$p-exact" "$n" "$s" "$p"
        for r in 0.3:1 0.6:1 0.9:1 1:1.3 1:1.6 1:1.9 0.1:1.9; do
          grun "$p-x$r" "$n" "$s" "$p" --estimate-error "$r"
        done
      done
    done
  done
}
case "${PART:-all}" in
  google) google; exit 0 ;;
  sweep) sweep; exit 0 ;;
  e9) e9; exit 0 ;;
esac

echo "## Response times (s), YH2_sub.tr, $nodes one-slot nodes"
echo
echo "| run | short mean | short p50 | short p90 | short p99 | long mean | long p50 | long p90 | long p99 | wall (s) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
run fifo fifo
run kairos kairos -p extra_tasks=2 -p quantum_ms=100000
run sparrow sparrow
run hawk hawk
run hawk-no-stealing hawk -p steal_attempts=0
run hawk-no-partition hawk -p short_partition_pct=0
run hawk-no-central hawk -p central=none
run lwl lwl
run split split
run eagle eagle
run eagle-no-sss eagle -p sss=false
run eagle-no-sbp-srpt eagle -p sticky=false -p queue_order=fifo
run eagle-no-minprobes eagle -p min_probes=0
run eagle-no-partition eagle -p short_partition_pct=0
run eagle-with-stealing eagle -p steal_attempts=10
run eagle-faithful eagle -p authors_simulator=false
run dlwl_srpt dlwl_srpt
run dlwl_srpt-faithful dlwl_srpt -p authors_simulator=false
echo
echo "## Hawk's head-of-line counters (Table 3.2's columns)"
echo
echo "| run | probes sent | behind long | short after long | steals | re-scheduled probes | dropped |"
echo "|---|---|---|---|---|---|---|"
for r in sparrow hawk hawk-no-stealing hawk-no-partition hawk-no-central split; do
  f="$out/$r.txt"
  g() { awk -v k="$1" '$1==k {print $2}' "$f" | head -1; }
  echo "| $r | $(g probes_sent) | $(g probes_behind_long) | $(g short_after_long) | $(g steals) | $(g rescheduled_probes) | $(g probes_dropped) |"
done
echo
echo "## Eagle's counters (Table 3.2's columns)"
echo
echo "| run | probes sent | behind long | short after long | SSS rejections | re-scheduled probes | steals | sticky probes | sticky tasks | dropped | purged |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for r in hawk eagle eagle-no-sss eagle-no-sbp-srpt eagle-no-minprobes eagle-no-partition eagle-with-stealing eagle-faithful; do
  f="$out/$r.txt"
  g() { awk -v k="$1" '$1==k {print $2}' "$f" | head -1; }
  echo "| $r | $(g probes_sent) | $(g probes_behind_long) | $(g short_after_long) | $(g sss_rejections) | $(g rescheduled_probes) | $(g steals) | $(g sticky_probes) | $(g sticky_tasks) | $(g probes_dropped) | $(g probes_purged) |"
done
echo
echo "## Eagle against Hawk and DLWL+SRPT (E1-E3): speedup base/eagle"
echo
echo "| class | percentile | hawk/eagle | dlwl_srpt/eagle |"
echo "|---|---|---|---|"
pct() { awk -F, -v c="$2" 'NR>1 && $9==c {print $6}' "$1" | sort -g | awk -v q="$3" '{v[NR]=$1} END {k=int((q*NR+99)/100); if (k<1) k=1; print v[k]}'; }
for c in short long; do
  for q in 50 90 99; do
    e=$(pct "$out/eagle/jobs-eagle.csv" $c $q)
    h=$(pct "$out/hawk/jobs-hawk.csv" $c $q)
    d=$(pct "$out/dlwl_srpt/jobs-dlwl_srpt.csv" $c $q)
    echo "| $c | p$q | $(echo "$h / $e" | bc -l | xargs printf %.2f) | $(echo "$d / $e" | bc -l | xargs printf %.2f) |"
  done
done
echo
echo "## Per-job comparison, Hawk against Sparrow (H3)"
echo
# % of jobs of a class where hawk < sparrow (improved), <= (as good), and improved by more than 50%
join -t, <(tail -n +2 "$out/sparrow/jobs-sparrow.csv" | cut -d, -f1,6,9 | sort -t, -k1,1) \
         <(tail -n +2 "$out/hawk/jobs-hawk.csv" | cut -d, -f1,6 | sort -t, -k1,1) |
  awk -F, '{n[$3]++; if ($4<$2) b[$3]++; if ($4<=$2) g[$3]++; if ($4<0.5*$2) h[$3]++}
    END {print "| class | jobs | improved | as good or better | improved by >50% |"; print "|---|---|---|---|---|";
      for (c in n) printf "| %s | %d | %.0f%% | %.0f%% | %.0f%% |\n", c, n[c], 100*b[c]/n[c], 100*g[c]/n[c], 100*h[c]/n[c]}'
echo
echo "## Eagle's wall time on 2 cores (/usr/bin/time, best of 3)"
echo
best=
for i in 1 2 3; do
  t=$( { /usr/bin/time -f %e $sojourn simulate --policy eagle $common > /dev/null; } 2>&1 | tail -1)
  if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
done
echo "eagle, YH2_sub.tr, $nodes nodes: $best s"
echo
google
echo
sweep
