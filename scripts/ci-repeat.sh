#!/usr/bin/env bash
# Clones this repository fresh and runs `.ci/run` N times in that clone, printing each run's result and
# duration: the way to check that the suite passes every time, not just once.
#
#   scripts/ci-repeat.sh 10          # ten runs on an otherwise idle machine
#   scripts/ci-repeat.sh 3 --busy    # three runs while a bounded busy loop keeps one core busy
#
# The clone is of the committed HEAD (uncommitted changes are not tested). Logs stay in the printed folder.
set -uo pipefail
runs="${1:?usage: scripts/ci-repeat.sh N [--busy]}"
busy="${2:-}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/spillway-ci-repeat.XXXXXX")"
git clone --quiet "$repo" "$work/clone"
echo "clone of $(git -C "$repo" rev-parse --short HEAD) in $work/clone; logs in $work"

busy_pid=""
stop_busy() { [ -n "$busy_pid" ] && kill "$busy_pid" 2>/dev/null; busy_pid=""; }
trap stop_busy EXIT

passed=0
for i in $(seq 1 "$runs"); do
  if [ "$busy" = "--busy" ]; then
    # One core busy for at most 15 minutes: the loop stops by itself even if this script is killed.
    bash -c 'end=$((SECONDS + 900)); while [ $SECONDS -lt $end ]; do :; done' &
    busy_pid=$!
  fi
  # Each run starts as CI does: nothing installed, nothing left from the last run.
  git -C "$work/clone" clean -fdxq
  start=$(date +%s)
  (cd "$work/clone" && CI=true bash .ci/run) >"$work/run-$i.log" 2>&1
  rc=$?
  took=$(($(date +%s) - start))
  stop_busy
  summary=$(grep -aE "Tests +[0-9]" "$work/run-$i.log" | tail -1 | sed 's/\x1b\[[0-9;]*m//g' | tr -s ' ')
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    echo "run $i: pass in ${took}s${summary:+ ($summary)}"
  else
    echo "run $i: FAIL (exit $rc) in ${took}s${summary:+ ($summary)}; see $work/run-$i.log"
  fi
done
echo "$passed of $runs runs passed"
[ "$passed" -eq "$runs" ]
