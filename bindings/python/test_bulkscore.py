"""The Python binding: the bundled default cluster scheduled through it as a
scheduler would (load, schedule each pending pod, finish its binding,
confirm it) writes the same bytes as `bulkscore schedule`; statuses map to
exceptions. Run by ctest with BULKSCORE_LIB and BULKSCORE_CLI set."""

import json
import os
import pathlib
import subprocess
import tempfile
import unittest

import bulkscore


class DefaultCluster(unittest.TestCase):
    def test_schedules_the_default_cluster_as_the_cli_does(self):
        cli = os.environ.get("BULKSCORE_CLI")
        if not cli:
            self.skipTest("BULKSCORE_CLI is not set (ctest sets it)")
        with tempfile.TemporaryDirectory() as d:
            nodes, pods, objects, want = (os.path.join(d, f) for f in
                                          ("nodes.json", "pods.json", "objects.json", "schedule.jsonl"))
            subprocess.run([cli, "generate", "--nodes-out", nodes, "--pods-out", pods, "--objects-out", objects],
                           check=True, capture_output=True)
            subprocess.run([cli, "schedule", "--backend", "cpu", "--nodes", nodes, "--pods", pods, "--objects",
                            objects, "-o", want], check=True, capture_output=True)
            texts = [pathlib.Path(p).read_bytes() for p in (nodes, pods, objects)]
            expected = pathlib.Path(want).read_bytes()
        pool = bulkscore.Executor(2)
        with bulkscore.Engine(backend="cpu", executor=pool) as engine:
            engine.load(*texts)
            lines = []
            placed = 0
            for item in json.loads(texts[1])["items"]:
                spec, meta = item.get("spec", {}), item["metadata"]
                pending = (not spec.get("nodeName") and meta.get("deletionTimestamp") is None
                           and item.get("status", {}).get("phase") not in ("Succeeded", "Failed")
                           and spec.get("schedulerName", "default-scheduler") == "default-scheduler")
                if not pending:
                    continue
                r = engine.schedule(item)
                lines.append(r.json + "\n")
                if not r.node:
                    continue
                placed += 1
                key = meta.get("uid") or meta["namespace"] + "/" + meta["name"]
                self.assertTrue(engine.is_assumed_pod(key))
                engine.finish_binding(key)
                item["spec"]["nodeName"] = r.node
                engine.add_pod(item)
                with self.assertRaises(bulkscore.AlreadyExists):
                    engine.add_pod(item)
        got = "".join(lines).encode()
        if got != expected:
            for i, (a, b) in enumerate(zip(got.split(b"\n"), expected.split(b"\n"))):
                self.assertEqual(a, b, "line %d" % (i + 1))
        self.assertEqual(got, expected)
        self.assertGreater(placed, 1000)


class Statuses(unittest.TestCase):
    def test_statuses_rank_and_metrics(self):
        self.assertTrue(bulkscore.version())
        with self.assertRaises(bulkscore.InvalidInput):
            bulkscore.Engine("profiles: [", backend="cpu")
        e = bulkscore.Engine(backend="cpu", tie_break="first")
        node = lambda name, cpu: {"metadata": {"name": name},
                                  "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}
        e.add_node(node("n1", "4"))
        e.add_node(node("n2", "8"))
        with self.assertRaises(bulkscore.AlreadyExists):
            e.add_node(node("n1", "4"))
        pod = {"metadata": {"name": "p", "namespace": "default", "uid": "u-p"},
               "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
        rk = e.rank(pod, 5)
        self.assertEqual(rk.chosen, "n2")
        self.assertEqual([n["node"] for n in rk.nodes], ["n2", "n1"])
        self.assertEqual(sum(rk.nodes[0]["weighted"]), rk.nodes[0]["total"])
        self.assertEqual(e.schedule(pod).node, "n2")
        e.forget_pod("u-p")
        with self.assertRaises(bulkscore.NotFound):
            e.forget_pod("u-p")
        with self.assertRaises(bulkscore.WrongState):
            bound = dict(pod, spec=dict(pod["spec"], nodeName="n1"))
            e.add_pod(bound)
            e.forget_pod("u-p")
        self.assertIn("# TYPE", e.metrics_text())
        self.assertIn('scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1',
                      e.metrics_text())
        with self.assertRaises(bulkscore.NotFound):
            e.remove_pending_pod("u-p")
        self.assertIsInstance(e.take_warnings(), list)
        e.close()
        e.close()


class Preemption(unittest.TestCase):
    def test_classes_budgets_and_a_preempting_result(self):
        with bulkscore.Engine(backend="cpu") as e:
            e.add_node({"metadata": {"name": "n1"},
                        "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}})
            e.add_pod({"metadata": {"name": "low", "namespace": "default", "uid": "u-low", "labels": {"app": "low"}},
                       "spec": {"nodeName": "n1",
                                "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]},
                       "status": {"phase": "Running"}})
            high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                    "value": 1000}
            e.add_object(high)
            with self.assertRaises(bulkscore.AlreadyExists):
                e.add_object(high)
            with self.assertRaises(bulkscore.InvalidInput):
                e.update_object(dict(high, value=5))
            e.add_object({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                          "metadata": {"name": "low", "namespace": "default"},
                          "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "low"}}},
                          "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1}})
            pod = {"metadata": {"name": "hi", "namespace": "default", "uid": "u-hi"},
                   "spec": {"priorityClassName": "high",
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}
            r = e.schedule(pod)
            self.assertEqual(r.node, "n1")
            self.assertEqual(r.nominatedNode, "n1")
            self.assertEqual(r.victims, ["default/low"])
            self.assertEqual(r.pdbViolations, 1)
            line = json.loads(r.json)
            self.assertEqual((line["nominatedNode"], line["victims"], line["pdbViolations"]),
                             ("n1", ["default/low"], 1))
            e.remove_object("PodDisruptionBudget", "default", "low")
            e.remove_object("PriorityClass", "", "high")
            with self.assertRaises(bulkscore.NotFound):
                e.remove_object("PriorityClass", "", "high")
            # A pod that does not preempt has no such fields.
            r = e.schedule(dict(pod, metadata={"name": "p2", "namespace": "default", "uid": "u-p2"},
                                spec={"containers": pod["spec"]["containers"]}))
            self.assertEqual((r.nominatedNode, r.victims, r.pdbViolations), ("", [], 0))
            self.assertNotIn("nominatedNode", json.loads(r.json))


class NodeData(unittest.TestCase):
    CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: NodeData, weight: 5}]
  pluginConfig:
  - name: NodeData
    args: {filterColumn: example.com/license, scoreColumn: example.com/cost, scoreNormalization: Reverse}
"""

    def test_verdicts_scores_and_clears(self):
        with bulkscore.Engine(self.CONFIG, backend="cpu", tie_break="first") as e:
            for name in ("n1", "n2", "n3"):
                e.add_node({"metadata": {"name": name},
                            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
            pod = {"metadata": {"name": "p", "namespace": "default", "uid": "u-p"},
                   "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
            e.set_node_scores("example.com/cost", {"n1": 90, "n2": 10, "n3": 50})
            self.assertEqual(e.peek(pod).node, "n2")
            e.set_node_filter("example.com/license", "n2", False, "node(s) had an expired license")
            self.assertEqual(e.peek(pod).node, "n3")
            e.set_node_filters("example.com/license", [("n1", False), ("n3", False, "")])
            self.assertEqual(e.peek(pod).message, "0/3 nodes are available: 1 node(s) had an expired license, "
                                                  "2 node(s) didn't pass example.com/license.")
            with self.assertRaises(bulkscore.InvalidInput):
                e.set_node_score("example.com/cost", "n1", 101)
            with self.assertRaises(bulkscore.NotFound):
                e.set_node_score("example.com/cost", "n9", 1)
            with self.assertRaises(bulkscore.InvalidInput):
                e.set_node_filter("example.com/cost", "n1", True)
            e.clear_node_data("example.com/license", "n2")
            self.assertEqual(e.peek(pod).node, "n2")
            rk = e.rank(pod, 3)
            self.assertEqual(rk.plugins[-1], "NodeData")
            self.assertEqual(rk.nodes[0]["raw"][-1], 10)
            e.clear_node_data("example.com/cost")
            with self.assertRaises(bulkscore.NotFound):
                e.clear_node_data("example.com/none")



class PodGroups(unittest.TestCase):
    """A Workload and a Coscheduling PodGroup as events, schedule_all placing
    gangs all or nothing, the group fields, the group's state, and a removed
    Workload's members rejected as missing."""

    @staticmethod
    def pod(name, labels=None, spec=None):
        meta = {"name": name, "namespace": "default", "uid": "u-" + name}
        if labels:
            meta["labels"] = labels
        s = dict(spec or {})
        s["containers"] = [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]
        return {"metadata": meta, "spec": s}

    def worker(self, name):
        return self.pod(name, spec={"workloadRef": {"name": "train", "podGroup": "workers"}})

    def big(self, name):
        return self.pod(name, labels={"scheduling.x-k8s.io/pod-group": "big"})

    @staticmethod
    def pod_list(*items):
        return {"apiVersion": "v1", "kind": "PodList", "items": list(items)}

    def test_gangs_all_or_nothing(self):
        with bulkscore.Engine(backend="cpu", tie_break="first") as e:
            e.add_node({"metadata": {"name": "n1"},
                        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
            train = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                     "metadata": {"name": "train", "namespace": "default"},
                     "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 2}}},
                                            {"name": "driver", "policy": {"basic": {}}}]}}
            e.add_object(train)
            with self.assertRaises(bulkscore.AlreadyExists):
                e.add_object(train)
            e.add_object({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                          "metadata": {"name": "big", "namespace": "default"}, "spec": {"minMember": 3}})

            # Windows of pods: 4 changes no result below (0, auto, is the default).
            e.set_window(0)
            e.set_window(4)
            rs = e.schedule_all(self.pod_list(self.worker("w1"), self.pod("x1"), self.worker("w2")))
            self.assertEqual([r.pod for r in rs], ["default/w1", "default/x1", "default/w2"])
            self.assertEqual([r.node for r in rs], ["n1"] * 3)
            self.assertEqual([r.podGroup for r in rs], ["default/train/workers", "", "default/train/workers"])
            self.assertEqual([r.groupOutcome for r in rs], ["admitted", "", "admitted"])

            bigs = self.pod_list(self.big("b1"), self.big("b2"), self.big("b3"))
            self.assertEqual(e.pod_group_status(self.big("b1"), bigs),
                             {"name": "default/big", "api": "PodGroup (scheduling.x-k8s.io/v1alpha1)",
                              "minField": "minMember", "min": 3, "placed": 0, "pending": 3, "rejection": None})
            for r in e.schedule_all(bigs):
                self.assertEqual((r.node, r.code, r.groupOutcome), ("", 2, "rejected"))
                self.assertTrue(r.message.startswith('pod group "default/big" rejected: 1/3 members placed'),
                                r.message)
            self.assertFalse(e.is_assumed_pod("u-b1"))
            self.assertIsNone(e.pod_group_status(self.pod("x2")))

            with self.assertRaises(bulkscore.Error) as cm:
                e.remove_object("PodGroup", "default", "big")
            self.assertEqual(cm.exception.status_name, "BS_INVALID_ARGUMENT")
            e.remove_object("PodGroup.scheduling.x-k8s.io", "default", "big")
            e.remove_object("Workload", "default", "train")
            with self.assertRaises(bulkscore.NotFound):
                e.remove_object("Workload", "default", "train")
            [r] = e.schedule_all(self.pod_list(self.worker("w3")))
            self.assertEqual(r.groupOutcome, "rejected")
            self.assertIn('waiting for pods\'s workload "train"', r.message)
            self.assertTrue(e.is_assumed_pod("u-w1"))


if __name__ == "__main__":
    unittest.main()
