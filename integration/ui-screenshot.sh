#!/usr/bin/env bash
# The RM web UI's Sojourn scheduler page in a real browser: starts an RM
# (MockRM with its web app; SchedulerWebTest) with a capacity tree prod 70% /
# dev 30% and one app, has headless chromium photograph
# /cluster/scheduler, and checks the picture: written, of a real page's size,
# and with the bars' colours in it (orange used, blue share, grey maximum).
# Usage: integration/ui-screenshot.sh [OUT.png]   (default: a per-run temp dir)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/sojourn-ui.XXXXXX")/scheduler-page.png}

if ! command -v chromium >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi

SOJOURN_SCREENSHOT="$out" gradle test --no-daemon -q -PcargoTargetDir="${CARGO_TARGET_DIR:-$root/target}" \
  --tests 'org.sojourn.yarn.SchedulerWebTest' 2>&1 | grep -E '^junit:|FAILED' || true
test -s "$out" || { echo "no screenshot at $out (see $out.log)" >&2; exit 1; }

# Look for the bars' colours in the decoded pixels.
python3 integration/ui-check-png.py "$out"
echo "screenshot: $out"
