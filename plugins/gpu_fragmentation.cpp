#include "plugins/gpu_fragmentation.hpp"

#include "plugins/prepare.hpp"

namespace bulkscore {

uint64_t mix_hash(uint64_t seed, const std::string& text) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  h += 0x9e3779b97f4a7c15ull;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

GpuPod gpu_pod_of(const PrepareContext& ctx) {
  GpuPod p{};
  const DeviceDemand d = pod_device_demand(ctx.pod, ctx.profile.gpu_share_args.model);
  const auto cpu = ctx.requests.find("cpu");
  p.cpu_milli = cpu == ctx.requests.end() ? 0 : cpu->second;
  p.count = d.count;
  p.milli = d.milli;
  p.model_key = ctx.snapshot.string_id(ctx.profile.gpu_share_args.model.model_label);
  p.model_slot = p.model_key == kNoId ? -1 : ctx.snapshot.dense_label_slot(p.model_key);
  bool any = d.any();
  for (const auto& [name, amount] : ctx.requests) any = any || (name != "pods" && amount > 0);
  p.no_requests = any ? 0 : 1;
  return p;
}

void flatten_tasks(const std::vector<TypicalTask>& tasks, const Snapshot& snap, std::vector<TaskShape>& shapes,
                   std::vector<int32_t>& models) {
  shapes.clear();
  models.clear();
  for (const TypicalTask& t : tasks) {
    TaskShape k{};
    k.cpu_milli = t.cpu_milli;
    k.weight = t.weight;
    k.milli = t.count > 0 ? t.milli : 0;
    k.count = t.count;
    k.first_model = static_cast<uint32_t>(models.size());
    for (const std::string& m : t.models) models.push_back(snap.string_id(m));  // kNoId (-1) matches no node
    k.num_models = static_cast<uint32_t>(t.models.size());
    shapes.push_back(k);
  }
}

}  // namespace bulkscore
