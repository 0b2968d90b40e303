#!/usr/bin/env bash
# Runs every libFuzzer target of a BULKSCORE_FUZZ build, time-boxed.
#   scripts/fuzz.sh BUILD_DIR SECONDS_PER_TARGET [RUNS_PER_TARGET [SEED]]
# CI runs a fixed number of executions from a fixed seed, so its outcome is
# the same on every run; a long run (no RUNS, random seed) explores.
# Each target starts from its seed corpus in tests/fuzz/corpus/<target>/ and
# works in a scratch copy (the repository corpus only grows by hand, with
# inputs that once crashed). A crash leaves crash-* / leak-* / timeout-*
# files in BUILD_DIR/fuzz-findings/<target>/ and fails the script; copy the
# file into the target's corpus folder once fixed: it then runs in ctest.
# Prints the executions of each target (for docs/reliability.md).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:?build dir}"
seconds="${2:-20}"
runs="${3:--1}"
seed="${4:-0}"
status=0
for exe in "$build"/tests/fuzz/fuzz_*; do
  [ -x "$exe" ] || continue
  name="$(basename "$exe")"
  work="$build/fuzz-work/$name"
  findings="$build/fuzz-findings/$name"
  rm -rf "$work" && mkdir -p "$work" "$findings"
  cp -r "tests/fuzz/corpus/$name/." "$work/" 2>/dev/null || true
  log="$build/fuzz-findings/$name.log"
  if "$exe" -max_total_time="$seconds" -runs="$runs" -seed="$seed" -timeout=25 -rss_limit_mb=2048 -max_len=8192 \
      -artifact_prefix="$findings/" -print_final_stats=1 "$work" >"$log" 2>&1; then
    execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
    echo "fuzz: $name: ok, $execs executions in ${seconds}s or fewer"
  else
    echo "fuzz: $name: FAILED (findings in $findings, log $log)"
    tail -n 30 "$log"
    status=1
  fi
done
exit $status
