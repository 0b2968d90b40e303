#!/usr/bin/env bash
# Runs every libFuzzer target of a BULKSCORE_FUZZ build, as many at once as
# there are cores (each target is one process on one core).
#   scripts/fuzz.sh BUILD_DIR SECONDS_PER_TARGET [RUNS_PER_TARGET [SEED]]
# RUNS_PER_TARGET -1 (the default) means no limit but the time; SEED 0 (the
# default) a random seed. CI runs from a fixed seed: libFuzzer's inputs then
# come in the same order on every run, and the time box only decides how far
# it gets. A long run (a random seed, minutes per target) explores.
# Environment: FUZZ_TARGETS (space-separated names; default all),
# FUZZ_RSS_MB (the RSS limit, default 1500), FUZZ_JOBS (targets at once;
# default JOBS, else the number of cores).
#
# Each target starts from its seed corpus in tests/fuzz/corpus/<target>/ and
# works in a scratch copy (the repository corpus only grows by hand, with
# inputs that once failed). A crash, a leak, a timeout or running past the
# RSS limit leaves crash-* / leak-* / timeout-* / oom-* files in
# BUILD_DIR/fuzz-findings/<target>/ and fails the script; copy the file into
# the target's corpus folder once fixed: it then runs in ctest.
#
# Out of memory must fail, not hang. libFuzzer's own RSS limit
# (-rss_limit_mb) hangs here: its report first prints a heap profile, which
# stops the process's threads with ptrace and never comes back (the process
# sits in "tracing stop"). So libFuzzer's RSS check is off, AddressSanitizer's
# hard_rss_limit_mb ends the run instead ("hard rss limit exhausted"; the
# input becomes a crash-* file), libFuzzer's -malloc_limit_mb still catches a
# single oversized allocation (oom-*), nothing is symbolized during the run,
# and each target runs under `timeout`. A crash-* / leak-* finding is
# replayed symbolized afterwards for a readable stack.
# Prints one line per target: executions, exec/s, wall time, final coverage
# (cov/ft), peak RSS (for docs/reliability.md).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:?build dir}"
seconds="${2:-20}"
runs="${3:--1}"
seed="${4:-0}"
rss_mb="${FUZZ_RSS_MB:-1500}"
# One target: its summary line (and, on a finding, the log's telling lines
# and a symbolized replay) on stdout; returns non-zero on a finding.
fuzz_target() {
  local exe="$1" name work findings log started rc wall execs rate peak cov artifacts f
  name="$(basename "$exe")"
  work="$build/fuzz-work/$name"
  findings="$build/fuzz-findings/$name"
  rm -rf "$work" "$findings" && mkdir -p "$work" "$findings"
  cp -r "tests/fuzz/corpus/$name/." "$work/" 2>/dev/null || true
  log="$build/fuzz-findings/$name.log"
  started=$(date +%s)
  rc=0
  # The time box plus room for the corpus load and the final report; past
  # it, `timeout` ends the run (exit 124, 137 after a further minute).
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}symbolize=0:hard_rss_limit_mb=$rss_mb" \
    timeout -k 60 $((seconds + 300)) \
    "$exe" -max_total_time="$seconds" -runs="$runs" -seed="$seed" -timeout=25 -rss_limit_mb=0 \
    -malloc_limit_mb="$rss_mb" -max_len=8192 -artifact_prefix="$findings/" -print_final_stats=1 "$work" \
    >"$log" 2>&1 || rc=$?
  wall=$(($(date +%s) - started))
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
  rate="$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
  peak="$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
  cov="$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1 || echo 'cov: ? ft: ?')"
  artifacts="$(find "$findings" -type f | wc -l)"
  if [ "$rc" = 0 ] && [ "$artifacts" = 0 ]; then
    echo "fuzz: $name: ok, $execs executions, $rate exec/s, ${wall}s, $cov, peak RSS ${peak} MB, seed $seed"
  else
    echo "fuzz: $name: FAILED (exit $rc after ${wall}s; findings in $findings, log $log)"
    grep -E 'ERROR|SUMMARY|DEATH|Test unit written|ALARM|rss limit|out-of-memory' "$log" | head -n 20 || true
    grep -vE '^\s+0x[0-9a-f]+-0x[0-9a-f]+' "$log" | tail -n 15 || true
    # Out of memory has no telling stack; anything else is replayed.
    if ! grep -q 'hard rss limit exhausted' "$log"; then
      for f in "$findings"/crash-* "$findings"/leak-*; do
        [ -f "$f" ] || continue
        echo "fuzz: $name: replaying $f, symbolized:"
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=$rss_mb" timeout -k 10 60 \
          "$exe" -runs=1 -rss_limit_mb=0 -malloc_limit_mb="$rss_mb" "$f" 2>&1 |
          grep -vE '^(INFO|Running|Executed)|^\s+0x[0-9a-f]+-0x[0-9a-f]+' | head -n 60 || true
      done
    fi
    return 1
  fi
}

jobs_max="${FUZZ_JOBS:-${JOBS:-$(nproc)}}"
found=0
names=()
for exe in "$build"/tests/fuzz/fuzz_*; do
  [ -f "$exe" ] && [ -x "$exe" ] || continue
  name="$(basename "$exe")"
  if [ -n "${FUZZ_TARGETS:-}" ] && [[ " $FUZZ_TARGETS " != *" $name "* ]]; then continue; fi
  found=$((found + 1))
  names+=("$name")
  mkdir -p "$build/fuzz-findings"
  # Each target's report and verdict in files, printed in order below.
  rm -f "$build/fuzz-findings/$name.report" "$build/fuzz-findings/$name.failed"
  (fuzz_target "$exe" >"$build/fuzz-findings/$name.report" 2>&1 || touch "$build/fuzz-findings/$name.failed") &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
done
wait
status=0
for name in "${names[@]}"; do
  cat "$build/fuzz-findings/$name.report"
  if [ -e "$build/fuzz-findings/$name.failed" ]; then status=1; fi
done
if [ "$found" = 0 ]; then
  echo "fuzz: no fuzz targets in $build/tests/fuzz (a BULKSCORE_FUZZ=ON build?)"
  exit 1
fi
exit $status
