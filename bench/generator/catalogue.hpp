// The generator's catalogues (host only, internal to bench/generator): sizes,
// the fixed clock, the image catalogue, instance types, OS images, node label
// keys, taints, workload sizes and names, and the small formatting helpers
// every part of the generator uses. Nothing here depends on the seed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/generator/generator.hpp"

namespace bulkscore::gen {

inline constexpr int64_t kKi = 1024;
inline constexpr int64_t kMi = 1024 * kKi;
inline constexpr int64_t kGi = 1024 * kMi;
inline constexpr int64_t kAbsent = -1;  // a request or limit the container does not mention

// Stream numbers for SplitMix64::derive.
enum Stream : uint64_t {
  kStreamNodes = 1,
  kStreamRunning,
  kStreamPending,
  kStreamImages,
  kStreamEmitNodes,
  kStreamEmitPods
};

// ---------------------------------------------------------------- time

constexpr int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// The moment the snapshot was "taken": fixed, so output does not depend on the clock.
// NOLINTNEXTLINE(bugprone-implicit-widening-of-multiplication-result): constant, fits int
inline constexpr int64_t kNow = days_from_civil(2026, 2, 1) * 86400 + 12 * 3600;

std::string format_time(int64_t t);

// ---------------------------------------------------------------- small strings

inline constexpr char kHex[] = "0123456789abcdef";
// The alphabet Kubernetes uses for generated name suffixes and template hashes.
inline constexpr char kNameAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";

void append_hex(std::string& out, uint64_t v, int digits);

std::string make_uid(SplitMix64& rng);

std::string hex_string(SplitMix64& rng, int digits);

std::string name_token(SplitMix64& rng, int n);

// A five-character suffix unique per ordinal: x -> (x * 7777777 + salt) mod
// 27^5 is a bijection (7777777 is prime to 3), so replicas never collide.
inline constexpr uint64_t kSuffixSpace = 14348907;  // 27^5
std::string name_suffix(uint64_t ordinal, uint64_t salt);

std::string dotted_ip(uint32_t v);

std::string fmt_cpu(int64_t milli);

std::string fmt_bytes(int64_t b);

// Memory as people write it: 64Mi steps up to 1Gi, then 256Mi steps.
int64_t round_mem_mi(int64_t mi);

// Index drawn with probability weight[i] / sum(weights).
template <size_t N>
size_t pick_weighted(SplitMix64& rng, const std::array<int, N>& weights) {
  int64_t total = 0;
  for (int w : weights) total += w;
  int64_t r = static_cast<int64_t>(rng.below(static_cast<uint64_t>(total)));
  for (size_t i = 0; i < N; ++i) {
    if (r < weights[i]) return i;
    r -= weights[i];
  }
  return N - 1;
}

// ---------------------------------------------------------------- images

enum class ImageKind : uint8_t { System, App, Ml };

struct ImageDef {
  const char* repo_tag;
  int64_t size;
  ImageKind kind;
  int popularity;  // weight when a node's image history is drawn
};

// Sizes are what the kubelet reports (unpacked). Tags are real releases of
// late 2024; the team images are made up.
inline constexpr ImageDef kImageDefs[] = {
    {"registry.k8s.io/pause:3.10", 320368, ImageKind::System, 0},
    {"registry.k8s.io/kube-proxy:v1.35.4", 30812445, ImageKind::System, 0},
    {"quay.io/prometheus/node-exporter:v1.8.2", 12015302, ImageKind::System, 0},
    {"cr.fluentbit.io/fluent/fluent-bit:3.1.9", 35432211, ImageKind::System, 0},
    {"public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.35.0", 80345117, ImageKind::System, 0},
    {"public.ecr.aws/eks-distro/kubernetes-csi/node-driver-registrar:v2.11.1-eks-1-31-5", 9876543, ImageKind::System,
     0},
    {"public.ecr.aws/eks-distro/kubernetes-csi/livenessprobe:v2.13.1-eks-1-31-5", 8912345, ImageKind::System, 0},
    {"registry.k8s.io/coredns/coredns:v1.11.3", 18562039, ImageKind::System, 4},
    {"quay.io/brancz/kube-rbac-proxy:v0.18.1", 23456789, ImageKind::System, 2},
    {"nvcr.io/nvidia/k8s-device-plugin:v0.16.2", 148765432, ImageKind::System, 0},
    {"nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04", 612345678, ImageKind::System, 0},
    {"registry.k8s.io/metrics-server/metrics-server:v0.7.2", 19283746, ImageKind::System, 2},
    {"docker.io/istio/proxyv2:1.23.2", 94123456, ImageKind::System, 30},
    {"registry.k8s.io/ingress-nginx/controller:v1.11.3", 105234567, ImageKind::System, 2},
    {"quay.io/jetstack/cert-manager-controller:v1.16.1", 21456789, ImageKind::System, 2},
    {"quay.io/prometheus/prometheus:v2.54.1", 112345678, ImageKind::System, 2},
    {"quay.io/prometheus/alertmanager:v0.27.0", 31234567, ImageKind::System, 2},
    {"docker.io/grafana/grafana:11.2.2", 134567890, ImageKind::System, 2},
    {"docker.io/grafana/loki:3.2.0", 78123456, ImageKind::System, 2},
    {"quay.io/prometheus-operator/prometheus-config-reloader:v0.77.1", 14234567, ImageKind::System, 2},
    {"quay.io/argoproj/argocd:v2.12.6", 178456789, ImageKind::System, 2},
    {"registry.k8s.io/autoscaling/cluster-autoscaler:v1.31.0", 45123456, ImageKind::System, 1},
    {"docker.io/library/nginx:1.27.2", 72345678, ImageKind::App, 60},
    {"docker.io/library/nginx:1.27.2-alpine", 20456789, ImageKind::App, 30},
    {"docker.io/library/redis:7.4.1", 45678901, ImageKind::App, 45},
    {"docker.io/library/postgres:16.4", 158234567, ImageKind::App, 20},
    {"docker.io/library/mysql:8.4.3", 603456789, ImageKind::App, 10},
    {"docker.io/library/mongo:7.0.15", 256789012, ImageKind::App, 8},
    {"docker.io/library/memcached:1.6.31", 30123456, ImageKind::App, 15},
    {"docker.io/library/rabbitmq:3.13.7-management", 112890123, ImageKind::App, 8},
    {"docker.io/bitnami/kafka:3.8.1", 412345678, ImageKind::App, 10},
    {"docker.elastic.co/elasticsearch/elasticsearch:8.15.3", 1234567890, ImageKind::App, 6},
    {"docker.io/library/busybox:1.36.1", 2156789, ImageKind::App, 50},
    {"docker.io/library/alpine:3.20.3", 3623456, ImageKind::App, 40},
    {"docker.io/library/python:3.12-slim", 51234567, ImageKind::App, 40},
    {"docker.io/library/eclipse-temurin:21-jre", 193456789, ImageKind::App, 35},
    {"docker.io/library/node:20-slim", 71234567, ImageKind::App, 30},
    {"docker.io/library/golang:1.23", 823456789, ImageKind::App, 5},
    {"docker.io/envoyproxy/envoy:v1.31.2", 61234567, ImageKind::App, 20},
    {"docker.io/library/haproxy:3.0.5", 41234567, ImageKind::App, 10},
    {"docker.io/library/traefik:v3.1.6", 51234567, ImageKind::App, 8},
    {"docker.io/otel/opentelemetry-collector-contrib:0.111.0", 251234567, ImageKind::App, 15},
    {"docker.io/jaegertracing/all-in-one:1.62.0", 30345678, ImageKind::App, 5},
    {"docker.io/hashicorp/vault:1.18.0", 150345678, ImageKind::App, 5},
    {"docker.io/apache/spark:3.5.3", 612345678, ImageKind::App, 8},
    {"registry.example.com/team-a/orders-api:2.14.1", 184234567, ImageKind::App, 25},
    {"registry.example.com/team-a/checkout:1.9.0", 162345678, ImageKind::App, 20},
    {"registry.example.com/team-b/search-indexer:5.2.3", 312345678, ImageKind::App, 15},
    {"registry.example.com/team-b/frontend:3.40.2", 98234567, ImageKind::App, 30},
    {"registry.example.com/team-c/payments:7.1.0", 215678901, ImageKind::App, 15},
    {"registry.example.com/team-c/ledger:0.33.4", 143456789, ImageKind::App, 10},
    {"registry.example.com/team-d/recommender:4.0.1", 845678901, ImageKind::App, 10},
    {"registry.example.com/team-d/feature-store:1.2.8", 367890123, ImageKind::App, 8},
    {"registry.example.com/team-e/media-transcoder:2.3.0", 1523456789, ImageKind::App, 6},
    {"registry.example.com/team-e/notifications:1.17.5", 87654321, ImageKind::App, 20},
    {"registry.example.com/platform/gateway:6.8.2", 112233445, ImageKind::App, 30},
    {"nvcr.io/nvidia/pytorch:24.08-py3", 8123456789, ImageKind::Ml, 40},
    {"nvcr.io/nvidia/tritonserver:24.08-py3", 6523456789, ImageKind::Ml, 25},
    {"nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04", 2234567890, ImageKind::Ml, 30},
    {"docker.io/tensorflow/tensorflow:2.17.0-gpu", 3534567890, ImageKind::Ml, 10},
    {"docker.io/vllm/vllm-openai:v0.6.3", 5123456789, ImageKind::Ml, 35},
    {"ghcr.io/huggingface/text-generation-inference:2.3.1", 4623456789, ImageKind::Ml, 15},
    {"docker.io/rayproject/ray-ml:2.37.0-gpu", 7234567890, ImageKind::Ml, 20},
    {"quay.io/jupyter/pytorch-notebook:cuda12-python-3.11", 3834567890, ImageKind::Ml, 10},
};
inline constexpr size_t kImageCount = sizeof kImageDefs / sizeof kImageDefs[0];
static_assert(kImageCount <= 128, "ImageSet holds 128 images");

struct Image {
  std::string tag_name;     // "repo:tag"
  std::string digest_name;  // "repo@sha256:<64 hex>"
  int64_t size = 0;
  ImageKind kind = ImageKind::App;
  int popularity = 0;
};

uint64_t fnv1a(std::string_view s);

// The catalogue does not depend on the seed: digests are a hash of the name.
std::vector<Image> build_images();

int image_id(std::string_view repo_tag);

struct ImageSet {
  uint64_t bits[2] = {0, 0};
  void add(int i) { bits[i >> 6] |= uint64_t{1} << (i & 63); }
  bool has(int i) const { return (bits[i >> 6] >> (i & 63)) & 1; }
  void merge(const ImageSet& o) {
    bits[0] |= o.bits[0];
    bits[1] |= o.bits[1];
  }
};

// ---------------------------------------------------------------- instance types

enum class Pool : uint8_t { General, Compute, Memory, Infra, Gpu };
inline constexpr const char* kPoolNames[] = {"general", "compute", "memory", "infra", "gpu"};

struct InstanceType {
  const char* name;
  Pool pool;
  int cpu;      // cores
  int mem_gib;  // nominal
  int gpus;
  const char* gpu_product;
  const char* gpu_count;
  const char* gpu_memory_mib;
  const char* generation;
  bool arm;
  int max_pods;
  int disk_gib;
  int weight;  // within its pool
};

inline constexpr InstanceType kTypes[] = {
    {"m5.xlarge", Pool::General, 4, 16, 0, nullptr, nullptr, nullptr, "5", false, 110, 80, 25},
    {"m5.2xlarge", Pool::General, 8, 32, 0, nullptr, nullptr, nullptr, "5", false, 110, 100, 30},
    {"m5.4xlarge", Pool::General, 16, 64, 0, nullptr, nullptr, nullptr, "5", false, 110, 100, 15},
    {"m5.8xlarge", Pool::General, 32, 128, 0, nullptr, nullptr, nullptr, "5", false, 110, 200, 8},
    {"m6g.xlarge", Pool::General, 4, 16, 0, nullptr, nullptr, nullptr, "6", true, 110, 80, 6},
    {"m6g.2xlarge", Pool::General, 8, 32, 0, nullptr, nullptr, nullptr, "6", true, 110, 100, 6},
    {"m7i.2xlarge", Pool::General, 8, 32, 0, nullptr, nullptr, nullptr, "7", false, 110, 100, 10},
    {"c5.2xlarge", Pool::Compute, 8, 16, 0, nullptr, nullptr, nullptr, "5", false, 110, 80, 30},
    {"c5.4xlarge", Pool::Compute, 16, 32, 0, nullptr, nullptr, nullptr, "5", false, 110, 100, 40},
    {"c6i.8xlarge", Pool::Compute, 32, 64, 0, nullptr, nullptr, nullptr, "6", false, 110, 100, 20},
    {"c5.9xlarge", Pool::Compute, 36, 72, 0, nullptr, nullptr, nullptr, "5", false, 110, 200, 10},
    {"r5.2xlarge", Pool::Memory, 8, 64, 0, nullptr, nullptr, nullptr, "5", false, 110, 100, 40},
    {"r5.4xlarge", Pool::Memory, 16, 128, 0, nullptr, nullptr, nullptr, "5", false, 110, 200, 35},
    {"r6i.8xlarge", Pool::Memory, 32, 256, 0, nullptr, nullptr, nullptr, "6", false, 110, 200, 25},
    {"m5.2xlarge", Pool::Infra, 8, 32, 0, nullptr, nullptr, nullptr, "5", false, 110, 100, 60},
    {"m5.4xlarge", Pool::Infra, 16, 64, 0, nullptr, nullptr, nullptr, "5", false, 110, 200, 40},
    {"g5.2xlarge", Pool::Gpu, 8, 32, 1, "NVIDIA-A10G", "1", "23028", "5", false, 110, 450, 30},
    {"g5.12xlarge", Pool::Gpu, 48, 192, 4, "NVIDIA-A10G", "4", "23028", "5", false, 110, 500, 35},
    {"p4d.24xlarge", Pool::Gpu, 96, 1152, 8, "NVIDIA-A100-SXM4-40GB", "8", "40960", "4", false, 250, 1000, 25},
    {"p5.48xlarge", Pool::Gpu, 192, 2048, 8, "NVIDIA-H100-80GB-HBM3", "8", "81559", "5", false, 250, 1000, 10},
};
inline constexpr size_t kTypeCount = sizeof kTypes / sizeof kTypes[0];

size_t pick_type(SplitMix64& rng, Pool pool);

// kubelet cpu reserve (the GKE/EKS formula): 6% of the first core, 1% of the
// second, 0.5% of the next two, 0.25% of the rest.
int64_t reserved_cpu_milli(int cores);

// ---------------------------------------------------------------- OS images, labels, taints

struct OsVariant {
  const char* os_image;
  const char* kernel_amd64;
  const char* kernel_arm64;
  const char* runtime;
};
inline constexpr OsVariant kOsVariants[] = {
    {"Amazon Linux 2023.6.20241031", "6.1.112-124.190.amzn2023.x86_64", "6.1.112-124.190.amzn2023.aarch64",
     "containerd://1.7.22"},
    {"Bottlerocket OS 1.26.1 (aws-k8s-1.35)", "6.1.112", "6.1.112", "containerd://1.7.22+bottlerocket"},
    {"Ubuntu 22.04.5 LTS", "6.8.0-1017-aws", "6.8.0-1017-aws", "containerd://1.7.12"},
};

// Labels, in the (sorted) order they are written.
enum LabelKey : int {
  kLBetaArch,
  kLBetaOs,
  kLCapacityType,
  kLNodegroup,
  kLArch,
  kLHostname,
  kLOs,
  kLRoleInfra,
  kLGeneration,
  kLLocalSsd,
  kLInstanceType,
  kLGpuCount,
  kLGpuMemory,
  kLGpuProduct,
  kLPool,
  kLRegion,
  kLZone,
  kLabelKeyCount
};
inline constexpr const char* kLabelKeys[kLabelKeyCount] = {"beta.kubernetes.io/arch",
                                                           "beta.kubernetes.io/os",
                                                           "eks.amazonaws.com/capacityType",
                                                           "eks.amazonaws.com/nodegroup",
                                                           "kubernetes.io/arch",
                                                           "kubernetes.io/hostname",
                                                           "kubernetes.io/os",
                                                           "node-role.kubernetes.io/infra",
                                                           "node.bulkscore.io/generation",
                                                           "node.bulkscore.io/local-ssd",
                                                           "node.kubernetes.io/instance-type",
                                                           "nvidia.com/gpu.count",
                                                           "nvidia.com/gpu.memory",
                                                           "nvidia.com/gpu.product",
                                                           "pool",
                                                           "topology.kubernetes.io/region",
                                                           "topology.kubernetes.io/zone"};

struct TaintDef {
  const char* key;
  const char* value;
  const char* effect;
};
inline constexpr TaintDef kTaintGpu{"nvidia.com/gpu", "present", "NoSchedule"};
inline constexpr TaintDef kTaintInfra{"dedicated", "infra", "NoSchedule"};
inline constexpr TaintDef kTaintSpot{"spot", "true", "PreferNoSchedule"};
inline constexpr TaintDef kTaintCordon{"node.kubernetes.io/unschedulable", "", "NoSchedule"};

// ---------------------------------------------------------------- workloads

// cpu classes (millicores) workloads are sorted into; a node asks for a class
// near (cpu still to fill) / (pods still to place).
inline constexpr int64_t kClassCpu[] = {0, 100, 250, 500, 1000, 2000, 4000, 8000, 16000};
inline constexpr int kClassCount = 9;
int class_of(int64_t cpu);
inline constexpr int kGpuClasses[] = {1, 2, 4, 8};

inline constexpr const char* kWords[] = {
    "api",       "web",      "checkout",    "payments",      "search",        "cart",    "auth",     "orders",
    "inventory", "catalog",  "recommender", "notifications", "billing",       "gateway", "frontend", "profile",
    "reviews",   "shipping", "pricing",     "ledger",        "analytics",     "ingest",  "indexer",  "reporting",
    "session",   "media",    "thumbnailer", "mailer",        "feature-store", "ranking", "fraud",    "quotes"};
inline constexpr size_t kWordCount = sizeof kWords / sizeof kWords[0];

}  // namespace bulkscore::gen
