// Pod groups for gang scheduling as input (issue 23, item 2): a Workload
// (scheduling.k8s.io/v1alpha1), a standalone PodGroup
// (scheduling.k8s.io/v1alpha2) and a Coscheduling PodGroup
// (scheduling.x-k8s.io/v1alpha1) read from --objects into one shape, and
// bad objects rejected as the API server would, naming the file, the object
// and the field.
#include <gtest/gtest.h>

#include <string>

#include "host/common.hpp"
#include "host/input/k8s_json.hpp"

namespace bulkscore {
namespace {

std::string objects_error(const std::string& json) {
  try {
    parse_objects_json(json, "objects.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void expect_objects_error(const std::string& json, const std::string& fragment) {
  const std::string what = objects_error(json);
  EXPECT_NE(what.find(fragment), std::string::npos) << "error: " << what << "\nwanted: " << fragment;
}

TEST(PodGroupObjects, ReadsTheThreeApis) {
  const ClusterObjects o = parse_objects_json(R"({"kind":"List","items":[
    {"apiVersion":"scheduling.k8s.io/v1alpha1","kind":"Workload","metadata":{"name":"job","namespace":"ml"},
     "spec":{"podGroups":[{"name":"workers","policy":{"gang":{"minCount":4}}},{"name":"ps","policy":{"basic":{}}}]}},
    {"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":"train"},
     "spec":{"schedulingPolicy":{"gang":{"minCount":3}}}},
    {"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"train"},
     "spec":{"minMember":2,"minResources":{"cpu":"3","memory":"1Gi"},"scheduleTimeoutSeconds":10}}]})",
                                              "objects.json");
  ASSERT_EQ(o.pod_groups.size(), 4u);
  const PodGroupObject& w = o.pod_groups[0];
  EXPECT_EQ(w.api, PodGroupObject::Api::kWorkload);
  EXPECT_EQ(w.key(), "ml/job/workers");
  EXPECT_TRUE(w.gang);
  EXPECT_EQ(w.min_count, 4);
  EXPECT_EQ(o.pod_groups[1].key(), "ml/job/ps");
  EXPECT_FALSE(o.pod_groups[1].gang);
  const PodGroupObject& p = o.pod_groups[2];
  EXPECT_EQ(p.api, PodGroupObject::Api::kPodGroup);
  EXPECT_EQ(p.key(), "default/train");
  EXPECT_TRUE(p.gang);
  EXPECT_EQ(p.min_count, 3);
  const PodGroupObject& c = o.pod_groups[3];
  EXPECT_EQ(c.api, PodGroupObject::Api::kCoscheduling);
  EXPECT_TRUE(c.gang);
  EXPECT_EQ(c.min_count, 2);
  EXPECT_EQ(c.min_resources.at("cpu"), 3000);
  EXPECT_EQ(c.min_resources.at("memory"), int64_t{1} << 30);
  EXPECT_EQ(c.schedule_timeout_seconds, 10);
}

TEST(PodGroupObjects, BadObjectsNameTheFileTheObjectAndTheField) {
  const std::string workload = R"({"apiVersion":"scheduling.k8s.io/v1alpha1","kind":"Workload","metadata":{"name":"w"},)";
  expect_objects_error(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"Workload","metadata":{"name":"w"},
                          "spec":{"podGroups":[{"name":"a","policy":{"basic":{}}}]}})",
                       "apiVersion: expected scheduling.k8s.io/v1alpha1");
  expect_objects_error(workload + R"("spec":{}})", "spec.podGroups: must have at least one item");
  expect_objects_error(workload + R"("spec":{"podGroups":[]}})", "spec.podGroups: must have at least one item");
  std::string nine;
  for (int i = 0; i < 9; ++i)
    nine += std::string(i ? "," : "") + R"({"name":"g)" + std::to_string(i) + R"(","policy":{"basic":{}}})";
  expect_objects_error(workload + R"("spec":{"podGroups":[)" + nine + "]}}", "must have at most 8 items");
  expect_objects_error(workload + R"("spec":{"podGroups":[{"name":"a","policy":{}}]}})",
                       "spec.podGroups[0].policy: exactly one of `basic`, `gang` is required");
  expect_objects_error(workload + R"("spec":{"podGroups":[{"name":"a","policy":{"basic":{},"gang":{"minCount":1}}}]}})",
                       "multiple fields are set");
  expect_objects_error(workload + R"("spec":{"podGroups":[{"name":"a","policy":{"gang":{"minCount":0}}}]}})",
                       "spec.podGroups[0].policy.gang.minCount: must be greater than zero");
  expect_objects_error(workload + R"("spec":{"podGroups":[{"name":"a","policy":{"gang":{}}}]}})",
                       "policy.gang.minCount: must be greater than zero");
  expect_objects_error(workload + R"("spec":{"podGroups":[{"name":"A_b","policy":{"basic":{}}}]}})",
                       "spec.podGroups[0].name: invalid name \"A_b\"");
  expect_objects_error(workload + R"("spec":{"podGroups":[{"name":"a","policy":{"basic":{}}},
                                                          {"name":"a","policy":{"basic":{}}}]}})",
                       "spec.podGroups[1].name: duplicate value \"a\"");
  expect_objects_error(R"({"apiVersion":"scheduling.example.io/v1","kind":"PodGroup","metadata":{"name":"p"}})",
                       "expected scheduling.k8s.io/v1alpha2 or scheduling.x-k8s.io/v1alpha1");
  expect_objects_error(R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":"p"},
                          "spec":{}})",
                       "spec.schedulingPolicy: exactly one of `basic`, `gang` is required");
  expect_objects_error(R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"p"},
                          "spec":{"minMember":-1}})",
                       "spec.minMember: must be a non-negative 32-bit integer");
  expect_objects_error(R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"p"},
                          "spec":{"minResources":{"cpu":"lots"}}})",
                       "spec.minResources.cpu");
  // One object of each kind, namespace and name; the two PodGroup APIs are
  // different resources.
  expect_objects_error(R"({"kind":"List","items":[
      {"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"p"},"spec":{"minMember":1}},
      {"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"p"},"spec":{"minMember":2}}]})",
                       "PodGroup \"default/p\" is also objects.json: items[0]");
  EXPECT_EQ(objects_error(R"({"kind":"List","items":[
      {"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"p"},"spec":{"minMember":1}},
      {"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":"p"},
       "spec":{"policy":{"basic":{}}}}]})"),
            "");
  // The messages name the file and the object.
  const std::string what = objects_error(workload + R"("spec":{}})");
  EXPECT_NE(what.find("objects.json"), std::string::npos) << what;
  EXPECT_NE(what.find("\"w\""), std::string::npos) << what;
}

// v1.36's PodGroup (scheduling.k8s.io/v1alpha2) as kubectl prints it:
// spec.schedulingPolicy read, the fields that do not bear on a bulk run
// (podGroupTemplateRef, schedulingConstraints, resourceClaims,
// disruptionMode, priority) and status passed over; `spec.policy`, the name
// bulkscore read before v1.36, still taken, but not beside schedulingPolicy.
TEST(PodGroupObjects, V1alpha2PodGroupAsV136WritesIt) {
  const ClusterObjects o = parse_objects_json(R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroupList",
    "items":[
    {"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":"job-0","namespace":"ml"},
     "spec":{"podGroupTemplateRef":{"workload":{"workloadName":"job","podGroupTemplateName":"workers"}},
             "schedulingPolicy":{"gang":{"minCount":4}},
             "schedulingConstraints":{"topology":[{"key":"topology.kubernetes.io/rack"}]},
             "disruptionMode":"PodGroup","priorityClassName":"high","priority":1000},
     "status":{"conditions":[{"type":"PodGroupScheduled","status":"False","reason":"Unschedulable",
                              "lastTransitionTime":"2026-11-27T08:00:00Z","message":""}]}},
    {"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":"job-1","namespace":"ml"},
     "spec":{"schedulingPolicy":{"basic":{}}}},
    {"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":"old","namespace":"ml"},
     "spec":{"policy":{"gang":{"minCount":2}}}}]})",
                                              "objects.json");
  ASSERT_EQ(o.pod_groups.size(), 3u);
  EXPECT_EQ(o.pod_groups[0].api, PodGroupObject::Api::kPodGroup);
  EXPECT_EQ(o.pod_groups[0].key(), "ml/job-0");
  EXPECT_TRUE(o.pod_groups[0].gang);
  EXPECT_EQ(o.pod_groups[0].min_count, 4);
  EXPECT_FALSE(o.pod_groups[1].gang);
  EXPECT_TRUE(o.pod_groups[2].gang);
  EXPECT_EQ(o.pod_groups[2].min_count, 2);
  const std::string head = R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":"p"},)";
  EXPECT_EQ(objects_error(head + R"("spec":{"schedulingPolicy":{"gang":{"minCount":0}}}})"),
            "objects.json: PodGroup \"p\": spec.schedulingPolicy.gang.minCount: must be greater than zero, got 0");
  expect_objects_error(
      head + R"("spec":{"schedulingPolicy":{"basic":{},"gang":{"minCount":1}}}})",
      "spec.schedulingPolicy: exactly one of `basic`, `gang` is required, but multiple fields are set");
  expect_objects_error(head + R"("spec":{"schedulingPolicy":{}}})",
                       "spec.schedulingPolicy: exactly one of `basic`, `gang` is required");
  expect_objects_error(head + R"("spec":{"policy":{"basic":{}},"schedulingPolicy":{"basic":{}}}})",
                       "spec.schedulingPolicy: cannot be set together with spec.policy");
  expect_objects_error(head + R"("spec":{"podGroupTemplateRef":{"workload":{"workloadName":"job"}}}})",
                       "spec.schedulingPolicy: exactly one of `basic`, `gang` is required");
}

// v1.36's Workload (scheduling.k8s.io/v1alpha2): spec.podGroupTemplates[]
// {name, schedulingPolicy} validated as v1alpha1's podGroups[] are; no group
// of its own (pods name the PodGroups made from its templates), but it is
// one object: the same Workload twice, in one file or two, is refused.
TEST(PodGroupObjects, V1alpha2WorkloadIsValidatedAndAddsNoGroup) {
  const std::string workload = R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"Workload",
    "metadata":{"name":"job","namespace":"ml"},)";
  ClusterObjects o =
      parse_objects_json(workload + R"("spec":{"controllerRef":{"apiGroup":"batch","kind":"Job","name":"job"},
        "podGroupTemplates":[{"name":"workers","schedulingPolicy":{"gang":{"minCount":4}}},
                             {"name":"ps","schedulingPolicy":{"basic":{}}}]}})",
                         "objects.json");
  EXPECT_TRUE(o.pod_groups.empty());
  ASSERT_EQ(o.template_workloads.size(), 1u);
  EXPECT_EQ(o.template_workloads[0].namespace_name, "ml");
  EXPECT_EQ(o.template_workloads[0].name, "job");
  EXPECT_EQ(objects_error(workload + R"("spec":{}})"),
            "objects.json: Workload \"job\": spec.podGroupTemplates: must have at least one item");
  expect_objects_error(workload + R"("spec":{"podGroups":[{"name":"a","policy":{"basic":{}}}]}})",
                       "spec.podGroupTemplates: must have at least one item");
  expect_objects_error(workload + R"("spec":{"podGroupTemplates":[{"name":"a"}]}})",
                       "spec.podGroupTemplates[0].schedulingPolicy: exactly one of `basic`, `gang` is required");
  expect_objects_error(workload + R"("spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"gang":{}}}]}})",
                       "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: must be greater than zero");
  expect_objects_error(workload + R"("spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"basic":{}}},
                                                                  {"name":"a","schedulingPolicy":{"basic":{}}}]}})",
                       "spec.podGroupTemplates[1].name: duplicate value \"a\"");
  expect_objects_error(workload + R"("spec":{"podGroupTemplates":[{"schedulingPolicy":{"basic":{}}}]}})",
                       "spec.podGroupTemplates[0].name: required");
  std::string nine;
  for (int i = 0; i < 9; ++i)
    nine += std::string(i ? "," : "") + R"({"name":"g)" + std::to_string(i) + R"(","schedulingPolicy":{"basic":{}}})";
  expect_objects_error(workload + R"("spec":{"podGroupTemplates":[)" + nine + "]}}", "must have at most 8 items");
  expect_objects_error(R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"Workload","metadata":{"name":"w"}})",
                       "apiVersion: expected scheduling.k8s.io/v1alpha1 or scheduling.k8s.io/v1alpha2, got");
  // One resource, two versions: the same name twice is the same object.
  const std::string again =
      workload + R"("spec":{"podGroupTemplates":[{"name":"w","schedulingPolicy":{"basic":{}}}]}})";
  try {
    parse_objects_json(again, "more.json", o);
    ADD_FAILURE() << "the same Workload read twice was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Workload \"ml/job\" is also objects.json"), std::string::npos) << e.what();
  }
  expect_objects_error(R"({"kind":"List","items":[
      {"apiVersion":"scheduling.k8s.io/v1alpha1","kind":"Workload","metadata":{"name":"w"},
       "spec":{"podGroups":[{"name":"a","policy":{"basic":{}}}]}},
      {"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"Workload","metadata":{"name":"w"},
       "spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"basic":{}}}]}}]})",
                       "Workload \"default/w\" is also objects.json: items[0]");
}

// A pod's spec.workloadRef (v1.35): name a DNS subdomain, podGroup and
// podGroupReplicaKey DNS labels, name and podGroup required.
TEST(PodGroupObjects, PodsJoinWithWorkloadRef) {
  const std::string head = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"w-0","namespace":"ml"},"spec":{)";
  const Pod p = parse_pod_object_json(
      head + R"("containers":[{"name":"c"}],"workloadRef":{"name":"job","podGroup":"workers","podGroupReplicaKey":"r1"}}})",
      "pods.json");
  EXPECT_EQ(p.workload_name, "job");
  EXPECT_EQ(p.workload_pod_group, "workers");
  EXPECT_EQ(p.workload_replica_key, "r1");
  auto error = [&](const std::string& ref) {
    try {
      parse_pod_object_json(head + R"("containers":[{"name":"c"}],"workloadRef":)" + ref + "}}", "pods.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error(R"({"podGroup":"workers"})").find("spec.workloadRef.name: required"), std::string::npos);
  EXPECT_NE(error(R"({"name":"job"})").find("spec.workloadRef.podGroup: required"), std::string::npos);
  EXPECT_NE(error(R"({"name":"job","podGroup":"Workers"})").find("spec.workloadRef.podGroup: invalid name"),
            std::string::npos);
  EXPECT_NE(error(R"({"name":"job","podGroup":"w","podGroupReplicaKey":"a.b"})")
                .find("spec.workloadRef.podGroupReplicaKey: invalid name"),
            std::string::npos);
}

// Topology-aware gangs' annotations (issue 23, item 4; docs/plugins.md
// "Topology-aware gangs").
TEST(GangTopologyInput, AnnotationsOnWorkloadsAndPodGroups) {
  const ClusterObjects o = parse_objects_json(R"({"kind":"List","items":[
    {"apiVersion":"scheduling.k8s.io/v1alpha1","kind":"Workload",
     "metadata":{"name":"job","namespace":"ml","annotations":{"bulkscore.io/gang-required-topology":"example.com/rack"}},
     "spec":{"podGroups":[{"name":"workers","policy":{"gang":{"minCount":4}}},{"name":"ps","policy":{"basic":{}}}]}},
    {"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup",
     "metadata":{"name":"train","annotations":{"bulkscore.io/gang-preferred-topology":"topology.kubernetes.io/zone"}},
     "spec":{"policy":{"gang":{"minCount":3}}}},
    {"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"plain"},
     "spec":{"minMember":2}}]})",
                                              "objects.json");
  ASSERT_EQ(o.pod_groups.size(), 4u);
  // Both of the Workload's groups take its annotation.
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(o.pod_groups[i].topology_key, "example.com/rack");
    EXPECT_TRUE(o.pod_groups[i].topology_required);
  }
  EXPECT_EQ(o.pod_groups[2].topology_key, "topology.kubernetes.io/zone");
  EXPECT_FALSE(o.pod_groups[2].topology_required);
  EXPECT_EQ(o.pod_groups[3].topology_key, "");
}

TEST(GangTopologyInput, BadAnnotationsAreRefusedNamingTheField) {
  const auto group = [](const std::string& annotations) {
    return R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":"g","annotations":)" +
           annotations + R"(},"spec":{"policy":{"gang":{"minCount":2}}}})";
  };
  EXPECT_EQ(objects_error(group(
                R"({"bulkscore.io/gang-required-topology":"rack","bulkscore.io/gang-preferred-topology":"zone"})")),
            "objects.json: PodGroup \"g\": metadata.annotations.bulkscore.io/gang-preferred-topology: at most "
            "one of bulkscore.io/gang-required-topology and bulkscore.io/gang-preferred-topology may be set");
  const std::string bad = objects_error(group(R"({"bulkscore.io/gang-required-topology":"not a key"})"));
  EXPECT_NE(bad.find("metadata.annotations.bulkscore.io/gang-required-topology: invalid node label key \"not a key\""),
            std::string::npos)
      << bad;
  EXPECT_NE(objects_error(group(R"({"bulkscore.io/gang-preferred-topology":""})")).find("invalid node label key"),
            std::string::npos);
}

}  // namespace
}  // namespace bulkscore
