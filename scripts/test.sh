#!/usr/bin/env bash
# Quick start (b): install what is missing, build and run the whole test suite.
# Builds the Release configuration (with the CUDA backend where nvcc exists;
# its GPU tests skip with a message when no GPU answers) and the CPU-only
# sanitizer configuration, and runs the suite in each; clang-tidy checks the
# sources after the Release build.
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

# One Release build runs the whole suite. Where nvcc exists it is the CUDA
# configuration: the CUDA backend compiled for every architecture, and the
# suite run against it (without a GPU the backend falls back to the CPU one
# and its device checks skip with a message), so the host code is compiled
# once rather than once per configuration. The CPU-only configuration is
# compiled and tested by the sanitizer build below.
if command -v nvcc >/dev/null 2>&1; then
  BUILD=build-test-cuda
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBULKSCORE_CUDA=ON -DBULKSCORE_BINDING_TESTS=ON
  build_name="CUDA build (the backend, library, CLI, C ABI, benchmarks, tests)"
else
  echo "test.sh: no nvcc found; the CUDA backend is not built"
  BUILD=build-test-cpu
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBULKSCORE_CUDA=OFF -DBULKSCORE_BINDING_TESTS=ON
  build_name="CPU build"
fi
cmake --build "$BUILD" -j"$JOBS"
stage "$build_name"
(cd "$BUILD" && ctest --output-on-failure -j"$JOBS")
stage "suite"

# The installed package: `cmake --install` into a prefix, then an embedder's
# project (tests/consumer) finds it, links the C++ library and the C ABI,
# and schedules a pod with each; -ffp-contract=off must reach its flags.
rm -rf "$BUILD/prefix" "$BUILD/consumer"
cmake --install "$BUILD" --prefix "$BUILD/prefix" >/dev/null
cmake -S tests/consumer -B "$BUILD/consumer" -DCMAKE_PREFIX_PATH="$PWD/$BUILD/prefix"
cmake --build "$BUILD/consumer" -j"$JOBS"
grep -q -- -ffp-contract=off "$BUILD/consumer/CMakeFiles/consumer_cpp.dir/flags.make"
(cd "$BUILD/consumer" && ctest --output-on-failure)
stage "installed package"

# Static checks: clang-tidy 14 (.clang-tidy) over the project's own sources,
# through the compile_commands.json of a CPU-only configuration (configured
# here, nothing compiled: a CUDA build lists kernels/register_cuda_backend.cpp
# once for every target that links the backend). Any finding fails.
rm -rf build-test-tidy
scripts/clang-tidy.sh build-test-tidy
stage "clang-tidy"

# The sanitizer build (clang, AddressSanitizer + UndefinedBehaviorSanitizer)
# of the whole test suite, the fuzz targets replaying their corpora in it,
# then a short time-boxed fuzz run of every target.
CLANGXX="${CLANGXX:-clang++-14}"
# -O1 with line tables only: readable stack traces at a fraction of -g's
# compile and link time. The test files at -O0: with the sanitizers, -O1
# took a test file 2.4 times as long to compile (18 s against 7.6) and the
# time they run is the libraries', which keep -O1.
cmake -S . -B build-test-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DBULKSCORE_TEST_OPTIMIZATION=-O0 \
  -DBULKSCORE_CUDA=OFF -DBULKSCORE_BUILD_BENCH=OFF \
  -DCMAKE_CXX_COMPILER="$CLANGXX" -DBULKSCORE_SANITIZE=address,undefined -DBULKSCORE_FUZZ=ON
cmake --build build-test-asan -j"$JOBS"
stage "sanitizer build"
(cd build-test-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j"$JOBS")
stage "sanitizer suite"
# The time-boxed fuzz run: every target for FUZZ_SECONDS (25 s) from a fixed
# seed, so a run explores the same inputs in the same order every time; the
# targets run as many at once as there are cores, about 80 s on 2 (157 s one
# after another). Out of memory (past 1.5 GB) or a hang fails it loudly
# (scripts/fuzz.sh), and any finding fails CI. BULKSCORE_FUZZ_SMOKE=0 skips it.
if [ "${BULKSCORE_FUZZ_SMOKE:-1}" = 1 ]; then
  scripts/fuzz.sh build-test-asan "${FUZZ_SECONDS:-25}" "${FUZZ_RUNS:--1}" "${FUZZ_SEED:-1}"
  stage "fuzz run"
fi
