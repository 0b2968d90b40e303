#!/usr/bin/env bash
# Quick start (a): install what is missing, build Release, generate the bundled
# default cluster (5,000 nodes, 2,000 pending pods, and the Services,
# ReplicaSets, StatefulSets and Namespaces that give its pods upstream's
# system-default topology spreading; deterministic) and schedule it, printing
# the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
. scripts/env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBULKSCORE_BUILD_TESTS=OFF -DBULKSCORE_BUILD_BENCH=OFF
cmake --build build -j"$JOBS" --target bulkscore
mkdir -p build/default-cluster
D=build/default-cluster
if [ ! -f $D/nodes.json ] || [ ! -f $D/pods.json ] || [ ! -f $D/objects.json ]; then
  build/bulkscore generate --nodes-out $D/nodes.json --pods-out $D/pods.json --objects-out $D/objects.json
fi
build/bulkscore schedule --nodes $D/nodes.json --pods $D/pods.json --objects $D/objects.json \
  -o $D/schedule.jsonl "$@"
echo "placements: build/default-cluster/schedule.jsonl"
