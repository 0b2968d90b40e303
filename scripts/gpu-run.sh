#!/usr/bin/env bash
# Runs on a GPU machine (the device tool), from the repository root, with the
# bundle from scripts/gpu-bundle.sh carried in .device/. One call does the
# owed GPU checks and measurements and leaves logs in $OUT (or ./gpu-results):
#   1. device facts (nvidia-smi), 2. the CUDA parity suite, 3. compute-sanitizer
#   memcheck on a parity case, 4. bench_engine (CPU and CUDA side by side),
#   5. bulkscore perf on the bundled workloads with --backend cuda and cpu.
# Each step is bounded in time; the bounds add up to 560 s, inside the
# device tool's 10-minute command.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-results}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer"
export LD_LIBRARY_PATH="$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin=.device/bin
echo "commit $(cat .device/COMMIT 2>/dev/null)  date $(date -u +%Y-%m-%dT%H:%MZ)" | tee "$out/summary.txt"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1 | tee -a "$out/summary.txt"

step() {  # step NAME SECONDS COMMAND...
  local name=$1 secs=$2; shift 2
  local t0=$(date +%s)
  timeout "$secs" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc in $(( $(date +%s) - t0 )) s" | tee -a "$out/summary.txt"
  tail -n 3 "$out/$name.log" | sed 's/^/    /' | tee -a "$out/summary.txt"
}

step parity 90 "$bin/test_cuda_parity"
# A device fault injected mid-run (BULKSCORE_CUDA_FAULT_AT): the engine falls
# back to the CPU and the placements equal a CPU-only run byte for byte.
fault_check() {
  "$bin/bulkscore" generate --nodes 2000 --running 3000 --pending 300 --seed 9 \
    --nodes-out "$out/fault-nodes.json" --pods-out "$out/fault-pods.json" &&
  BULKSCORE_CUDA_FAULT_AT=3 "$bin/bulkscore" schedule --backend cuda --tie-break first \
    --nodes "$out/fault-nodes.json" --pods "$out/fault-pods.json" -o "$out/fault-cuda.jsonl" &&
  "$bin/bulkscore" schedule --backend cpu --tie-break first \
    --nodes "$out/fault-nodes.json" --pods "$out/fault-pods.json" -o "$out/fault-cpu.jsonl" &&
  cmp "$out/fault-cuda.jsonl" "$out/fault-cpu.jsonl" && echo "fault fallback: identical placements"
  rm -f "$out"/fault-*.json
}
export bin out
export -f fault_check  # `timeout` runs programs, not shell functions
step fault 60 bash -c fault_check
step parity-repeat 60 env BULKSCORE_PARITY_SEED=12345 "$bin/test_cuda_parity" --gtest_repeat=3 --gtest_shuffle \
  --gtest_filter='*CudaParity*:*CudaEngineParity*:-*100000*'
if command -v compute-sanitizer >/dev/null; then
  step memcheck 120 compute-sanitizer --tool memcheck --error-exitcode 3 "$bin/test_cuda_parity" \
    --gtest_filter='*EveryEvalResultField*/33Nodes:*EveryEvalResultField*/1000Nodes'
  step racecheck 90 compute-sanitizer --tool racecheck --error-exitcode 3 "$bin/test_cuda_parity" \
    --gtest_filter='*EveryEvalResultField*/1000Nodes'
else
  echo "compute-sanitizer: not found" | tee -a "$out/summary.txt"
fi
step bench 90 "$bin/bench_engine" --benchmark_min_time=0.3 --benchmark_out="$out/bench.json" --benchmark_out_format=json
grep -E "^BM_" "$out/bench.log" | awk '{print $1, $2, $3, $NF}' | tee -a "$out/summary.txt"
for b in cuda cpu; do
  step "perf-$b" 55 "$bin/bulkscore" perf --config bench/workloads/performance-config.yaml --label performance \
    --backend "$b" -o "$out/perf-$b.json"
done
"$bin/bulkscore" perf --compare "$out"/perf-*.json 2>&1 | tee -a "$out/summary.txt"
