// The fleet: node roles, instance types, zones, capacity and allocatable as a
// kubelet reports them, and (after placement) each node's image list.
#include "bench/generator/generator_internal.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <utility>

#include "host/common.hpp"

namespace bulkscore::gen {

void Generator::make_nodes() {
  SplitMix64 rng = SplitMix64::derive(opt_.seed, kStreamNodes);
  const uint32_t n = opt_.nodes;
  const auto count = [&](double f, uint32_t of) {
    // NOLINTNEXTLINE(bugprone-narrowing-conversions): at most `of`, a uint32_t
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
    // NOLINTNEXTLINE(bugprone-implicit-widening-of-multiplication-result): constants fit int
    nd.created = kNow - rng.between(2 * 86400, 400 * 86400);
    nd.emit_seed = rng.next();
    const InstanceType& t = kTypes[nd.type];
    if (t.pool == Pool::Memory && rng.chance(0.3)) nd.hugepages = (t.mem_gib >= 128 ? 16 : 8) * kGi;

    // NOLINTNEXTLINE(bugprone-implicit-widening-of-multiplication-result): cores of an instance type
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
}

void Generator::make_node_images() {
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

}  // namespace bulkscore::gen
