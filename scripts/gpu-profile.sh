#!/usr/bin/env bash
# Runs on a GPU machine (the device tool) with the bundle of
# scripts/gpu-bundle.sh carried in .device/: Nsight Compute on one pod's
# kernels at 100,000 nodes, for the default profile (bench_engine) and for
# FGD (bench_fgd), to see where the device time of a pass goes. Writes
# $OUT/ncu-engine.txt and $OUT/ncu-fgd.txt. About two minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-results}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
export LD_LIBRARY_PATH="$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin=.device/bin
sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
  --section MemoryWorkloadAnalysis)
# Kernel durations of a run of pods (every kernel, summed per name), then
# the sections for a few launches after the warm-up.
timeout 100 ncu --print-summary per-kernel --metrics gpu__time_duration.sum --launch-skip 200 --launch-count 200 \
  "$bin/bench_engine" --benchmark_filter='BM_FilterScore/cuda/100000Nodes' --benchmark_min_time=0.05 \
  > "$out/ncu-engine.txt" 2>&1
timeout 100 ncu -k regex:'evaluate_positions|score_and_select' --launch-skip 40 --launch-count 4 "${sections[@]}" \
  "$bin/bench_engine" --benchmark_filter='BM_FilterScore/cuda/100000Nodes' --benchmark_min_time=0.05 \
  >> "$out/ncu-engine.txt" 2>&1
timeout 120 env BULKSCORE_TRACE_DIR=.device/trace ncu -k regex:'evaluate_positions|score_and_select' \
  --launch-skip 20 --launch-count 4 "${sections[@]}" \
  "$bin/bench_fgd" --benchmark_filter='cuda/one_shape/off' > "$out/ncu-fgd.txt" 2>&1
tail -n 5 "$out"/ncu-*.txt
