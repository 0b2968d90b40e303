// Emission: the NodeList, the PodList and the objects List as kubectl prints them (keys in
// alphabetical order, pods sorted by namespace and name).
#include "bench/generator/generator_internal.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>
#include <utility>

#include "host/common.hpp"

namespace bulkscore::gen {

void Generator::write_taint(JsonWriter& j, const TaintDef& t, int64_t added) {
  j.begin_object().field("effect", t.effect).field("key", t.key);
  if (added >= 0) j.field("timeAdded", format_time(added));
  if (t.value[0] != '\0') j.field("value", t.value);
  j.end_object();
}

void Generator::write_node(JsonWriter& j, const NodeRec& nd) const {
  SplitMix64 rng(nd.emit_seed);
  const InstanceType& t = type_of(nd);
  const std::string ip = dotted_ip((172u << 24 | 16u << 16) + 10 + nd.index);
  const std::string instance = "i-0" + hex_string(rng, 16);
  const std::string uid = make_uid(rng);
  const std::string rv = std::to_string(rng.between(10000000, 999999999));

  j.begin_object();
  j.field("apiVersion", "v1").field("kind", "Node");
  j.key("metadata").begin_object();
  j.key("annotations")
      .begin_object()
      .field("alpha.kubernetes.io/provided-node-ip", ip)
      .field("csi.volume.kubernetes.io/nodeid", "{\"ebs.csi.aws.com\":\"" + instance + "\"}")
      .field("node.alpha.kubernetes.io/ttl", "0")
      .field("volumes.kubernetes.io/controller-managed-attach-detach", "true")
      .end_object();
  j.field("creationTimestamp", format_time(nd.created));
  j.key("labels").begin_object();
  for (int k = 0; k < kLabelKeyCount; ++k) {
    std::string_view v;
    if (k == kLNodegroup) {
      std::string ng = std::string(kPoolNames[static_cast<int>(pool_of(nd))]) + '-' + t.name;
      std::replace(ng.begin(), ng.end(), '.', '-');
      if (nd.role == Role::Spot) ng += "-spot";
      j.field(kLabelKeys[k], ng);
    } else if (label_of(zone_names_, opt_.region, nd, k, v)) {
      j.field(kLabelKeys[k], v);
    }
  }
  j.end_object();
  j.field("name", nd.name).field("resourceVersion", rv).field("uid", uid);
  j.end_object();

  j.key("spec").begin_object();
  j.field("providerID", "aws:///" + zone_names_[nd.zone] + "/" + instance);
  if (nd.role == Role::Gpu || nd.role == Role::Infra || nd.role == Role::Spot || nd.cordoned) {
    j.key("taints").begin_array();
    if (nd.role == Role::Gpu) write_taint(j, kTaintGpu, -1);
    if (nd.role == Role::Infra) write_taint(j, kTaintInfra, -1);
    if (nd.role == Role::Spot) write_taint(j, kTaintSpot, -1);
    if (nd.cordoned) write_taint(j, kTaintCordon, kNow - 3600 * rng.between(1, 48));
    j.end_array();
  }
  if (nd.cordoned) j.field("unschedulable", true);
  j.end_object();

  j.key("status").begin_object();
  std::string dns = "ip-" + ip + "." + opt_.region + ".compute.internal";
  std::replace(dns.begin(), dns.begin() + static_cast<std::ptrdiff_t>(3 + ip.size()), '.', '-');
  j.key("addresses")
      .begin_array()
      .begin_object()
      .field("address", ip)
      .field("type", "InternalIP")
      .end_object()
      .begin_object()
      .field("address", dns)
      .field("type", "InternalDNS")
      .end_object()
      .begin_object()
      .field("address", nd.name)
      .field("type", "Hostname")
      .end_object()
      .end_array();
  const std::string hp1 = fmt_bytes(nd.hugepages);
  j.key("allocatable")
      .begin_object()
      .field("cpu", fmt_cpu(nd.alloc_cpu))
      .field("ephemeral-storage", std::to_string(nd.alloc_eph))
      .field("hugepages-1Gi", hp1)
      .field("hugepages-2Mi", "0")
      .field("memory", std::to_string(nd.alloc_mem / kKi) + "Ki");
  if (nd.gpus > 0) j.field("nvidia.com/gpu", std::to_string(nd.gpus));
  j.field("pods", std::to_string(nd.max_pods)).end_object();
  j.key("capacity")
      .begin_object()
      .field("cpu", fmt_cpu(nd.cap_cpu))
      .field("ephemeral-storage", std::to_string(nd.cap_eph_ki) + "Ki")
      .field("hugepages-1Gi", hp1)
      .field("hugepages-2Mi", "0")
      .field("memory", std::to_string(nd.cap_mem_ki) + "Ki");
  if (nd.gpus > 0) j.field("nvidia.com/gpu", std::to_string(nd.gpus));
  j.field("pods", std::to_string(nd.max_pods)).end_object();

  const std::string heartbeat = format_time(kNow - rng.between(0, 40));
  const std::string transition = format_time(nd.created + 45);
  struct Cond {
    const char* type;
    const char* status;
    const char* reason;
    const char* message;
  };
  static const Cond kConds[] = {
      {"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
      {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
      {"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
      {"Ready", "True", "KubeletReady", "kubelet is posting ready status"}};
  j.key("conditions").begin_array();
  for (const Cond& c : kConds)
    j.begin_object()
        .field("lastHeartbeatTime", heartbeat)
        .field("lastTransitionTime", transition)
        .field("message", c.message)
        .field("reason", c.reason)
        .field("status", c.status)
        .field("type", c.type)
        .end_object();
  j.end_array();
  j.key("daemonEndpoints")
      .begin_object()
      .key("kubeletEndpoint")
      .begin_object()
      .field("Port", 10250)
      .end_object()
      .end_object();
  j.key("images").begin_array();
  for (uint16_t i : nd.images) {
    const Image& im = images_[i];
    j.begin_object()
        .key("names")
        .begin_array()
        .value(im.digest_name)
        .value(im.tag_name)
        .end_array()
        .field("sizeBytes", im.size)
        .end_object();
  }
  j.end_array();
  const OsVariant& os = kOsVariants[nd.os];
  std::string machine = hex_string(rng, 32);
  std::string system_uuid = "ec2" + hex_string(rng, 5) + "-" + make_uid(rng).substr(9);
  j.key("nodeInfo")
      .begin_object()
      .field("architecture", t.arm ? "arm64" : "amd64")
      .field("bootID", make_uid(rng))
      .field("containerRuntimeVersion", os.runtime)
      .field("kernelVersion", t.arm ? os.kernel_arm64 : os.kernel_amd64)
      .field("kubeletVersion", nd.old_kubelet ? "v1.34.6" : "v1.35.4")
      .field("machineID", machine)
      .field("operatingSystem", "linux")
      .field("osImage", os.os_image)
      .field("systemUUID", system_uuid)
      .end_object();
  j.end_object();  // status
  j.end_object();
}

std::string Generator::emit_nodes() const {
  std::string out;
  out.reserve(nodes_.size() * 6200 + 256);
  JsonWriter j(out);
  j.begin_object().field("apiVersion", "v1").key("items").begin_array();
  for (const NodeRec& nd : nodes_) write_node(j, nd);
  j.end_array().field("kind", "NodeList");
  j.key("metadata").begin_object().field("resourceVersion", "1000000000").end_object();
  j.end_object();
  out += '\n';
  return out;
}

void Generator::write_resources(JsonWriter& j, const ContainerSpec& c) {
  j.key("resources").begin_object();
  const bool limits = c.cpu_limit != kAbsent || c.mem_limit != kAbsent || c.gpu > 0 || c.hp > 0;
  if (limits) {
    j.key("limits").begin_object();
    if (c.cpu_limit != kAbsent) j.field("cpu", fmt_cpu(c.cpu_limit));
    if (c.hp > 0) j.field("hugepages-1Gi", fmt_bytes(c.hp));
    if (c.mem_limit != kAbsent) j.field("memory", fmt_bytes(c.mem_limit));
    if (c.gpu > 0) j.field("nvidia.com/gpu", std::to_string(c.gpu));
    j.end_object();
  }
  const bool requests = c.cpu != kAbsent || c.mem != kAbsent || c.eph != kAbsent || c.gpu > 0 || c.hp > 0;
  if (requests) {
    j.key("requests").begin_object();
    if (c.cpu != kAbsent) j.field("cpu", fmt_cpu(c.cpu));
    if (c.eph != kAbsent) j.field("ephemeral-storage", fmt_bytes(c.eph));
    if (c.hp > 0) j.field("hugepages-1Gi", fmt_bytes(c.hp));
    if (c.mem != kAbsent) j.field("memory", fmt_bytes(c.mem));
    if (c.gpu > 0) j.field("nvidia.com/gpu", std::to_string(c.gpu));
    j.end_object();
  }
  j.end_object();
}

void Generator::write_container(JsonWriter& j, const ContainerSpec& c) const {
  j.begin_object();
  j.field("image", images_[static_cast<size_t>(c.image)].tag_name);
  j.field("imagePullPolicy", "IfNotPresent");
  j.field("name", c.name);
  if (!c.ports.empty()) {
    j.key("ports").begin_array();
    for (const PortSpec& p : c.ports) {
      j.begin_object().field("containerPort", p.container_port);
      if (p.host_port > 0) j.field("hostPort", p.host_port);
      if (p.name) j.field("name", p.name);
      j.field("protocol", p.udp ? "UDP" : "TCP").end_object();
    }
    j.end_array();
  }
  write_resources(j, c);
  if (c.sidecar) j.field("restartPolicy", "Always");
  j.field("terminationMessagePath", "/dev/termination-log");
  j.field("terminationMessagePolicy", "File");
  j.end_object();
}

void Generator::write_requirements(JsonWriter& j, const std::vector<Requirement>& reqs) {
  j.key("matchExpressions").begin_array();
  for (const Requirement& r : reqs) {
    j.begin_object().field("key", r.key).field("operator", r.op);
    if (!r.values.empty()) {
      j.key("values").begin_array();
      for (const std::string& v : r.values) j.value(v);
      j.end_array();
    }
    j.end_object();
  }
  j.end_array();
}

void Generator::write_app_selector(JsonWriter& j, const std::string& app) {
  j.key("labelSelector").begin_object().key("matchLabels").begin_object().field("app", app).end_object().end_object();
}

void Generator::write_pod_affinity_term(JsonWriter& j, const PodAffinitySpec& a) {
  j.begin_object();
  write_app_selector(j, a.app);
  if (!a.ns.empty()) j.key("namespaces").begin_array().value(a.ns).end_array();
  j.field("topologyKey", a.topology_key).end_object();
}

void Generator::write_pod_affinity(JsonWriter& j, const PodTemplate& t, bool anti) const {
  bool any_req = false, any_pref = false;
  for (const PodAffinitySpec& a : t.pod_affinity)
    if (a.anti == anti) (a.required ? any_req : any_pref) = true;
  if (!any_req && !any_pref) return;
  j.key(anti ? "podAntiAffinity" : "podAffinity").begin_object();
  if (any_pref) {
    j.key("preferredDuringSchedulingIgnoredDuringExecution").begin_array();
    for (const PodAffinitySpec& a : t.pod_affinity) {
      if (a.anti != anti || a.required) continue;
      j.begin_object().key("podAffinityTerm");
      write_pod_affinity_term(j, a);
      j.field("weight", a.weight).end_object();
    }
    j.end_array();
  }
  if (any_req) {
    j.key("requiredDuringSchedulingIgnoredDuringExecution").begin_array();
    for (const PodAffinitySpec& a : t.pod_affinity)
      if (a.anti == anti && a.required) write_pod_affinity_term(j, a);
    j.end_array();
  }
  j.end_object();
}

void Generator::write_toleration(JsonWriter& j, const char* effect, const std::string& key, const char* op,
                                 int64_t seconds, const std::string& value) {
  j.begin_object();
  if (effect[0] != '\0') j.field("effect", effect);
  if (!key.empty()) j.field("key", key);
  j.field("operator", op);
  if (seconds != kAbsent) j.field("tolerationSeconds", seconds);
  if (!value.empty()) j.field("value", value);
  j.end_object();
}

void Generator::write_pod(JsonWriter& j, SplitMix64& rng, const PodRec& p, uint32_t& pod_ip) const {
  const Workload& w = workloads_[p.workload];
  const PodTemplate& t = w.tmpl;
  const NodeRec* node = p.node >= 0 ? &nodes_[static_cast<size_t>(p.node)] : nullptr;
  int64_t created;
  if (node) {
    const int64_t from = std::max(w.created, node->created);
    created = from + static_cast<int64_t>(rng.below(static_cast<uint64_t>(std::max<int64_t>(1, kNow - 60 - from))));
  } else {
    created = kNow - rng.between(1, 900);
  }
  const std::string ts = format_time(created);

  j.begin_object();
  j.field("apiVersion", "v1").field("kind", "Pod");
  j.key("metadata").begin_object();
  if (!t.annotations.empty()) {
    j.key("annotations").begin_object();
    for (const auto& kv : t.annotations) j.field(kv.first, kv.second);
    j.end_object();
  }
  j.field("creationTimestamp", ts);
  std::string owner_name = w.name;
  if (w.kind == OwnerKind::ReplicaSet) {
    owner_name = w.name + '-' + w.hash;
    j.field("generateName", owner_name + '-');
  } else if (w.kind != OwnerKind::StatefulSet) {
    j.field("generateName", w.name + '-');
  }

  std::vector<std::pair<std::string_view, std::string_view>> labels;
  labels.emplace_back("app", w.app);
  const std::string ordinal = std::to_string(p.ordinal);
  const std::string sts_revision = w.name + '-' + w.hash;
  switch (w.kind) {
    case OwnerKind::ReplicaSet:
      labels.emplace_back("pod-template-hash", w.hash);
      break;
    case OwnerKind::StatefulSet:
      labels.emplace_back("apps.kubernetes.io/pod-index", ordinal);
      labels.emplace_back("controller-revision-hash", sts_revision);
      labels.emplace_back("statefulset.kubernetes.io/pod-name", p.name);
      break;
    case OwnerKind::DaemonSet:
      labels.emplace_back("controller-revision-hash", w.hash);
      labels.emplace_back("pod-template-generation", "1");
      break;
    case OwnerKind::Job:
      labels.emplace_back("batch.kubernetes.io/controller-uid", w.owner_uid);
      labels.emplace_back("batch.kubernetes.io/job-name", w.name);
      labels.emplace_back("controller-uid", w.owner_uid);
      labels.emplace_back("job-name", w.name);
      break;
  }
  for (const auto& kv : t.extra_labels) labels.emplace_back(kv.first, kv.second);
  std::sort(labels.begin(), labels.end());
  j.key("labels").begin_object();
  for (const auto& kv : labels) j.field(kv.first, kv.second);
  j.end_object();
  j.field("name", p.name).field("namespace", w.ns);
  static const char* const kOwnerKinds[] = {"ReplicaSet", "StatefulSet", "DaemonSet", "Job"};
  j.key("ownerReferences")
      .begin_array()
      .begin_object()
      .field("apiVersion", w.kind == OwnerKind::Job ? "batch/v1" : "apps/v1")
      .field("blockOwnerDeletion", true)
      .field("controller", true)
      .field("kind", kOwnerKinds[static_cast<int>(w.kind)])
      .field("name", owner_name)
      .field("uid", w.owner_uid)
      .end_object()
      .end_array();
  j.field("resourceVersion", std::to_string(rng.between(10000000, 999999999)));
  j.field("uid", make_uid(rng));
  j.end_object();  // metadata

  j.key("spec").begin_object();
  const bool node_aff = !t.required_terms.empty() || !t.preferred.empty();
  if (node_aff || !t.pod_affinity.empty()) {
    j.key("affinity").begin_object();
    if (node_aff) {
      j.key("nodeAffinity").begin_object();
      if (!t.preferred.empty()) {
        j.key("preferredDuringSchedulingIgnoredDuringExecution").begin_array();
        for (const PreferredTerm& pt : t.preferred) {
          j.begin_object().key("preference").begin_object();
          write_requirements(j, pt.reqs);
          j.end_object().field("weight", pt.weight).end_object();
        }
        j.end_array();
      }
      if (!t.required_terms.empty()) {
        j.key("requiredDuringSchedulingIgnoredDuringExecution").begin_object().key("nodeSelectorTerms").begin_array();
        for (const auto& term : t.required_terms) {
          j.begin_object();
          write_requirements(j, term);
          j.end_object();
        }
        j.end_array().end_object();
      }
      j.end_object();
    }
    write_pod_affinity(j, t, false);
    write_pod_affinity(j, t, true);
    j.end_object();
  }
  j.key("containers").begin_array();
  for (const ContainerSpec& c : t.containers) write_container(j, c);
  j.end_array();
  j.field("dnsPolicy", t.host_network ? "ClusterFirstWithHostNet" : "ClusterFirst");
  j.field("enableServiceLinks", true);
  if (t.host_network) j.field("hostNetwork", true);
  if (!t.init.empty()) {
    j.key("initContainers").begin_array();
    for (const ContainerSpec& c : t.init) write_container(j, c);
    j.end_array();
  }
  if (node) j.field("nodeName", node->name);
  if (!t.node_selector.empty()) {
    j.key("nodeSelector").begin_object();
    for (const auto& kv : t.node_selector) j.field(kv.first, kv.second);
    j.end_object();
  }
  if (t.overhead_cpu != kAbsent || t.overhead_mem != kAbsent) {
    j.key("overhead").begin_object();
    if (t.overhead_cpu != kAbsent) j.field("cpu", fmt_cpu(t.overhead_cpu));
    if (t.overhead_mem != kAbsent) j.field("memory", fmt_bytes(t.overhead_mem));
    j.end_object();
  }
  j.field("preemptionPolicy", "PreemptLowerPriority");
  j.field("priority", t.priority);
  if (t.priority_class[0] != '\0') j.field("priorityClassName", t.priority_class);
  if (t.pod_cpu != kAbsent || t.pod_mem != kAbsent) {
    j.key("resources").begin_object().key("requests").begin_object();
    if (t.pod_cpu != kAbsent) j.field("cpu", fmt_cpu(t.pod_cpu));
    if (t.pod_mem != kAbsent) j.field("memory", fmt_bytes(t.pod_mem));
    j.end_object().end_object();
  }
  j.field("restartPolicy", t.restart_policy);
  if (!t.runtime_class.empty()) j.field("runtimeClassName", t.runtime_class);
  j.field("schedulerName", "default-scheduler");
  j.key("securityContext").begin_object().end_object();
  j.field("serviceAccount", t.service_account).field("serviceAccountName", t.service_account);
  j.field("terminationGracePeriodSeconds", t.grace_seconds);
  j.key("tolerations").begin_array();
  for (const TolerationSpec& tol : t.tolerations)
    write_toleration(j, tol.effect, tol.key, tol.op, tol.seconds, tol.value);
  if (t.daemonset_tolerations) {
    static const char* const kDsKeys[][2] = {
        {"NoExecute", "node.kubernetes.io/not-ready"},      {"NoExecute", "node.kubernetes.io/unreachable"},
        {"NoSchedule", "node.kubernetes.io/disk-pressure"}, {"NoSchedule", "node.kubernetes.io/memory-pressure"},
        {"NoSchedule", "node.kubernetes.io/pid-pressure"},  {"NoSchedule", "node.kubernetes.io/unschedulable"}};
    write_toleration(j, "", "", "Exists", kAbsent, "");
    for (const auto& kv : kDsKeys) write_toleration(j, kv[0], kv[1], "Exists", kAbsent, "");
    if (t.host_network)
      write_toleration(j, "NoSchedule", "node.kubernetes.io/network-unavailable", "Exists", kAbsent, "");
  } else {
    // What the DefaultTolerationSeconds admission plugin adds to every pod.
    write_toleration(j, "NoExecute", "node.kubernetes.io/not-ready", "Exists", 300, "");
    write_toleration(j, "NoExecute", "node.kubernetes.io/unreachable", "Exists", 300, "");
  }
  j.end_array();
  if (!t.spread.empty()) {
    j.key("topologySpreadConstraints").begin_array();
    for (const SpreadSpec& s : t.spread) {
      j.begin_object();
      write_app_selector(j, s.app);
      j.key("matchLabelKeys").begin_array().value("pod-template-hash").end_array();
      j.field("maxSkew", s.max_skew).field("topologyKey", s.topology_key);
      j.field("whenUnsatisfiable", s.do_not_schedule ? "DoNotSchedule" : "ScheduleAnyway").end_object();
    }
    j.end_array();
  }
  j.end_object();  // spec

  j.key("status").begin_object();
  if (node) {
    const std::string host_ip = dotted_ip((172u << 24 | 16u << 16) + 10 + node->index);
    const std::string ip = t.host_network ? host_ip : dotted_ip((10u << 24) + 256 + pod_ip++);
    j.field("hostIP", host_ip);
    j.key("hostIPs").begin_array().begin_object().field("ip", host_ip).end_object().end_array();
    j.field("phase", "Running");
    j.field("podIP", ip);
    j.key("podIPs").begin_array().begin_object().field("ip", ip).end_object().end_array();
    j.field("qosClass", t.qos);
    j.field("startTime", format_time(created + 2));
  } else {
    j.field("phase", "Pending").field("qosClass", t.qos);
  }
  j.end_object();
  j.end_object();
}

std::string Generator::emit_pods() const {
  std::vector<uint32_t> order(pods_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  // As kubectl lists them. Names are unique within a namespace, so the order is total.
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const std::string& na = workloads_[pods_[a].workload].ns;
    const std::string& nb = workloads_[pods_[b].workload].ns;
    if (na != nb) return na < nb;
    return pods_[a].name < pods_[b].name;
  });
  std::string out;
  out.reserve(pods_.size() * 2600 + 256);
  JsonWriter j(out);
  SplitMix64 rng = SplitMix64::derive(opt_.seed, kStreamEmitPods);
  uint32_t pod_ip = 0;
  j.begin_object().field("apiVersion", "v1").key("items").begin_array();
  for (uint32_t i : order) write_pod(j, rng, pods_[i], pod_ip);
  j.end_array().field("kind", "PodList");
  j.key("metadata").begin_object().field("resourceVersion", "1000000000").end_object();
  j.end_object();
  out += '\n';
  return out;
}

// The objects the topology plugins read, as `kubectl get svc,rs,sts,ns -A -o
// json` prints them (a v1 List: ReplicaSets, StatefulSets, Services, then
// Namespaces, each by namespace and name):
// every namespace (labelled kubernetes.io/metadata.name as the API server
// does, team-* with a team label), the ReplicaSet and StatefulSet of each
// workload, and a Service selecting each Deployment's and StatefulSet's
// pods by app. With them every such pod gets upstream's system-default
// spreading.
std::string Generator::emit_objects() const {
  std::map<std::string, std::vector<const Workload*>> by_ns;
  for (const auto& w : workloads_) by_ns[w.ns].push_back(&w);
  for (auto& [ns, list] : by_ns)
    std::sort(list.begin(), list.end(), [](const Workload* a, const Workload* b) { return a->name < b->name; });
  std::string out;
  JsonWriter j(out);
  j.begin_object().field("apiVersion", "v1").key("items").begin_array();
  const auto meta = [&](const std::string& ns, const std::string& name, const std::string& uid) {
    j.key("metadata").begin_object().field("name", name).field("namespace", ns);
    if (!uid.empty()) j.field("uid", uid);
    j.end_object();
  };
  for (const auto& [ns, list] : by_ns)
    for (const Workload* w : list) {
      if (w->kind != OwnerKind::ReplicaSet) continue;
      j.begin_object().field("apiVersion", "apps/v1").field("kind", "ReplicaSet");
      meta(ns, w->name + '-' + w->hash, w->owner_uid);
      j.key("spec").begin_object().key("selector").begin_object().key("matchLabels").begin_object();
      j.field("app", w->app).field("pod-template-hash", w->hash);
      j.end_object().end_object().end_object().end_object();
    }
  for (const auto& [ns, list] : by_ns)
    for (const Workload* w : list) {
      if (w->kind != OwnerKind::StatefulSet) continue;
      j.begin_object().field("apiVersion", "apps/v1").field("kind", "StatefulSet");
      meta(ns, w->name, w->owner_uid);
      j.key("spec").begin_object().key("selector").begin_object().key("matchLabels").begin_object();
      j.field("app", w->app);
      j.end_object().end_object().end_object().end_object();
    }
  for (const auto& [ns, list] : by_ns)
    for (const Workload* w : list) {
      if (w->kind != OwnerKind::ReplicaSet && w->kind != OwnerKind::StatefulSet) continue;
      j.begin_object().field("apiVersion", "v1").field("kind", "Service");
      meta(ns, w->name, "");
      j.key("spec").begin_object().key("selector").begin_object().field("app", w->app).end_object().end_object();
      j.end_object();
    }
  for (const auto& [ns, list] : by_ns) {
    j.begin_object().field("apiVersion", "v1").field("kind", "Namespace");
    j.key("metadata").begin_object().key("labels").begin_object().field("kubernetes.io/metadata.name", ns);
    if (ns.rfind("team-", 0) == 0) j.field("team", ns.substr(5));
    j.end_object().field("name", ns).end_object().end_object();
  }
  j.end_array().field("kind", "List");
  j.key("metadata").begin_object().field("resourceVersion", "").end_object();
  j.end_object();
  out += '\n';
  return out;
}

}  // namespace bulkscore::gen
