#include "plugins/image_locality.hpp"

#include "plugins/prepare.hpp"

namespace bulkscore::plugins {

PrepareResult ImageLocality::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  const Snapshot& snap = ctx.snapshot;
  const double total_nodes = static_cast<double>(snap.num_nodes());
  std::vector<ImageTerm> terms;
  auto take = [&](const Container& c) {
    const int32_t id = snap.image_id(normalize_image_name(c.image));
    if (id == kNoId) return;  // on no node: contributes nothing anywhere
    // The spread ratio first, then the product, then truncation, as upstream.
    const double spread = static_cast<double>(snap.image_num_nodes(id)) / total_nodes;
    terms.push_back(ImageTerm{id, 0, static_cast<int64_t>(static_cast<double>(snap.image_size(id)) * spread)});
  };
  // No node lists an image: nothing to look up (the name's normalization allocates).
  if (snap.num_images() > 0) {
    for (const auto& c : ctx.pod.init_containers) take(c);
    for (const auto& c : ctx.pod.containers) take(c);
  }
  // When even a node holding every image stays under the minimum threshold,
  // every node scores 0: keep no terms, so the per-node rule does no lookups.
  int64_t most = 0;
  for (const auto& t : terms) most += t.scaled_size;
  if (most < kMinThreshold) terms.clear();
  st.images = arena.push(terms);
  const auto containers = static_cast<int64_t>(ctx.pod.init_containers.size() + ctx.pod.containers.size());
  // A pod always has a container; guard the division anyway.
  st.max_threshold = kMaxContainerThreshold * (containers > 0 ? containers : 1);
  return {};
}

void ImageLocality::score_nodes(const SnapshotView& s, const State& st, const uint8_t* arena, const uint32_t* nodes,
                                uint32_t count, int64_t* out) {
  if (st.images.count == 0 && count > 0) {
    const int64_t v = score(s, st, arena, nodes[0]);  // reads no node column
    for (uint32_t i = 0; i < count; ++i) out[i] = v;
    return;
  }
  for (uint32_t i = 0; i < count; ++i) out[i] = score(s, st, arena, nodes[i]);
}

}  // namespace bulkscore::plugins
