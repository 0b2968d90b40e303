// Workloads: the pod templates of daemonsets, deployments, statefulsets and
// jobs that run on the nodes, and of the pending groups (one scenario each).
#include "bench/generator/generator_internal.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <utility>

#include "host/common.hpp"
#include "host/input/k8s_json.hpp"
#include "host/input/pod_resources.hpp"

namespace bulkscore::gen {

void Generator::finish_workload(Workload& w) {
  PodTemplate& t = w.tmpl;
  // The pod as bulkscore reads it: one pod of the workload written as the
  // PodList will hold it and read back by the one Kubernetes parser, so that
  // placement judges exactly what the output says.
  std::string json;
  JsonWriter j(json);
  SplitMix64 scratch(0);  // timestamps and uids: not what placement looks at
  uint32_t pod_ip = 0;
  PodRec rec;
  rec.workload = static_cast<uint32_t>(&w - workloads_.data());
  rec.name = w.name + "-model";
  write_pod(j, scratch, rec, pod_ip);
  std::vector<Pod> parsed = parse_pods_json(json, "generated pod of " + w.ns + "/" + w.name);
  w.model = std::move(parsed.at(0));

  // Its request by the scheduler's rules (host/input/pod_resources): what the
  // placement books and sizes pods by.
  const ResourceList requests = pod_requests(w.model);
  auto request = [&](const char* resource) {
    const auto it = requests.find(resource);
    return it == requests.end() ? int64_t{0} : it->second;
  };
  t.eff.cpu = request("cpu");
  t.eff.mem = request("memory");
  t.eff.eph = request("ephemeral-storage");
  t.eff.gpu = request("nvidia.com/gpu");
  t.eff.hp = request("hugepages-1Gi");

  // The images a node running it pulls (init containers too).
  t.image_set = ImageSet{};
  for (const ContainerSpec& c : t.init) t.image_set.add(c.image);
  for (const ContainerSpec& c : t.containers) t.image_set.add(c.image);

  // QoS as the API server assigns it (cpu and memory only): status, not a
  // scheduling rule.
  bool any = t.pod_cpu != kAbsent || t.pod_mem != kAbsent;
  bool guaranteed = t.pod_cpu == kAbsent && t.pod_mem == kAbsent;
  auto visit = [&](const ContainerSpec& c) {
    if (c.cpu != kAbsent || c.mem != kAbsent || c.cpu_limit != kAbsent || c.mem_limit != kAbsent) any = true;
    if (c.cpu_limit == kAbsent || c.mem_limit == kAbsent || c.cpu != c.cpu_limit || c.mem != c.mem_limit)
      guaranteed = false;
  };
  for (const ContainerSpec& c : t.init) visit(c);
  for (const ContainerSpec& c : t.containers) visit(c);
  t.qos = !any ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable";
}

Workload& Generator::new_workload(SplitMix64& rng, const std::string& ns, const std::string& base, OwnerKind kind,
                                  Target target) {
  Workload w;
  w.ns = ns;
  w.name = unique_name(ns, base);
  w.app = w.name;
  w.kind = kind;
  w.target = target;
  w.hash = name_token(rng, 10);
  w.owner_uid = make_uid(rng);
  w.salt = rng.next();
  // NOLINTNEXTLINE(bugprone-implicit-widening-of-multiplication-result): constant fits int
  w.created = kNow - rng.between(86400, 300 * 86400);
  workloads_.push_back(std::move(w));
  return workloads_.back();
}

std::string Generator::unique_name(const std::string& ns, const std::string& base) {
  std::string name = base;
  for (int k = 2; !used_names_.insert(ns + '/' + name).second; ++k) name = base + '-' + std::to_string(k);
  return name;
}

ContainerSpec Generator::container(std::string name, int image, int64_t cpu, int64_t mem) {
  ContainerSpec c;
  c.name = std::move(name);
  c.image = image;
  c.cpu = cpu;
  c.mem = mem;
  return c;
}

void Generator::tolerate(PodTemplate& t, const TaintDef& taint, const char* op) {
  TolerationSpec tol;
  tol.key = taint.key;
  tol.op = op;
  if (std::string_view(op) == "Equal") tol.value = taint.value;
  tol.effect = taint.effect;
  t.tolerations.push_back(std::move(tol));
}

void Generator::make_daemonsets(SplitMix64& rng, uint64_t budget) {
  struct DsDef {
    const char* ns;
    const char* name;
    bool gpu_only;
  };
  const DsDef defs[] = {{"monitoring", "node-exporter", false}, {"kube-system", "nvidia-device-plugin-daemonset", true},
                        {"kube-system", "kube-proxy", false},   {"logging", "fluent-bit", false},
                        {"kube-system", "ebs-csi-node", false}, {"gpu-operator", "nvidia-dcgm-exporter", true}};
  uint64_t spent = 0;
  for (const DsDef& d : defs) {
    const uint64_t cost = d.gpu_only ? gpu_nodes_ : nodes_.size();
    if (cost == 0 || spent + cost > budget) continue;
    spent += cost;
    Workload& w = new_workload(rng, d.ns, d.name, OwnerKind::DaemonSet, Target::DaemonSet);
    PodTemplate& t = w.tmpl;
    t.daemonset_tolerations = true;
    t.priority_class = "system-node-critical";
    t.priority = 2000001000;
    t.service_account = d.name;
    const std::string_view name = d.name;
    if (name == "node-exporter") {
      ContainerSpec c = container("node-exporter", image_id("quay.io/prometheus/node-exporter:v1.8.2"), 100, 180 * kMi);
      c.cpu_limit = 250;
      c.mem_limit = 180 * kMi;
      c.ports.push_back({9100, 9100, false, "metrics"});
      t.containers.push_back(std::move(c));
      ContainerSpec p = container("kube-rbac-proxy", image_id("quay.io/brancz/kube-rbac-proxy:v0.18.1"), 10, 20 * kMi);
      p.cpu_limit = 20;
      p.mem_limit = 40 * kMi;
      t.containers.push_back(std::move(p));
      t.host_network = true;
      t.priority_class = "";
      t.priority = 0;
    } else if (name == "kube-proxy") {
      t.containers.push_back(container("kube-proxy", image_id("registry.k8s.io/kube-proxy:v1.35.4"), 100, kAbsent));
      t.host_network = true;
    } else if (name == "fluent-bit") {
      ContainerSpec c = container("fluent-bit", image_id("cr.fluentbit.io/fluent/fluent-bit:3.1.9"), 100, 128 * kMi);
      c.mem_limit = 256 * kMi;
      c.ports.push_back({2020, 0, false, "http"});
      t.containers.push_back(std::move(c));
      t.priority_class = "";
      t.priority = 0;
    } else if (name == "ebs-csi-node") {
      t.containers.push_back(
          container("ebs-plugin", image_id("public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.35.0"), 10, 40 * kMi));
      t.containers.push_back(container(
          "node-driver-registrar",
          image_id("public.ecr.aws/eks-distro/kubernetes-csi/node-driver-registrar:v2.11.1-eks-1-31-5"), 10, 40 * kMi));
      t.containers.push_back(container(
          "liveness-probe", image_id("public.ecr.aws/eks-distro/kubernetes-csi/livenessprobe:v2.13.1-eks-1-31-5"), 10,
          40 * kMi));
    } else if (name == "nvidia-device-plugin-daemonset") {
      // BestEffort, as the upstream manifest ships it.
      t.containers.push_back(container("nvidia-device-plugin-ctr", image_id("nvcr.io/nvidia/k8s-device-plugin:v0.16.2"),
                                       kAbsent, kAbsent));
    } else {
      ContainerSpec c = container("nvidia-dcgm-exporter",
                                  image_id("nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04"), 100, 128 * kMi);
      c.mem_limit = 512 * kMi;
      c.ports.push_back({9400, 0, false, "metrics"});
      t.containers.push_back(std::move(c));
    }
    if (d.gpu_only) {
      Requirement r;
      r.key = kLabelKeys[kLGpuProduct];
      r.op = "Exists";
      t.required_terms.push_back({r});
    }
    finish_workload(w);
  }
}

// A general-purpose workload whose pods ask about `cpu` millicores in all
// (0: BestEffort).
void Generator::make_general_workload(SplitMix64& rng, int64_t cpu) {
  static const char* const kNamespaces[] = {"team-a", "team-b", "team-c", "team-d", "team-e", "default", "batch"};
  const size_t nsi = pick_weighted(rng, std::array<int, 7>{16, 16, 16, 16, 16, 10, 10});
  const std::string ns = kNamespaces[nsi];
  OwnerKind kind = OwnerKind::ReplicaSet;
  if (ns == "batch")
    kind = OwnerKind::Job;
  else if (rng.chance(0.15))
    kind = OwnerKind::StatefulSet;

  std::string base = kWords[rng.below(kWordCount)];
  int image = 0;
  int64_t mem_per_cpu_mi = 0;
  int32_t port = 8080;
  if (kind == OwnerKind::StatefulSet) {
    static const char* const kDb[][3] = {{"-db", "docker.io/library/postgres:16.4", "5432"},
                                         {"-cache", "docker.io/library/redis:7.4.1", "6379"},
                                         {"-mysql", "docker.io/library/mysql:8.4.3", "3306"},
                                         {"-mongo", "docker.io/library/mongo:7.0.15", "27017"},
                                         {"-kafka", "docker.io/bitnami/kafka:3.8.1", "9092"},
                                         {"-es", "docker.elastic.co/elasticsearch/elasticsearch:8.15.3", "9200"},
                                         {"-memcached", "docker.io/library/memcached:1.6.31", "11211"},
                                         {"-mq", "docker.io/library/rabbitmq:3.13.7-management", "5672"}};
    const auto& db = kDb[rng.below(8)];
    base += db[0];
    image = image_id(db[1]);
    port = static_cast<int32_t>(std::stoi(db[2]));
    mem_per_cpu_mi = std::array<int64_t, 3>{2048, 4096, 8192}[rng.below(3)];
  } else if (kind == OwnerKind::Job) {
    base += std::array<const char*, 4>{"-etl", "-report", "-backfill", "-export"}[rng.below(4)];
    base += '-' + std::to_string(28900000 + rng.below(100000));  // CronJob-style
    static const char* const kJobImages[] = {"docker.io/library/python:3.12-slim", "docker.io/apache/spark:3.5.3",
                                             "docker.io/library/eclipse-temurin:21-jre"};
    image = image_id(kJobImages[rng.below(3)]);
    mem_per_cpu_mi = std::array<int64_t, 3>{1024, 2048, 4096}[rng.below(3)];
    port = 0;
  } else {
    static const char* const kTeamImages[5][2] = {
        {"registry.example.com/team-a/orders-api:2.14.1", "registry.example.com/team-a/checkout:1.9.0"},
        {"registry.example.com/team-b/frontend:3.40.2", "registry.example.com/team-b/search-indexer:5.2.3"},
        {"registry.example.com/team-c/payments:7.1.0", "registry.example.com/team-c/ledger:0.33.4"},
        {"registry.example.com/team-d/recommender:4.0.1", "registry.example.com/team-d/feature-store:1.2.8"},
        {"registry.example.com/team-e/notifications:1.17.5", "registry.example.com/team-e/media-transcoder:2.3.0"}};
    static const char* const kCommon[] = {"docker.io/library/nginx:1.27.2",
                                          "docker.io/library/python:3.12-slim",
                                          "docker.io/library/eclipse-temurin:21-jre",
                                          "docker.io/library/node:20-slim",
                                          "registry.example.com/platform/gateway:6.8.2",
                                          "docker.io/envoyproxy/envoy:v1.31.2",
                                          "docker.io/library/nginx:1.27.2-alpine",
                                          "docker.io/otel/opentelemetry-collector-contrib:0.111.0"};
    base += std::array<const char*, 6>{"", "-api", "-worker", "-service", "-consumer", "-grpc"}[rng.below(6)];
    if (nsi < 5 && rng.chance(0.6))
      image = image_id(kTeamImages[nsi][rng.below(2)]);
    else
      image = image_id(kCommon[rng.below(8)]);
    mem_per_cpu_mi = std::array<int64_t, 3>{1024, 2048, 4096}[pick_weighted(rng, std::array<int, 3>{3, 4, 2})];
  }

  Workload& w = new_workload(rng, ns, base, kind, Target::General);
  PodTemplate& t = w.tmpl;
  if (kind == OwnerKind::Job) {
    t.restart_policy = rng.chance(0.5) ? "Never" : "OnFailure";
    t.priority_class = "low-priority";
    t.priority = -10;
  } else if (rng.chance(0.1)) {
    t.priority_class = "high-priority";
    t.priority = 1000000;
  }
  if (rng.chance(0.5)) t.service_account = w.name;
  if (nsi < 5) {
    t.extra_labels.push_back({"app.kubernetes.io/part-of", ns});
    t.extra_labels.push_back({"team", ns});
  }
  if (rng.chance(0.3)) {
    t.annotations.push_back({"prometheus.io/port", "9090"});
    t.annotations.push_back({"prometheus.io/scrape", "true"});
  }

  const bool best_effort = cpu == 0;
  const bool mesh_classic = ns == "team-b" && !best_effort && kind != OwnerKind::Job;
  const bool mesh_native = ns == "team-c" && !best_effort && kind != OwnerKind::Job;
  const int64_t sidecar_cpu = (mesh_classic || mesh_native) && cpu >= 250 ? 100 : 0;
  const int64_t main_cpu = cpu - sidecar_cpu;
  const int64_t main_mem = std::min(round_mem_mi(main_cpu * mem_per_cpu_mi / 1000), 64 * kGi);
  ContainerSpec main =
      container(w.name.substr(0, 63), image, best_effort ? kAbsent : main_cpu, best_effort ? kAbsent : main_mem);
  if (port > 0) main.ports.push_back({port, 0, false, kind == OwnerKind::StatefulSet ? "server" : "http"});
  const bool guaranteed = !best_effort && rng.chance(0.15);
  if (!best_effort) {
    if (guaranteed) {
      main.cpu_limit = main.cpu;
      main.mem_limit = main.mem;
    } else {
      main.mem_limit = main.mem * (rng.chance(0.5) ? 1 : 2);
      if (rng.chance(0.5)) main.cpu_limit = main.cpu * 2;
    }
    if (rng.chance(0.1)) main.eph = rng.between(1, 5) * kGi;
  }
  t.containers.push_back(std::move(main));

  auto small = [&](const char* name, const char* img, int64_t c, int64_t m) {
    ContainerSpec s = container(name, image_id(img), best_effort ? kAbsent : c, best_effort ? kAbsent : m);
    if (guaranteed) {
      s.cpu_limit = s.cpu;
      s.mem_limit = s.mem;
    }
    return s;
  };
  if (mesh_classic) {
    ContainerSpec proxy = small("istio-proxy", "docker.io/istio/proxyv2:1.23.2", 100, 128 * kMi);
    if (!guaranteed) {
      proxy.cpu_limit = 2000;
      proxy.mem_limit = kGi;
    }
    proxy.ports.push_back({15090, 0, false, "http-envoy-prom"});
    t.containers.push_back(std::move(proxy));
    t.init.push_back(small("istio-init", "docker.io/istio/proxyv2:1.23.2", 10, 40 * kMi));
  }
  if (mesh_native) {
    ContainerSpec proxy = small("istio-proxy", "docker.io/istio/proxyv2:1.23.2", 100, 128 * kMi);
    if (!guaranteed) {
      proxy.cpu_limit = 2000;
      proxy.mem_limit = kGi;
    }
    proxy.sidecar = true;
    proxy.ports.push_back({15090, 0, false, "http-envoy-prom"});
    t.init.insert(t.init.begin(), small("istio-validation", "docker.io/istio/proxyv2:1.23.2", 10, 40 * kMi));
    t.init.push_back(std::move(proxy));
  }
  if (rng.chance(0.2)) {
    // A migration step; sometimes heavier than the app, so the init max decides.
    const bool heavy = rng.chance(0.25);
    t.init.push_back(small(heavy ? "warm-cache" : "wait-for-deps", "docker.io/library/busybox:1.36.1",
                           heavy ? cpu + 500 : 50, heavy ? main_mem + 512 * kMi : 64 * kMi));
  }
  if (kind == OwnerKind::ReplicaSet && rng.chance(0.25))
    t.containers.push_back(small("log-shipper", "cr.fluentbit.io/fluent/fluent-bit:3.1.9", 50, 64 * kMi));

  if (opt_.with_inter_pod_constraints && kind == OwnerKind::ReplicaSet && rng.chance(0.2)) {
    PodAffinitySpec a;
    a.anti = true;
    a.weight = 100;
    a.app = w.app;
    a.topology_key = "kubernetes.io/hostname";
    t.pod_affinity.push_back(a);
  }
  finish_workload(w);
}

void Generator::make_infra_workloads(SplitMix64& rng) {
  struct InfraDef {
    const char* ns;
    const char* name;
    OwnerKind kind;
    const char* image;
    int64_t cpu;
    int64_t mem_mi;
    bool critical;
  };
  const InfraDef defs[] = {
      {"kube-system", "coredns", OwnerKind::ReplicaSet, "registry.k8s.io/coredns/coredns:v1.11.3", 100, 70, true},
      {"kube-system", "metrics-server", OwnerKind::ReplicaSet, "registry.k8s.io/metrics-server/metrics-server:v0.7.2",
       100, 200, true},
      {"kube-system", "cluster-autoscaler", OwnerKind::ReplicaSet,
       "registry.k8s.io/autoscaling/cluster-autoscaler:v1.31.0", 100, 600, true},
      {"monitoring", "prometheus-k8s", OwnerKind::StatefulSet, "quay.io/prometheus/prometheus:v2.54.1", 2000, 8192,
       false},
      {"monitoring", "alertmanager-main", OwnerKind::StatefulSet, "quay.io/prometheus/alertmanager:v0.27.0", 100, 256,
       false},
      {"monitoring", "grafana", OwnerKind::ReplicaSet, "docker.io/grafana/grafana:11.2.2", 250, 512, false},
      {"monitoring", "otel-collector", OwnerKind::ReplicaSet, "docker.io/otel/opentelemetry-collector-contrib:0.111.0",
       500, 1024, false},
      {"monitoring", "jaeger", OwnerKind::ReplicaSet, "docker.io/jaegertracing/all-in-one:1.62.0", 250, 512, false},
      {"logging", "loki", OwnerKind::StatefulSet, "docker.io/grafana/loki:3.2.0", 1000, 2048, false},
      {"ingress-nginx", "ingress-nginx-controller", OwnerKind::ReplicaSet,
       "registry.k8s.io/ingress-nginx/controller:v1.11.3", 500, 512, false},
      {"cert-manager", "cert-manager", OwnerKind::ReplicaSet, "quay.io/jetstack/cert-manager-controller:v1.16.1", 50,
       128, false},
      {"argocd", "argocd-repo-server", OwnerKind::ReplicaSet, "quay.io/argoproj/argocd:v2.12.6", 500, 1024, false},
      {"argocd", "argocd-application-controller", OwnerKind::StatefulSet, "quay.io/argoproj/argocd:v2.12.6", 1000, 2048,
       false},
      {"kube-system", "vault", OwnerKind::StatefulSet, "docker.io/hashicorp/vault:1.18.0", 250, 256, false},
  };
  // Without infra nodes these run on general nodes, unpinned.
  const bool pinned = infra_nodes_ > 0;
  for (const InfraDef& d : defs) {
    Workload& w = new_workload(rng, d.ns, d.name, d.kind, pinned ? Target::Infra : Target::General);
    PodTemplate& t = w.tmpl;
    ContainerSpec c = container(d.name, image_id(d.image), d.cpu, d.mem_mi * kMi);
    c.mem_limit = d.mem_mi * kMi * 2;
    const std::string_view name = d.name;
    if (name == "coredns") {
      c.name = "coredns";
      c.mem_limit = 170 * kMi;
      c.ports.push_back({53, 0, true, "dns"});
      c.ports.push_back({53, 0, false, "dns-tcp"});
      c.ports.push_back({9153, 0, false, "metrics"});
    } else if (name == "ingress-nginx-controller") {
      c.name = "controller";
      c.ports.push_back({80, 80, false, "http"});
      c.ports.push_back({443, 443, false, "https"});
    } else if (name == "prometheus-k8s" || name == "alertmanager-main") {
      c.name = name == "prometheus-k8s" ? "prometheus" : "alertmanager";
      t.init.push_back(container("init-config-reloader",
                                 image_id("quay.io/prometheus-operator/prometheus-config-reloader:v0.77.1"), 10,
                                 50 * kMi));
    }
    t.containers.push_back(std::move(c));
    if (name == "prometheus-k8s" || name == "alertmanager-main") {
      ContainerSpec r = container(
          "config-reloader", image_id("quay.io/prometheus-operator/prometheus-config-reloader:v0.77.1"), 10, 50 * kMi);
      r.cpu_limit = 10;
      r.mem_limit = 50 * kMi;
      t.containers.push_back(std::move(r));
    }
    if (d.critical) {
      t.priority_class = "system-cluster-critical";
      t.priority = 2000000000;
    }
    t.service_account = d.name;
    if (pinned) {
      t.node_selector.push_back({"pool", "infra"});
      tolerate(t, kTaintInfra, "Equal");
    }
    finish_workload(w);
  }
}

void Generator::make_gpu_workloads(SplitMix64& rng, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    const int gpus = i < 4 ? kGpuClasses[i] : kGpuClasses[pick_weighted(rng, std::array<int, 4>{40, 20, 20, 20})];
    const bool serving = gpus <= 2 && rng.chance(0.6);
    const std::string word = kWords[rng.below(kWordCount)];
    Workload* w;
    int image;
    if (serving) {
      static const char* const kServe[][2] = {{"-vllm", "docker.io/vllm/vllm-openai:v0.6.3"},
                                              {"-triton", "nvcr.io/nvidia/tritonserver:24.08-py3"},
                                              {"-tgi", "ghcr.io/huggingface/text-generation-inference:2.3.1"}};
      const auto& s = kServe[rng.below(3)];
      w = &new_workload(rng, "ml-serving", "llm-" + word + s[0], OwnerKind::ReplicaSet, Target::Gpu);
      image = image_id(s[1]);
    } else {
      static const char* const kTrain[] = {"nvcr.io/nvidia/pytorch:24.08-py3", "docker.io/rayproject/ray-ml:2.37.0-gpu",
                                           "docker.io/tensorflow/tensorflow:2.17.0-gpu"};
      w = &new_workload(rng, "ml-training", "train-" + word + "-" + name_token(rng, 5), OwnerKind::Job, Target::Gpu);
      image = image_id(kTrain[rng.below(3)]);
    }
    PodTemplate& t = w->tmpl;
    const int64_t cpu_per_gpu = std::array<int64_t, 3>{4000, 6000, 8000}[rng.below(3)];
    const int64_t mem_per_gpu = std::array<int64_t, 3>{16, 20, 24}[rng.below(3)] * kGi;
    ContainerSpec c =
        container(serving ? "server" : "trainer", image, cpu_per_gpu * gpus / (gpus == 1 ? 2 : 1), mem_per_gpu * gpus);
    c.gpu = gpus;
    c.mem_limit = c.mem;
    if (serving) c.ports.push_back({8000, 0, false, "http"});
    if (!serving) c.eph = 50 * kGi;
    t.containers.push_back(std::move(c));
    if (!serving) t.restart_policy = "OnFailure";
    tolerate(t, kTaintGpu, "Exists");
    t.service_account = serving ? "model-server" : "trainer";
    t.priority_class = serving ? "high-priority" : "";
    t.priority = serving ? 1000000 : 0;
    finish_workload(*w);
  }
  // Pods on GPU nodes that need no GPU.
  const uint32_t cpu_only = std::max<uint32_t>(2, count / 3);
  for (uint32_t i = 0; i < cpu_only; ++i) {
    const bool notebook = i % 2 == 1;
    Workload& w = new_workload(rng, notebook ? "notebooks" : "ml-training",
                               notebook ? "jupyter-" + std::string(kWords[rng.below(kWordCount)]) : "ray-head",
                               notebook ? OwnerKind::StatefulSet : OwnerKind::ReplicaSet, Target::GpuCpuOnly);
    PodTemplate& t = w.tmpl;
    const int64_t cpu = std::array<int64_t, 3>{1000, 2000, 4000}[rng.below(3)];
    t.containers.push_back(container(notebook ? "notebook" : "ray-head",
                                     image_id(notebook ? "quay.io/jupyter/pytorch-notebook:cuda12-python-3.11"
                                                       : "docker.io/rayproject/ray-ml:2.37.0-gpu"),
                                     cpu, cpu * 4 * kMi * 1024 / 1000));
    t.node_selector.push_back({"pool", "gpu"});
    tolerate(t, kTaintGpu, "Exists");
    finish_workload(w);
  }
}

// The last resort that always fits a free pod slot.
void Generator::make_debug_workload(SplitMix64& rng) {
  Workload& w = new_workload(rng, "default", "debug-shell", OwnerKind::ReplicaSet, Target::General);
  w.target = Target::Pending;  // never drawn from the class lists
  w.tmpl.containers.push_back(container("shell", image_id("docker.io/library/busybox:1.36.1"), kAbsent, kAbsent));
  TolerationSpec all;
  all.op = "Exists";
  w.tmpl.tolerations.push_back(all);
  finish_workload(w);
  debug_workload_ = static_cast<uint32_t>(workloads_.size() - 1);
}

Requirement Generator::req(int key, const char* op, std::vector<std::string> values) {
  Requirement r;
  r.key = kLabelKeys[key];
  r.op = op;
  r.values = std::move(values);
  return r;
}

// A plain web-ish container with a popular image, `cpu` millicores.
ContainerSpec Generator::pending_container(SplitMix64& rng, const std::string& name, int64_t cpu) {
  static const char* const kPopular[] = {"docker.io/library/nginx:1.27.2",
                                         "docker.io/library/redis:7.4.1",
                                         "docker.io/library/python:3.12-slim",
                                         "docker.io/library/eclipse-temurin:21-jre",
                                         "registry.example.com/platform/gateway:6.8.2",
                                         "registry.example.com/team-b/frontend:3.40.2",
                                         "docker.io/library/node:20-slim",
                                         "registry.example.com/team-a/orders-api:2.14.1",
                                         "registry.example.com/team-d/recommender:4.0.1",
                                         "docker.io/library/nginx:1.27.2-alpine"};
  ContainerSpec c = container(name.substr(0, 63), image_id(kPopular[rng.below(10)]), cpu,
                              round_mem_mi(cpu * std::array<int64_t, 3>{1024, 2048, 4096}[rng.below(3)] / 1000));
  c.mem_limit = c.mem;
  c.ports.push_back({8080, 0, false, "http"});
  return c;
}

int64_t Generator::pending_cpu(SplitMix64& rng) {
  return std::array<int64_t, 6>{
      100, 250, 500, 1000, 2000, 4000}[pick_weighted(rng, std::array<int, 6>{15, 25, 25, 20, 10, 5})];
}

// Builds one pending workload for scenario `s`; returns its index, or -1
// when the scenario cannot be built here (e.g. no running deployment).
int64_t Generator::build_pending(SplitMix64& rng, int s) {
  static const char* const kNs[] = {"team-a", "team-b", "team-c", "team-d", "team-e", "default"};
  if (s == kScaleUp) {
    std::vector<uint32_t> candidates;
    for (size_t wi = 0; wi < workloads_.size(); ++wi) {
      const Workload& w = workloads_[wi];
      if (w.target == Target::General && w.kind == OwnerKind::ReplicaSet && w.running > 0 && w.tmpl.eff.cpu > 0)
        candidates.push_back(static_cast<uint32_t>(wi));
    }
    if (candidates.empty()) return -1;
    return candidates[rng.below(candidates.size())];
  }
  std::string ns = kNs[rng.below(6)];
  std::string base = kWords[rng.below(kWordCount)];
  static const char* const kScenarioNames[] = {
      "",        "",        "-zonal",      "-pinned", "-typed",     "-ssd",        "-newgen",  "-prefers",
      "",        "-infra",  "-spot",       "-agent",  "-sandboxed", "-besteffort", "-scratch", "-dpdk",
      "-podres", "-spread", "-zonespread", "-near",   "-huge",      "-lost"};
  base += kScenarioNames[s];
  if (s == kGpu) {
    ns = "ml-serving";
    base = "inference-" + base;
  }
  Workload& w = new_workload(rng, ns, base, OwnerKind::ReplicaSet, Target::Pending);
  w.created = kNow - rng.between(30, 3600);
  PodTemplate& t = w.tmpl;
  const uint32_t wi = static_cast<uint32_t>(workloads_.size() - 1);
  const int64_t cpu = pending_cpu(rng);
  t.containers.push_back(pending_container(rng, w.name, cpu));
  ContainerSpec& main = t.containers.back();
  if (rng.chance(0.15)) {
    t.priority_class = "high-priority";
    t.priority = 1000000;
  }
  const std::string zone = zone_names_[rng.below(zone_names_.size())];
  switch (s) {
    case kPlain:
    case kScaleUp:
      break;
    case kSelectorZone:
      t.node_selector.push_back({kLabelKeys[kLZone], zone});
      break;
    case kSelectorPool:
      t.node_selector.push_back({"pool", rng.chance(0.5) ? "compute" : "memory"});
      if (rng.chance(0.5)) t.node_selector.insert(t.node_selector.begin(), {kLabelKeys[kLZone], zone});
      break;
    case kAffinityIn: {
      t.required_terms.push_back({req(kLInstanceType, "In", {"m5.2xlarge", "m5.4xlarge", "m7i.2xlarge"})});
      if (rng.chance(0.5))  // a second term, OR-ed
        t.required_terms.push_back({req(kLPool, "In", {"compute"}), req(kLZone, "In", {zone})});
      break;
    }
    case kAffinityNotInExists:
      t.required_terms.push_back({req(kLZone, "NotIn", {zone}), req(kLLocalSsd, "Exists", {})});
      main.eph = 20 * kGi;
      break;
    case kAffinityGt:
      t.required_terms.push_back({req(kLGeneration, "Gt", {"5"}), req(kLArch, "In", {"amd64"})});
      break;
    case kPreferred: {
      PreferredTerm a;
      a.weight = 80;
      a.reqs.push_back(req(kLPool, "In", {"memory"}));
      t.preferred.push_back(std::move(a));
      PreferredTerm b;
      b.weight = static_cast<int32_t>(rng.between(1, 40));
      b.reqs.push_back(req(kLZone, "In", {zone}));
      t.preferred.push_back(std::move(b));
      PreferredTerm c;
      c.weight = 10;
      c.reqs.push_back(req(kLCapacityType, "NotIn", {"SPOT"}));
      t.preferred.push_back(std::move(c));
      break;
    }
    case kGpu: {
      // Ask for a GPU count some node still has free.
      int64_t most_free = 0;
      for (size_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i].gpus > 0 && !nodes_[i].cordoned)
          most_free =
              std::max(most_free, nodes_[i].gpus - pending_->requested("nvidia.com/gpu", static_cast<uint32_t>(i)));
      int g = static_cast<int>(pick_weighted(rng, std::array<int, 4>{50, 25, 15, 10}));
      while (g > 0 && kGpuClasses[g] > most_free) --g;
      const int gpus = kGpuClasses[g];
      main.image = image_id(rng.chance(0.5) ? "docker.io/vllm/vllm-openai:v0.6.3" : "nvcr.io/nvidia/pytorch:24.08-py3");
      main.cpu = 3000 * gpus;  // NOLINT(bugprone-implicit-widening-of-multiplication-result): at most 8 GPUs
      main.mem = 16 * kGi * gpus;
      main.mem_limit = main.mem;
      main.gpu = gpus;
      tolerate(t, kTaintGpu, "Exists");
      if (rng.chance(0.4))
        t.node_selector.push_back(
            {kLabelKeys[kLGpuProduct], gpus <= 4 && rng.chance(0.5) ? "NVIDIA-A10G" : "NVIDIA-A100-SXM4-40GB"});
      break;
    }
    case kInfraToleration: {
      tolerate(t, kTaintInfra, "Equal");
      PreferredTerm a;
      a.weight = 50;
      a.reqs.push_back(req(kLPool, "In", {"infra"}));
      t.preferred.push_back(std::move(a));
      break;
    }
    case kSpotToleration: {
      tolerate(t, kTaintSpot, "Equal");
      PreferredTerm a;
      a.weight = 100;
      a.reqs.push_back(req(kLCapacityType, "In", {"SPOT"}));
      t.preferred.push_back(std::move(a));
      t.priority_class = "low-priority";
      t.priority = -10;
      break;
    }
    case kHostPort: {
      static const int32_t kPorts[] = {8125, 8126, 9091, 9300, 10255, 24224};
      const int32_t port = kPorts[host_port_groups_++ % 6];
      main.ports.push_back({port, port, port == 8125, "agent"});
      break;
    }
    case kSidecarOverhead: {
      ContainerSpec init = container("migrate", image_id("docker.io/library/busybox:1.36.1"), 500, 256 * kMi);
      t.init.push_back(std::move(init));
      ContainerSpec side = container("envoy", image_id("docker.io/envoyproxy/envoy:v1.31.2"), 200, 128 * kMi);
      side.sidecar = true;
      side.ports.push_back({9901, 0, false, "admin"});
      t.init.push_back(std::move(side));
      ContainerSpec init2 = container("seed-data", image_id("docker.io/library/alpine:3.20.3"), 1000, 64 * kMi);
      t.init.push_back(std::move(init2));
      t.runtime_class = "kata";
      t.overhead_cpu = 250;
      t.overhead_mem = 120 * kMi;
      break;
    }
    case kBestEffort:
      main.cpu = main.mem = main.mem_limit = kAbsent;
      break;
    case kEphemeral:
      main.eph = rng.between(5, 40) * kGi;
      break;
    case kHugepages:
      main.hp = 2 * kGi;
      main.cpu = main.cpu_limit = 2000;
      main.mem = main.mem_limit = 4 * kGi;
      break;
    case kPodLevel:
      main.cpu = main.mem = main.mem_limit = kAbsent;
      t.containers.push_back(container("helper", image_id("docker.io/library/python:3.12-slim"), kAbsent, kAbsent));
      t.pod_cpu = cpu;
      t.pod_mem = round_mem_mi(cpu * 2);
      break;
    case kAntiAffinity: {
      PodAffinitySpec a;
      a.anti = true;
      a.required = true;
      a.app = w.app;
      a.topology_key = "kubernetes.io/hostname";
      t.pod_affinity.push_back(a);
      break;
    }
    case kSpread: {
      SpreadSpec z;
      z.topology_key = "topology.kubernetes.io/zone";
      z.app = w.app;
      t.spread.push_back(z);
      SpreadSpec h;
      h.max_skew = 2;
      h.topology_key = "kubernetes.io/hostname";
      h.do_not_schedule = false;
      h.app = w.app;
      t.spread.push_back(h);
      break;
    }
    case kPodAffinity: {
      std::vector<uint32_t> running;
      for (size_t i = 0; i < workloads_.size(); ++i)
        if (workloads_[i].target == Target::General && workloads_[i].running >= 3)
          running.push_back(static_cast<uint32_t>(i));
      if (running.empty()) break;
      const Workload& other = workloads_[running[rng.below(running.size())]];
      PodAffinitySpec a;
      a.required = true;
      a.app = other.app;
      a.topology_key = "topology.kubernetes.io/zone";
      // Pod affinity looks in the pod's own namespace unless told otherwise.
      if (other.ns != w.ns) a.ns = other.ns;
      PodAffinitySpec b = a;
      b.required = false;
      b.weight = 50;
      b.topology_key = "kubernetes.io/hostname";
      t.pod_affinity.push_back(a);
      t.pod_affinity.push_back(b);
      break;
    }
    case kHugeCpu:
      main.cpu = 200000;
      main.mem = main.mem_limit = 64 * kGi;
      break;
    case kMissingPool:
      t.node_selector.push_back({"pool", "highmem-arm"});
      break;
    default:
      break;
  }
  if (opt_.with_inter_pod_constraints && !inter_pod_scenario(s) && !impossible_scenario(s) && rng.chance(0.15)) {
    PodAffinitySpec a;
    a.anti = true;
    a.weight = 100;
    a.app = w.app;
    a.topology_key = "kubernetes.io/hostname";
    t.pod_affinity.push_back(a);
  }
  if (s != kAffinityGt && s != kGpu && rng.chance(0.08)) t.node_selector.push_back({kLabelKeys[kLArch], "amd64"});
  std::sort(t.node_selector.begin(), t.node_selector.end());
  finish_workload(w);
  return wi;
}

}  // namespace bulkscore::gen
