#!/usr/bin/env bash
# Quick start (a): install what is missing, build Release, generate the bundled
# default cluster (5,000 nodes, 2,000 pending pods; deterministic) and schedule
# it, printing the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
. scripts/env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBULKSCORE_BUILD_TESTS=OFF -DBULKSCORE_BUILD_BENCH=OFF
cmake --build build -j"$JOBS" --target bulkscore
mkdir -p build/default-cluster
if [ ! -f build/default-cluster/nodes.json ] || [ ! -f build/default-cluster/pods.json ]; then
  build/bulkscore generate --nodes-out build/default-cluster/nodes.json --pods-out build/default-cluster/pods.json
fi
build/bulkscore schedule --nodes build/default-cluster/nodes.json --pods build/default-cluster/pods.json \
  -o build/default-cluster/schedule.jsonl "$@"
echo "placements: build/default-cluster/schedule.jsonl"
