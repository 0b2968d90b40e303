#!/usr/bin/env bash
# A Release build with GCC's profile-guided optimization (BULKSCORE_PGO,
# CMakeLists.txt), for benchmarks and installed packages: pods the batch
# cache answers ran 10-40% faster (medians), distinct pods about as fast,
# with the same decisions (docs/performance.md, "pgo"). About twice a plain
# build's time, and the suite (15 minutes on 2 cores):
#
#   1. an instrumented build of the CLI (BULKSCORE_PGO=GENERATE);
#   2. training: the CLI on the CPU backend runs scheduler_perf's short
#      workloads (every default plugin, node and pod affinity, spreading,
#      preemption), five 5,000-node ones (SchedulingBasic, DistinctPods,
#      TopologySpreading, PreferredTopologySpreading,
#      SchedulingPodAntiAffinity) and the bundled default cluster: as is,
#      in windows of 8, under the first-node tie-break and with the cache
#      off. bench/ is not among them, so that its figures are not the
#      training's own;
#   3. everything rebuilt from the profiles (BULKSCORE_PGO=USE), in the
#      same folder: GCC names each profile after its object file's path;
#   4. the whole test suite on the result (the equivalence and parity
#      tests among it): a build that fails it is not one to use.
#
# usage: scripts/build-pgo.sh [BUILD_DIR] [-- CMAKE_ARGS...]
#   BUILD_DIR   the build folder (default build-pgo in the repository), new
#               or made by this script before: its old profiles are removed
#               first (profiles of other sources are refused). Letters,
#               digits and . _ / + - only (the path goes into compiler
#               flags). After editing the sources, run the script again.
#   CMAKE_ARGS  passed to both configurations before the script's own
#               settings: the build is CPU-only unless they say
#               -DBULKSCORE_CUDA=ON (the kernels then build as always, the
#               host C++ takes the profiles; not yet measured)
# Exit 2 on a bad argument, 1 when a stage fails (naming its line).
set -euo pipefail
script="$(cd -- "$(dirname -- "$0")" > /dev/null && pwd)/$(basename -- "$0")"
root="$(cd -- "$(dirname -- "$script")/.." > /dev/null && pwd)"

usage() {
  sed -n '/^# usage:/,/^# Exit/p' "$script" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
bad() {
  echo "build-pgo.sh: $1" >&2
  exit 2
}

build="$root/build-pgo"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  case "$1" in
    -h | --help) usage ;;
    -*) bad "unknown option $1 (usage: scripts/build-pgo.sh --help)" ;;
    "") bad "BUILD_DIR is empty" ;;
  esac
  build=$1
  shift
fi
if [ $# -gt 0 ]; then
  [ "$1" = "--" ] || bad "unexpected argument '$1' (CMake's arguments come after --)"
  shift
fi
extra=("$@")

only_plain() {
  case "$1" in
    *[!A-Za-z0-9._/+-]*) bad "the build folder's path may hold letters, digits and . _ / + - only: '$1'" ;;
  esac
}
only_plain "$build"
mkdir -p -- "$build"
build="$(cd -- "$build" > /dev/null && pwd)"
only_plain "$build"
[ "$build" != "$root" ] || bad "the build folder cannot be the source folder"
if [ -f "$build/CMakeCache.txt" ] && ! grep -Eq '^BULKSCORE_PGO:STRING=(GENERATE|USE)$' "$build/CMakeCache.txt"; then
  bad "$build holds another build (not one of this script's); name a new folder"
fi
cd "$root"
trap 'echo "build-pgo.sh: failed at line $LINENO" >&2; exit 1' ERR

. scripts/env.sh
profiles="$build/pgo-profile"
rm -rf "$profiles"
mkdir -p "$profiles"

stage_start=$SECONDS
stage() {
  echo "build-pgo.sh: $1 took $((SECONDS - stage_start)) s" >&2
  stage_start=$SECONDS
}

# 1. Instrumented.
cmake -S . -B "$build" -DBULKSCORE_CUDA=OFF "${extra[@]}" -DCMAKE_BUILD_TYPE=Release -DBULKSCORE_PGO=GENERATE \
  -DBULKSCORE_PGO_DIR="$profiles" -DBULKSCORE_BUILD_TESTS=OFF -DBULKSCORE_BUILD_BENCH=OFF > /dev/null
cmake --build "$build" -j"$JOBS" --target bulkscore
stage "instrumented build"

# 2. Training, in a scratch folder inside the build (its outputs are not
# kept; the profiles are). The CPU backend: the profiles are its code's.
train="$build/pgo-train"
rm -rf "$train"
mkdir -p "$train"
cli="$build/bulkscore"
config=bench/workloads/performance-config.yaml
"$cli" perf --config "$config" --label short --backend cpu -o "$train/short.json" > /dev/null
n=0
for w in SchedulingBasic/5000Nodes_1000Pods DistinctPods/5000Nodes_2000Pods TopologySpreading/5000Nodes \
  PreferredTopologySpreading/5000Nodes SchedulingPodAntiAffinity/5000Nodes; do
  n=$((n + 1))
  "$cli" perf --config "$config" --workload "$w" --backend cpu -o "$train/perf-$n.json" > /dev/null
done
"$cli" generate --nodes-out "$train/nodes.json" --pods-out "$train/pods.json" --objects-out "$train/objects.json" \
  > /dev/null
for args in "" "--window 8" "--tie-break first" "--batching off"; do
  n=$((n + 1))
  # shellcheck disable=SC2086  # the fixed options above, split on purpose
  "$cli" schedule --backend cpu --nodes "$train/nodes.json" --pods "$train/pods.json" \
    --objects "$train/objects.json" -o "$train/schedule-$n.jsonl" $args > /dev/null
done
rm -rf "$train"
if [ -z "$(find "$profiles" -name '*.gcda' -print -quit)" ]; then
  echo "build-pgo.sh: the training wrote no profile into $profiles" >&2
  exit 1
fi
stage "training"

# 3. Optimized from the profiles: everything, tests and benchmarks too.
cmake -S . -B "$build" -DBULKSCORE_CUDA=OFF "${extra[@]}" -DCMAKE_BUILD_TYPE=Release -DBULKSCORE_PGO=USE \
  -DBULKSCORE_PGO_DIR="$profiles" -DBULKSCORE_BUILD_TESTS=ON -DBULKSCORE_BUILD_BENCH=ON > /dev/null
cmake --build "$build" -j"$JOBS"
stage "optimized build"

# 4. The suite on it.
(cd "$build" && ctest --output-on-failure -j"$JOBS")
stage "suite"
echo "build-pgo.sh: built in $build (CLI $build/bulkscore, benchmarks $build/bench/)"
