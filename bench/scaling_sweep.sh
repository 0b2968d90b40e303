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
# BULKSCORE names the binary (default: build/bulkscore next to this folder).
# Ctrl-C stops the sweep after the current point (its partial result is kept).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${BULKSCORE:-$here/../build/bulkscore}
config=$here/workloads/performance-config.yaml
backends="cpu cuda"
nodes="1000 5000 10000 20000 50000 100000"
out=sweep-results
while getopts "b:n:o:h" opt; do
  case $opt in
    b) backends=$OPTARG ;;
    n) nodes=$OPTARG ;;
    o) out=$OPTARG ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift

[ -x "$bin" ] || { echo "scaling_sweep.sh: $bin is not executable (set BULKSCORE)" >&2; exit 2; }
mkdir -p "$out"

written=()
for b in $backends; do
  for n in $nodes; do
    f="$out/ScalingSweep_${n}Nodes_${b}.json"
    echo "== $b, $n nodes -> $f" >&2
    "$bin" perf --config "$config" --workload "ScalingSweep/${n}Nodes" --backend "$b" --output "$f" "$@"
    rc=$?
    [ -f "$f" ] && written+=("$f")
    if [ $rc -eq 130 ]; then
      echo "scaling_sweep.sh: interrupted" >&2
      break 2
    elif [ $rc -ne 0 ]; then
      echo "scaling_sweep.sh: $b at $n nodes failed (exit $rc); skipping the rest of backend $b" >&2
      break
    fi
  done
done

if [ ${#written[@]} -gt 0 ]; then
  BULKSCORE="$bin" "$here/plot_scaling.sh" -o "$out/scaling.png" "${written[@]}"
else
  echo "scaling_sweep.sh: no results written" >&2
  exit 1
fi
