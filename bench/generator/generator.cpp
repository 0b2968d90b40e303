// Synthetic cluster generator; the shape is described in generator.hpp.
//
// Order of work: nodes (roles, instance types, capacity), running pods
// (daemonsets, then a per-node share of workload pods placed only where they
// fit), pending groups (sized by a first-fit dry run on the capacity left),
// node image lists (which depend on the pods placed), then the two documents.
// Each phase draws from its own SplitMix64 stream of the seed, so e.g. the
// node list does not change when only the pod counts do.
#include "bench/generator/generator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <set>
#include <string_view>
#include <utility>

#include "host/common.hpp"
#include "host/io/io.hpp"
#include "host/io/json_writer.hpp"

namespace bulkscore {
namespace {

constexpr int64_t kKi = 1024;
constexpr int64_t kMi = 1024 * kKi;
constexpr int64_t kGi = 1024 * kMi;
constexpr int64_t kAbsent = -1;  // a request or limit the container does not mention

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

int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// The moment the snapshot was "taken": fixed, so output does not depend on the clock.
const int64_t kNow = days_from_civil(2026, 2, 1) * 86400 + 12 * 3600;

std::string format_time(int64_t t) {
  int64_t z = t / 86400;
  const int64_t secs = t - z * 86400;
  z += 719468;
  const int64_t era = z / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp + (mp < 10 ? 3 : -9);
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", static_cast<int>(y), static_cast<int>(m),
                static_cast<int>(d), static_cast<int>(secs / 3600), static_cast<int>(secs / 60 % 60),
                static_cast<int>(secs % 60));
  return buf;
}

// ---------------------------------------------------------------- small strings

const char kHex[] = "0123456789abcdef";
// The alphabet Kubernetes uses for generated name suffixes and template hashes.
const char kNameAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";

void append_hex(std::string& out, uint64_t v, int digits) {
  for (int i = digits - 1; i >= 0; --i) out += kHex[(v >> (4 * i)) & 15];
}

std::string make_uid(SplitMix64& rng) {
  const uint64_t a = rng.next();
  const uint64_t b = rng.next();
  std::string s;
  s.reserve(36);
  append_hex(s, a >> 32, 8);
  s += '-';
  append_hex(s, (a >> 16) & 0xffff, 4);
  s += '-';
  append_hex(s, 0x4000 | (a & 0x0fff), 4);
  s += '-';
  append_hex(s, 0x8000 | ((b >> 48) & 0x3fff), 4);
  s += '-';
  append_hex(s, b & 0xffffffffffffULL, 12);
  return s;
}

std::string hex_string(SplitMix64& rng, int digits) {
  std::string s;
  s.reserve(digits);
  while (digits > 0) {
    const int n = std::min(digits, 16);
    append_hex(s, rng.next(), n);
    digits -= n;
  }
  return s;
}

std::string name_token(SplitMix64& rng, int n) {
  std::string s(n, ' ');
  for (char& ch : s) ch = kNameAlphabet[rng.below(27)];
  return s;
}

// A five-character suffix unique per ordinal: x -> (x * 7777777 + salt) mod
// 27^5 is a bijection (7777777 is prime to 3), so replicas never collide.
constexpr uint64_t kSuffixSpace = 14348907;  // 27^5
std::string name_suffix(uint64_t ordinal, uint64_t salt) {
  if (ordinal >= kSuffixSpace) throw Error("generator: too many replicas in one workload");
  uint64_t x = (ordinal * 7777777 + salt % kSuffixSpace) % kSuffixSpace;
  std::string s(5, ' ');
  for (int i = 4; i >= 0; --i) {
    s[i] = kNameAlphabet[x % 27];
    x /= 27;
  }
  return s;
}

std::string dotted_ip(uint32_t v) {
  return std::to_string(v >> 24) + '.' + std::to_string((v >> 16) & 255) + '.' + std::to_string((v >> 8) & 255) + '.' +
         std::to_string(v & 255);
}

std::string fmt_cpu(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string fmt_bytes(int64_t b) {
  if (b != 0 && b % kGi == 0) return std::to_string(b / kGi) + "Gi";
  if (b != 0 && b % kMi == 0) return std::to_string(b / kMi) + "Mi";
  if (b != 0 && b % kKi == 0) return std::to_string(b / kKi) + "Ki";
  return std::to_string(b);
}

// Memory as people write it: 64Mi steps up to 1Gi, then 256Mi steps.
int64_t round_mem_mi(int64_t mi) {
  if (mi <= 64) return 64 * kMi;
  if (mi <= 1024) return (mi + 63) / 64 * 64 * kMi;
  return (mi + 255) / 256 * 256 * kMi;
}

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
const ImageDef kImageDefs[] = {
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
constexpr size_t kImageCount = sizeof kImageDefs / sizeof kImageDefs[0];
static_assert(kImageCount <= 128, "ImageSet holds 128 images");

struct Image {
  std::string tag_name;     // "repo:tag"
  std::string digest_name;  // "repo@sha256:<64 hex>"
  int64_t size = 0;
  ImageKind kind = ImageKind::App;
  int popularity = 0;
};

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ULL;
  return h;
}

// The catalogue does not depend on the seed: digests are a hash of the name.
std::vector<Image> build_images() {
  std::vector<Image> out;
  out.reserve(kImageCount);
  for (const ImageDef& d : kImageDefs) {
    Image im;
    im.tag_name = d.repo_tag;
    const std::string_view rt(d.repo_tag);
    SplitMix64 h(fnv1a(rt));
    im.digest_name = std::string(rt.substr(0, rt.rfind(':'))) + "@sha256:" + hex_string(h, 64);
    im.size = d.size;
    im.kind = d.kind;
    im.popularity = d.popularity;
    out.push_back(std::move(im));
  }
  return out;
}

int image_id(std::string_view repo_tag) {
  for (size_t i = 0; i < kImageCount; ++i)
    if (repo_tag == kImageDefs[i].repo_tag) return static_cast<int>(i);
  throw Error("generator: image missing from the catalogue: " + std::string(repo_tag));
}

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
const char* const kPoolNames[] = {"general", "compute", "memory", "infra", "gpu"};

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

const InstanceType kTypes[] = {
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
constexpr size_t kTypeCount = sizeof kTypes / sizeof kTypes[0];

size_t pick_type(SplitMix64& rng, Pool pool) {
  int total = 0;
  for (const InstanceType& t : kTypes)
    if (t.pool == pool) total += t.weight;
  int r = static_cast<int>(rng.below(static_cast<uint64_t>(total)));
  for (size_t i = 0; i < kTypeCount; ++i) {
    if (kTypes[i].pool != pool) continue;
    if (r < kTypes[i].weight) return i;
    r -= kTypes[i].weight;
  }
  return 0;
}

// kubelet cpu reserve (the GKE/EKS formula): 6% of the first core, 1% of the
// second, 0.5% of the next two, 0.25% of the rest.
int64_t reserved_cpu_milli(int cores) {
  int64_t m = 60;
  if (cores >= 2) m += 10;
  if (cores >= 3) m += 5 * std::min(cores - 2, 2);
  if (cores > 4) m += (cores - 4) * 10 / 4;
  return m;
}

// ---------------------------------------------------------------- nodes

enum class Role : uint8_t { General, Spot, Infra, Gpu };

struct NodeRec {
  std::string name;
  uint32_t index = 0;
  uint16_t type = 0;
  uint16_t zone = 0;
  Role role = Role::General;
  bool cordoned = false;
  bool local_ssd = false;
  uint8_t os = 0;  // index into kOsVariants
  bool old_kubelet = false;
  int64_t created = 0;
  uint64_t emit_seed = 0;

  int64_t cap_cpu = 0, cap_mem_ki = 0, cap_eph_ki = 0;
  int64_t alloc_cpu = 0, alloc_mem = 0, alloc_eph = 0, hugepages = 0;  // milli, bytes
  int32_t max_pods = 0;
  int32_t gpus = 0;

  ImageSet image_set;            // images of the pods placed here
  std::vector<uint16_t> images;  // final list, largest first
};

const InstanceType& type_of(const NodeRec& n) { return kTypes[n.type]; }
Pool pool_of(const NodeRec& n) { return n.role == Role::Infra ? Pool::Infra : type_of(n).pool; }

struct OsVariant {
  const char* os_image;
  const char* kernel_amd64;
  const char* kernel_arm64;
  const char* runtime;
};
const OsVariant kOsVariants[] = {
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
const char* const kLabelKeys[kLabelKeyCount] = {"beta.kubernetes.io/arch",
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

int label_key_id(std::string_view key) {
  for (int i = 0; i < kLabelKeyCount; ++i)
    if (key == kLabelKeys[i]) return i;
  return -1;  // no node has it
}

struct TaintDef {
  const char* key;
  const char* value;
  const char* effect;
};
const TaintDef kTaintGpu{"nvidia.com/gpu", "present", "NoSchedule"};
const TaintDef kTaintInfra{"dedicated", "infra", "NoSchedule"};
const TaintDef kTaintSpot{"spot", "true", "PreferNoSchedule"};
const TaintDef kTaintCordon{"node.kubernetes.io/unschedulable", "", "NoSchedule"};

// ---------------------------------------------------------------- pod templates

struct Res {
  int64_t cpu = 0, mem = 0, eph = 0, gpu = 0, hp = 0;
};

struct PortSpec {
  int32_t container_port = 0;
  int32_t host_port = 0;
  bool udp = false;
  const char* name = nullptr;
};

struct ContainerSpec {
  std::string name;
  int image = 0;
  int64_t cpu = kAbsent, mem = kAbsent, eph = kAbsent;  // requests
  int64_t gpu = 0, hp = 0;                              // requests == limits when > 0
  int64_t cpu_limit = kAbsent, mem_limit = kAbsent;
  bool sidecar = false;  // init container with restartPolicy Always
  std::vector<PortSpec> ports;
};

Res requests_of(const ContainerSpec& c) {
  Res r;
  r.cpu = std::max<int64_t>(c.cpu, 0);
  r.mem = std::max<int64_t>(c.mem, 0);
  r.eph = std::max<int64_t>(c.eph, 0);
  r.gpu = c.gpu;
  r.hp = c.hp;
  return r;
}

struct Requirement {
  std::string key;
  int key_id = -1;
  const char* op = "In";
  std::vector<std::string> values;
};

struct PreferredTerm {
  int32_t weight = 1;
  std::vector<Requirement> reqs;
};

struct TolerationSpec {
  std::string key;
  const char* op = "Equal";
  std::string value;
  const char* effect = "";
  int64_t seconds = kAbsent;
};

struct PodAffinitySpec {
  bool anti = false;
  bool required = false;
  int32_t weight = 0;  // preferred only
  std::string app;     // labelSelector matchLabels app=<app>
  std::string ns;      // namespaces: [ns]; empty: the pod's own namespace
  const char* topology_key = "";
};

struct SpreadSpec {
  int32_t max_skew = 1;
  const char* topology_key = "";
  bool do_not_schedule = true;
  std::string app;
};

struct PodTemplate {
  std::vector<ContainerSpec> init;
  std::vector<ContainerSpec> containers;
  int64_t overhead_cpu = kAbsent, overhead_mem = kAbsent;
  std::string runtime_class;
  int64_t pod_cpu = kAbsent, pod_mem = kAbsent;                    // spec.resources.requests
  std::vector<std::pair<std::string, std::string>> node_selector;  // sorted by key
  std::vector<std::vector<Requirement>> required_terms;            // OR of ANDs
  std::vector<PreferredTerm> preferred;
  std::vector<PodAffinitySpec> pod_affinity;
  std::vector<SpreadSpec> spread;
  std::vector<TolerationSpec> tolerations;
  bool daemonset_tolerations = false;  // the set the daemonset controller adds
  const char* priority_class = "";
  int32_t priority = 0;
  std::string service_account = "default";
  bool host_network = false;
  const char* restart_policy = "Always";
  int32_t grace_seconds = 30;
  std::vector<std::pair<std::string, std::string>> extra_labels;
  std::vector<std::pair<std::string, std::string>> annotations;

  // Derived by finish_template().
  Res eff;  // the pod's request as the scheduler computes it
  std::vector<uint32_t> host_ports;
  const char* qos = "BestEffort";
  ImageSet image_set;
};

// The scheduler's pod request (restated in k8s-semantics.md 2.5), so the
// placement books exactly what bulkscore will count.
void finish_template(PodTemplate& t) {
  Res regular, sidecars, init_max;
  for (const ContainerSpec& c : t.containers) {
    const Res r = requests_of(c);
    regular.cpu += r.cpu;
    regular.mem += r.mem;
    regular.eph += r.eph;
    regular.gpu += r.gpu;
    regular.hp += r.hp;
  }
  for (const ContainerSpec& c : t.init) {
    const Res r = requests_of(c);
    if (c.sidecar) {
      sidecars.cpu += r.cpu;
      sidecars.mem += r.mem;
      sidecars.eph += r.eph;
      sidecars.gpu += r.gpu;
      sidecars.hp += r.hp;
    } else {
      init_max.cpu = std::max(init_max.cpu, r.cpu + sidecars.cpu);
      init_max.mem = std::max(init_max.mem, r.mem + sidecars.mem);
      init_max.eph = std::max(init_max.eph, r.eph + sidecars.eph);
      init_max.gpu = std::max(init_max.gpu, r.gpu + sidecars.gpu);
      init_max.hp = std::max(init_max.hp, r.hp + sidecars.hp);
    }
  }
  Res e;
  e.cpu = std::max(regular.cpu + sidecars.cpu, init_max.cpu);
  e.mem = std::max(regular.mem + sidecars.mem, init_max.mem);
  e.eph = std::max(regular.eph + sidecars.eph, init_max.eph);
  e.gpu = std::max(regular.gpu + sidecars.gpu, init_max.gpu);
  e.hp = std::max(regular.hp + sidecars.hp, init_max.hp);
  if (t.pod_cpu != kAbsent) e.cpu = t.pod_cpu;
  if (t.pod_mem != kAbsent) e.mem = t.pod_mem;
  if (t.overhead_cpu != kAbsent) e.cpu += t.overhead_cpu;
  if (t.overhead_mem != kAbsent) e.mem += t.overhead_mem;
  t.eff = e;

  t.host_ports.clear();
  t.image_set = ImageSet{};
  auto take = [&](const ContainerSpec& c, bool counts_ports) {
    t.image_set.add(c.image);
    if (!counts_ports) return;
    for (const PortSpec& p : c.ports)
      if (p.host_port > 0) t.host_ports.push_back((p.udp ? 1u << 16 : 0u) | uint32_t(p.host_port));
  };
  for (const ContainerSpec& c : t.init) take(c, c.sidecar);
  for (const ContainerSpec& c : t.containers) take(c, true);

  // QoS as the API server assigns it (cpu and memory only).
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

enum class OwnerKind : uint8_t { ReplicaSet, StatefulSet, DaemonSet, Job };

// Where a workload's pods are placed.
enum class Target : uint8_t { General, Infra, Gpu, GpuCpuOnly, DaemonSet, Pending };

struct Workload {
  std::string ns;
  std::string name;  // Deployment / StatefulSet / DaemonSet / Job name
  std::string app;
  OwnerKind kind = OwnerKind::ReplicaSet;
  Target target = Target::General;
  std::string hash;       // pod-template-hash / controller-revision-hash
  std::string owner_uid;  // uid of the owning ReplicaSet / StatefulSet / ...
  uint64_t salt = 0;
  int64_t created = 0;
  uint32_t next_ordinal = 0;
  uint32_t running = 0;  // pods of it placed on nodes
  PodTemplate tmpl;
};

struct PodRec {
  uint32_t workload = 0;
  int32_t node = -1;  // -1: pending
  uint32_t ordinal = 0;
  std::string name;
};

// ---------------------------------------------------------------- matching

bool label_of(const std::vector<std::string>& zone_names, const std::string& region, const NodeRec& n, int key,
              std::string_view& out) {
  const InstanceType& t = type_of(n);
  switch (key) {
    case kLBetaArch:
    case kLArch:
      out = t.arm ? "arm64" : "amd64";
      return true;
    case kLBetaOs:
    case kLOs:
      out = "linux";
      return true;
    case kLCapacityType:
      out = n.role == Role::Spot ? "SPOT" : "ON_DEMAND";
      return true;
    case kLNodegroup:
      return false;  // written separately; no template selects on it
    case kLHostname:
      out = n.name;
      return true;
    case kLRoleInfra:
      out = "";
      return n.role == Role::Infra;
    case kLGeneration:
      out = t.generation;
      return true;
    case kLLocalSsd:
      out = "true";
      return n.local_ssd;
    case kLInstanceType:
      out = t.name;
      return true;
    case kLGpuCount:
      out = t.gpu_count ? t.gpu_count : "";
      return t.gpus > 0;
    case kLGpuMemory:
      out = t.gpu_memory_mib ? t.gpu_memory_mib : "";
      return t.gpus > 0;
    case kLGpuProduct:
      out = t.gpu_product ? t.gpu_product : "";
      return t.gpus > 0;
    case kLPool:
      out = kPoolNames[static_cast<int>(pool_of(n))];
      return true;
    case kLRegion:
      out = region;
      return true;
    case kLZone:
      out = zone_names[n.zone];
      return true;
    default:
      return false;
  }
}

bool parse_int(std::string_view s, int64_t& v) {
  if (s.empty() || s.size() > 18) return false;
  v = 0;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '-') {
    neg = true;
    i = 1;
  }
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  if (neg) v = -v;
  return true;
}

struct Matcher {
  const std::vector<std::string>& zone_names;
  const std::string& region;

  bool requirement(const NodeRec& n, const Requirement& r) const {
    std::string_view v;
    const bool has = r.key_id >= 0 && label_of(zone_names, region, n, r.key_id, v);
    const std::string_view op = r.op;
    if (op == "Exists") return has;
    if (op == "DoesNotExist") return !has;
    const bool in = has && std::find(r.values.begin(), r.values.end(), v) != r.values.end();
    if (op == "In") return in;
    if (op == "NotIn") return !in;
    int64_t a = 0, b = 0;
    if (!has || r.values.size() != 1 || !parse_int(v, a) || !parse_int(r.values[0], b)) return false;
    return op == "Gt" ? a > b : a < b;
  }

  static bool tolerates(const PodTemplate& t, const TaintDef& taint) {
    if (t.daemonset_tolerations) return true;  // every daemonset here tolerates everything
    for (const TolerationSpec& tol : t.tolerations) {
      if (tol.effect[0] != '\0' && std::string_view(tol.effect) != taint.effect) continue;
      if (std::string_view(tol.op) == "Exists") {
        if (tol.key.empty() || tol.key == taint.key) return true;
      } else if (tol.key == taint.key && tol.value == taint.value) {
        return true;
      }
    }
    return false;
  }

  // nodeSelector, required node affinity and NoSchedule taints. A running pod
  // may sit on a cordoned node (it was there before the cordon).
  bool compatible(const NodeRec& n, const PodTemplate& t, bool running) const {
    for (const auto& kv : t.node_selector) {
      std::string_view v;
      const int id = label_key_id(kv.first);
      if (id < 0 || !label_of(zone_names, region, n, id, v) || v != kv.second) return false;
    }
    if (!t.required_terms.empty()) {
      bool any = false;
      for (const auto& term : t.required_terms) {
        bool all = !term.empty();
        for (const Requirement& r : term)
          if (!requirement(n, r)) {
            all = false;
            break;
          }
        if (all) {
          any = true;
          break;
        }
      }
      if (!any) return false;
    }
    if (n.role == Role::Gpu && !tolerates(t, kTaintGpu)) return false;
    if (n.role == Role::Infra && !tolerates(t, kTaintInfra)) return false;
    if (!running && n.cordoned && !tolerates(t, kTaintCordon)) return false;
    return true;
  }
};

// Node usage, split from NodeRec so the pending dry run can work on a copy.
struct Usage {
  int64_t cpu = 0, mem = 0, eph = 0, gpu = 0, hp = 0;
  int32_t pods = 0;
  std::vector<uint32_t> host_ports;
};

// `mem_percent` < 100 keeps running pods off the last part of a node's memory.
bool fits(const NodeRec& n, const Usage& u, const PodTemplate& t, int mem_percent = 100) {
  if (u.pods + 1 > n.max_pods) return false;
  if (t.eff.cpu > n.alloc_cpu - u.cpu) return false;
  if (t.eff.mem > n.alloc_mem / 100 * mem_percent - u.mem) return false;
  if (t.eff.eph > n.alloc_eph - u.eph) return false;
  if (t.eff.gpu > n.gpus - u.gpu) return false;
  if (t.eff.hp > n.hugepages - u.hp) return false;
  for (uint32_t p : t.host_ports)
    if (std::find(u.host_ports.begin(), u.host_ports.end(), p) != u.host_ports.end()) return false;
  return true;
}

void book(Usage& u, const PodTemplate& t) {
  u.cpu += t.eff.cpu;
  u.mem += t.eff.mem;
  u.eph += t.eff.eph;
  u.gpu += t.eff.gpu;
  u.hp += t.eff.hp;
  u.pods += 1;
  u.host_ports.insert(u.host_ports.end(), t.host_ports.begin(), t.host_ports.end());
}

// ---------------------------------------------------------------- the generator

// cpu classes (millicores) workloads are sorted into; a node asks for a class
// near (cpu still to fill) / (pods still to place).
const int64_t kClassCpu[] = {0, 100, 250, 500, 1000, 2000, 4000, 8000, 16000};
constexpr int kClassCount = 9;
int class_of(int64_t cpu) {
  int k = 0;
  while (k + 1 < kClassCount && kClassCpu[k + 1] <= cpu) ++k;
  return k;
}
const int kGpuClasses[] = {1, 2, 4, 8};

const char* const kWords[] = {
    "api",       "web",      "checkout",    "payments",      "search",        "cart",    "auth",     "orders",
    "inventory", "catalog",  "recommender", "notifications", "billing",       "gateway", "frontend", "profile",
    "reviews",   "shipping", "pricing",     "ledger",        "analytics",     "ingest",  "indexer",  "reporting",
    "session",   "media",    "thumbnailer", "mailer",        "feature-store", "ranking", "fraud",    "quotes"};
constexpr size_t kWordCount = sizeof kWords / sizeof kWords[0];

class Generator {
 public:
  explicit Generator(const GeneratorOptions& o) : opt_(o), images_(build_images()), match_{zone_names_, opt_.region} {}

  GeneratedCluster run() {
    validate();
    for (uint32_t z = 0; z < opt_.zones; ++z) zone_names_.push_back("zone-" + zone_letters(z));
    make_nodes();
    place_running();
    make_pending();
    make_node_images();
    GeneratedCluster out;
    out.nodes_json = emit_nodes();
    out.pods_json = emit_pods();
    return out;
  }

 private:
  // ---------------------------------------------------------- options
  void validate() const {
    auto bad_fraction = [](double f) { return !(f >= 0.0 && f <= 1.0); };
    if (opt_.zones == 0) throw InputError("generator: zones must be at least 1");
    if (opt_.region.empty()) throw InputError("generator: region must not be empty");
    if (bad_fraction(opt_.gpu_node_fraction)) throw InputError("generator: gpu_node_fraction must be in [0, 1]");
    if (bad_fraction(opt_.tainted_node_fraction))
      throw InputError("generator: tainted_node_fraction must be in [0, 1]");
    if (opt_.gpu_node_fraction + opt_.tainted_node_fraction > 1.0 + 1e-12)
      throw InputError("generator: gpu_node_fraction + tainted_node_fraction must not exceed 1");
  }

  static std::string zone_letters(uint32_t z) {
    std::string s;
    do {
      s.insert(s.begin(), static_cast<char>('a' + z % 26));
      z = z / 26;
    } while (z-- > 0);
    return s;
  }

  // ---------------------------------------------------------- nodes
  void make_nodes() {
    SplitMix64 rng = SplitMix64::derive(opt_.seed, kStreamNodes);
    const uint32_t n = opt_.nodes;
    const auto count = [&](double f, uint32_t of) {
      return static_cast<uint32_t>(std::min<double>(of, std::llround(of * f)));
    };
    const uint32_t n_gpu = count(opt_.gpu_node_fraction, n);
    const uint32_t n_tainted = std::min(n - n_gpu, count(opt_.tainted_node_fraction, n));
    const uint32_t n_infra = static_cast<uint32_t>(std::llround(n_tainted * 0.3));
    const uint32_t n_cordon = count(0.005, n);

    std::vector<Role> roles(n, Role::General);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n_gpu; ++i) roles[k++] = Role::Gpu;
    for (uint32_t i = 0; i < n_infra; ++i) roles[k++] = Role::Infra;
    for (uint32_t i = n_infra; i < n_tainted; ++i) roles[k++] = Role::Spot;
    rng.shuffle(roles);
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    std::vector<bool> cordon(n, false);
    for (uint32_t i = 0; i < n_cordon; ++i) {  // partial Fisher-Yates
      const uint32_t j = i + static_cast<uint32_t>(rng.below(n - i));
      std::swap(order[i], order[j]);
      cordon[order[i]] = true;
    }
    infra_nodes_ = n_infra;
    gpu_nodes_ = n_gpu;

    const int width = std::max<int>(5, static_cast<int>(std::to_string(n).size()));
    nodes_.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      NodeRec& nd = nodes_[i];
      std::string num = std::to_string(i + 1);
      nd.name = "node-" + std::string(static_cast<size_t>(width) - num.size(), '0') + num;
      nd.index = i;
      nd.role = roles[i];
      nd.cordoned = cordon[i];
      Pool pool = Pool::Gpu;
      if (nd.role == Role::Infra) {
        pool = Pool::Infra;
      } else if (nd.role != Role::Gpu) {
        const size_t p = pick_weighted(rng, std::array<int, 3>{60, 25, 15});
        pool = p == 0 ? Pool::General : p == 1 ? Pool::Compute : Pool::Memory;
      }
      nd.type = static_cast<uint16_t>(pick_type(rng, pool));
      nd.zone = static_cast<uint16_t>(rng.below(opt_.zones));
      nd.local_ssd = rng.chance(0.2);
      nd.os = static_cast<uint8_t>(pick_weighted(rng, std::array<int, 3>{70, 20, 10}));
      nd.old_kubelet = rng.chance(0.1);
      nd.created = kNow - rng.between(2 * 86400, 400 * 86400);
      nd.emit_seed = rng.next();
      const InstanceType& t = kTypes[nd.type];
      if (t.pool == Pool::Memory && rng.chance(0.3)) nd.hugepages = (t.mem_gib >= 128 ? 16 : 8) * kGi;

      nd.cap_cpu = t.cpu * 1000;
      nd.alloc_cpu = nd.cap_cpu - reserved_cpu_milli(t.cpu);
      const int64_t nominal_ki = int64_t{t.mem_gib} * 1048576;
      nd.cap_mem_ki = nominal_ki - nominal_ki * 15 / 1000 - 204800;  // firmware and kernel
      const int64_t reserved_ki = (255 + 11 * int64_t{t.max_pods} + 100) * 1024;
      nd.alloc_mem = (nd.cap_mem_ki - reserved_ki - nd.hugepages / kKi) * kKi;
      const int64_t disk_ki = int64_t{t.disk_gib} * 1048576;
      nd.cap_eph_ki = disk_ki - disk_ki / 40 - 8460;  // filesystem overhead
      nd.alloc_eph = nd.cap_eph_ki * kKi / 10 * 9;
      nd.max_pods = t.max_pods;
      nd.gpus = t.gpus;
    }
    usage_.resize(n);
  }

  // ---------------------------------------------------------- workloads
  Workload& new_workload(SplitMix64& rng, const std::string& ns, const std::string& base, OwnerKind kind,
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
    w.created = kNow - rng.between(86400, 300 * 86400);
    workloads_.push_back(std::move(w));
    return workloads_.back();
  }

  std::string unique_name(const std::string& ns, const std::string& base) {
    std::string name = base;
    for (int k = 2; !used_names_.insert(ns + '/' + name).second; ++k) name = base + '-' + std::to_string(k);
    return name;
  }

  static ContainerSpec container(std::string name, int image, int64_t cpu, int64_t mem) {
    ContainerSpec c;
    c.name = std::move(name);
    c.image = image;
    c.cpu = cpu;
    c.mem = mem;
    return c;
  }

  static void tolerate(PodTemplate& t, const TaintDef& taint, const char* op) {
    TolerationSpec tol;
    tol.key = taint.key;
    tol.op = op;
    if (std::string_view(op) == "Equal") tol.value = taint.value;
    tol.effect = taint.effect;
    t.tolerations.push_back(std::move(tol));
  }

  void make_daemonsets(SplitMix64& rng, uint64_t budget) {
    struct DsDef {
      const char* ns;
      const char* name;
      bool gpu_only;
    };
    const DsDef defs[] = {
        {"monitoring", "node-exporter", false}, {"kube-system", "nvidia-device-plugin-daemonset", true},
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
        ContainerSpec c =
            container("node-exporter", image_id("quay.io/prometheus/node-exporter:v1.8.2"), 100, 180 * kMi);
        c.cpu_limit = 250;
        c.mem_limit = 180 * kMi;
        c.ports.push_back({9100, 9100, false, "metrics"});
        t.containers.push_back(std::move(c));
        ContainerSpec p =
            container("kube-rbac-proxy", image_id("quay.io/brancz/kube-rbac-proxy:v0.18.1"), 10, 20 * kMi);
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
        t.containers.push_back(container(
            "ebs-plugin", image_id("public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.35.0"), 10, 40 * kMi));
        t.containers.push_back(
            container("node-driver-registrar",
                      image_id("public.ecr.aws/eks-distro/kubernetes-csi/node-driver-registrar:v2.11.1-eks-1-31-5"), 10,
                      40 * kMi));
        t.containers.push_back(container(
            "liveness-probe", image_id("public.ecr.aws/eks-distro/kubernetes-csi/livenessprobe:v2.13.1-eks-1-31-5"), 10,
            40 * kMi));
      } else if (name == "nvidia-device-plugin-daemonset") {
        // BestEffort, as the upstream manifest ships it.
        t.containers.push_back(container("nvidia-device-plugin-ctr",
                                         image_id("nvcr.io/nvidia/k8s-device-plugin:v0.16.2"), kAbsent, kAbsent));
      } else {
        ContainerSpec c =
            container("nvidia-dcgm-exporter", image_id("nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04"), 100,
                      128 * kMi);
        c.mem_limit = 512 * kMi;
        c.ports.push_back({9400, 0, false, "metrics"});
        t.containers.push_back(std::move(c));
      }
      if (d.gpu_only) {
        Requirement r;
        r.key = kLabelKeys[kLGpuProduct];
        r.key_id = kLGpuProduct;
        r.op = "Exists";
        t.required_terms.push_back({r});
      }
      finish_template(t);
    }
  }

  // A general-purpose workload whose pods ask about `cpu` millicores in all
  // (0: BestEffort).
  void make_general_workload(SplitMix64& rng, int64_t cpu) {
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
    finish_template(t);
  }

  void make_infra_workloads(SplitMix64& rng) {
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
        {"monitoring", "otel-collector", OwnerKind::ReplicaSet,
         "docker.io/otel/opentelemetry-collector-contrib:0.111.0", 500, 1024, false},
        {"monitoring", "jaeger", OwnerKind::ReplicaSet, "docker.io/jaegertracing/all-in-one:1.62.0", 250, 512, false},
        {"logging", "loki", OwnerKind::StatefulSet, "docker.io/grafana/loki:3.2.0", 1000, 2048, false},
        {"ingress-nginx", "ingress-nginx-controller", OwnerKind::ReplicaSet,
         "registry.k8s.io/ingress-nginx/controller:v1.11.3", 500, 512, false},
        {"cert-manager", "cert-manager", OwnerKind::ReplicaSet, "quay.io/jetstack/cert-manager-controller:v1.16.1", 50,
         128, false},
        {"argocd", "argocd-repo-server", OwnerKind::ReplicaSet, "quay.io/argoproj/argocd:v2.12.6", 500, 1024, false},
        {"argocd", "argocd-application-controller", OwnerKind::StatefulSet, "quay.io/argoproj/argocd:v2.12.6", 1000,
         2048, false},
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
        ContainerSpec r =
            container("config-reloader", image_id("quay.io/prometheus-operator/prometheus-config-reloader:v0.77.1"), 10,
                      50 * kMi);
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
      finish_template(t);
    }
  }

  void make_gpu_workloads(SplitMix64& rng, uint32_t count) {
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
        static const char* const kTrain[] = {"nvcr.io/nvidia/pytorch:24.08-py3",
                                             "docker.io/rayproject/ray-ml:2.37.0-gpu",
                                             "docker.io/tensorflow/tensorflow:2.17.0-gpu"};
        w = &new_workload(rng, "ml-training", "train-" + word + "-" + name_token(rng, 5), OwnerKind::Job, Target::Gpu);
        image = image_id(kTrain[rng.below(3)]);
      }
      PodTemplate& t = w->tmpl;
      const int64_t cpu_per_gpu = std::array<int64_t, 3>{4000, 6000, 8000}[rng.below(3)];
      const int64_t mem_per_gpu = std::array<int64_t, 3>{16, 20, 24}[rng.below(3)] * kGi;
      ContainerSpec c = container(serving ? "server" : "trainer", image, cpu_per_gpu * gpus / (gpus == 1 ? 2 : 1),
                                  mem_per_gpu * gpus);
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
      finish_template(t);
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
      finish_template(t);
    }
  }

  // The last resort that always fits a free pod slot.
  void make_debug_workload(SplitMix64& rng) {
    Workload& w = new_workload(rng, "default", "debug-shell", OwnerKind::ReplicaSet, Target::General);
    w.target = Target::Pending;  // never drawn from the class lists
    w.tmpl.containers.push_back(container("shell", image_id("docker.io/library/busybox:1.36.1"), kAbsent, kAbsent));
    TolerationSpec all;
    all.op = "Exists";
    w.tmpl.tolerations.push_back(all);
    finish_template(w.tmpl);
    debug_workload_ = static_cast<uint32_t>(workloads_.size() - 1);
  }

  // ---------------------------------------------------------- running pods
  std::string pod_name(Workload& w, uint32_t ordinal) const {
    switch (w.kind) {
      case OwnerKind::ReplicaSet:
        return w.name + '-' + w.hash + '-' + name_suffix(ordinal, w.salt);
      case OwnerKind::StatefulSet:
        return w.name + '-' + std::to_string(ordinal);
      default:
        return w.name + '-' + name_suffix(ordinal, w.salt);
    }
  }

  void add_pod(uint32_t wi, int32_t node) {
    Workload& w = workloads_[wi];
    PodRec p;
    p.workload = wi;
    p.node = node;
    p.ordinal = w.next_ordinal++;
    p.name = pod_name(w, p.ordinal);
    if (node >= 0) {
      book(usage_[static_cast<size_t>(node)], w.tmpl);
      nodes_[static_cast<size_t>(node)].image_set.merge(w.tmpl.image_set);
      ++w.running;
    }
    pods_.push_back(std::move(p));
  }

  bool try_place(uint32_t wi, uint32_t node) {
    const Workload& w = workloads_[wi];
    if (!match_.compatible(nodes_[node], w.tmpl, true)) return false;
    if (!fits(nodes_[node], usage_[node], w.tmpl, 85)) return false;
    add_pod(wi, static_cast<int32_t>(node));
    return true;
  }

  // Tries classes from `cls` down, a few draws each.
  bool place_from(SplitMix64& rng, const std::vector<std::vector<uint32_t>>& lists, int cls, uint32_t node) {
    for (int c = std::min<int>(cls, static_cast<int>(lists.size()) - 1); c >= 0; --c) {
      const auto& list = lists[static_cast<size_t>(c)];
      if (list.empty()) continue;
      for (int attempt = 0; attempt < 4; ++attempt)
        if (try_place(list[rng.below(list.size())], node)) return true;
    }
    return false;
  }

  void place_running() {
    SplitMix64 rng = SplitMix64::derive(opt_.seed, kStreamRunning);
    const uint64_t total = opt_.running_pods;
    const size_t n = nodes_.size();

    make_daemonsets(rng, total * 55 / 100);
    const size_t first_non_ds = workloads_.size();
    uint64_t ds_pods = 0;
    for (size_t wi = 0; wi < first_non_ds; ++wi)
      for (size_t i = 0; i < n; ++i)
        if (match_.compatible(nodes_[i], workloads_[wi].tmpl, true)) {
          if (!fits(nodes_[i], usage_[i], workloads_[wi].tmpl))
            throw Error("generator: a daemonset pod does not fit " + nodes_[i].name);
          add_pod(static_cast<uint32_t>(wi), static_cast<int32_t>(i));
          ++ds_pods;
        }
    const uint64_t rest = total - ds_pods;

    // The workload catalogue, sized to the pods to place.
    const uint32_t n_general = static_cast<uint32_t>(std::clamp<uint64_t>(rest / 20, 24, 20000));
    for (uint32_t i = 0; i < n_general; ++i) {
      const int cls =
          i < static_cast<uint32_t>(kClassCount)
              ? static_cast<int>(i)
              : static_cast<int>(pick_weighted(rng, std::array<int, kClassCount>{5, 15, 20, 20, 18, 12, 7, 3, 1}));
      make_general_workload(rng, kClassCpu[cls]);
    }
    make_infra_workloads(rng);
    make_gpu_workloads(rng, std::clamp<uint32_t>(gpu_nodes_ / 4, 6, 2000));
    make_debug_workload(rng);

    std::vector<std::vector<uint32_t>> general(kClassCount), infra(kClassCount), gpu_cpu(kClassCount), gpu(4);
    for (size_t wi = first_non_ds; wi < workloads_.size(); ++wi) {
      const Workload& w = workloads_[wi];
      const int cls = class_of(w.tmpl.eff.cpu);
      const uint32_t id = static_cast<uint32_t>(wi);
      switch (w.target) {
        case Target::General:
          general[cls].push_back(id);
          break;
        case Target::Infra:
          infra[cls].push_back(id);
          break;
        case Target::GpuCpuOnly:
          gpu_cpu[cls].push_back(id);
          break;
        case Target::Gpu: {
          int g = 0;
          while (g < 3 && kGpuClasses[g + 1] <= w.tmpl.eff.gpu) ++g;
          gpu[g].push_back(id);
          break;
        }
        default:
          break;
      }
    }

    // Each node's share of the rest, within its free pod slots: one pod per
    // node first when there are enough (so that few nodes stay empty), the
    // remainder in proportion to node size. With fewer pods than nodes they
    // are spread evenly.
    std::vector<uint64_t> weight(n), quota(n, 0);
    const uint64_t base = n > 0 && rest >= n ? 1 : 0;
    const uint64_t spread = rest - base * n;
    uint64_t weight_sum = 0;
    for (size_t i = 0; i < n; ++i) {
      const NodeRec& nd = nodes_[i];
      if (base == 0)
        weight[i] = 1;
      else if (nd.role == Role::Gpu)
        weight[i] = 2 * static_cast<uint64_t>(nd.gpus);
      else
        weight[i] = static_cast<uint64_t>(std::max<int64_t>(1, nd.alloc_cpu / 1000));
      weight_sum += weight[i];
    }
    uint64_t cum = 0, prev = 0, overflow = n == 0 ? rest : 0;
    for (size_t i = 0; i < n; ++i) {
      cum += weight[i];
      // spread < 2^32 and cum <= 192 per node: no overflow below 22 million nodes.
      const uint64_t upto = spread * cum / weight_sum;
      const uint64_t share = base + upto - prev;
      const uint64_t slots = static_cast<uint64_t>(std::max(0, nodes_[i].max_pods - usage_[i].pods - 5));
      quota[i] = std::min(share, slots);
      overflow += share - quota[i];
      prev = upto;
    }
    for (size_t pass = 0; pass < 2 && overflow > 0; ++pass)
      for (size_t i = 0; i < n && overflow > 0; ++i) {
        const int32_t keep = pass == 0 ? 5 : 0;
        const uint64_t slots = static_cast<uint64_t>(std::max(0, nodes_[i].max_pods - usage_[i].pods - keep));
        const uint64_t add = std::min(overflow, slots - std::min(slots, quota[i]));
        quota[i] += add;
        overflow -= add;
      }
    if (overflow > 0)
      throw InputError("generator: " + std::to_string(total) + " running pods do not fit the pod slots of " +
                       std::to_string(n) + " nodes");

    for (size_t i = 0; i < n; ++i) {
      const NodeRec& nd = nodes_[i];
      const uint32_t node = static_cast<uint32_t>(i);
      const int64_t target_cpu = nd.alloc_cpu * rng.between(20, 70) / 100;
      const int64_t target_gpu = nd.gpus * rng.between(0, 4) / 4;
      for (uint64_t k = 0; k < quota[i]; ++k) {
        const int64_t left = static_cast<int64_t>(quota[i] - k);
        const int64_t want = std::max<int64_t>(0, target_cpu - usage_[i].cpu) / left;
        // The nearest class (classes double), then a little jitter.
        int cls = class_of(want * 3 / 2);
        const uint64_t jitter = rng.below(100);
        if (jitter < 15 && cls > 0)
          --cls;
        else if (jitter < 30 && cls + 1 < kClassCount)
          ++cls;
        else if (jitter >= 95)
          cls = 0;
        bool placed = false;
        if (nd.role == Role::Gpu) {
          const int64_t gpus_left = target_gpu - usage_[i].gpu;
          if (gpus_left > 0) {
            int g = 0;
            while (g < 3 && kGpuClasses[g + 1] <= gpus_left) ++g;
            if (g > 0 && rng.chance(0.3)) --g;
            placed = place_from(rng, gpu, g, node);
          }
          if (!placed) placed = place_from(rng, gpu_cpu, cls, node);
        } else if (nd.role == Role::Infra) {
          placed = place_from(rng, infra, cls, node);
        } else {
          placed = place_from(rng, general, cls, node);
        }
        if (!placed && !try_place(debug_workload_, node))
          throw Error("generator: no pod fits a free slot on " + nd.name);
      }
    }
  }

  // ---------------------------------------------------------- pending pods
  enum Scenario : int {
    kPlain,
    kScaleUp,
    kSelectorZone,
    kSelectorPool,
    kAffinityIn,
    kAffinityNotInExists,
    kAffinityGt,
    kPreferred,
    kGpu,
    kInfraToleration,
    kSpotToleration,
    kHostPort,
    kSidecarOverhead,
    kBestEffort,
    kEphemeral,
    kHugepages,
    kPodLevel,
    kAntiAffinity,
    kSpread,
    kPodAffinity,
    kHugeCpu,
    kMissingPool,
    kScenarioCount
  };

  static bool inter_pod_scenario(int s) { return s == kAntiAffinity || s == kSpread || s == kPodAffinity; }
  static bool impossible_scenario(int s) { return s == kHugeCpu || s == kMissingPool; }

  static Requirement req(int key, const char* op, std::vector<std::string> values) {
    Requirement r;
    r.key = kLabelKeys[key];
    r.key_id = key;
    r.op = op;
    r.values = std::move(values);
    return r;
  }

  // A plain web-ish container with a popular image, `cpu` millicores.
  ContainerSpec pending_container(SplitMix64& rng, const std::string& name, int64_t cpu) {
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

  int64_t pending_cpu(SplitMix64& rng) {
    return std::array<int64_t, 6>{
        100, 250, 500, 1000, 2000, 4000}[pick_weighted(rng, std::array<int, 6>{15, 25, 25, 20, 10, 5})];
  }

  // Builds one pending workload for scenario `s`; returns its index, or -1
  // when the scenario cannot be built here (e.g. no running deployment).
  int64_t build_pending(SplitMix64& rng, int s) {
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
          if (nodes_[i].gpus > 0 && !nodes_[i].cordoned) most_free = std::max(most_free, nodes_[i].gpus - dry_[i].gpu);
        int g = static_cast<int>(pick_weighted(rng, std::array<int, 4>{50, 25, 15, 10}));
        while (g > 0 && kGpuClasses[g] > most_free) --g;
        const int gpus = kGpuClasses[g];
        main.image =
            image_id(rng.chance(0.5) ? "docker.io/vllm/vllm-openai:v0.6.3" : "nvcr.io/nvidia/pytorch:24.08-py3");
        main.cpu = 3000 * gpus;
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
    finish_template(t);
    return wi;
  }

  // First fit from a random start on a copy of the usage: how many of `want`
  // pods of workload `wi` still fit, booking them.
  uint32_t dry_run(SplitMix64& rng, uint32_t wi, uint32_t want) {
    const PodTemplate& t = workloads_[wi].tmpl;
    const size_t n = nodes_.size();
    if (n == 0) return 0;
    size_t at = static_cast<size_t>(rng.below(n));
    uint32_t placed = 0;
    size_t misses = 0;
    while (placed < want && misses < n) {
      const NodeRec& nd = nodes_[at];
      if (match_.compatible(nd, t, false) && fits(nd, dry_[at], t)) {
        book(dry_[at], t);
        ++placed;
        misses = 0;
      } else {
        ++misses;
      }
      at = at + 1 == n ? 0 : at + 1;
    }
    return placed;
  }

  void make_pending() {
    SplitMix64 rng = SplitMix64::derive(opt_.seed, kStreamPending);
    dry_ = usage_;
    std::vector<int> order;
    for (int s = 0; s < kScenarioCount; ++s)
      if (opt_.with_inter_pod_constraints || !inter_pod_scenario(s)) order.push_back(s);
    rng.shuffle(order);
    // Weights for the groups after the first round (the impossible ones come once).
    std::array<int, kScenarioCount> weights{};
    const int base_weights[kScenarioCount] = {30, 12, 8, 8, 6, 5, 5, 6, 6, 4, 5, 3, 4, 3, 3, 2, 3, 4, 4, 3, 0, 0};
    for (int s = 0; s < kScenarioCount; ++s)
      weights[s] = opt_.with_inter_pod_constraints || !inter_pod_scenario(s) ? base_weights[s] : 0;
    std::array<int, kScenarioCount> failures{};

    uint32_t remaining = opt_.pending_pods;
    const uint32_t first_round_cap =
        std::max<uint32_t>(5, opt_.pending_pods / (2 * static_cast<uint32_t>(order.size())));
    size_t group = 0;
    while (remaining > 0) {
      int s;
      if (group < order.size()) {
        s = order[group];
      } else {
        int64_t total = 0;
        for (int w : weights) total += w;
        if (total == 0) {
          s = kPlain;
        } else {
          int64_t r = static_cast<int64_t>(rng.below(static_cast<uint64_t>(total)));
          s = 0;
          while (r >= weights[s]) r -= weights[s++];
        }
      }
      ++group;
      // 5..200, many small groups and a few large ones (integer draws only:
      // std::pow may round differently between math libraries).
      uint32_t size = 5 + static_cast<uint32_t>(rng.below(rng.below(196) + 1));
      if (group <= order.size()) size = std::min(size, first_round_cap);
      if (impossible_scenario(s)) size = static_cast<uint32_t>(rng.between(5, 8));
      if (s == kGpu) size = std::min<uint32_t>(size, 40);
      size = std::min(size, remaining);
      if (remaining - size < 5) size = remaining;

      const int64_t built = build_pending(rng, s);
      if (built < 0) {
        weights[s] = 0;
        continue;
      }
      const uint32_t wi = static_cast<uint32_t>(built);
      if (!impossible_scenario(s)) {
        const uint32_t fit = dry_run(rng, wi, size);
        if (fit < size) {
          // Keep the group to what fits (at least 5 pods: a few may stay pending).
          size = std::max(fit, std::min<uint32_t>(5, remaining));
          if (fit == 0 && ++failures[s] >= 2) weights[s] = 0;
        }
      }
      for (uint32_t k = 0; k < size; ++k) add_pod(wi, -1);
      remaining -= size;
    }
  }

  // ---------------------------------------------------------- node images
  void make_node_images() {
    SplitMix64 rng = SplitMix64::derive(opt_.seed, kStreamImages);
    const int pause = image_id("registry.k8s.io/pause:3.10");
    std::vector<int> general_w(kImageCount), gpu_w(kImageCount);
    for (size_t i = 0; i < kImageCount; ++i) {
      const Image& im = images_[i];
      general_w[i] = im.kind == ImageKind::Ml ? 0 : im.popularity;
      gpu_w[i] = im.kind == ImageKind::Ml ? im.popularity * 2 : im.popularity / 4;
    }
    int64_t general_total = 0, gpu_total = 0;
    for (size_t i = 0; i < kImageCount; ++i) {
      general_total += general_w[i];
      gpu_total += gpu_w[i];
    }
    for (NodeRec& nd : nodes_) {
      ImageSet set = nd.image_set;
      set.add(pause);
      const bool gpu = nd.role == Role::Gpu;
      const auto& w = gpu ? gpu_w : general_w;
      const int64_t total = gpu ? gpu_total : general_total;
      const int target = static_cast<int>(rng.between(gpu ? 15 : 10, 30));
      int have = 0;
      for (size_t i = 0; i < kImageCount; ++i) have += set.has(static_cast<int>(i));
      for (int draws = 0; have < target && draws < 200; ++draws) {
        int64_t r = static_cast<int64_t>(rng.below(static_cast<uint64_t>(total)));
        size_t i = 0;
        while (r >= w[i]) r -= w[i++];
        if (!set.has(static_cast<int>(i))) {
          set.add(static_cast<int>(i));
          ++have;
        }
      }
      nd.images.clear();
      for (size_t i = 0; i < kImageCount; ++i)
        if (set.has(static_cast<int>(i))) nd.images.push_back(static_cast<uint16_t>(i));
      std::sort(nd.images.begin(), nd.images.end(), [&](uint16_t a, uint16_t b) {
        if (images_[a].size != images_[b].size) return images_[a].size > images_[b].size;
        return a < b;
      });
      if (nd.images.size() > 50) nd.images.resize(50);  // the kubelet reports at most 50
    }
  }

  // ---------------------------------------------------------- emission
  static void write_taint(JsonWriter& j, const TaintDef& t, int64_t added) {
    j.begin_object().field("effect", t.effect).field("key", t.key);
    if (added >= 0) j.field("timeAdded", format_time(added));
    if (t.value[0] != '\0') j.field("value", t.value);
    j.end_object();
  }

  void write_node(JsonWriter& j, const NodeRec& nd) const {
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

  std::string emit_nodes() const {
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

  static void write_resources(JsonWriter& j, const ContainerSpec& c) {
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

  void write_container(JsonWriter& j, const ContainerSpec& c) const {
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

  static void write_requirements(JsonWriter& j, const std::vector<Requirement>& reqs) {
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

  static void write_app_selector(JsonWriter& j, const std::string& app) {
    j.key("labelSelector").begin_object().key("matchLabels").begin_object().field("app", app).end_object().end_object();
  }

  static void write_pod_affinity_term(JsonWriter& j, const PodAffinitySpec& a) {
    j.begin_object();
    write_app_selector(j, a.app);
    if (!a.ns.empty()) j.key("namespaces").begin_array().value(a.ns).end_array();
    j.field("topologyKey", a.topology_key).end_object();
  }

  void write_pod_affinity(JsonWriter& j, const PodTemplate& t, bool anti) const {
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

  static void write_toleration(JsonWriter& j, const char* effect, const std::string& key, const char* op,
                               int64_t seconds, const std::string& value) {
    j.begin_object();
    if (effect[0] != '\0') j.field("effect", effect);
    if (!key.empty()) j.field("key", key);
    j.field("operator", op);
    if (seconds != kAbsent) j.field("tolerationSeconds", seconds);
    if (!value.empty()) j.field("value", value);
    j.end_object();
  }

  void write_pod(JsonWriter& j, SplitMix64& rng, const PodRec& p, uint32_t& pod_ip) const {
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

  std::string emit_pods() const {
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

  const GeneratorOptions& opt_;
  std::vector<Image> images_;
  std::vector<std::string> zone_names_;
  Matcher match_;
  std::vector<NodeRec> nodes_;
  std::vector<Usage> usage_;  // running pods, per node
  std::vector<Usage> dry_;    // running + the pending dry run
  std::vector<Workload> workloads_;
  std::vector<PodRec> pods_;
  std::set<std::string> used_names_;
  uint32_t infra_nodes_ = 0;
  uint32_t gpu_nodes_ = 0;
  uint32_t debug_workload_ = 0;
  uint32_t host_port_groups_ = 0;
};

}  // namespace

GeneratedCluster generate_cluster(const GeneratorOptions& options) {
  Generator g(options);
  return g.run();
}

void write_generated_cluster(const GeneratorOptions& options, const std::string& nodes_path,
                             const std::string& pods_path) {
  const GeneratedCluster c = generate_cluster(options);
  write_file_atomically(nodes_path, c.nodes_json);
  write_file_atomically(pods_path, c.pods_json);
}

}  // namespace bulkscore
