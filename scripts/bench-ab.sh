#!/usr/bin/env bash
# Before against after, side by side (docs/performance.md: shared machines
# differ by 2x from one to the next, so only binaries run in the same
# rounds compare). Builds bench/bench_floor at two git revisions (Release,
# no CUDA, no tests; each in build-ab/<commit>, its sources in a detached
# worktree build-ab/src-<commit>, both kept for the next call) and then:
#
#   wall clock (default): ROUNDS rounds, each running the before binary and
#     then the after one over the benchmarks FILTER selects
#     (BULKSCORE_BENCH_ITERATIONS=4), one line a benchmark and binary:
#     pods/s and the ratios to the floor run beside it (vs_floor, and on
#     two threads vs_floor_2t and vs_floor_2t_run);
#   --callgrind: the instructions inside Engine::schedule (both overloads,
#     so that commits from before schedule(Pod&&) compare) and
#     Engine::look_ahead (the windows' evaluations ahead), which count the
#     measured pods, the 1,000 pods scheduled first and, for distinct and
#     basic, the floor check's pods with the cache off (as
#     docs/performance.md's callgrind series count them), of each
#     benchmark FILTER selects, run
#     once under valgrind with one iteration: what a noisy machine cannot
#     blur (FILTER should name threads:1 benchmarks; at 5,000 nodes each
#     takes about half a minute).
#
# usage: scripts/bench-ab.sh [--rounds N] [--filter REGEX] [--callgrind] BEFORE [AFTER]
#   BEFORE, AFTER  git revisions (AFTER: HEAD); the working tree's edits are
#                  not measured: commit them first
#   --filter       Google Benchmark's regex over BM_Engine names
#                  (default: distinct and spread at 5,000 nodes, two threads)
#   --rounds       wall-clock rounds (default 3)
# Exit 2 on a bad argument, 1 when a build or a run fails.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '/^# usage:/,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

rounds=3
filter='BM_Engine/(distinct|spread)/exact/threads:2/5000Nodes'
callgrind=0
revs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds)
      [ $# -ge 2 ] || usage
      rounds=$2
      shift 2
      ;;
    --filter)
      [ $# -ge 2 ] || usage
      filter=$2
      shift 2
      ;;
    --callgrind)
      callgrind=1
      shift
      ;;
    -h | --help) usage ;;
    -*)
      echo "bench-ab.sh: unknown option $1" >&2
      usage
      ;;
    *)
      revs+=("$1")
      shift
      ;;
  esac
done
[ ${#revs[@]} -ge 1 ] && [ ${#revs[@]} -le 2 ] || usage
[ ${#revs[@]} -eq 2 ] || revs+=(HEAD)
case "$rounds" in '' | *[!0-9]* | 0) echo "bench-ab.sh: --rounds takes a positive number, not '$rounds'" >&2 && exit 2 ;; esac
[ -n "$filter" ] || { echo "bench-ab.sh: --filter takes a non-empty regex" >&2 && exit 2; }
if [ "$callgrind" = 1 ] && ! command -v valgrind > /dev/null; then
  echo "bench-ab.sh: --callgrind needs valgrind (apt-get install valgrind)" >&2
  exit 2
fi

. scripts/env.sh
commits=()
for rev in "${revs[@]}"; do
  # -- ends the options: a revision that starts with a dash is not one.
  if ! c=$(git rev-parse --verify --quiet --end-of-options "$rev^{commit}"); then
    echo "bench-ab.sh: '$rev' is not a commit of this repository" >&2
    exit 2
  fi
  commits+=("$c")
done

# The binary of commit $1 at build-ab/<short>/bench/bench_floor, built once.
build() {
  local c=$1 short=${1:0:12}
  local src=build-ab/src-$short dir=build-ab/$short
  if [ ! -x "$dir/bench/bench_floor" ]; then
    if [ ! -d "$src" ]; then
      git worktree add --quiet --detach --force "$src" "$c"
    fi
    if ! git -C "$src" cat-file -e "$c:bench/bench_floor.cpp" 2> /dev/null; then
      echo "bench-ab.sh: commit $short has no bench/bench_floor.cpp (before issue 24's floor)" >&2
      exit 2
    fi
    echo "building $short ..." >&2
    cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DBULKSCORE_CUDA=OFF -DBULKSCORE_BUILD_TESTS=OFF \
      -DBULKSCORE_BUILD_SHARED=OFF > "$dir.cmake.log" 2>&1 || {
      echo "bench-ab.sh: cmake failed for $short (build-ab/$short.cmake.log)" >&2
      exit 1
    }
    cmake --build "$dir" -j"$JOBS" --target bench_floor > "$dir.build.log" 2>&1 || {
      echo "bench-ab.sh: the build failed for $short (build-ab/$short.build.log)" >&2
      exit 1
    }
  fi
}
mkdir -p build-ab
for c in "${commits[@]}"; do build "$c"; done
bins=()
for c in "${commits[@]}"; do bins+=("build-ab/${c:0:12}/bench/bench_floor"); done
names=("before ${commits[0]:0:12}" "after  ${commits[1]:0:12}")

if [ "$callgrind" = 1 ]; then
  mapfile -t benches < <("${bins[1]}" --benchmark_list_tests --benchmark_filter="$filter")
  [ ${#benches[@]} -gt 0 ] || { echo "bench-ab.sh: no benchmark matches '$filter'" >&2 && exit 2; }
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  for b in "${benches[@]}"; do
    # The name as a whole (regex metacharacters of the name escaped).
    exact="^$(printf '%s' "${b%%/iterations:*}" | sed 's/[][\.*^$()+?{}|]/\\&/g')(/|$)"
    for i in 0 1; do
      BULKSCORE_THREADS=1 BULKSCORE_BENCH_ITERATIONS=1 valgrind --tool=callgrind \
        --callgrind-out-file="$out/cg.$i" \
        --toggle-collect='bulkscore::Engine::schedule(bulkscore::Pod&&)' \
        --toggle-collect='bulkscore::Engine::schedule(bulkscore::Pod const&)' \
        --toggle-collect='bulkscore::Engine::look_ahead(*' \
        "${bins[$i]}" --benchmark_filter="$exact" > "$out/log.$i" 2>&1 || {
        echo "bench-ab.sh: the run of $b failed (${names[$i]}):" >&2
        tail -5 "$out/log.$i" >&2
        exit 1
      }
      ir=$(sed -n 's/^.*Collected : \([0-9]*\).*$/\1/p' "$out/log.$i" | tail -1)
      printf '%-60s %s %15s instructions\n' "${b%%/iterations:*}" "${names[$i]}" "$ir"
    done
  done
  exit 0
fi

for r in $(seq 1 "$rounds"); do
  for i in 0 1; do
    BULKSCORE_BENCH_ITERATIONS=4 "${bins[$i]}" --benchmark_filter="$filter" 2> /dev/null |
      awk -v round="$r" -v who="${names[$i]}" '
        /^BM_Engine/ {
          name = $1; sub(/\/iterations:.*/, "", name)
          line = sprintf("round %d  %s  %-50s", round, who, name)
          for (k = 2; k <= NF; k++) {
            split($k, kv, "=")
            if (kv[1] == "pods_per_s" || kv[1] == "vs_floor" || kv[1] == "vs_floor_2t" || kv[1] == "vs_floor_2t_run")
              line = line sprintf("  %s=%s", kv[1], kv[2])
          }
          print line
        }'
  done
done
