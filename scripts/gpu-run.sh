#!/usr/bin/env bash
# Runs on a GPU machine (the device tool), from the repository root, with the
# bundle from scripts/gpu-bundle.sh carried in .device/. One call does the
# owed GPU checks and measurements, most important first, each bounded in
# time (about 3 minutes in all on an H200; each step's bound is for a hang,
# and the summary and logs are written after every step, so a run cut short
# still reports what it did):
#   1. device facts (nvidia-smi)          2. the CUDA parity suite
#   3. device faults injected at every point (BULKSCORE_CUDA_FAULT_AT=N:POINT)
#      under both tie-breaks, each byte for byte as the CPU run, and a
#      cluster of identical nodes (large random ties) places as on the CPU
#   4. compute-sanitizer memcheck, of the parity suite and of runs where an
#      injected fault drops the backend with work queued
#   5. the trace replay, CUDA against CPU, byte for byte (GPU devices and
#      FGD on real data)
#   6. FGD at 100,000 nodes on the kernels (bench_fgd, CUDA and CPU)
#   7. bench_engine's filter/score pass, CPU and CUDA side by side
#   8. issue 24's workloads (distinct, basic, spread) on CUDA beside the
#      CPU floor (bench_floor); bulkscore perf on the bundled workloads,
#      CUDA and CPU
#   9. racecheck, and the parity suite again on another seed, shuffled
# Windows of pods (issue 24) run in the parity suite (CudaEngineParity:
# windows of 8 on the device; every run_backend_parity pod also asks the
# device for a window's light form, want_totals, compared with the CPU's
# in one form: the CPU sends a summary, the device full rows) and in
# bench_floor's window lines on every core.
# Preemption's device dry run (issue 25) runs in the parity suite
# (CudaPreemptionParity: against the CPU bulk dry run, the exact one and the
# reference, and a fault at `preempt`), under memcheck, and in
# bench_preemption's bulk-cuda lines beside the CPU's.
# The device tool brings back at most 8 files, so the logs travel as one
# archive, $OUT/logs.tgz, refreshed after every step, beside summary.txt.
# GPU_RUN_ONLY='parity|fault|ties' (a regular expression over the step
# names) runs only the matching steps: a recheck of what a change touched
# when little device time is left.
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
  if [ -n "${GPU_RUN_ONLY:-}" ] && ! [[ $name =~ ^(${GPU_RUN_ONLY})$ ]]; then return 0; fi
  local t0=$(date +%s)
  timeout "$secs" "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc in $(( $(date +%s) - t0 )) s" | tee -a "$summary"
  tail -n 3 "$logs/$name.log" | sed 's/^/    /' | tee -a "$summary"
  tar -czf "$out/logs.tgz" -C "$logs" . 2>/dev/null
}

step parity 120 "$bin/test_cuda_parity"
grep -E "^\[  FAILED  \]|Failure|first difference" "$logs/parity.log" | head -n 20 | sed 's/^/    /' | tee -a "$summary"
grep -E "CudaPreemptionParity" "$logs/parity.log" | grep -E "OK|FAILED|SKIPPED" | sed 's/^/    /' | tee -a "$summary"

# The event API on the device: random event streams (node and pod churn,
# objects, assume/confirm/forget) on a CUDA engine decide as a fresh CPU
# load; rank on CUDA equals rank on the CPU.
step events 90 "$bin/test_engine_events" --gtest_filter='*OnCuda*'
step rank 60 "$bin/test_engine_rank" --gtest_filter='*Cuda*'
# A score outside [0, 100] fails the pod's cycle on CUDA as on the CPU
# (Engine::evaluate's check over the device's per-plugin scores).
step invalid_score 60 "$bin/test_engine_messages" --gtest_filter='InvalidScore.*OnCuda'
# The GPU policies whose scores leave [0, 100] on nodes past their
# normalizers (GpuDotProduct, GpuClustering's wrapping arithmetic).
step gpu_policy_range 60 "$bin/test_plugin_gpu_policies" --gtest_filter='GpuBaselines.*OnCuda'
# Reserve/Unreserve on a CUDA engine: placing and undoing pods leaves the
# device mirror as if they never came, and later decisions equal an engine
# that never saw them (issue 23).
step reserve_undo 90 "$bin/test_reserve_undo"
# Gangs all or nothing on a CUDA engine against the CPU reference.
step gang 90 "$bin/test_gang" --gtest_filter='GangRandom*'
# The snapshot's device mirror follows pod and node changes column by
# column, allocatable_inverse (2026-12-07) included.
step mirror 60 "$bin/test_snapshot" --gtest_filter='SnapshotMirrorSync.*'
# Topology-aware gangs on a CUDA engine against the brute-force CPU
# reference (domain attempts undone on the device mirror).
step gang_topology 90 "$bin/test_gang_topology" --gtest_filter='GangTopologyRandom*'
grep -E "^\[  (FAILED|SKIPPED) \]|Failure|decides otherwise|first difference" "$logs/events.log" "$logs/rank.log" \
  "$logs/invalid_score.log" "$logs/gpu_policy_range.log" \
  "$logs/reserve_undo.log" "$logs/gang.log" "$logs/gang_topology.log" | head -n 10 |
  sed 's/^/    /' | tee -a "$summary"

# Device faults injected mid-run (BULKSCORE_CUDA_FAULT_AT=N:POINT,
# host/engine/fault_injection.hpp) at every point the CUDA backend has, each
# under both tie-breaks: the placements must equal a CPU-only run byte for
# byte. A device error (filter, prescore, tie, lists) falls back to the CPU
# with one warning; an out-of-memory for a cache state's score lists (state)
# keeps the device. The cluster's ReplicaSets and Services give
# system-default spreading (a feasible-set PreScore), its empty nodes ties,
# and the batch cache (on by default) keeps states (lists copied back).
# Every point must fire, but tie under --tie-break first (no draw). The
# generated cluster never preempts: the `preempt` point is the parity
# suite's (CudaPreemptionParity.AFaultInTheDryRun...).
fault_check() {
  local rc=0 d="$logs/fault"
  mkdir -p "$d"
  "$bin/bulkscore" generate --nodes 1000 --running 1500 --pending 200 --seed 9 \
    --nodes-out "$d/nodes.json" --pods-out "$d/pods.json" --objects-out "$d/objects.json" || return 1
  local in=(--nodes "$d/nodes.json" --pods "$d/pods.json" --objects "$d/objects.json")
  for tie in first random; do
    "$bin/bulkscore" schedule --backend cpu --tie-break "$tie" "${in[@]}" -o "$d/cpu-$tie.jsonl" 2>/dev/null || rc=1
    for point in filter prescore tie lists state; do
      local run="$d/cuda-$point-$tie"
      if ! BULKSCORE_CUDA_FAULT_AT=3:$point "$bin/bulkscore" schedule --backend cuda --tie-break "$tie" "${in[@]}" \
        -o "$run.jsonl" 2> "$run.err"; then
        echo "fault $point, tie-break $tie: FAILED (exit status), $(tail -n 1 "$run.err")"
        rc=1
        continue
      fi
      local same=identical fired=no fell=no want_fired=yes want_fell=yes
      cmp -s "$run.jsonl" "$d/cpu-$tie.jsonl" || same=DIFFERENT
      grep -q "injected fault" "$run.err" && fired=yes
      grep -q "fell back to the CPU backend" "$run.err" && fell=yes
      [ "$point" = tie ] && [ "$tie" = first ] && want_fired=no want_fell=no
      [ "$point" = state ] && want_fell=no
      local verdict=ok
      [ "$same" = identical ] && [ "$fired" = "$want_fired" ] && [ "$fell" = "$want_fell" ] || { verdict=FAILED; rc=1; }
      echo "fault $point, tie-break $tie: $verdict: $same to the CPU run, fired $fired, fell back $fell"
    done
  done
  rm -f "$d"/*.json "$d"/*.jsonl
  return $rc
}
# The backend dropped with work still queued (a fault injected after the
# filter kernels, and with the tied nodes' copy in flight), under
# compute-sanitizer memcheck: the stream is synchronized before any buffer
# is freed (CudaBackend's destructor and member order), so no kernel or
# copy touches freed memory; placements as on the CPU.
fault_memcheck() {
  local rc=0 d="$logs/fault-memcheck"
  mkdir -p "$d"
  "$bin/bulkscore" generate --nodes 300 --running 400 --pending 40 --seed 5 \
    --nodes-out "$d/nodes.json" --pods-out "$d/pods.json" --objects-out "$d/objects.json" || return 1
  local in=(--nodes "$d/nodes.json" --pods "$d/pods.json" --objects "$d/objects.json" --tie-break random)
  "$bin/bulkscore" schedule --backend cpu "${in[@]}" -o "$d/cpu.jsonl" 2>/dev/null || rc=1
  for point in filter tie; do
    BULKSCORE_CUDA_FAULT_AT=2:$point compute-sanitizer --tool memcheck --error-exitcode 3 \
      "$bin/bulkscore" schedule --backend cuda "${in[@]}" -o "$d/cuda-$point.jsonl" > "$d/$point.log" 2>&1 || {
      echo "fault-memcheck $point: exit status $?"; tail -n 5 "$d/$point.log"; rc=1; }
    grep -E "ERROR SUMMARY" "$d/$point.log"
    grep -q "injected fault" "$d/$point.log" || { echo "fault-memcheck $point: the fault did not fire"; rc=1; }
    cmp "$d/cuda-$point.jsonl" "$d/cpu.jsonl" || rc=1
  done
  rm -f "$d"/*.json "$d"/*.jsonl
  return $rc
}
# The trace replay (every policy, one seed; about 2 s a policy on a 2-core
# host since preemption's exact dry run stopped copying the snapshot for
# pods that outrank no one, tens of seconds before: it ran past 120 s on
# 2026-11-28) on both backends, with and without the batch cache: the tables and bucket
# CSVs must be identical.
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
export -f fault_check fault_memcheck replay_check  # `timeout` runs programs, not shell functions
step fault 90 bash -c fault_check
grep -E "^fault " "$logs/fault.log" | head -n 7 | sed "s/^/    /" | tee -a "$summary"  # the first runs (the last three are above)
step ties 40 scripts/gpu-ties-check.sh "$bin/bulkscore" "$logs"

if command -v compute-sanitizer >/dev/null; then
  step memcheck 90 compute-sanitizer --tool memcheck --error-exitcode 3 "$bin/test_cuda_parity" \
    --gtest_filter='*EveryEvalResultField*/33Nodes:*EveryEvalResultField*/1000Nodes:*GpuClustersMatchTheCpuBackend/1000Nodes'
  step fault-memcheck 60 bash -c fault_memcheck
  # The dry-run kernel (one thread per potential node, each patching its
  # node's row of shared column copies) on the first rounds, and the backend
  # dropped with the kernel queued (the fault test).
  step preempt-memcheck 120 env BULKSCORE_PREEMPT_PARITY_ROUNDS=6 compute-sanitizer --tool memcheck --error-exitcode 3 \
    "$bin/test_cuda_parity" --gtest_filter='CudaPreemptionParity.*'
  grep -E "ERROR SUMMARY|^\[  (FAILED|SKIPPED) \]|first difference" "$logs/preempt-memcheck.log" | head -n 5 |
    sed 's/^/    /' | tee -a "$summary"
else
  echo "compute-sanitizer: not found" | tee -a "$summary"
fi

if [ -f .device/trace/openb_pod_list_default.csv ]; then
  step replay 120 bash -c replay_check
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

# DefaultPreemption in bulk: the CPU's block dry run and the device's one
# launch over every potential node, 1,000 and 5,000 nodes.
step preempt-bench 90 "$bin/bench_preemption" --benchmark_filter='bulk' \
  --benchmark_out="$logs/preempt-bench.json" --benchmark_out_format=json
grep -oE "^BM_[^ ]+|pods_per_s=[^ ]+|us_per_preempt=[^ ]+" "$logs/preempt-bench.log" |
  paste -sd' ' | sed 's/ BM_/\nBM_/g' | tee -a "$summary"

# Windows of pods (issue 24, item 1) on the host's cores: distinct pods at
# 5,000 nodes, the exact cache with and without windows, one thread, two
# and every core (a window spreads its pods over them), beside the floor
# (on two threads also beside the floor's own two-thread run,
# vs_floor_2t_run and floor_2t_run_pods_per_s: does a host's second core
# give the plain loop twice one, as the 2-vCPU machine's does not?).
step window-bench 90 "$bin/bench_floor" --benchmark_filter='BM_Engine/distinct/exact.*/5000Nodes' \
  --benchmark_out="$logs/window-bench.json" --benchmark_out_format=json
grep -oE "^BM_[^ ]+|\bpods_per_s=[^ ]+|vs_floor=[^ ]+|vs_floor_2t_run=[^ ]+|window_hit_share=[^ ]+" "$logs/window-bench.log" |
  paste -sd' ' | sed 's/ BM_/\nBM_/g' | tee -a "$summary"
# And at 20,000 and 100,000 nodes, no window against auto and windows of
# 32, two threads and every core: auto takes windows only up to 1,024 nodes
# per thread (on 16 cores: 5,000 nodes yes, 20,000 no; at 4,096, the rule
# until 2026-11-28, an H100 host's 16 cores ran 20,000 nodes at 15,200
# pods/s with windows against 21,000 without). Is the rule right there?
step window-bench-100k 150 "$bin/bench_floor" \
  --benchmark_filter='BM_Engine/distinct/exact(-auto|-window32)?/threads:(2|[0-9][0-9]+)/(20000|100000)Nodes' \
  --benchmark_out="$logs/window-bench-100k.json" --benchmark_out_format=json
grep -oE "^BM_[^ ]+|\bpods_per_s=[^ ]+|vs_floor=[^ ]+|vs_floor_2t_run=[^ ]+|window_hit_share=[^ ]+" "$logs/window-bench-100k.log" |
  paste -sd' ' | sed 's/ BM_/\nBM_/g' | tee -a "$summary"

# Issue 24's workloads on the CUDA backend beside the one-thread CPU floor:
# distinct pods (every pod differs), SchedulingBasic's alike pods, hard
# zone and hostname spreading and required anti-affinity per node (its
# group's row of per-node counts from the first pod: plain hits; the
# mirror re-sends term_counts when a row is appended, which the parity
# suite's random clusters and CudaEngineParity check; hard spreading's
# risen minimum is a hit since 2026-11-29, and since 2026-12-07 a zone
# shut or let back in is one flag on the host (gates, docs/batching.md),
# so its hit_share should read 0.9985 here too and its pods/s follow the
# CPU's, the misses' lists coming from the device), the batch cache on and
# off, 5,000 to 100,000 nodes (vs_floor: the GPU over the floor).
step floor-cuda 150 "$bin/bench_floor" --benchmark_filter='BM_Engine/(distinct|basic|spread|anti)/(exact|off)/cuda/' \
  --benchmark_out="$logs/floor-cuda.json" --benchmark_out_format=json
grep -oE "^BM_[^ ]+|\bpods_per_s=[^ ]+|vs_floor=[^ ]+|\bhit_share=[^ ]+" "$logs/floor-cuda.log" |
  paste -sd' ' | sed 's/ BM_/\nBM_/g' | tee -a "$summary"

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
