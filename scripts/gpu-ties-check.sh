#!/usr/bin/env bash
# A cluster of identical nodes under --tie-break random (every empty node
# ties): the CUDA backend's large-tie path (the tied nodes ranked on the
# device) must place every pod where the CPU backend does. Run by
# scripts/gpu-run.sh; usage: gpu-ties-check.sh BULKSCORE DIR
set -euo pipefail
bin=$1 dir=$2
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
nodes = [{"apiVersion": "v1", "kind": "Node",
          "metadata": {"name": "node-%05d" % i, "labels": {"kubernetes.io/hostname": "node-%05d" % i}},
          "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}}} for i in range(20000)]
pods = [{"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "pod-%04d" % i, "namespace": "default"},
         "spec": {"schedulerName": "default-scheduler",
                  "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10.1",
                                  "resources": {"requests": {"cpu": "100m" if i % 3 else "1", "memory": "64Mi"}}}]},
         "status": {"phase": "Pending"}} for i in range(600)]
json.dump({"apiVersion": "v1", "kind": "List", "items": nodes}, open(d + "/ties-nodes.json", "w"))
json.dump({"apiVersion": "v1", "kind": "List", "items": pods}, open(d + "/ties-pods.json", "w"))
PY
for b in cuda cpu; do
  for mode in off exact; do
    "$bin" schedule --backend "$b" --batching "$mode" --tie-break random --seed 7 \
      --nodes "$dir/ties-nodes.json" --pods "$dir/ties-pods.json" -o "$dir/ties-$b-$mode.jsonl"
  done
done
cmp "$dir/ties-cuda-off.jsonl" "$dir/ties-cpu-off.jsonl"
cmp "$dir/ties-cuda-exact.jsonl" "$dir/ties-cpu-off.jsonl"
cmp "$dir/ties-cpu-exact.jsonl" "$dir/ties-cpu-off.jsonl"
echo "ties: CUDA equals CPU on 20,000 identical nodes, 600 pods, random tie-break"
rm -f "$dir"/ties-*
