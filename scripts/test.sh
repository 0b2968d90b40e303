#!/usr/bin/env bash
# Quick start (b): install what is missing, build and run the whole test suite.
# Builds the CPU-only configuration, and, where nvcc exists, the CUDA
# configuration too (its GPU tests skip with a message when no GPU answers).
# clang-tidy checks the sources after the CPU build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
. scripts/env.sh

# Each stage's wall time, on stderr: CI's budget is about 30 minutes on 2
# cores, and this says where it goes.
stage_start=$SECONDS
stage() {
  echo "test.sh: $1 took $((SECONDS - stage_start)) s (total $SECONDS s)" >&2
  stage_start=$SECONDS
}

cmake -S . -B build-test-cpu -DCMAKE_BUILD_TYPE=Release -DBULKSCORE_CUDA=OFF -DBULKSCORE_BINDING_TESTS=ON
cmake --build build-test-cpu -j"$JOBS"
stage "CPU build"
(cd build-test-cpu && ctest --output-on-failure -j"$JOBS")
stage "CPU suite"

# The installed package: `cmake --install` into a prefix, then an embedder's
# project (tests/consumer) finds it, links the C++ library and the C ABI,
# and schedules a pod with each; -ffp-contract=off must reach its flags.
rm -rf build-test-cpu/prefix build-test-cpu/consumer
cmake --install build-test-cpu --prefix build-test-cpu/prefix >/dev/null
cmake -S tests/consumer -B build-test-cpu/consumer -DCMAKE_PREFIX_PATH="$PWD/build-test-cpu/prefix"
cmake --build build-test-cpu/consumer -j"$JOBS"
grep -q -- -ffp-contract=off build-test-cpu/consumer/CMakeFiles/consumer_cpp.dir/flags.make
(cd build-test-cpu/consumer && ctest --output-on-failure)
stage "installed package"

# Static checks: clang-tidy 14 (.clang-tidy) over the project's own sources,
# through the CPU build's compile_commands.json. Any finding fails.
scripts/clang-tidy.sh build-test-cpu
stage "clang-tidy"

# The sanitizer build (clang, AddressSanitizer + UndefinedBehaviorSanitizer)
# of the whole test suite, the fuzz targets replaying their corpora in it,
# then a short time-boxed fuzz run of every target.
CLANGXX="${CLANGXX:-clang++-14}"
# -O1 with line tables only: readable stack traces at a fraction of -g's
# compile and link time.
cmake -S . -B build-test-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DBULKSCORE_CUDA=OFF -DBULKSCORE_BUILD_BENCH=OFF \
  -DCMAKE_CXX_COMPILER="$CLANGXX" -DBULKSCORE_SANITIZE=address,undefined -DBULKSCORE_FUZZ=ON
cmake --build build-test-asan -j"$JOBS"
stage "sanitizer build"
(cd build-test-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j"$JOBS")
stage "sanitizer suite"
# The time-boxed fuzz run: every target for FUZZ_SECONDS (25 s) from a fixed
# seed, so a run explores the same inputs in the same order every time; about
# 2 minutes on 2 cores. Out of memory (past 1.5 GB) or a hang fails it loudly
# (scripts/fuzz.sh), and any finding fails CI. BULKSCORE_FUZZ_SMOKE=0 skips it.
if [ "${BULKSCORE_FUZZ_SMOKE:-1}" = 1 ]; then
  scripts/fuzz.sh build-test-asan "${FUZZ_SECONDS:-25}" "${FUZZ_RUNS:--1}" "${FUZZ_SEED:-1}"
  stage "fuzz run"
fi

if command -v nvcc >/dev/null 2>&1; then
  # The CUDA build: the library, CLI, C ABI and benchmarks with the CUDA
  # backend compiled for every architecture, and the tests labelled
  # `cuda_build` (tests/CMakeLists.txt: those whose outcome depends on the
  # backend being built; without a GPU they prove the fallback and skip the
  # device checks). The other tests run the same host code as the CPU build.
  cmake -S . -B build-test-cuda -DCMAKE_BUILD_TYPE=Release -DBULKSCORE_CUDA=ON -DBULKSCORE_BUILD_BENCH=ON
  cmake --build build-test-cuda -j"$JOBS" --target bulkscore bulkscore_c benchmarks cuda_build_tests
  stage "CUDA build"
  (cd build-test-cuda && ctest --output-on-failure -j"$JOBS" -L cuda_build)
  stage "CUDA suite"
else
  echo "test.sh: no nvcc found; the CUDA backend was not built"
fi
