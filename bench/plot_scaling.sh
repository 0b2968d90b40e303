#!/usr/bin/env bash
# Draws scheduling throughput (pods/s) against node count, one line per
# backend, from `bulkscore perf` results files, into a PNG (gnuplot).
#
# Usage: bench/plot_scaling.sh [-o scaling.png] [-m avg|p50|p90|p99]
#                              [-w WORKLOAD_REGEX] results.json...
#   -o  output PNG (default: scaling.png)
#   -m  which SchedulingThroughput figure to plot (default: avg)
#   -w  only rows whose workload name matches this extended regex
#       (default: ^ScalingSweep/, the rows bench/scaling_sweep.sh writes)
#   -d  one line per backend and results folder (the folder's name added to
#       the backend's: bench/scaling_sweep.sh -B writes one folder per
#       --batching mode)
# The rows are read back with `bulkscore perf --compare`, so the files may
# also be upstream's BenchmarkPerfScheduling results; rows without a backend
# or a node count (upstream's) are skipped.
# BULKSCORE names the binary (default: build/bulkscore next to this folder).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${BULKSCORE:-$here/../build/bulkscore}
out=scaling.png
metric=avg
pattern='^ScalingSweep/'
by_dir=0
while getopts "o:m:w:dh" opt; do
  case $opt in
    o) out=$OPTARG ;;
    m) metric=$OPTARG ;;
    w) pattern=$OPTARG ;;
    d) by_dir=1 ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "plot_scaling.sh: no results files given" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "plot_scaling.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 1; }

case $metric in
  avg) col=4 ;; p50) col=5 ;; p90) col=6 ;; p99) col=7 ;;
  *) echo "plot_scaling.sh: -m must be avg, p50, p90 or p99" >&2; exit 2 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The comparison table: workload backend nodes avg p50 p90 p99 ns/node/pod [file]
# One table for all files, or (-d) one per folder, its name a suffix of the
# series' names.
table() {  # table SUFFIX FILE...
  local suffix=$1
  shift
  "$bin" perf --compare "$@" > "$work/table.txt"
  awk -v pat="$pattern" -v col="$col" -v dir="$work" -v suffix="$suffix" '
    NR == 1 { next }
    $1 !~ pat || $2 == "-" || $3 == "-" { next }
    { print $3, $col, $8 > (dir "/" $2 suffix ".dat") }
  ' "$work/table.txt"
}
if [ "$by_dir" = 1 ]; then
  for d in $(for f in "$@"; do dirname "$f"; done | sort -u); do
    files=()
    for f in "$@"; do [ "$(dirname "$f")" = "$d" ] && files+=("$f"); done
    table "-$(basename "$d")" "${files[@]}"
  done
else
  table "" "$@"
fi

shopt -s nullglob
series=("$work"/*.dat)
[ ${#series[@]} -gt 0 ] || { echo "plot_scaling.sh: no rows match /$pattern/ with a backend and a node count" >&2; exit 1; }

plot=""
cost=""
for f in "${series[@]}"; do
  sort -n -o "$f" "$f"
  name=$(basename "$f" .dat)
  plot+="${plot:+, }'$f' using 1:2 with linespoints linewidth 2 pointtype 7 title '$name'"
  cost+="${cost:+, }'$f' using 1:(1e6/\$2) with linespoints linewidth 2 pointtype 7 title '$name: us per pod'"
  cost+=", '$f' using 1:3 axes x1y2 with linespoints linewidth 1 dashtype 2 pointtype 6 title '$name: ns per node per pod'"
done
cost_out="${out%.png}-cost.png"

gnuplot <<GNUPLOT
set terminal png size 1000,640
set output '$out'
set title 'bulkscore scheduling throughput (SchedulingThroughput $metric) vs cluster size'
set xlabel 'nodes'
set ylabel 'pods/s'
set logscale xy
set grid
set key top right
plot $plot
GNUPLOT
gnuplot <<GNUPLOT
set terminal png size 1000,640
set output '$cost_out'
set title 'bulkscore cost per pod as the cluster grows'
set xlabel 'nodes'
set ylabel 'microseconds per pod'
set y2label 'ns per node per pod'
set logscale x
set logscale y
set y2range [0:*]
set ytics nomirror
set y2tics
set grid
set key top left
plot $cost
GNUPLOT
echo "wrote $out and $cost_out" >&2
