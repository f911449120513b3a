#!/usr/bin/env bash
# Runs every test of Sojourn on a fresh machine, installing what it lacks.
# Rust: format, lints (the pure crates forbid clocks, threads, files and
# unordered maps), unit, golden, property and trace tests. Java: the shim's
# MockRM and mini-cluster tests against real Hadoop 3.3.6 jars from Maven
# Central (with a headless-chromium screenshot of the web UI page), and the
# MockRM suite again against Hadoop 3.4.1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# Logs of this run, in a directory of its own: runs at the same time (other
# worktrees, CI jobs) must not write each other's logs.
logs=$(mktemp -d "${TMPDIR:-/tmp}/sojourn-test-all.XXXXXX")
echo "logs: $logs"

step() { printf '\n==> %s\n' "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }

# Why a gradle test step failed, its cause printed last: CI shows only the
# tail of this output, and a tail of gradle's log is its summary, not the cause.
explain_gradle_failure() { # $1 = the step's log
  tail -30 "$1" >&2
  echo "--- failed tests, with the first lines of each failure ---" >&2
  grep -E -A14 '(^| )FAILED$|^junit FAILED' "$1" \
    | grep -vE '^\s+at (java\.|jdk\.|sun\.|org\.junit|org\.gradle|worker\.)' | head -80 >&2
}

# The scheduler runs of compare.sh (SLS, GridMix): each one's status, and the
# last lines of the log of each that failed.
explain_compare_runs() { # $@ = compare.sh OUT directories
  local out run f
  for out in "$@"; do
    for run in "$out"/*/; do
      if [ ! -f "$run/exit" ]; then continue; fi
      echo "--- $run: exit status and seconds: $(cat "$run/exit") ---" >&2
      if [ "$(cut -d' ' -f1 "$run/exit")" = 0 ]; then continue; fi
      for f in stdout.log runner.log; do
        if [ -f "$run/$f" ]; then tail -15 "$run/$f" >&2; fi
      done
      grep -E ' (ERROR|FATAL) ' "$run/sls.log" 2>/dev/null | head -10 >&2 || true
    done
  done
}

apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  if [ ${#missing[@]} -gt 0 ]; then
    step "installing ${missing[*]}"
    local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

if ! have cargo; then
  echo "cargo is missing: install Rust (https://rustup.rs) and run again" >&2
  exit 1
fi
rustup component list --installed 2>/dev/null | grep -q rustfmt || rustup component add rustfmt clippy || true

# TetriSched's MILP solver (good_lp's coin_cbc backend) links CBC: it must be
# there before the first cargo build.
apt_install coinor-libcbc-dev pkg-config

step "cargo fmt --check"
cargo fmt --all -- --check

step "clippy (every crate; the pure crates also forbid clock, thread, file, global RNG and HashMap)"
cargo clippy -q --release --workspace --all-targets -- -D warnings

step "cargo test --release (workspace)"
cargo test -q --release --workspace 2>&1 | tee "$logs/cargo-test.log" | grep -aoE '^(test result|failures|error).*|panicked.*|fuzz [a-z]+: [0-9]+ inputs.*' || true
if grep -qE '^test result: FAILED|^error' "$logs/cargo-test.log" || ! grep -q '^test result' "$logs/cargo-test.log"; then
  echo "cargo test failed" >&2
  tail -50 "$logs/cargo-test.log" >&2
  exit 1
fi

step "TetriSched's golden MILP instances on HiGHS and microlp too (sojourn-policies' highs and microlp features)"
# good_lp's highs backend builds HiGHS from source (cmake, a C++ compiler) and
# binds it with bindgen (libclang).
apt_install cmake g++ libclang-dev
cargo test -q --release -p sojourn-policies --features highs,microlp tetrisched::tests 2>&1 | tee "$logs/cargo-solvers.log" | grep -aoE '^(test result|failures|error).*|panicked.*' || true
if grep -qE '^test result: FAILED|^error' "$logs/cargo-solvers.log" || ! grep -q '^test result: ok' "$logs/cargo-solvers.log"; then
  echo "the solver backends' tests failed" >&2
  tail -50 "$logs/cargo-solvers.log" >&2
  exit 1
fi

step "the YARN shim: MockRM tests and MapReduce sleep jobs on a MiniYARNCluster (Hadoop jars from Maven Central)"
have java || apt_install openjdk-17-jdk-headless
have gradle || apt_install gradle
# SchedulerWebTest also has headless chromium photograph the RM's scheduler
# page during this run (no extra RM or Gradle start); checked below.
have chromium || apt_install chromium
SOJOURN_SCREENSHOT="$logs/scheduler-page.png" gradle test --no-daemon -q -PwithMiniCluster -PcargoTargetDir="${CARGO_TARGET_DIR:-$root/target}" 2>&1 \
  | tee "$logs/gradle-test.log" | grep -E '^junit:|FAILED|BUILD' || true
if ! grep -qE '^junit: [0-9]+ passed, 0 failed' "$logs/gradle-test.log"; then
  echo "gradle test failed" >&2
  explain_gradle_failure "$logs/gradle-test.log"
  exit 1
fi

step "the web UI page in headless chromium (integration/ui-screenshot.sh does this alone)"
python3 integration/ui-check-png.py "$logs/scheduler-page.png"

# SoakTest's figures (gradle keeps test output to itself)
cat build/test-work/soak.txt 2>/dev/null || true

step "the YARN shim against Hadoop 3.4.1 too (MockRM suite; the RM's scheduler API changed between 3.3 and 3.4)"
gradle test --no-daemon -q -PhadoopVersion=3.4.1 -PcargoTargetDir="${CARGO_TARGET_DIR:-$root/target}" 2>&1 \
  | tee "$logs/gradle-test-341.log" | grep -E '^junit:|FAILED|BUILD' || true
if ! grep -qE '^junit: [0-9]+ passed, 0 failed' "$logs/gradle-test-341.log"; then
  echo "gradle test on Hadoop 3.4.1 failed" >&2
  explain_gradle_failure "$logs/gradle-test-341.log"
  exit 1
fi

step "SLS end to end: a tiny trace through Hadoop's Scheduler Load Simulator under Sojourn fifo and fair, CapacityScheduler and FairScheduler"
gradle slsTest --no-daemon -q -PcargoTargetDir="${CARGO_TARGET_DIR:-$root/target}" 2>&1 \
  | tee "$logs/gradle-sls.log" | grep -E '^junit|FAILED|BUILD' || true
if ! grep -qE '^junit \(sls\): [0-9]+ passed, 0 failed' "$logs/gradle-sls.log"; then
  echo "gradle slsTest failed" >&2
  explain_compare_runs build/sls-test-work/compare
  explain_gradle_failure "$logs/gradle-sls.log"
  exit 1
fi

step "GridMix end to end: a 3-job Rumen trace as real MapReduce jobs on 2 NodeManagers under Sojourn fifo and CapacityScheduler"
gridmix_log="$logs/gradle-gridmix.log"
gradle gridmixTest --no-daemon -q -PcargoTargetDir="${CARGO_TARGET_DIR:-$root/target}" 2>&1 \
  | tee "$gridmix_log" | grep -E '^junit|^compare.sh|FAILED|BUILD' || true
if ! grep -qE '^junit \(gridmix\): [0-9]+ passed, 0 failed' "$gridmix_log"; then
  echo "gradle gridmixTest failed (log: $gridmix_log)" >&2
  explain_compare_runs build/gridmix-test-work/compare build/gridmix-test-work/pigmix
  explain_gradle_failure "$gridmix_log"
  exit 1
fi

step "main job smoke: sojourn compare on a shipped workload"
cargo run -q --release -p sojourn-sim --bin sojourn -- compare --out "$logs/compare" >"$logs/compare.txt"
tail -5 "$logs/compare.txt"

passed=$(grep -oE 'test result: ok\. [0-9]+ passed' "$logs/cargo-test.log" | awk '{s+=$4} END {print s+0}')
failed=$(grep -oE '[0-9]+ failed' "$logs/cargo-test.log" | awk '{s+=$1} END {print s+0}')
jpassed=$(grep -oE '^junit: [0-9]+ passed' "$logs/gradle-test.log" | awk '{print $2}')
j341=$(grep -oE '^junit: [0-9]+ passed' "$logs/gradle-test-341.log" | awk '{print $2}')
jsls=$(grep -oE '^junit \(sls\): [0-9]+ passed' "$logs/gradle-sls.log" | awk '{print $3}')
jgm=$(grep -oE '^junit \(gridmix\): [0-9]+ passed' "$gridmix_log" | awk '{print $3}')
echo
echo "rust: ${passed} passed, ${failed} failed"
echo "java (Hadoop 3.3.6): ${jpassed:-0} passed, 0 failed"
echo "java (Hadoop 3.4.1): ${j341:-0} passed, 0 failed"
echo "java (SLS): ${jsls:-0} passed, 0 failed"
echo "java (GridMix): ${jgm:-0} passed, 0 failed"
echo "total: $((passed + ${jpassed:-0} + ${j341:-0} + ${jsls:-0} + ${jgm:-0})) passed, ${failed} failed"
