#!/usr/bin/env bash
# Runs the ScalingSweep workloads of bench/workloads/performance-config.yaml
# (the SchedulingBasic shape, its node count a $nodes parameter) for each node
# count and backend, one results file per point, then plots pods/s against
# node count with bench/plot_scaling.sh.
#
# Usage: bench/scaling_sweep.sh [-b "cpu cuda"] [-n "1000 5000 ..."] [-o DIR]
#                               [-- extra `bulkscore perf` arguments]
#   -b  backends (default: "cpu cuda"; a backend that cannot run is skipped)
#   -n  node counts (default: 1000 5000 10000 20000 50000 100000; each needs
#       a ScalingSweep/<n>Nodes workload in the config)
#   -o  output folder (default: sweep-results)
#   -B  batching modes to compare, e.g. "exact off": each mode's results go
#       to a folder of its own under the output folder and the plot has one
#       line per backend and mode (default: none, the binary's default)
# BULKSCORE names the binary (default: build/bulkscore next to this folder).
# Ctrl-C stops the sweep after the current point (its partial result is kept).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${BULKSCORE:-$here/../build/bulkscore}
config=$here/workloads/performance-config.yaml
backends="cpu cuda"
nodes="1000 5000 10000 20000 50000 100000"
out=sweep-results
modes=""
while getopts "b:n:o:B:h" opt; do
  case $opt in
    b) backends=$OPTARG ;;
    n) nodes=$OPTARG ;;
    o) out=$OPTARG ;;
    B) modes=$OPTARG ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift

[ -x "$bin" ] || { echo "scaling_sweep.sh: $bin is not executable (set BULKSCORE)" >&2; exit 2; }
mkdir -p "$out"

written=()
interrupted=0
for mode in ${modes:-default}; do
  dir=$out
  extra=()
  if [ "$mode" != default ]; then
    dir=$out/$mode
    extra=(--batching "$mode")
    mkdir -p "$dir"
  fi
  for b in $backends; do
    for n in $nodes; do
      f="$dir/ScalingSweep_${n}Nodes_${b}.json"
      echo "== $b, $n nodes${modes:+, batching $mode} -> $f" >&2
      "$bin" perf --config "$config" --workload "ScalingSweep/${n}Nodes" --backend "$b" --output "$f" "${extra[@]}" "$@"
      rc=$?
      [ -f "$f" ] && written+=("$f")
      if [ $rc -eq 130 ]; then
        echo "scaling_sweep.sh: interrupted" >&2
        interrupted=1
        break 3
      elif [ $rc -ne 0 ]; then
        echo "scaling_sweep.sh: $b at $n nodes failed (exit $rc); skipping the rest of backend $b" >&2
        break
      fi
    done
  done
done

if [ ${#written[@]} -gt 0 ]; then
  by_dir=()
  [ -n "$modes" ] && by_dir=(-d)
  BULKSCORE="$bin" "$here/plot_scaling.sh" "${by_dir[@]}" -o "$out/scaling.png" "${written[@]}"
else
  echo "scaling_sweep.sh: no results written" >&2
  exit 1
fi
[ $interrupted -eq 0 ]
