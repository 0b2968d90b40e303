#!/usr/bin/env bash
# Builds the CUDA configuration here (sm_90, Release) and packs what a GPU
# machine needs to run the tests and benchmarks into .device/ : the binaries,
# the workload files, and the shared libraries that are not part of a base
# system (simdjson, yaml-cpp, spdlog, fmt, Google Benchmark). GPU machines
# lent through the device tool have CUDA and CMake but no package registry,
# so the project's Debian libraries travel with the binaries.
#
# Then, with the device tool: carry [".device"] and run scripts/gpu-run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
command -v nvcc >/dev/null || { echo "gpu-bundle.sh: nvcc not found" >&2; exit 1; }
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DBULKSCORE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DBULKSCORE_BUILD_TESTS=ON -DBULKSCORE_BUILD_BENCH=ON
cmake --build build-gpu -j"$JOBS" --target bulkscore test_cuda_parity test_cli test_engine_events test_engine_rank test_engine_messages test_reserve_undo \
  test_gang test_gang_topology test_plugin_gpu_policies test_snapshot bench_engine bench_fgd bench_preemption bench_floor

rm -rf .device && mkdir -p .device/bin .device/lib
cp build-gpu/bulkscore build-gpu/tests/test_cuda_parity build-gpu/tests/test_cli build-gpu/tests/test_engine_events \
  build-gpu/tests/test_engine_messages build-gpu/tests/test_engine_rank build-gpu/tests/test_reserve_undo build-gpu/tests/test_gang build-gpu/tests/test_gang_topology \
  build-gpu/tests/test_plugin_gpu_policies build-gpu/tests/test_snapshot build-gpu/bench/bench_engine \
  build-gpu/bench/bench_fgd build-gpu/bench/bench_preemption build-gpu/bench/bench_floor .device/bin/
# Symbols stripped: the device tool carries at most 64 MiB with the tree.
strip --strip-unneeded .device/bin/*
# Libraries outside glibc, libstdc++ and libgcc (the GPU image has its own).
for b in .device/bin/*; do
  ldd "$b" | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libstdc++.so*|libgcc_s.so*|ld-linux*) ;;
    *) cp -L "$lib" .device/lib/ ;;
  esac
done
# The default trace (issue 11's replay and FGD benchmark), where this
# checkout has it: ../shared does not travel to the device.
trace=${BULKSCORE_TRACE_DIR:-../shared/data/alibaba-gpu-v2023}
if [ -f "$trace/openb_pod_list_default.csv" ]; then
  mkdir -p .device/trace
  cp "$trace/openb_node_list_gpu_node.csv" "$trace/openb_pod_list_default.csv" .device/trace/
fi
git rev-parse --short HEAD > .device/COMMIT 2>/dev/null || echo unknown > .device/COMMIT
du -sh .device
echo "gpu-bundle.sh: ready; run with carry [\".device\"]: bash scripts/gpu-run.sh"
