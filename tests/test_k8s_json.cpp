// Reading kubectl-style Node and Pod JSON, and splitting pods into running and
// pending. The fixtures are trimmed copies of what `kubectl get -o json`
// prints, keeping the noise (managedFields, conditions, nodeInfo, ...) that
// the loader must skip.
#include "host/input/k8s_json.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "host/common.hpp"

namespace bulkscore {
namespace {

// gmock is not linked; a plain substring check keeps the message in the output.
#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << "message: " << (text)

// The InputError message `parse` throws, or a failure if it does not throw.
template <typename F>
std::string error_of(F&& parse) {
  try {
    parse();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError thrown";
  return {};
}

std::string node_error(const std::string& json) {
  return error_of([&] { parse_nodes_json(json, "nodes.json"); });
}
std::string pod_error(const std::string& json) {
  return error_of([&] { parse_pods_json(json, "pods.json"); });
}

// A list holding one object.
std::string list_of(const std::string& kind, const std::string& item) {
  return R"({"apiVersion":"v1","kind":")" + kind + R"(","items":[)" + item + "]}";
}

const char* const kKubectlNodes = R"json({
  "apiVersion": "v1",
  "items": [
    {
      "apiVersion": "v1",
      "kind": "Node",
      "metadata": {
        "annotations": {
          "node.alpha.kubernetes.io/ttl": "0",
          "volumes.kubernetes.io/controller-managed-attach-detach": "true"
        },
        "creationTimestamp": "2025-03-01T10:00:00Z",
        "labels": {
          "kubernetes.io/arch": "amd64",
          "kubernetes.io/hostname": "cp-1",
          "kubernetes.io/os": "linux",
          "node-role.kubernetes.io/control-plane": "",
          "topology.kubernetes.io/zone": "us-east-1a"
        },
        "managedFields": [
          {
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/hostname": {}}},
                         "f:status": {"f:allocatable": {"f:cpu": {}}}},
            "manager": "kubelet",
            "operation": "Update",
            "time": "2025-03-01T10:00:00Z"
          }
        ],
        "name": "cp-1",
        "resourceVersion": "81234",
        "uid": "5d0c2f4e-8d2a-4c57-9a1e-0c8f6e2b1a11"
      },
      "spec": {
        "podCIDR": "10.244.0.0/24",
        "podCIDRs": ["10.244.0.0/24"],
        "providerID": "aws:///us-east-1a/i-0abc",
        "taints": [
          {"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"},
          {"effect": "NoExecute", "key": "dedicated", "value": "infra", "timeAdded": "2025-03-01T10:00:00Z"}
        ]
      },
      "status": {
        "addresses": [{"address": "10.0.0.10", "type": "InternalIP"}, {"address": "cp-1", "type": "Hostname"}],
        "allocatable": {
          "cpu": "3920m",
          "ephemeral-storage": "47093746742",
          "hugepages-1Gi": "0",
          "hugepages-2Mi": "0",
          "memory": "15952092Ki",
          "nvidia.com/gpu": "2",
          "pods": "110"
        },
        "capacity": {"cpu": "4", "ephemeral-storage": "51099120Ki", "hugepages-1Gi": "0",
                     "hugepages-2Mi": "0", "memory": "16054492Ki", "pods": "110"},
        "conditions": [
          {"lastHeartbeatTime": "2025-03-02T08:00:00Z", "lastTransitionTime": "2025-03-01T10:01:00Z",
           "message": "kubelet is posting ready status", "reason": "KubeletReady", "status": "True", "type": "Ready"}
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "images": [
          {"names": ["registry.k8s.io/etcd@sha256:44a8e24dcbba3470ee1fee21d5e88d128c936e9b55d4bc51fbef8086f8ed123b",
                     "registry.k8s.io/etcd:3.5.16-0"], "sizeBytes": 57680541},
          {"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 320368}
        ],
        "nodeInfo": {"architecture": "amd64", "bootID": "b1", "containerRuntimeVersion": "containerd://1.7.24",
                     "kernelVersion": "6.1.0-28-cloud-amd64", "kubeProxyVersion": "", "kubeletVersion": "v1.35.4",
                     "machineID": "m1", "operatingSystem": "linux", "osImage": "Debian GNU/Linux 12 (bookworm)",
                     "systemUUID": "s1"}
      }
    },
    {
      "apiVersion": "v1",
      "kind": "Node",
      "metadata": {"name": "worker-1", "labels": {"kubernetes.io/hostname": "worker-1"}},
      "spec": {"unschedulable": true,
               "taints": [{"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable",
                           "timeAdded": "2025-03-02T07:00:00Z"}]},
      "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}}
    }
  ],
  "kind": "List",
  "metadata": {"resourceVersion": ""}
})json";

TEST(NodeJson, ReadsKubectlNodeListIgnoringUnknownFields) {
  const std::vector<Node> nodes = parse_nodes_json(kKubectlNodes, "nodes.json");
  ASSERT_EQ(nodes.size(), 2u);

  const Node& cp = nodes[0];
  EXPECT_EQ(cp.name, "cp-1");
  EXPECT_EQ(cp.labels.size(), 5u);
  EXPECT_EQ(cp.labels.at("topology.kubernetes.io/zone"), "us-east-1a");
  EXPECT_EQ(cp.labels.at("node-role.kubernetes.io/control-plane"), "");
  EXPECT_FALSE(cp.unschedulable);
  ASSERT_EQ(cp.taints.size(), 2u);
  EXPECT_EQ(cp.taints[0].key, "node-role.kubernetes.io/control-plane");
  EXPECT_EQ(cp.taints[0].value, "");
  EXPECT_EQ(cp.taints[0].effect, "NoSchedule");
  EXPECT_EQ(cp.taints[1].key, "dedicated");
  EXPECT_EQ(cp.taints[1].value, "infra");
  EXPECT_EQ(cp.taints[1].effect, "NoExecute");

  const ResourceList expected{{"cpu", 3920},        {"ephemeral-storage", 47093746742}, {"hugepages-1Gi", 0},
                              {"hugepages-2Mi", 0}, {"memory", 15952092LL * 1024},      {"nvidia.com/gpu", 2},
                              {"pods", 110}};
  EXPECT_EQ(cp.allocatable, expected);  // allocatable, not capacity

  ASSERT_EQ(cp.images.size(), 2u);
  EXPECT_EQ(cp.images[0].names.size(), 2u);
  EXPECT_EQ(cp.images[0].names[1], "registry.k8s.io/etcd:3.5.16-0");
  EXPECT_EQ(cp.images[0].size_bytes, 57680541);
  EXPECT_EQ(cp.images[1].names, std::vector<std::string>{"registry.k8s.io/pause:3.10"});
  EXPECT_EQ(cp.images[1].size_bytes, 320368);

  const Node& worker = nodes[1];
  EXPECT_EQ(worker.name, "worker-1");
  EXPECT_TRUE(worker.unschedulable);
  ASSERT_EQ(worker.taints.size(), 1u);
  EXPECT_EQ(worker.taints[0].key, "node.kubernetes.io/unschedulable");
  EXPECT_TRUE(worker.images.empty());
}

TEST(NodeJson, FallsBackToCapacityOnlyWhenAllocatableIsAbsentOrNull) {
  const std::vector<Node> nodes = parse_nodes_json(kKubectlNodes, "nodes.json");
  const ResourceList capacity{{"cpu", 8000}, {"memory", 32LL << 30}, {"pods", 110}};
  EXPECT_EQ(nodes[1].allocatable, capacity);

  const auto allocatable_of = [](const std::string& status) {
    return parse_nodes_json(list_of("NodeList", R"({"metadata":{"name":"n"},"status":)" + status + "}"), "x.json")
        .at(0)
        .allocatable;
  };
  EXPECT_EQ(allocatable_of(R"({"allocatable":null,"capacity":{"cpu":"2"}})"), (ResourceList{{"cpu", 2000}}));
  // Present but empty is not absent: Go decodes it as a non-nil empty map.
  EXPECT_EQ(allocatable_of(R"({"allocatable":{},"capacity":{"cpu":"2"}})"), ResourceList{});
  EXPECT_EQ(allocatable_of(R"({"capacity":{"cpu":"2"},"allocatable":{"cpu":"1"}})"), (ResourceList{{"cpu", 1000}}));
  EXPECT_EQ(allocatable_of("{}"), ResourceList{});
}

TEST(NodeJson, AcceptsNodeListWithoutItemKindsAndSingleNode) {
  const std::vector<Node> from_list = parse_nodes_json(
      R"({"kind":"NodeList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})", "l.json");
  ASSERT_EQ(from_list.size(), 2u);
  EXPECT_EQ(from_list[1].name, "b");

  const std::vector<Node> single = parse_nodes_json(
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"solo"},"status":{"allocatable":{"cpu":"1"}}})", "n.json");
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].name, "solo");
  EXPECT_EQ(single[0].allocatable.at("cpu"), 1000);

  EXPECT_TRUE(parse_nodes_json(R"({"kind":"List","items":[]})", "e.json").empty());
  EXPECT_TRUE(parse_nodes_json(R"({"kind":"NodeList","items":null})", "e.json").empty());
  EXPECT_TRUE(parse_nodes_json(R"({"kind":"NodeList"})", "e.json").empty());
}

TEST(NodeJson, QuantitiesWrittenAsJsonNumbersAreAccepted) {
  const Node node = parse_nodes_json(
      R"({"kind":"Node","metadata":{"name":"n"},"status":{"allocatable":{"cpu":2,"memory":1.5,"pods":110}}})",
      "n.json")[0];
  EXPECT_EQ(node.allocatable.at("cpu"), 2000);
  EXPECT_EQ(node.allocatable.at("memory"), 2);  // Value() rounds 1.5 up
  EXPECT_EQ(node.allocatable.at("pods"), 110);
}

TEST(NodeJson, UnknownTaintEffectIsRefused) {
  const std::string msg = node_error(list_of(
      "NodeList",
      R"({"metadata":{"name":"n1"},"spec":{"taints":[{"key":"a","effect":"NoSchedule"},{"key":"b","effect":"Sometimes"}]}})"));
  EXPECT_EQ(msg,
            "nodes.json: items[0] (Node \"n1\"): spec.taints[1].effect: unknown taint effect \"Sometimes\" "
            "(expected NoSchedule, PreferNoSchedule or NoExecute)");
}

TEST(NodeJson, BadQuantityNamesFileItemNodeAndField) {
  const std::string msg =
      node_error(list_of("List", R"({"kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"12x"}}})"));
  EXPECT_EQ(msg, "nodes.json: items[0] (Node \"n1\"): status.allocatable.cpu: bad quantity \"12x\"");
}

TEST(NodeJson, BadCapacityIsReportedWhenItIsUsed) {
  const std::string msg =
      node_error(list_of("NodeList", R"({"metadata":{"name":"n1"},"status":{"capacity":{"memory":"1 Gi"}}})"));
  EXPECT_CONTAINS(msg, "status.capacity.memory: bad quantity \"1 Gi\"");
}

TEST(NodeJson, NegativeAllocatableIsRefused) {
  const std::string msg =
      node_error(list_of("NodeList", R"({"metadata":{"name":"n1"},"status":{"allocatable":{"memory":"-1Gi"}}})"));
  EXPECT_EQ(msg, "nodes.json: items[0] (Node \"n1\"): status.allocatable.memory: negative quantity \"-1Gi\"");
}

TEST(NodeJson, QuantityBeyondInt64IsRefused) {
  const std::string msg =
      node_error(list_of("NodeList", R"({"metadata":{"name":"n1"},"status":{"allocatable":{"memory":"9Ei"}}})"));
  EXPECT_CONTAINS(msg, "nodes.json: items[0] (Node \"n1\"): status.allocatable.memory: bad quantity \"9Ei\"");
}

TEST(NodeJson, MissingOrEmptyNameIsRefused) {
  EXPECT_EQ(node_error(list_of("NodeList", R"({"metadata":{"name":"a"}},{"metadata":{"labels":{}}})")),
            "nodes.json: items[1]: metadata.name: missing");
  EXPECT_EQ(node_error(list_of("NodeList", R"({"spec":{}})")), "nodes.json: items[0]: metadata.name: missing");
  EXPECT_EQ(node_error(list_of("NodeList", R"({"metadata":{"name":""}})")),
            "nodes.json: items[0]: metadata.name: empty");
  EXPECT_EQ(node_error(list_of("NodeList", R"({"metadata":{"name":null}})")),
            "nodes.json: items[0]: metadata.name: missing");
  EXPECT_EQ(node_error(list_of("NodeList", R"({"metadata":{"name":7}})")),
            "nodes.json: items[0]: metadata.name: expected a string, got an integer");
  EXPECT_EQ(node_error(R"({"kind":"Node","metadata":{}})"), "nodes.json: Node: metadata.name: missing");
}

TEST(NodeJson, WrongTypesAreRefusedWithFieldPath) {
  EXPECT_EQ(node_error(list_of("NodeList", R"({"metadata":{"name":"n1","labels":"zone=a"}})")),
            "nodes.json: items[0] (Node \"n1\"): metadata.labels: expected an object, got a string");
  EXPECT_EQ(node_error(list_of("NodeList", R"({"metadata":{"name":"n1","labels":{"zone":1}}})")),
            "nodes.json: items[0] (Node \"n1\"): metadata.labels.zone: expected a string, got an integer");
  EXPECT_EQ(node_error(list_of("NodeList", R"({"metadata":{"name":"n1"},"spec":{"unschedulable":"yes"}})")),
            "nodes.json: items[0] (Node \"n1\"): spec.unschedulable: expected a boolean, got a string");
  EXPECT_EQ(node_error(list_of("NodeList", R"({"metadata":{"name":"n1"},"spec":{"taints":{"key":"a"}}})")),
            "nodes.json: items[0] (Node \"n1\"): spec.taints: expected an array, got an object");
  EXPECT_EQ(node_error(list_of("NodeList", R"({"metadata":{"name":"n1"},"status":{"images":[{"sizeBytes":"big"}]}})")),
            "nodes.json: items[0] (Node \"n1\"): status.images[0].sizeBytes: expected an integer, got a string");
  EXPECT_EQ(node_error(list_of("NodeList", R"({"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":{"v":1}}}})")),
            "nodes.json: items[0] (Node \"n1\"): status.allocatable.cpu: expected a quantity string, got an object");
  EXPECT_EQ(node_error(list_of("NodeList", R"("n1")")),
            "nodes.json: items[0]: expected an object (a Node), got a string");
  EXPECT_EQ(node_error(R"({"kind":"Node","metadata":{"name":"solo"},"spec":[]})"),
            "nodes.json: Node \"solo\": spec: expected an object, got an array");
}

TEST(NodeJson, MalformedJsonNamesFileAndPosition) {
  const std::string msg =
      node_error("{\n  \"kind\": \"NodeList\",\n  \"items\": [ {\"metadata\": {\"name\": \"a\"}} ,, ]\n}");
  EXPECT_CONTAINS(msg, "nodes.json: invalid JSON: ");
  EXPECT_CONTAINS(msg, "line 3");

  EXPECT_CONTAINS(node_error(R"({"kind":"NodeList","items":[)"), "nodes.json: invalid JSON: ");
  EXPECT_CONTAINS(node_error(""), "nodes.json: invalid JSON: ");
  EXPECT_CONTAINS(node_error(R"({"kind":"NodeList"} {"kind":"NodeList"})"), "nodes.json: invalid JSON: ");
  EXPECT_CONTAINS(node_error(R"({"kind":"NodeList","items":[tru]})"), "nodes.json: invalid JSON: ");
}

TEST(NodeJson, WrongKindIsRefusedNamingFileAndKind) {
  EXPECT_EQ(node_error(R"({"kind":"PodList","items":[]})"),
            "nodes.json: kind \"PodList\": expected Node, NodeList or List");
  EXPECT_EQ(node_error(R"({"kind":"Pod","metadata":{"name":"p"}})"),
            "nodes.json: kind \"Pod\": expected Node, NodeList or List");
  EXPECT_EQ(node_error(R"({"items":[]})"), "nodes.json: kind: missing (expected Node, NodeList or List)");
  EXPECT_EQ(node_error(R"([{"kind":"Node"}])"),
            "nodes.json: expected a JSON object (Node, NodeList or List), got an array");
  EXPECT_EQ(
      node_error(list_of("List", R"({"kind":"Node","metadata":{"name":"a"}},{"kind":"Pod","metadata":{"name":"p"}})")),
      "nodes.json: items[1]: kind \"Pod\": expected Node");
  EXPECT_EQ(node_error(list_of("NodeList", R"({"kind":"Pod","metadata":{"name":"p"}})")),
            "nodes.json: items[0]: kind \"Pod\": expected Node");
  // A generic List says nothing about its items, so each one must.
  EXPECT_EQ(node_error(list_of("List", R"({"metadata":{"name":"a"}})")),
            "nodes.json: items[0]: kind: missing (a List item must be a Node)");
}

TEST(NodeJson, LoadsFromFileAndReportsUnreadableFile) {
  const std::string path = ::testing::TempDir() + "bulkscore_test_nodes.json";
  {
    std::ofstream out(path, std::ios::binary);
    out << kKubectlNodes;
  }
  const std::vector<Node> nodes = load_nodes_json(path);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].name, "cp-1");
  // Errors name the path the file was loaded from.
  const std::string pods_msg = error_of([&] { load_pods_json(path); });
  EXPECT_EQ(pods_msg, path + ": items[0]: kind \"Node\": expected Pod");
  std::remove(path.c_str());

  const std::string missing = ::testing::TempDir() + "bulkscore_no_such_file.json";
  EXPECT_CONTAINS(error_of([&] { load_nodes_json(missing); }), missing + ": cannot read: ");
}

const char* const kKubectlPods = R"json({
  "apiVersion": "v1",
  "items": [
    {
      "apiVersion": "v1",
      "kind": "Pod",
      "metadata": {
        "annotations": {"kubectl.kubernetes.io/restartedAt": "2025-03-01T09:00:00Z"},
        "creationTimestamp": "2025-03-01T10:05:00Z",
        "generateName": "web-7d4b9c8f6d-",
        "labels": {"app": "web", "pod-template-hash": "7d4b9c8f6d"},
        "managedFields": [
          {"apiVersion": "v1", "fieldsType": "FieldsV1",
           "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}}}},
           "manager": "kube-controller-manager", "operation": "Update", "time": "2025-03-01T10:05:00Z"}
        ],
        "name": "web-7d4b9c8f6d-x2x9k",
        "namespace": "shop",
        "ownerReferences": [
          {"apiVersion": "apps/v1", "blockOwnerDeletion": true, "controller": true, "kind": "ReplicaSet",
           "name": "web-7d4b9c8f6d", "uid": "0b6f0d7a-1111-4c4c-8888-3f1f1f1f1f1f"}
        ],
        "resourceVersion": "90210",
        "uid": "8e4c9a52-2222-4d4d-9999-4a4a4a4a4a4a"
      },
      "spec": {
        "containers": [
          {
            "image": "nginx:1.27",
            "imagePullPolicy": "IfNotPresent",
            "name": "nginx",
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "250m", "memory": "128Mi"}},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access-abcde", "readOnly": true}]
          }
        ],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": true,
        "nodeName": "worker-1",
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
          {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
          {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}
        ],
        "volumes": [{"name": "kube-api-access-abcde", "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}]
      },
      "status": {
        "conditions": [{"lastProbeTime": null, "lastTransitionTime": "2025-03-01T10:05:02Z", "status": "True", "type": "Ready"}],
        "containerStatuses": [{"containerID": "containerd://abc", "image": "docker.io/library/nginx:1.27", "imageID": "x",
                               "lastState": {}, "name": "nginx", "ready": true, "restartCount": 0, "started": true,
                               "state": {"running": {"startedAt": "2025-03-01T10:05:01Z"}}}],
        "hostIP": "10.0.0.21",
        "hostIPs": [{"ip": "10.0.0.21"}],
        "phase": "Running",
        "podIP": "10.244.1.7",
        "podIPs": [{"ip": "10.244.1.7"}],
        "qosClass": "Burstable",
        "startTime": "2025-03-01T10:05:00Z"
      }
    },
    {
      "apiVersion": "v1",
      "kind": "Pod",
      "metadata": {
        "name": "batch-0",
        "namespace": "jobs",
        "uid": "u-batch-0",
        "labels": {"app": "batch", "tier": "compute"},
        "deletionTimestamp": "2025-03-02T10:00:00Z"
      },
      "spec": {
        "schedulerName": "bulk-scheduler",
        "priority": 1000,
        "nodeSelector": {"disktype": "ssd"},
        "affinity": {
          "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
              "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a", "us-east-1b"]}]},
                {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["cp-1"]}]}
              ]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
              {"weight": 30, "preference": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}}
            ]
          },
          "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
              {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname",
               "namespaces": ["shop", "jobs"], "matchLabelKeys": ["pod-template-hash"]}
            ]
          },
          "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
              {"weight": 100, "podAffinityTerm": {
                "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["batch"]}]},
                "namespaceSelector": {},
                "topologyKey": "topology.kubernetes.io/zone",
                "mismatchLabelKeys": ["tier"]}}
            ]
          }
        },
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}, {"operator": "Exists"}],
        "topologySpreadConstraints": [
          {"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
           "labelSelector": {"matchLabels": {"app": "batch"}}, "minDomains": 3, "nodeAffinityPolicy": "Ignore",
           "nodeTaintsPolicy": "Honor", "matchLabelKeys": ["pod-template-hash"]},
          {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}
        ],
        "initContainers": [
          {"name": "setup", "image": "busybox:1.36", "resources": {"requests": {"cpu": "1", "memory": "64Mi"}}},
          {"name": "log-shipper", "image": "fluent-bit:3.0", "restartPolicy": "Always",
           "resources": {"requests": {"cpu": "100m", "memory": "32Mi"}}}
        ],
        "containers": [
          {"name": "main", "image": "registry.example.com/batch:2.1",
           "resources": {"requests": {"cpu": "1.5", "memory": "2Gi", "nvidia.com/gpu": "1", "ephemeral-storage": "10G"}},
           "ports": [{"containerPort": 9000, "hostPort": 9000, "protocol": "UDP", "hostIP": "10.0.0.5"}, {"containerPort": 9001}]},
          {"name": "sidecar", "image": "envoy:1.31"}
        ],
        "overhead": {"cpu": "250m", "memory": "120Mi"},
        "resources": {"requests": {"cpu": "4", "memory": "8Gi"}}
      },
      "status": {"phase": "Pending", "nominatedNodeName": "worker-1",
                 "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}
    },
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare"}, "spec": {"containers": [{"name": "c", "image": "pause"}]}}
  ],
  "kind": "List",
  "metadata": {"resourceVersion": ""}
})json";

TEST(PodJson, ReadsRunningDeploymentPodAsKubectlPrintsIt) {
  const std::vector<Pod> pods = parse_pods_json(kKubectlPods, "pods.json");
  ASSERT_EQ(pods.size(), 3u);
  const Pod& web = pods[0];
  EXPECT_EQ(web.name, "web-7d4b9c8f6d-x2x9k");
  EXPECT_EQ(web.namespace_name, "shop");
  EXPECT_EQ(web.key(), "shop/web-7d4b9c8f6d-x2x9k");
  EXPECT_EQ(web.uid, "8e4c9a52-2222-4d4d-9999-4a4a4a4a4a4a");
  EXPECT_EQ(web.labels, (StringMap{{"app", "web"}, {"pod-template-hash", "7d4b9c8f6d"}}));
  EXPECT_EQ(web.annotations.at("kubectl.kubernetes.io/restartedAt"), "2025-03-01T09:00:00Z");
  ASSERT_EQ(web.owner_references.size(), 1u);
  EXPECT_EQ(web.owner_references[0].api_version, "apps/v1");
  EXPECT_EQ(web.owner_references[0].kind, "ReplicaSet");
  EXPECT_EQ(web.owner_references[0].name, "web-7d4b9c8f6d");
  EXPECT_EQ(web.owner_references[0].uid, "0b6f0d7a-1111-4c4c-8888-3f1f1f1f1f1f");
  EXPECT_TRUE(web.owner_references[0].controller);
  EXPECT_FALSE(web.deleting);
  EXPECT_EQ(web.node_name, "worker-1");
  EXPECT_EQ(web.scheduler_name, "default-scheduler");
  EXPECT_EQ(web.phase, "Running");
  EXPECT_EQ(web.priority, 0);
  EXPECT_FALSE(web.has_node_selector);
  EXPECT_FALSE(web.affinity.has_value());
  ASSERT_EQ(web.tolerations.size(), 2u);
  EXPECT_EQ(web.tolerations[1].key, "node.kubernetes.io/unreachable");
  EXPECT_EQ(web.tolerations[1].op, "Exists");
  EXPECT_EQ(web.tolerations[1].effect, "NoExecute");
  ASSERT_EQ(web.containers.size(), 1u);
  EXPECT_EQ(web.containers[0].name, "nginx");
  EXPECT_EQ(web.containers[0].image, "nginx:1.27");
  // Requests only; limits are not requests.
  EXPECT_EQ(web.containers[0].requests, (ResourceList{{"cpu", 250}, {"memory", 128LL << 20}}));
  ASSERT_EQ(web.containers[0].ports.size(), 1u);
  EXPECT_EQ(web.containers[0].ports[0].container_port, 8080);
  EXPECT_EQ(web.containers[0].ports[0].host_port, 0);
  EXPECT_EQ(web.containers[0].ports[0].protocol, "TCP");
  EXPECT_FALSE(web.containers[0].restart_policy_always);
  EXPECT_TRUE(web.init_containers.empty());
  EXPECT_EQ(web.origin, "pods.json: items[0]");
}

TEST(PodJson, ReadsEverySchedulingFieldOfPendingPod) {
  const Pod pod = parse_pods_json(kKubectlPods, "pods.json").at(1);
  EXPECT_EQ(pod.key(), "jobs/batch-0");
  EXPECT_TRUE(pod.deleting);
  EXPECT_EQ(pod.node_name, "");
  EXPECT_EQ(pod.scheduler_name, "bulk-scheduler");
  EXPECT_EQ(pod.priority, 1000);
  EXPECT_EQ(pod.phase, "Pending");
  EXPECT_EQ(pod.nominated_node_name, "worker-1");
  EXPECT_TRUE(pod.has_node_selector);
  EXPECT_EQ(pod.node_selector, (StringMap{{"disktype", "ssd"}}));
  EXPECT_EQ(pod.origin, "pods.json: items[1]");

  ASSERT_TRUE(pod.affinity.has_value());
  const Affinity& a = *pod.affinity;
  ASSERT_TRUE(a.node_affinity.has_value());
  ASSERT_TRUE(a.node_affinity->required.has_value());
  const std::vector<NodeSelectorTerm>& terms = a.node_affinity->required->terms;
  ASSERT_EQ(terms.size(), 2u);
  ASSERT_EQ(terms[0].match_expressions.size(), 1u);
  EXPECT_EQ(terms[0].match_expressions[0].key, "topology.kubernetes.io/zone");
  EXPECT_EQ(terms[0].match_expressions[0].op, "In");
  EXPECT_EQ(terms[0].match_expressions[0].values, (std::vector<std::string>{"us-east-1a", "us-east-1b"}));
  EXPECT_TRUE(terms[0].match_fields.empty());
  ASSERT_EQ(terms[1].match_fields.size(), 1u);
  EXPECT_EQ(terms[1].match_fields[0].key, "metadata.name");
  EXPECT_EQ(terms[1].match_fields[0].op, "NotIn");
  EXPECT_TRUE(a.node_affinity->has_preferred);
  ASSERT_EQ(a.node_affinity->preferred.size(), 1u);
  EXPECT_EQ(a.node_affinity->preferred[0].weight, 30);
  EXPECT_EQ(a.node_affinity->preferred[0].preference.match_expressions[0].op, "Exists");
  EXPECT_TRUE(a.node_affinity->preferred[0].preference.match_expressions[0].values.empty());

  ASSERT_TRUE(a.pod_affinity.has_value());
  ASSERT_EQ(a.pod_affinity->required.size(), 1u);
  EXPECT_TRUE(a.pod_affinity->preferred.empty());
  const PodAffinityTerm& req = a.pod_affinity->required[0];
  ASSERT_TRUE(req.label_selector.has_value());
  EXPECT_EQ(req.label_selector->match_labels, (StringMap{{"app", "cache"}}));
  EXPECT_EQ(req.topology_key, "kubernetes.io/hostname");
  EXPECT_EQ(req.namespaces, (std::vector<std::string>{"shop", "jobs"}));
  EXPECT_FALSE(req.namespace_selector.has_value());
  EXPECT_EQ(req.match_label_keys, std::vector<std::string>{"pod-template-hash"});

  ASSERT_TRUE(a.pod_anti_affinity.has_value());
  EXPECT_TRUE(a.pod_anti_affinity->required.empty());
  ASSERT_EQ(a.pod_anti_affinity->preferred.size(), 1u);
  EXPECT_EQ(a.pod_anti_affinity->preferred[0].weight, 100);
  const PodAffinityTerm& pref = a.pod_anti_affinity->preferred[0].term;
  ASSERT_TRUE(pref.label_selector.has_value());
  // mismatchLabelKeys merged as the API server does at creation: tier NotIn [the pod's tier].
  ASSERT_EQ(pref.label_selector->match_expressions.size(), 2u);
  EXPECT_EQ(pref.label_selector->match_expressions[0].key, "app");
  EXPECT_EQ(pref.label_selector->match_expressions[0].values, std::vector<std::string>{"batch"});
  EXPECT_EQ(pref.label_selector->match_expressions[1].key, "tier");
  EXPECT_EQ(pref.label_selector->match_expressions[1].op, "NotIn");
  // An empty namespaceSelector ({}) selects every namespace; it must stay distinct from absent.
  ASSERT_TRUE(pref.namespace_selector.has_value());
  EXPECT_TRUE(pref.namespace_selector->match_labels.empty());
  EXPECT_EQ(pref.mismatch_label_keys, std::vector<std::string>{"tier"});

  ASSERT_EQ(pod.tolerations.size(), 2u);
  EXPECT_EQ(pod.tolerations[0].key, "dedicated");
  EXPECT_EQ(pod.tolerations[0].op, "Equal");
  EXPECT_EQ(pod.tolerations[0].value, "batch");
  EXPECT_EQ(pod.tolerations[0].effect, "NoSchedule");
  EXPECT_EQ(pod.tolerations[1].key, "");
  EXPECT_EQ(pod.tolerations[1].op, "Exists");
  EXPECT_EQ(pod.tolerations[1].effect, "");

  ASSERT_EQ(pod.topology_spread_constraints.size(), 2u);
  const TopologySpreadConstraint& c0 = pod.topology_spread_constraints[0];
  EXPECT_EQ(c0.max_skew, 2);
  EXPECT_EQ(c0.topology_key, "topology.kubernetes.io/zone");
  EXPECT_EQ(c0.when_unsatisfiable, "DoNotSchedule");
  ASSERT_TRUE(c0.label_selector.has_value());
  EXPECT_EQ(c0.label_selector->match_labels.at("app"), "batch");
  EXPECT_EQ(c0.min_domains, std::optional<int32_t>(3));
  EXPECT_EQ(c0.node_affinity_policy, "Ignore");
  EXPECT_EQ(c0.node_taints_policy, "Honor");
  EXPECT_EQ(c0.match_label_keys, std::vector<std::string>{"pod-template-hash"});
  const TopologySpreadConstraint& c1 = pod.topology_spread_constraints[1];
  EXPECT_EQ(c1.max_skew, 1);
  EXPECT_EQ(c1.when_unsatisfiable, "ScheduleAnyway");
  EXPECT_FALSE(c1.label_selector.has_value());
  EXPECT_FALSE(c1.min_domains.has_value());
  EXPECT_EQ(c1.node_affinity_policy, "");
  EXPECT_EQ(c1.node_taints_policy, "");

  ASSERT_EQ(pod.init_containers.size(), 2u);
  EXPECT_FALSE(pod.init_containers[0].restart_policy_always);
  EXPECT_EQ(pod.init_containers[0].requests, (ResourceList{{"cpu", 1000}, {"memory", 64LL << 20}}));
  EXPECT_TRUE(pod.init_containers[1].restart_policy_always);
  EXPECT_EQ(pod.init_containers[1].name, "log-shipper");
  EXPECT_EQ(pod.init_containers[1].requests, (ResourceList{{"cpu", 100}, {"memory", 32LL << 20}}));

  ASSERT_EQ(pod.containers.size(), 2u);
  EXPECT_EQ(
      pod.containers[0].requests,
      (ResourceList{{"cpu", 1500}, {"memory", 2LL << 30}, {"nvidia.com/gpu", 1}, {"ephemeral-storage", 10000000000}}));
  ASSERT_EQ(pod.containers[0].ports.size(), 2u);
  EXPECT_EQ(pod.containers[0].ports[0].container_port, 9000);
  EXPECT_EQ(pod.containers[0].ports[0].host_port, 9000);
  EXPECT_EQ(pod.containers[0].ports[0].protocol, "UDP");
  EXPECT_EQ(pod.containers[0].ports[0].host_ip, "10.0.0.5");
  EXPECT_EQ(pod.containers[0].ports[1].container_port, 9001);
  EXPECT_EQ(pod.containers[0].ports[1].host_port, 0);
  EXPECT_EQ(pod.containers[0].ports[1].protocol, "");
  EXPECT_EQ(pod.containers[0].ports[1].host_ip, "");
  EXPECT_TRUE(pod.containers[1].requests.empty());

  EXPECT_EQ(pod.overhead, (ResourceList{{"cpu", 250}, {"memory", 120LL << 20}}));
  EXPECT_EQ(pod.pod_level_requests, (ResourceList{{"cpu", 4000}, {"memory", 8LL << 30}}));
}

TEST(PodJson, MissingOptionalFieldsTakeKubernetesDefaults) {
  const Pod pod = parse_pods_json(kKubectlPods, "pods.json").at(2);
  EXPECT_EQ(pod.name, "bare");
  EXPECT_EQ(pod.namespace_name, "default");
  EXPECT_EQ(pod.scheduler_name, "default-scheduler");
  EXPECT_EQ(pod.priority, 0);
  EXPECT_EQ(pod.phase, "");
  EXPECT_EQ(pod.uid, "");
  EXPECT_FALSE(pod.deleting);
  EXPECT_FALSE(pod.has_node_selector);
  EXPECT_FALSE(pod.affinity.has_value());
  EXPECT_TRUE(pod.tolerations.empty());
  EXPECT_TRUE(pod.topology_spread_constraints.empty());
  EXPECT_TRUE(pod.overhead.empty());
  EXPECT_TRUE(pod.pod_level_requests.empty());
  ASSERT_EQ(pod.containers.size(), 1u);
  EXPECT_TRUE(pod.containers[0].requests.empty());
}

TEST(PodJson, NullMeansAbsentAndEmptyMeansPresent) {
  const auto pod_with_spec = [](const std::string& spec) {
    return parse_pods_json(
               R"({"kind":"Pod","metadata":{"name":"p","namespace":"","deletionTimestamp":null},"spec":{"containers":[{"name":"c"}],)" +
                   spec.substr(1) + "}",
               "p.json")
        .at(0);
  };
  const Pod nulls = pod_with_spec(R"({"nodeSelector":null,"affinity":null,"schedulerName":"","priority":null})");
  EXPECT_FALSE(nulls.has_node_selector);
  EXPECT_FALSE(nulls.affinity.has_value());
  EXPECT_FALSE(nulls.deleting);
  EXPECT_EQ(nulls.namespace_name, "default");
  EXPECT_EQ(nulls.scheduler_name, "default-scheduler");

  const Pod empties = pod_with_spec(
      R"({"nodeSelector":{},"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[]}}})");
  EXPECT_TRUE(empties.has_node_selector);
  ASSERT_TRUE(empties.affinity.has_value());
  ASSERT_TRUE(empties.affinity->node_affinity.has_value());
  EXPECT_TRUE(empties.affinity->node_affinity->has_preferred);
  EXPECT_FALSE(empties.affinity->node_affinity->required.has_value());
  EXPECT_FALSE(empties.affinity->pod_affinity.has_value());

  const Pod no_preferred = pod_with_spec(
      R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[]}}}})");
  EXPECT_FALSE(no_preferred.affinity->node_affinity->has_preferred);
  ASSERT_TRUE(no_preferred.affinity->node_affinity->required.has_value());
  EXPECT_TRUE(no_preferred.affinity->node_affinity->required->terms.empty());

  const Pod no_selector = pod_with_spec(
      R"({"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"zone"}]}}})");
  EXPECT_FALSE(no_selector.affinity->pod_affinity->required.at(0).label_selector.has_value());
}

TEST(PodJson, SinglePodAndPodListWithoutItemKindsAreAccepted) {
  const std::vector<Pod> single =
      parse_pods_json(R"({"kind":"Pod","metadata":{"name":"p1"},"spec":{"containers":[{"name":"c"}]}})", "one.json");
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].origin, "one.json");
  const std::vector<Pod> list =
      parse_pods_json(R"({"kind":"PodList","items":[{"metadata":{"name":"a"},"spec":{"containers":[{"name":"c"}]}},
                                                     {"metadata":{"name":"b"},"spec":{"containers":[{"name":"c"}]}}]})",
                      "l.json");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1].origin, "l.json: items[1]");
}

TEST(PodJson, BadQuantityNamesContainerField) {
  const std::string msg = pod_error(list_of("PodList", R"({"metadata":{"name":"p1","namespace":"ns"},
      "spec":{"containers":[{"name":"a","resources":{"requests":{"memory":"1Gi"}}},
                            {"name":"b","resources":{"requests":{"memory":"1.2.3"}}}]}})"));
  EXPECT_EQ(msg,
            "pods.json: items[0] (Pod \"p1\"): spec.containers[1].resources.requests.memory: bad quantity \"1.2.3\"");
  EXPECT_EQ(pod_error(list_of(
                "PodList",
                R"({"metadata":{"name":"p1"},"spec":{"initContainers":[{"resources":{"requests":{"cpu":"Mi"}}}]}})")),
            "pods.json: items[0] (Pod \"p1\"): spec.initContainers[0].resources.requests.cpu: bad quantity \"Mi\": no "
            "digits");
  EXPECT_EQ(pod_error(list_of("PodList", R"({"metadata":{"name":"p1"},"spec":{"overhead":{"cpu":"x"}}})")),
            "pods.json: items[0] (Pod \"p1\"): spec.overhead.cpu: bad quantity \"x\": no digits");
}

TEST(PodJson, NegativeRequestsAreRefused) {
  EXPECT_EQ(pod_error(list_of(
                "PodList",
                R"({"metadata":{"name":"p1"},"spec":{"containers":[{"resources":{"requests":{"cpu":"-100m"}}}]}})")),
            "pods.json: items[0] (Pod \"p1\"): spec.containers[0].resources.requests.cpu: negative quantity \"-100m\"");
  EXPECT_EQ(
      pod_error(list_of("PodList", R"({"metadata":{"name":"p1"},"spec":{"resources":{"requests":{"memory":"-1"}}}})")),
      "pods.json: items[0] (Pod \"p1\"): spec.resources.requests.memory: negative quantity \"-1\"");
}

TEST(PodJson, WrongTypesAreRefusedWithFieldPath) {
  const auto err = [](const std::string& spec) {
    return pod_error(list_of("PodList", R"({"metadata":{"name":"p1"},"spec":)" + spec + "}"));
  };
  EXPECT_EQ(err(R"({"priority":"high"})"),
            "pods.json: items[0] (Pod \"p1\"): spec.priority: expected an integer, got a string");
  EXPECT_EQ(err(R"({"priority":1.5})"),
            "pods.json: items[0] (Pod \"p1\"): spec.priority: expected an integer, got a number");
  EXPECT_EQ(err(R"({"priority":3000000000})"),
            "pods.json: items[0] (Pod \"p1\"): spec.priority: integer out of range: 3000000000");
  EXPECT_EQ(err(R"({"containers":{"name":"a"}})"),
            "pods.json: items[0] (Pod \"p1\"): spec.containers: expected an array, got an object");
  EXPECT_EQ(
      err(R"({"containers":[{"ports":[{"containerPort":"80"}]}]})"),
      "pods.json: items[0] (Pod \"p1\"): spec.containers[0].ports[0].containerPort: expected an integer, got a string");
  EXPECT_EQ(err(R"({"affinity":"yes"})"),
            "pods.json: items[0] (Pod \"p1\"): spec.affinity: expected an object, got a string");
  EXPECT_EQ(
      err(R"({"affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":"w"}]}}})"),
      "pods.json: items[0] (Pod \"p1\"): "
      "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
      "expected an integer, got a string");
  EXPECT_EQ(err(R"({"tolerations":[{"key":1}]})"),
            "pods.json: items[0] (Pod \"p1\"): spec.tolerations[0].key: expected a string, got an integer");
  EXPECT_EQ(
      err(R"({"topologySpreadConstraints":[{"labelSelector":{"matchExpressions":[{"values":"a"}]}}]})"),
      "pods.json: items[0] (Pod \"p1\"): spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].values: "
      "expected an array, got a string");
  EXPECT_EQ(
      pod_error(list_of("PodList", R"({"metadata":{"name":"p1","ownerReferences":[{"controller":"true"}]}})")),
      "pods.json: items[0] (Pod \"p1\"): metadata.ownerReferences[0].controller: expected a boolean, got a string");
}

// The API server's ranges for what the scheduler reads (issue 10): such pods
// cannot exist in a cluster, and bulkscore would compute nonsense for them.
// What the API server's validatePodAffinityTerm refuses, with the field named.
TEST(PodJson, InvalidPodAffinityTermsAreRefused) {
  const auto err = [](const std::string& term) {
    return pod_error(list_of("PodList", R"({"metadata":{"name":"p1"},"spec":{"containers":[{"name":"c"}],)"
                                        R"("affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[)" +
                                            term + "]}}}}"));
  };
  const std::string at = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].";
  EXPECT_CONTAINS(err(R"({"labelSelector":{}})"), at + "topologyKey: required: can not be empty");
  EXPECT_CONTAINS(err(R"({"topologyKey":"zone","labelSelector":{"matchExpressions":[{"key":"a","operator":"In"}]}})"),
                  at + "labelSelector.matchExpressions[0].values: must be specified when `operator` is 'In' or 'NotIn'");
  EXPECT_CONTAINS(
      err(R"({"topologyKey":"zone","labelSelector":{"matchExpressions":[{"key":"a","operator":"Exists","values":["x"]}]}})"),
      at + "labelSelector.matchExpressions[0].values: may not be specified");
  EXPECT_CONTAINS(err(R"({"topologyKey":"zone","namespaceSelector":{"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]}]}})"),
                  at + "namespaceSelector.matchExpressions[0].operator: unsupported value \"Gt\"");
  EXPECT_CONTAINS(err(R"({"topologyKey":"zone","matchLabelKeys":["app"]})"),
                  at + "matchLabelKeys: must not be specified when labelSelector is not set");
  EXPECT_CONTAINS(err(R"({"topologyKey":"zone","labelSelector":{},"matchLabelKeys":["app"],"mismatchLabelKeys":["app"]})"),
                  at + "matchLabelKeys: \"app\" exists in both matchLabelKeys and mismatchLabelKeys");
}

// matchLabelKeys / mismatchLabelKeys join the selector as the API server
// merges them; a pod read back with the requirement already there keeps one.
TEST(PodJson, MatchLabelKeysAreMergedIntoTheSelectorOnce) {
  const std::vector<Pod> pods = parse_pods_json(
      list_of("PodList", R"({"metadata":{"name":"p1","labels":{"app":"web","rev":"7"}},"spec":{"containers":[{"name":"c"}],)"
                         R"("affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[)"
                         R"({"topologyKey":"zone","labelSelector":{"matchExpressions":[{"key":"app","operator":"In","values":["web"]}]},)"
                         R"("matchLabelKeys":["app","missing"],"mismatchLabelKeys":["rev"]}]}}}})"),
      "pods.json");
  const auto& exprs = pods.at(0).affinity->pod_affinity->required.at(0).label_selector->match_expressions;
  ASSERT_EQ(exprs.size(), 2u);  // app In [web] was there already; "missing" is not a label of the pod
  EXPECT_EQ(exprs[1].key, "rev");
  EXPECT_EQ(exprs[1].op, "NotIn");
  EXPECT_EQ(exprs[1].values, std::vector<std::string>{"7"});
}

TEST(PodJson, PreferredAffinityWeightsOutsideOneToHundredAreRefused) {
  const auto err = [](const std::string& affinity) {
    return pod_error(list_of(
        "PodList", R"({"metadata":{"name":"p1"},"spec":{"containers":[{"name":"c"}],"affinity":)" + affinity + "}}"));
  };
  const std::string node_term = R"("preference":{"matchExpressions":[{"key":"a","operator":"Exists"}]})";
  for (const char* w : {"0", "101", "-5"}) {
    EXPECT_EQ(err(R"({"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":)" + std::string(w) +
                  "," + node_term + "}]}}"),
              "pods.json: items[0] (Pod \"p1\"): "
              "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
              "must be in the range [1, 100], got " +
                  std::string(w));
  }
  // An absent weight is 0.
  EXPECT_CONTAINS(err(R"({"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{)" + node_term + "}]}}"),
                  "preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be in the range [1, 100], got 0");
  const std::string pod_term = R"("podAffinityTerm":{"topologyKey":"zone"})";
  EXPECT_CONTAINS(err(R"({"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,)" + pod_term +
                      R"(},{"weight":200,)" + pod_term + "}]}}"),
                  "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[1].weight: must be in "
                  "the range [1, 100], got 200");
  EXPECT_CONTAINS(err(R"({"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":-1,)" +
                      pod_term + "}]}}"),
                  "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be "
                  "in the range [1, 100], got -1");
  // The bounds themselves are fine.
  parse_pods_json(
      list_of("PodList", R"({"metadata":{"name":"p1"},"spec":{"containers":[{"name":"c"}],"affinity":{"nodeAffinity":{)"
                         R"("preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,)" +
                             node_term + R"(},{"weight":100,)" + node_term + "}]}}}}"),
      "pods.json");
}

TEST(PodJson, TopologySpreadConstraintsAreValidatedAsTheApiServerDoes) {
  const auto err = [](const std::string& constraints) {
    return pod_error(list_of(
        "PodList", R"({"metadata":{"name":"p1"},"spec":{"containers":[{"name":"c"}],"topologySpreadConstraints":)" +
                       constraints + "}}"));
  };
  const std::string at = "pods.json: items[0] (Pod \"p1\"): spec.topologySpreadConstraints[0].";
  EXPECT_EQ(err(R"([{"maxSkew":0,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}])"),
            at + "maxSkew: must be greater than 0, got 0");
  EXPECT_EQ(err(R"([{"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}])"),
            at + "maxSkew: must be greater than 0, got 0");
  EXPECT_EQ(err(R"([{"maxSkew":1,"whenUnsatisfiable":"DoNotSchedule"}])"), at + "topologyKey: required");
  EXPECT_EQ(err(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"Never"}])"),
            at + "whenUnsatisfiable: unsupported value \"Never\" (expected DoNotSchedule or ScheduleAnyway)");
  EXPECT_EQ(err(R"([{"maxSkew":1,"topologyKey":"zone"}])"),
            at + "whenUnsatisfiable: unsupported value \"\" (expected DoNotSchedule or ScheduleAnyway)");
  EXPECT_EQ(err(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","minDomains":0}])"),
            at + "minDomains: must be greater than 0, got 0");
  EXPECT_EQ(err(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway","minDomains":2}])"),
            at + "minDomains: may only be set with whenUnsatisfiable DoNotSchedule");
  EXPECT_EQ(
      err(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","nodeTaintsPolicy":"Always"}])"),
      at + "nodeTaintsPolicy: unsupported value \"Always\" (expected Honor or Ignore)");
  EXPECT_CONTAINS(err(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"},)"
                      R"({"maxSkew":2,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}])"),
                  "spec.topologySpreadConstraints[1]: duplicate constraint {zone, DoNotSchedule}");
  // Valid: one per whenUnsatisfiable on the same key, minDomains with DoNotSchedule.
  const std::vector<Pod> pods = parse_pods_json(
      list_of("PodList",
              R"({"metadata":{"name":"p1"},"spec":{"containers":[{"name":"c"}],"topologySpreadConstraints":[)"
              R"({"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","minDomains":3,)"
              R"("nodeAffinityPolicy":"Honor","nodeTaintsPolicy":"Ignore"},)"
              R"({"maxSkew":2,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway"}]}})"),
      "pods.json");
  ASSERT_EQ(pods.at(0).topology_spread_constraints.size(), 2u);
  EXPECT_EQ(pods[0].topology_spread_constraints[0].min_domains, 3);
}

TEST(PodJson, MissingNameAndWrongKindAreRefused) {
  EXPECT_EQ(pod_error(list_of("PodList", R"({"metadata":{"namespace":"ns"}})")),
            "pods.json: items[0]: metadata.name: missing");
  EXPECT_EQ(pod_error(R"({"kind":"Pod","metadata":{"name":""}})"), "pods.json: Pod: metadata.name: empty");
  EXPECT_EQ(pod_error(R"({"kind":"NodeList","items":[]})"),
            "pods.json: kind \"NodeList\": expected Pod, PodList or List");
  EXPECT_EQ(pod_error(R"({"kind":7})"), "pods.json: kind: expected a string, got an integer");
  EXPECT_EQ(pod_error(R"({"kind":"PodList","items":{}})"), "pods.json: items: expected an array, got an object");
  EXPECT_CONTAINS(pod_error(R"({"kind":"PodList","items":[{"metadata":{"name":"a"}}]]})"), "pods.json: invalid JSON: ");
}

// ---- assemble_cluster ----

Node make_node(const std::string& name) {
  Node n;
  n.name = name;
  return n;
}

Pod make_pod(const std::string& ns, const std::string& name, const std::string& node, const std::string& phase,
             const std::string& scheduler = "default-scheduler") {
  Pod p;
  p.namespace_name = ns;
  p.name = name;
  p.node_name = node;
  p.phase = phase;
  p.scheduler_name = scheduler;
  return p;
}

std::vector<std::string> keys(const std::vector<Pod>& pods) {
  std::vector<std::string> out;
  for (const Pod& p : pods) out.push_back(p.key());
  return out;
}

TEST(AssembleCluster, SplitsRunningAndPendingKeepingFileOrder) {
  std::vector<Pod> pods = {
      make_pod("a", "pending-2", "", "Pending"),   make_pod("a", "running-1", "n1", "Running"),
      make_pod("a", "pending-1", "", ""),          make_pod("a", "running-2", "n2", "Pending"),
      make_pod("a", "running-3", "n1", "Unknown"),
  };
  const Cluster c = assemble_cluster({make_node("n1"), make_node("n2")}, std::move(pods), {"default-scheduler"},
                                     "nodes.json", "pods.json");
  EXPECT_EQ(c.nodes.size(), 2u);
  // A bound pod still in phase Pending (e.g. pulling images) already uses its node.
  EXPECT_EQ(keys(c.running_pods), (std::vector<std::string>{"a/running-1", "a/running-2", "a/running-3"}));
  EXPECT_EQ(keys(c.pending_pods), (std::vector<std::string>{"a/pending-2", "a/pending-1"}));
}

TEST(AssembleCluster, DropsRunningPodOnMissingNodeWithWarning) {
  Pod lost = make_pod("shop", "web-1", "gone-node", "Running");
  lost.origin = "pods.json: items[0]";
  const Cluster c = assemble_cluster({make_node("n1")}, {lost, make_pod("shop", "web-2", "n1", "Running")},
                                     {"default-scheduler"}, "nodes.json", "pods.json");
  EXPECT_EQ(keys(c.running_pods), std::vector<std::string>{"shop/web-2"});
  EXPECT_TRUE(c.pending_pods.empty());
  // Returned, not logged: the library does not print.
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_CONTAINS(c.warnings[0], "shop/web-1");
  EXPECT_CONTAINS(c.warnings[0], "gone-node");
  EXPECT_CONTAINS(c.warnings[0], "pods.json: items[0]");
  EXPECT_TRUE(c.notes.empty());
}

TEST(AssembleCluster, IgnoresTerminalPodsAndOtherSchedulersPendingPods) {
  std::vector<Pod> pods = {
      make_pod("a", "done", "n1", "Succeeded"),
      make_pod("a", "crashed", "n1", "Failed"),
      make_pod("a", "failed-unbound", "", "Failed"),
      make_pod("a", "theirs-pending", "", "Pending", "other-scheduler"),
      make_pod("a", "theirs-running", "n1", "Running", "other-scheduler"),
      make_pod("a", "ours-pending", "", "Pending", "bulk"),
      make_pod("a", "default-pending", "", "Pending"),
  };
  const Cluster c =
      assemble_cluster({make_node("n1")}, std::move(pods), {"bulk", "default-scheduler"}, "nodes.json", "pods.json");
  // Pods bound by another scheduler still occupy their node.
  EXPECT_EQ(keys(c.running_pods), std::vector<std::string>{"a/theirs-running"});
  EXPECT_EQ(keys(c.pending_pods), (std::vector<std::string>{"a/ours-pending", "a/default-pending"}));

  // Left out on purpose: a note each, no warning.
  EXPECT_TRUE(c.warnings.empty());
  ASSERT_EQ(c.notes.size(), 4u);
  EXPECT_CONTAINS(c.notes[0], "a/done");
  EXPECT_CONTAINS(c.notes[0], "phase Succeeded");
  EXPECT_CONTAINS(c.notes[3], "a/theirs-pending");
  EXPECT_CONTAINS(c.notes[3], "other-scheduler");

  const Cluster only_bulk =
      assemble_cluster({make_node("n1")}, {make_pod("a", "p", "", "Pending")}, {"bulk"}, "nodes.json", "pods.json");
  EXPECT_TRUE(only_bulk.pending_pods.empty());
}

TEST(AssembleCluster, DuplicateNodeNamesAreRefusedNamingBothItems) {
  const std::string msg = error_of([] {
    assemble_cluster({make_node("a"), make_node("b"), make_node("a")}, {}, {"default-scheduler"}, "nodes.json",
                     "pods.json");
  });
  EXPECT_EQ(msg, "nodes.json: items[0] and items[2] are both Node \"a\"");
}

TEST(AssembleCluster, DuplicatePodNamesAreRefusedButSameNameInOtherNamespaceIsFine) {
  std::vector<Pod> pods = parse_pods_json(
      list_of("PodList", R"({"metadata":{"name":"p","namespace":"x"},"spec":{"containers":[{"name":"c"}]}},
      {"metadata":{"name":"p","namespace":"y"},"spec":{"containers":[{"name":"c"}]}},
      {"metadata":{"name":"q","namespace":"x"},"spec":{"containers":[{"name":"c"}]}},
      {"metadata":{"name":"p","namespace":"x"},"spec":{"containers":[{"name":"c"}]},"status":{"phase":"Succeeded"}})"),
      "pods.json");
  const std::string msg =
      error_of([&] { assemble_cluster({}, pods, {"default-scheduler"}, "nodes.json", "pods.json"); });
  EXPECT_EQ(msg, "pods.json: items[0] and pods.json: items[3] are both Pod \"x/p\"");

  pods.pop_back();
  const Cluster c = assemble_cluster({}, pods, {"default-scheduler"}, "nodes.json", "pods.json");
  EXPECT_EQ(keys(c.pending_pods), (std::vector<std::string>{"x/p", "y/p", "x/q"}));
}

TEST(AssembleCluster, WorksOnParsedKubectlFiles) {
  const Cluster c =
      assemble_cluster(parse_nodes_json(kKubectlNodes, "nodes.json"), parse_pods_json(kKubectlPods, "pods.json"),
                       {"bulk-scheduler"}, "nodes.json", "pods.json");
  EXPECT_EQ(c.nodes.size(), 2u);
  EXPECT_EQ(keys(c.running_pods), std::vector<std::string>{"shop/web-7d4b9c8f6d-x2x9k"});
  // "bare" belongs to default-scheduler, which is not in the list, and
  // "batch-0" is being deleted: upstream does not schedule such pods.
  EXPECT_TRUE(c.pending_pods.empty());
  EXPECT_TRUE(c.warnings.empty());
  ASSERT_EQ(c.notes.size(), 2u);
  EXPECT_CONTAINS(c.notes[0] + c.notes[1], "being deleted");
}

TEST(AssembleCluster, PendingPodBeingDeletedIsNotScheduled) {
  std::vector<Pod> pods = parse_pods_json(kKubectlPods, "pods.json");
  for (auto& p : pods) p.deleting = false;
  const Cluster c = assemble_cluster(parse_nodes_json(kKubectlNodes, "nodes.json"), pods, {"bulk-scheduler"},
                                     "nodes.json", "pods.json");
  EXPECT_EQ(keys(c.pending_pods), std::vector<std::string>{"jobs/batch-0"});
}

}  // namespace
}  // namespace bulkscore

namespace bulkscore {
namespace {

// The API server defaults a container's missing requests to its limits;
// bulkscore does the same for files that were not round-tripped through it.
TEST(PodJson, LimitsWithoutRequestsBecomeRequests) {
  const auto pods = parse_pods_json(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"gpu","namespace":"ml"},"spec":{
        "initContainers":[{"name":"init","image":"busybox","resources":{"limits":{"cpu":"2"}}}],
        "containers":[{"name":"train","image":"trainer","resources":{
          "requests":{"cpu":"500m"},
          "limits":{"cpu":"4","memory":"8Gi","nvidia.com/gpu":"2"}}}]}})",
      "pods.json");
  ASSERT_EQ(pods.size(), 1u);
  const Container& c = pods[0].containers[0];
  EXPECT_EQ(c.requests.at("cpu"), 500);  // an explicit request wins
  EXPECT_EQ(c.requests.at("memory"), 8LL << 30);
  EXPECT_EQ(c.requests.at("nvidia.com/gpu"), 2);
  EXPECT_EQ(pods[0].init_containers[0].requests.at("cpu"), 2000);
}

TEST(PodJson, NegativeLimitIsRefused) {
  EXPECT_THROW(parse_pods_json(R"({"kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[
                 {"name":"c","resources":{"limits":{"cpu":"-1"}}}]}})",
                               "pods.json"),
               InputError);
}

}  // namespace
}  // namespace bulkscore

namespace bulkscore {
namespace {

// What the API server refuses, bulkscore refuses, naming the field.
TEST(ApiValidation, PodsAsTheApiServerValidatesThem) {
  const auto err = [](const std::string& spec, const std::string& metadata_extra = "") {
    return pod_error(list_of("PodList", R"({"metadata":{"name":"p1")" + metadata_extra + R"(},"spec":)" + spec + "}"));
  };
  const std::string at = "pods.json: items[0] (Pod \"p1\"): ";
  EXPECT_EQ(err("{}"), at + "spec.containers: required: a pod has at least one container");
  EXPECT_EQ(err(R"({"containers":[]})"), at + "spec.containers: required: a pod has at least one container");
  EXPECT_EQ(err(R"({"containers":[{"name":"c","ports":[{"containerPort":80,"hostPort":70000}]}]})"),
            at + "spec.containers[0].ports[0].hostPort: must be between 1 and 65535, inclusive, got 70000");
  EXPECT_EQ(err(R"({"containers":[{"name":"c","ports":[{"containerPort":80,"hostPort":-1}]}]})"),
            at + "spec.containers[0].ports[0].hostPort: must be between 1 and 65535, inclusive, got -1");
  EXPECT_EQ(err(R"({"containers":[{"name":"c","ports":[{"hostPort":80}]}]})"),
            at + "spec.containers[0].ports[0].containerPort: must be between 1 and 65535, inclusive, got 0");
  EXPECT_CONTAINS(err(R"({"containers":[{"name":"c","resources":{"requests":{"example.com/gpu":"0.5"}}}]})"),
                  "spec.containers[0].resources.requests.example.com/gpu: must be an integer");
  EXPECT_CONTAINS(err(R"({"containers":[{"name":"c","resources":{"limits":{"example.com/gpu":"1500m"}}}]})"),
                  "must be an integer");
  EXPECT_CONTAINS(err(R"({"containers":[{"name":"c"}]})", R"(,"labels":{"bad key!":"v"})"),
                  "metadata.labels: invalid label key \"bad key!\"");
  EXPECT_CONTAINS(err(R"({"containers":[{"name":"c"}]})", R"(,"labels":{"k":"-bad-"})"),
                  "metadata.labels: invalid value \"-bad-\" of label \"k\"");
  const auto tol = [&](const std::string& t) {
    return err(R"({"containers":[{"name":"c"}],"tolerations":[)" + t + "]}");
  };
  EXPECT_CONTAINS(tol(R"({"operator":"Equal","value":"x"})"), "spec.tolerations[0].operator: must be Exists when");
  EXPECT_CONTAINS(tol(R"({"key":"k","operator":"Exists","value":"x"})"),
                  "spec.tolerations[0].value: must be empty when `operator` is 'Exists'");
  EXPECT_CONTAINS(tol(R"({"key":"k","operator":"Matches"})"), "spec.tolerations[0].operator: unsupported operator");
  EXPECT_CONTAINS(tol(R"({"key":"k","value":"a b"})"), "spec.tolerations[0].value: invalid value");
  EXPECT_CONTAINS(tol(R"({"key":"k","effect":"Sometimes"})"), "spec.tolerations[0].effect: unsupported effect");
  // Fine: whole extended resources, an empty key with Exists, hostPort 0 (none).
  EXPECT_NO_THROW(parse_pods_json(list_of("PodList", R"({"metadata":{"name":"ok"},"spec":{"containers":[{"name":"c",
      "resources":{"requests":{"example.com/gpu":"2","cpu":"0.5"}},"ports":[{"containerPort":80,"hostPort":0}]}],
      "tolerations":[{"operator":"Exists"}]}})"),
                                  "pods.json"));
}

TEST(ApiValidation, NodesAsTheApiServerValidatesThem) {
  const auto err = [](const std::string& body) {
    return error_of(
        [&] { parse_nodes_json(list_of("NodeList", R"({"metadata":{"name":"n1")" + body + "}"), "nodes.json"); });
  };
  EXPECT_CONTAINS(err(R"(},"spec":{"taints":[{"effect":"NoSchedule"}]})"), "spec.taints[0].key: required");
  EXPECT_CONTAINS(err(R"(},"spec":{"taints":[{"key":"a b","effect":"NoSchedule"}]})"),
                  "spec.taints[0].key: invalid key");
  EXPECT_CONTAINS(err(R"(},"spec":{"taints":[{"key":"k","value":"x y","effect":"NoSchedule"}]})"),
                  "spec.taints[0].value: invalid value");
  EXPECT_CONTAINS(err(R"(,"labels":{"zone":"a\u0001"}})"), "metadata.labels: invalid value \"a\\x01\" of label");
}

// kubectl and the API server accept a UTF-8 byte order mark before the JSON.
TEST(ApiValidation, ByteOrderMarkIsAccepted) {
  const std::vector<Node> nodes =
      parse_nodes_json("\xEF\xBB\xBF" + list_of("NodeList", R"({"metadata":{"name":"n1"}})"), "nodes.json");
  EXPECT_EQ(nodes.size(), 1u);
}

// ---- --objects: Services, controllers, Namespaces ---------------------------

TEST(ObjectsJson, ReadsKubectlListOfEveryKind) {
  const std::string json = R"({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop",
      "managedFields": [{"manager": "kubectl"}]},
     "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}], "clusterIP": "10.0.0.1"}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "kubernetes", "namespace": "default"},
     "spec": {"ports": [{"port": 443}]}},
    {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc1", "namespace": "shop"},
     "spec": {"selector": {"app": "old"}, "replicas": 2}},
    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-7d", "namespace": "shop"},
     "spec": {"selector": {"matchLabels": {"app": "web"},
       "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}}},
    {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
     "spec": {"selector": {"matchLabels": {"app": "db"}}}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "skipped"}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "x"}}}
  ]})";
  const ClusterObjects o = parse_objects_json(json, "objects.json");
  ASSERT_EQ(o.selecting.size(), 5u);
  ASSERT_EQ(o.namespaces.size(), 1u);
  EXPECT_EQ(o.namespaces[0].name, "shop");
  EXPECT_EQ(o.namespaces[0].labels.at("team"), "x");
  using K = SelectingObject::Kind;
  EXPECT_EQ(o.selecting[0].kind, K::Service);
  EXPECT_EQ(o.selecting[0].namespace_name, "shop");
  EXPECT_TRUE(o.selecting[0].has_selector);
  EXPECT_EQ(o.selecting[0].selector_map.at("app"), "web");
  EXPECT_EQ(o.selecting[0].origin, "objects.json: items[0]");
  EXPECT_FALSE(o.selecting[1].has_selector);  // a Service without a selector selects nothing
  EXPECT_EQ(o.selecting[2].kind, K::ReplicationController);
  EXPECT_EQ(o.selecting[2].selector_map.at("app"), "old");
  EXPECT_EQ(o.selecting[3].kind, K::ReplicaSet);
  ASSERT_TRUE(o.selecting[3].label_selector);
  EXPECT_EQ(o.selecting[3].label_selector->match_labels.at("app"), "web");
  ASSERT_EQ(o.selecting[3].label_selector->match_expressions.size(), 1u);
  EXPECT_EQ(o.selecting[3].label_selector->match_expressions[0].values.size(), 2u);
  EXPECT_EQ(o.selecting[4].kind, K::StatefulSet);
  EXPECT_EQ(o.selecting[4].namespace_name, "default");
}

TEST(ObjectsJson, TypedListsAndSingleObjects) {
  const ClusterObjects svc = parse_objects_json(
      R"({"kind": "ServiceList", "items": [{"metadata": {"name": "a"}, "spec": {"selector": {}}}]})", "s.json");
  ASSERT_EQ(svc.selecting.size(), 1u);
  EXPECT_TRUE(svc.selecting[0].has_selector);  // empty but present: selects every pod
  EXPECT_TRUE(svc.selecting[0].selector_map.empty());
  const ClusterObjects ns = parse_objects_json(R"({"kind": "Namespace", "metadata": {"name": "n"}})", "n.json");
  ASSERT_EQ(ns.namespaces.size(), 1u);
  const ClusterObjects rs = parse_objects_json(
      R"({"kind": "ReplicaSet", "metadata": {"name": "r", "namespace": "x"},
          "spec": {"selector": {"matchLabels": {"app": "r"}}}})",
      "r.json");
  ASSERT_EQ(rs.selecting.size(), 1u);
  EXPECT_TRUE(rs.selecting[0].label_selector);
  EXPECT_EQ(rs.selecting[0].origin, "r.json");
}

TEST(ObjectsJson, ErrorsNameFileObjectAndField) {
  auto err = [](const std::string& json) { return error_of([&] { parse_objects_json(json, "objects.json"); }); };
  EXPECT_CONTAINS(err(R"({"kind": "List", "items": [{"kind": "Service", "metadata": {"name": "web"},
                     "spec": {"selector": {"app": 3}}}]})"),
                  "objects.json: items[0] (Service \"web\"): spec.selector.app: expected a string, got an integer");
  EXPECT_CONTAINS(err(R"({"kind": "List", "items": [{"kind": "ReplicaSet", "metadata": {"name": "r"},
                     "spec": {"selector": {"matchLabels": []}}}]})"),
                  "objects.json: items[0] (ReplicaSet \"r\"): spec.selector.matchLabels: expected an object");
  EXPECT_CONTAINS(err(R"({"kind": "List", "items": [{"kind": "Service", "metadata": {}}]})"),
                  "objects.json: items[0]: metadata.name: missing");
  EXPECT_CONTAINS(err(R"({"kind": "List", "items": [{"metadata": {"name": "x"}}]})"),
                  "objects.json: items[0]: kind: missing");
  EXPECT_CONTAINS(err(R"({"kind": "ServiceList", "items": [{"kind": "ReplicaSet", "metadata": {"name": "x"}}]})"),
                  "objects.json: items[0]: kind \"ReplicaSet\": expected Service");
  EXPECT_CONTAINS(err(R"({"kind": "NodeList", "items": []})"), "objects.json: kind \"NodeList\": expected");
  EXPECT_CONTAINS(err(R"([1])"), "objects.json: expected a JSON object");
  EXPECT_CONTAINS(err(R"({"kind": "List", "items": [)"), "objects.json: invalid JSON");
}

// ---- issue 20, item 8: what validatePodAffinityTerm, validateTopologySpreadConstraints
// and ValidateLabelSelector refuse (pkg/apis/core/validation, apimachinery's
// meta/v1/validation) ----------------------------------------------------------

std::string pod_with_spec(const std::string& spec_extra, const std::string& labels = "{}") {
  return list_of("PodList", R"({"metadata":{"name":"p1","labels":)" + labels +
                                R"(},"spec":{"containers":[{"name":"c"}])" +
                                (spec_extra.empty() ? "" : "," + spec_extra) + "}}");
}

// v1.36's spec.schedulingGroup (PodSchedulingGroup, a union whose one
// member is podGroupName, a DNS subdomain): read into Pod::scheduling_group,
// refused as the API server refuses it, and refused beside v1.35's
// spec.workloadRef, which v1.36 removed.
TEST(ApiValidation, SchedulingGroupAsTheApiServerValidatesIt) {
  const std::vector<Pod> pods =
      parse_pods_json(pod_with_spec(R"("schedulingGroup":{"podGroupName":"train-0.workers"})"), "pods.json");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].scheduling_group, "train-0.workers");
  EXPECT_EQ(pods[0].workload_name, "");
  // null is absent, as Go's decoder leaves the pointer nil.
  EXPECT_EQ(parse_pods_json(pod_with_spec(R"("schedulingGroup":null)"), "pods.json")[0].scheduling_group, "");
  const std::string at = "pods.json: items[0] (Pod \"p1\"): ";
  EXPECT_EQ(pod_error(pod_with_spec(R"("schedulingGroup":{})")),
            at + "spec.schedulingGroup.podGroupName: required (exactly one of `podGroupName` must be set)");
  EXPECT_EQ(pod_error(pod_with_spec(R"("schedulingGroup":{"podGroupName":null})")),
            at + "spec.schedulingGroup.podGroupName: required (exactly one of `podGroupName` must be set)");
  EXPECT_EQ(pod_error(pod_with_spec(R"("schedulingGroup":{"podGroupName":""})")),
            at + "spec.schedulingGroup.podGroupName: required");
  EXPECT_CONTAINS(pod_error(pod_with_spec(R"("schedulingGroup":{"podGroupName":"Train_0"})")),
                  at + "spec.schedulingGroup.podGroupName: invalid name \"Train_0\": ");
  EXPECT_CONTAINS(pod_error(pod_with_spec(R"("schedulingGroup":{"podGroupName":")" + std::string(254, 'a') + R"("})")),
                  at + "spec.schedulingGroup.podGroupName: invalid name");
  EXPECT_CONTAINS(pod_error(pod_with_spec(R"("schedulingGroup":{"podGroupName":7})")),
                  at + "spec.schedulingGroup.podGroupName: ");
  EXPECT_CONTAINS(pod_error(pod_with_spec(R"("schedulingGroup":"train")")), at + "spec.schedulingGroup: ");
  EXPECT_EQ(pod_error(pod_with_spec(
                R"("workloadRef":{"name":"job","podGroup":"workers"},"schedulingGroup":{"podGroupName":"train"})")),
            at + "spec.schedulingGroup: cannot be set together with spec.workloadRef (v1.36's schedulingGroup "
                 "replaced v1.35's workloadRef; a pod names one pod group)");
}

std::string spread(const std::string& fields, const std::string& labels = "{}") {
  return pod_with_spec(
      R"("topologySpreadConstraints":[{"maxSkew":1,"whenUnsatisfiable":"DoNotSchedule",)" + fields + "}]", labels);
}

std::string anti_affinity(const std::string& term, const std::string& labels = "{}") {
  return pod_with_spec(
      R"("affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[)" + term + "]}}", labels);
}

const std::string kSpreadAt = "pods.json: items[0] (Pod \"p1\"): spec.topologySpreadConstraints[0].";
const std::string kTermAt =
    "pods.json: items[0] (Pod \"p1\"): "
    "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].";

// A pod affinity term's topologyKey is a label key (ValidateLabelName); a
// spread constraint's is only required (ValidateTopologyKey checks that it
// is not empty, nothing more), so bulkscore accepts what the API server
// accepts there, however odd, and shortens it when a message shows it.
TEST(ApiValidation, TopologyKeysAsTheApiServerChecksThem) {
  EXPECT_EQ(pod_error(anti_affinity(R"({"topologyKey":"not a key!","labelSelector":{}})")),
            kTermAt +
                "topologyKey: invalid label key \"not a key!\": the name part may hold only letters, digits, "
                "'-', '_' and '.', and must begin and end with a letter or digit (pattern "
                "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])");
  const std::string huge(5 << 20, 'k');  // 5 MB
  const std::string msg = pod_error(anti_affinity(R"({"topologyKey":")" + huge + R"(","labelSelector":{}})"));
  EXPECT_CONTAINS(msg, kTermAt + "topologyKey: invalid label key \"kkkk");
  EXPECT_CONTAINS(msg, "... (5242880 bytes)");
  EXPECT_LT(msg.size(), 400u) << msg.substr(0, 400);
  // Spread: any non-empty key.
  const std::vector<Pod> pods = parse_pods_json(spread(R"("topologyKey":"not a key!")"), "pods.json");
  EXPECT_EQ(pods.at(0).topology_spread_constraints.at(0).topology_key, "not a key!");
  const std::vector<Pod> big = parse_pods_json(spread(R"("topologyKey":")" + huge + R"(")"), "pods.json");
  EXPECT_EQ(big.at(0).topology_spread_constraints.at(0).topology_key.size(), huge.size());
  // ...and its duplicate is reported in a line, not in 5 MB.
  const std::string dup = pod_error(
      pod_with_spec(R"("topologySpreadConstraints":[{"maxSkew":1,"whenUnsatisfiable":"DoNotSchedule",)"
                    R"("topologyKey":")" +
                    huge + R"("},{"maxSkew":1,"whenUnsatisfiable":"DoNotSchedule","topologyKey":")" + huge + R"("}])"));
  EXPECT_CONTAINS(dup, "spec.topologySpreadConstraints[1]: duplicate constraint {\"kkk");
  EXPECT_LT(dup.size(), 400u) << dup.substr(0, 400);
}

// nodeAffinityPolicy and nodeTaintsPolicy are pointers upstream: null is
// unset, but "" is a value, no defaulting clears it, and
// validateNodeInclusionPolicy refuses it.
TEST(ApiValidation, EmptyNodeInclusionPoliciesAreRefused) {
  EXPECT_EQ(pod_error(spread(R"("topologyKey":"zone","nodeTaintsPolicy":"")")),
            kSpreadAt + "nodeTaintsPolicy: unsupported value \"\" (expected Honor or Ignore)");
  EXPECT_EQ(pod_error(spread(R"("topologyKey":"zone","nodeAffinityPolicy":"")")),
            kSpreadAt + "nodeAffinityPolicy: unsupported value \"\" (expected Honor or Ignore)");
  const std::vector<Pod> pods =
      parse_pods_json(spread(R"("topologyKey":"zone","nodeTaintsPolicy":null,"nodeAffinityPolicy":null)"), "pods.json");
  EXPECT_EQ(pods.at(0).topology_spread_constraints.at(0).node_taints_policy, "");
}

// With MatchLabelKeysInPodTopologySpreadSelectorMerge (beta, on in v1.35)
// the API server validates a spread constraint's matchLabelKeys as a pod
// affinity term's (ValidateMatchLabelKeysAndMismatchLabelKeys): label keys,
// only beside a labelSelector, and, after it merged `key In (value)` for
// each key the pod carries, at most once in the selector.
TEST(ApiValidation, MatchLabelKeysAreValidatedAlikeInSpreadAndAffinity) {
  // Without a labelSelector.
  EXPECT_EQ(pod_error(spread(R"("topologyKey":"zone","matchLabelKeys":["app"])")),
            kSpreadAt + "matchLabelKeys: must not be specified when labelSelector is not set");
  EXPECT_EQ(pod_error(anti_affinity(R"({"topologyKey":"zone","matchLabelKeys":["app"]})")),
            kTermAt + "matchLabelKeys: must not be specified when labelSelector is not set");
  EXPECT_EQ(pod_error(anti_affinity(R"({"topologyKey":"zone","mismatchLabelKeys":["app"]})")),
            kTermAt + "mismatchLabelKeys: must not be specified when labelSelector is not set");
  // [""] and other keys that are not label keys.
  EXPECT_EQ(pod_error(spread(R"("topologyKey":"zone","labelSelector":{},"matchLabelKeys":[""])")),
            kSpreadAt + "matchLabelKeys[0]: invalid label key \"\": the name part must not be empty");
  EXPECT_EQ(pod_error(anti_affinity(R"({"topologyKey":"zone","labelSelector":{},"matchLabelKeys":["app",""]})")),
            kTermAt + "matchLabelKeys[1]: invalid label key \"\": the name part must not be empty");
  EXPECT_CONTAINS(
      pod_error(anti_affinity(R"({"topologyKey":"zone","labelSelector":{},"mismatchLabelKeys":["a/b/c"]})")),
      kTermAt + "mismatchLabelKeys[0]: invalid label key \"a/b/c\"");
  // A key the selector names already, where the merge adds it again.
  const std::string labels = R"({"app":"web"})";
  EXPECT_EQ(
      pod_error(spread(R"("topologyKey":"zone","labelSelector":{"matchLabels":{"app":"web"}},"matchLabelKeys":["app"])",
                       labels)),
      kSpreadAt + "matchLabelKeys[0]: \"app\" exists in both matchLabelKeys and labelSelector");
  EXPECT_EQ(
      pod_error(anti_affinity(
          R"({"topologyKey":"zone","labelSelector":{"matchLabels":{"app":"web"}},"matchLabelKeys":["app"]})", labels)),
      kTermAt + "matchLabelKeys[0]: \"app\" exists in both matchLabelKeys and labelSelector");
  EXPECT_EQ(pod_error(spread(R"("topologyKey":"zone","labelSelector":{},"matchLabelKeys":["app","app"])", labels)),
            kSpreadAt + "matchLabelKeys[1]: \"app\" exists in both matchLabelKeys and labelSelector");
  EXPECT_EQ(pod_error(spread(
                R"("topologyKey":"zone","labelSelector":{"matchLabels":{"app":"web"},)"
                R"("matchExpressions":[{"key":"app","operator":"In","values":["web"]}]},"matchLabelKeys":["app"])")),
            kSpreadAt + "matchLabelKeys[0]: \"app\" exists in both matchLabelKeys and labelSelector");
  // Accepted: a pod as the API server stores it (the merged requirement
  // once), a key the pod does not carry, a key named once elsewhere.
  const std::vector<Pod> pods = parse_pods_json(
      spread(
          R"("topologyKey":"zone","labelSelector":{"matchExpressions":[{"key":"app","operator":"In","values":["web"]}]},)"
          R"("matchLabelKeys":["app","pod-template-hash"])",
          labels),
      "pods.json");
  EXPECT_EQ(pods.at(0).topology_spread_constraints.at(0).match_label_keys.size(), 2u);
  EXPECT_NO_THROW(parse_pods_json(
      spread(R"("topologyKey":"zone","labelSelector":{"matchLabels":{"app":"web"}},"matchLabelKeys":["app"])"),
      "pods.json"));
  EXPECT_NO_THROW(parse_pods_json(
      anti_affinity(R"({"topologyKey":"zone","labelSelector":{"matchLabels":{"tier":"a"}},"matchLabelKeys":["app"]})",
                    labels),
      "pods.json"));
}

// ValidateLabelSelector on create: matchLabels are labels; a requirement's
// key is a label key and its values label values (AllowInvalidLabelValueInSelector
// is false for a new pod); a pod affinity term's namespaces are namespace names.
TEST(ApiValidation, LabelSelectorKeysAndValuesAreLabelKeysAndValues) {
  EXPECT_EQ(pod_error(spread(R"("topologyKey":"zone","labelSelector":{"matchLabels":{"app":"{web}"}})")),
            kSpreadAt +
                "labelSelector.matchLabels: invalid value \"{web}\" of label \"app\": a non-empty label value may "
                "hold only letters, digits, '-', '_' and '.', and must begin and end with a letter or digit "
                "(pattern ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])");
  EXPECT_CONTAINS(pod_error(spread(R"("topologyKey":"zone","labelSelector":{"matchLabels":{"-app":"web"}})")),
                  kSpreadAt + "labelSelector.matchLabels: invalid label key \"-app\"");
  EXPECT_CONTAINS(
      pod_error(
          spread(R"("topologyKey":"zone","labelSelector":{"matchExpressions":[{"key":"a b","operator":"Exists"}]})")),
      kSpreadAt + "labelSelector.matchExpressions[0].key: invalid label key \"a b\"");
  EXPECT_CONTAINS(pod_error(spread(R"("topologyKey":"zone","labelSelector":{"matchExpressions":)"
                                   R"([{"key":"a","operator":"NotIn","values":["ok","not ok"]}]})")),
                  kSpreadAt + "labelSelector.matchExpressions[0].values[1]: invalid value \"not ok\"");
  EXPECT_CONTAINS(pod_error(spread(R"("topologyKey":"zone","labelSelector":{"matchExpressions":)"
                                   R"([{"key":"a","operator":"Gt","values":["1"]}]})")),
                  kSpreadAt + "labelSelector.matchExpressions[0].operator: unsupported value \"Gt\"");
  EXPECT_CONTAINS(pod_error(anti_affinity(R"({"topologyKey":"zone","labelSelector":{"matchExpressions":)"
                                          R"([{"key":"a","operator":"In","values":["x\u001b[2J"]}]}})")),
                  kTermAt + "labelSelector.matchExpressions[0].values[0]: invalid value \"x\\x1b[2J\"");
  EXPECT_CONTAINS(
      pod_error(anti_affinity(R"({"topologyKey":"zone","namespaceSelector":{"matchLabels":{"team":"a/b"}}})")),
      kTermAt + "namespaceSelector.matchLabels: invalid value \"a/b\" of label \"team\"");
  EXPECT_CONTAINS(pod_error(anti_affinity(R"({"topologyKey":"zone","labelSelector":{},"namespaces":["ok","Not_OK"]})")),
                  kTermAt + "namespaces[1]: invalid namespace name \"Not_OK\": must be a lower-case RFC 1123 label");
  EXPECT_NO_THROW(parse_pods_json(
      anti_affinity(R"({"topologyKey":"topology.kubernetes.io/zone","namespaces":["shop","kube-system"],)"
                    R"("labelSelector":{"matchLabels":{"app.kubernetes.io/name":"web","empty":""},)"
                    R"("matchExpressions":[{"key":"example.com/tier","operator":"In","values":["a-1","B_2",""]}]}})"),
      "pods.json"));
}

// Item 15: map keys and values from the input are quoted and shortened in
// every message, and a pod name reaches no terminal raw.
TEST(ApiValidation, MessagesQuoteAndShortenWhatTheyEcho) {
  const std::string key(1 << 20, 'a');
  const std::string msg = pod_error(pod_with_spec("", R"({"\u001b[2J)" + key + R"(":7})"));
  EXPECT_CONTAINS(msg, "pods.json: items[0] (Pod \"p1\"): metadata.labels[\"\\x1b[2Jaaaa");
  EXPECT_CONTAINS(msg, "... (1048580 bytes)]: expected a string, got an integer");
  EXPECT_EQ(msg.find('\x1b'), std::string::npos);
  EXPECT_LT(msg.size(), 300u) << msg.substr(0, 300);
  Pod lost;
  lost.namespace_name = "shop";
  lost.name = "web\x1b]0;owned\x07";
  lost.node_name = "gone\x1b[2J";
  lost.origin = "pods.json: items[0]";
  Pod theirs = lost;
  theirs.name = "theirs";
  theirs.node_name.clear();
  theirs.scheduler_name = "sched\x1b[1m";
  const Cluster c = assemble_cluster({}, {lost, theirs}, {"default-scheduler"}, "nodes.json", "pods.json");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0],
            "dropping pod \"shop/web\\x1b]0;owned\\x07\" (pods.json: items[0]): it runs on node "
            "\"gone\\x1b[2J\", which is not in nodes.json");
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_EQ(c.notes[0].find('\x1b'), std::string::npos) << c.notes[0];
}

// ---- issue 20, item 11: --objects as the API server would have held them ----

std::string objects_error(const std::string& items) {
  return error_of([&] { parse_objects_json(R"({"kind":"List","items":[)" + items + "]}", "objects.json"); });
}

TEST(ObjectsJson, DuplicatesAreRefusedNamingBothItems) {
  const std::string svc =
      R"({"kind":"Service","metadata":{"name":"web","namespace":"shop"},"spec":{"selector":{"app":"web"}}})";
  EXPECT_EQ(
      objects_error(svc + "," + svc),
      "objects.json: items[1] (Service \"web\"): metadata.name: Service \"shop/web\" is also objects.json: items[0]");
  const std::string ns = R"({"kind":"Namespace","metadata":{"name":"shop"}})";
  EXPECT_EQ(
      objects_error(ns + "," + svc + "," + ns),
      "objects.json: items[2] (Namespace \"shop\"): metadata.name: Namespace \"shop\" is also objects.json: items[0]");
  const std::string rs =
      R"({"kind":"ReplicaSet","metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"a":"b"}}}})";
  EXPECT_CONTAINS(objects_error(rs + "," + rs), "ReplicaSet \"default/web\" is also objects.json: items[0]");
  // One name in two namespaces, or for two kinds, is two objects.
  const ClusterObjects o =
      parse_objects_json(R"({"kind":"List","items":[)" + svc + R"(,{"kind":"Service","metadata":{"name":"web"}},)" +
                             rs + "," + ns + R"(,{"kind":"Namespace","metadata":{"name":"web"}}]})",
                         "objects.json");
  EXPECT_EQ(o.selecting.size(), 3u);
  EXPECT_EQ(o.namespaces.size(), 2u);
  // Across --objects files, read into one ClusterObjects.
  ClusterObjects both = parse_objects_json(R"({"kind":"List","items":[)" + ns + "]}", "a.json");
  const std::string path = ::testing::TempDir() + "objects-dup-" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << ns;
  EXPECT_EQ(error_of([&] { load_objects_json(path, both); }),
            path + ": Namespace \"shop\": metadata.name: Namespace \"shop\" is also a.json: items[0]");
  std::remove(path.c_str());
  // The same through parse_objects_json appending to one set.
  ClusterObjects set;
  parse_objects_json(svc, "one.json", set);
  EXPECT_EQ(error_of([&] { parse_objects_json(svc, "two.json", set); }),
            "two.json: Service \"web\": metadata.name: Service \"shop/web\" is also one.json");
  EXPECT_EQ(set.selecting.size(), 1u);
}

TEST(ObjectsJson, SelectorsAndLabelsAsTheApiServerValidatesThem) {
  const std::string at = "objects.json: items[0] ";
  // ReplicaSets and StatefulSets: a selector is required, strict, not empty.
  EXPECT_EQ(objects_error(R"({"kind":"ReplicaSet","metadata":{"name":"r"},"spec":{}})"),
            at + "(ReplicaSet \"r\"): spec.selector: required");
  EXPECT_EQ(objects_error(R"({"kind":"StatefulSet","metadata":{"name":"s"},"spec":{"selector":null}})"),
            at + "(StatefulSet \"s\"): spec.selector: required");
  EXPECT_EQ(
      objects_error(R"({"kind":"ReplicaSet","metadata":{"name":"r"},"spec":{"selector":{}}})"),
      at + "(ReplicaSet \"r\"): spec.selector: must not be empty (an empty selector is invalid for a ReplicaSet)");
  EXPECT_CONTAINS(objects_error(R"({"kind":"ReplicaSet","metadata":{"name":"r"},"spec":{"selector":)"
                                R"({"matchExpressions":[{"key":"app","operator":"In"}]}}})"),
                  at + "(ReplicaSet \"r\"): spec.selector.matchExpressions[0].values: must be specified");
  EXPECT_CONTAINS(objects_error(R"({"kind":"ReplicaSet","metadata":{"name":"r"},"spec":{"selector":)"
                                R"({"matchExpressions":[{"key":"app","operator":"Matches","values":["x"]}]}}})"),
                  at + "(ReplicaSet \"r\"): spec.selector.matchExpressions[0].operator: unsupported value \"Matches\"");
  EXPECT_CONTAINS(objects_error(R"({"kind":"StatefulSet","metadata":{"name":"s"},"spec":{"selector":)"
                                R"({"matchLabels":{"app":"x y"}}}})"),
                  at + "(StatefulSet \"s\"): spec.selector.matchLabels: invalid value \"x y\" of label \"app\"");
  // Services: a selector is a set of labels; an RC's is a non-empty one.
  EXPECT_CONTAINS(objects_error(R"({"kind":"Service","metadata":{"name":"web"},"spec":{"selector":{"a b":"x"}}})"),
                  at + "(Service \"web\"): spec.selector: invalid label key \"a b\"");
  EXPECT_EQ(objects_error(R"({"kind":"ReplicationController","metadata":{"name":"rc"},"spec":{"selector":{}}})"),
            at + "(ReplicationController \"rc\"): spec.selector: required: a ReplicationController selects its pods");
  // Namespaces: their labels are labels.
  EXPECT_CONTAINS(objects_error(R"({"kind":"Namespace","metadata":{"name":"ns","labels":{"team":"a b"}}})"),
                  at + "(Namespace \"ns\"): metadata.labels: invalid value \"a b\" of label \"team\"");
}

// Object names as the API server requires them of each kind: a Namespace's
// a DNS-1123 label, a Service's a DNS-1035 label, the controllers' and a
// custom resource's (SharedDeviceGroup) a DNS-1123 subdomain; and the
// namespace an object lives in a namespace name.
TEST(ObjectsJson, NamesAsTheApiServerRequiresThem) {
  const std::string at = "objects.json: items[0] ";
  EXPECT_CONTAINS(objects_error(R"({"kind":"Namespace","metadata":{"name":"a.b"}})"),
                  at + "(Namespace \"a.b\"): metadata.name: invalid name \"a.b\": must be a lower-case RFC 1123 label");
  EXPECT_CONTAINS(objects_error(R"({"kind":"Service","metadata":{"name":"1web"}})"),
                  at + "(Service \"1web\"): metadata.name: invalid name \"1web\": must be a lower-case RFC 1035 label");
  EXPECT_CONTAINS(
      objects_error(R"({"kind":"SharedDeviceGroup","apiVersion":"deviceshare.io/v1alpha1",)"
                    R"("metadata":{"name":"-"},"spec":{"resources":{"nvidia.com/gpu":1}}})"),
      at + "(SharedDeviceGroup \"-\"): metadata.name: invalid name \"-\": must be a lower-case RFC 1123 subdomain");
  EXPECT_CONTAINS(
      objects_error(R"({"kind":"ReplicaSet","metadata":{"name":"Web"},"spec":{"selector":{"matchLabels":{"a":"b"}}}})"),
      at + "(ReplicaSet \"Web\"): metadata.name: invalid name \"Web\"");
  EXPECT_CONTAINS(objects_error(R"({"kind":"Service","metadata":{"name":"web","namespace":"Shop"}})"),
                  at + "(Service \"web\"): metadata.namespace: invalid namespace name \"Shop\"");
  EXPECT_NO_THROW(parse_objects_json(
      R"({"kind":"List","items":[{"kind":"StatefulSet","metadata":{"name":"db.v1","namespace":"shop"},)"
      R"("spec":{"selector":{"matchLabels":{"app":"db"}}}},{"kind":"Service","metadata":{"name":"db-0"}},)"
      R"({"kind":"Namespace","metadata":{"name":"kube-system"}}]})",
      "objects.json"));
}

}  // namespace
}  // namespace bulkscore
