#!/usr/bin/env bash
# Quick start (b): install what is missing, build and run the whole test suite.
# Builds the CPU-only configuration, and, where nvcc exists, the CUDA
# configuration too (its GPU tests skip with a message when no GPU answers).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
. scripts/env.sh

cmake -S . -B build-test-cpu -DCMAKE_BUILD_TYPE=Release -DBULKSCORE_CUDA=OFF
cmake --build build-test-cpu -j"$JOBS"
(cd build-test-cpu && ctest --output-on-failure -j"$JOBS")

if command -v nvcc >/dev/null 2>&1; then
  cmake -S . -B build-test-cuda -DCMAKE_BUILD_TYPE=Release -DBULKSCORE_CUDA=ON -DBULKSCORE_BUILD_BENCH=ON
  cmake --build build-test-cuda -j"$JOBS"
  (cd build-test-cuda && ctest --output-on-failure -j"$JOBS")
else
  echo "test.sh: no nvcc found; the CUDA backend was not built"
fi
