#!/usr/bin/env bash
# Runs on a GPU machine (the device tool), from the repository root, with the
# bundle from scripts/gpu-bundle.sh carried in .device/. One call does the
# owed GPU checks and measurements, most important first, each bounded in
# time (the bounds add up to about 480 s, inside the device tool's 10-minute
# command, leaving a session room for a second call):
#   1. device facts (nvidia-smi)          2. the CUDA parity suite
#   3. a device fault mid-run falls back, and a cluster of identical nodes
#      (large random ties) places as on the CPU
#   4. compute-sanitizer memcheck
#   5. the trace replay, CUDA against CPU, byte for byte (GPU devices, FGD,
#      every baseline on real data)
#   6. FGD at 100,000 nodes on the kernels (bench_fgd, CUDA and CPU)
#   7. bench_engine's filter/score pass, CPU and CUDA side by side
#   8. bulkscore perf on the bundled workloads, CUDA and CPU
#   9. racecheck, and the parity suite again on another seed, shuffled
# The device tool brings back at most 8 files, so the logs travel as one
# archive, $OUT/logs.tgz, refreshed after every step, beside summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-results}
mkdir -p "$out"
logs=$(mktemp -d)
export PATH="$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer"
export LD_LIBRARY_PATH="$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin=.device/bin
summary="$out/summary.txt"
echo "commit $(cat .device/COMMIT 2>/dev/null)  date $(date -u +%Y-%m-%dT%H:%MZ)" | tee "$summary"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1 | tee -a "$summary"
nproc | sed 's/^/cpu cores: /' | tee -a "$summary"

step() {  # step NAME SECONDS COMMAND...
  local name=$1 secs=$2; shift 2
  local t0=$(date +%s)
  timeout "$secs" "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc in $(( $(date +%s) - t0 )) s" | tee -a "$summary"
  tail -n 3 "$logs/$name.log" | sed 's/^/    /' | tee -a "$summary"
  tar -czf "$out/logs.tgz" -C "$logs" . 2>/dev/null
}

step parity 90 "$bin/test_cuda_parity"
grep -E "^\[  FAILED  \]|Failure|first difference" "$logs/parity.log" | head -n 20 | sed 's/^/    /' | tee -a "$summary"

# A device fault injected mid-run (BULKSCORE_CUDA_FAULT_AT): the engine falls
# back to the CPU and the placements equal a CPU-only run byte for byte.
fault_check() {
  "$bin/bulkscore" generate --nodes 2000 --running 3000 --pending 300 --seed 9 \
    --nodes-out "$logs/fault-nodes.json" --pods-out "$logs/fault-pods.json" &&
  BULKSCORE_CUDA_FAULT_AT=3 "$bin/bulkscore" schedule --backend cuda --tie-break first \
    --nodes "$logs/fault-nodes.json" --pods "$logs/fault-pods.json" -o "$logs/fault-cuda.jsonl" &&
  "$bin/bulkscore" schedule --backend cpu --tie-break first \
    --nodes "$logs/fault-nodes.json" --pods "$logs/fault-pods.json" -o "$logs/fault-cpu.jsonl" &&
  cmp "$logs/fault-cuda.jsonl" "$logs/fault-cpu.jsonl" && echo "fault fallback: identical placements"
  rm -f "$logs"/fault-*
}
# The trace replay (every policy, one seed) on both backends, with and
# without the batch cache: the tables and bucket CSVs must be identical.
replay_check() {
  local rc=0
  for run in "cuda exact" "cpu exact" "cuda off"; do
    set -- $run
    local t0=$(date +%s%N)
    "$bin/bulkscore" replay --trace-dir .device/trace --trace default --policies all --seeds 42 \
      --backend "$1" --batching "$2" -o "$logs/replay-$1-$2.txt" --csv "$logs/replay-$1-$2.csv" || rc=1
    echo "replay $1 $2: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  done
  cmp "$logs/replay-cuda-exact.csv" "$logs/replay-cpu-exact.csv" &&
    cmp "$logs/replay-cuda-off.csv" "$logs/replay-cpu-exact.csv" && echo "replay: CUDA equals CPU" || rc=1
  return $rc
}
export bin logs
export -f fault_check replay_check  # `timeout` runs programs, not shell functions
step fault 30 bash -c fault_check
step ties 40 scripts/gpu-ties-check.sh "$bin/bulkscore" "$logs"

if command -v compute-sanitizer >/dev/null; then
  step memcheck 90 compute-sanitizer --tool memcheck --error-exitcode 3 "$bin/test_cuda_parity" \
    --gtest_filter='*EveryEvalResultField*/33Nodes:*EveryEvalResultField*/1000Nodes:*GpuClustersMatchTheCpuBackend/1000Nodes'
else
  echo "compute-sanitizer: not found" | tee -a "$summary"
fi

if [ -f .device/trace/openb_pod_list_default.csv ]; then
  step replay 50 bash -c replay_check
  step fgd-bench 60 env BULKSCORE_TRACE_DIR=.device/trace "$bin/bench_fgd" \
    --benchmark_filter='cuda|^BM_FgdAtScale/(one_shape/(exact|off)|shuffled/off)/100000Nodes' \
    --benchmark_out="$logs/fgd.json" --benchmark_out_format=json
  grep -oE "^BM_[^ ]+|pods_per_s=[^ ]+|ns_per_node_per_pod=[^ ]+|hit_share=[^ ]+" "$logs/fgd-bench.log" |
    paste -sd' ' | sed 's/ BM_/\nBM_/g' | tee -a "$summary"
else
  echo "no trace in .device/trace: replay and bench_fgd skipped" | tee -a "$summary"
fi

step bench 60 "$bin/bench_engine" --benchmark_filter='BM_FilterScore' --benchmark_min_time=0.2 \
  --benchmark_out="$logs/bench.json" --benchmark_out_format=json
grep -E "^BM_" "$logs/bench.log" | awk '{print $1, $2, $3, $NF}' | tee -a "$summary"

# A few scheduler_perf workloads (the whole "performance" label takes
# minutes on the CPU backend), each on both backends with the batch cache
# off (the cache answers most pods on the host and would hide the backend).
i=0
for w in SchedulingBasic/5000Nodes_1000Pods Scale100k/100000Nodes_1000Pods HostPortConflict/20000Nodes_20000Pods; do
  i=$((i + 1))
  for b in cuda cpu; do
    step "perf-$b-$i" 20 "$bin/bulkscore" perf --config bench/workloads/performance-config.yaml --workload "$w" --batching off \
      --backend "$b" -o "$logs/perf-$b-$i.json"
  done
  "$bin/bulkscore" perf --compare "$logs/perf-cpu-$i.json" "$logs/perf-cuda-$i.json" 2>&1 | tee -a "$summary"
done

if command -v compute-sanitizer >/dev/null; then
  step racecheck 45 compute-sanitizer --tool racecheck --error-exitcode 3 "$bin/test_cuda_parity" \
    --gtest_filter='*EveryEvalResultField*/1000Nodes'
fi
step parity-repeat 30 env BULKSCORE_PARITY_SEED=12345 "$bin/test_cuda_parity" --gtest_repeat=2 --gtest_shuffle \
  --gtest_filter='Sizes/CudaParity.*:Sizes/CudaEngineParity.*:-*100000*'
tar -czf "$out/logs.tgz" -C "$logs" .
echo "done" | tee -a "$summary"
