#!/usr/bin/env python3
"""Writes a cluster whose pending pods carry many pod (anti-)affinity terms or
topology spread constraints (issue 20, item 7: the per-pod setup must grow
near-linearly with them).

Usage: bench/many_terms.py OUT_DIR KIND TERMS [--pods P] [--nodes N] [--distinct D]
  KIND      required-anti | preferred-affinity | spread
  TERMS     terms (or constraints) per pod
  --pods    pending pods (default 20)
  --nodes   nodes (default 100, in 4 zones)
  --distinct distinct terms among TERMS (default TERMS; terms repeat in turn)
  --vary    every pod has terms of its own (default: all pods share them)

Writes OUT_DIR/nodes.json and OUT_DIR/pods.json. Time it with
  build/bulkscore schedule --nodes OUT_DIR/nodes.json --pods OUT_DIR/pods.json -o /dev/null
"""
import argparse
import json
import os


def node(i, spread_keys):
    labels = {"kubernetes.io/hostname": f"n{i}", "topology.kubernetes.io/zone": f"z{i % 4}"}
    for k in range(spread_keys):
        labels[f"example.com/k{k}"] = f"v{(i + k) % 3}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"n{i}", "labels": labels},
        "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}},
    }


def term(i):
    return {"labelSelector": {"matchLabels": {"app": f"a{i}"}}, "topologyKey": "kubernetes.io/hostname"}


def pod(p, kind, terms, distinct, vary):
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}
    ids = [i % distinct + (p * distinct if vary else 0) for i in range(terms)]
    if kind == "required-anti":
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term(i) for i in ids]}}
    elif kind == "preferred-affinity":
        spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1 + i % 100, "podAffinityTerm": term(i)} for i in ids]}}
    elif kind == "spread":
        # The API server refuses two constraints with the same {topologyKey,
        # whenUnsatisfiable}: one key per constraint, half of each action.
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1 + i % 5,
            "topologyKey": f"example.com/k{i}",
            "whenUnsatisfiable": "DoNotSchedule" if i % 2 == 0 else "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": f"a{ids[i]}"}},
        } for i in range(terms)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{p}", "namespace": "default", "labels": {"app": f"a{p % max(distinct, 1)}"}},
        "spec": spec,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("kind", choices=["required-anti", "preferred-affinity", "spread"])
    ap.add_argument("terms", type=int)
    ap.add_argument("--pods", type=int, default=20)
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--distinct", type=int, default=0)
    ap.add_argument("--vary", action="store_true")
    a = ap.parse_args()
    distinct = a.distinct or a.terms
    os.makedirs(a.out, exist_ok=True)
    spread_keys = a.terms if a.kind == "spread" else 0
    with open(os.path.join(a.out, "nodes.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "NodeList", "items": [node(i, spread_keys) for i in range(a.nodes)]}, f)
    with open(os.path.join(a.out, "pods.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "PodList",
                   "items": [pod(p, a.kind, a.terms, distinct, a.vary) for p in range(a.pods)]}, f)


if __name__ == "__main__":
    main()
