#include "host/engine/backend.hpp"

#include <algorithm>

namespace bulkscore {

VisitOrder visit_order(const Snapshot& snap, const EvalRequest& req) {
  VisitOrder v;
  v.count = req.candidates ? static_cast<uint32_t>(req.candidates->size()) : snap.num_nodes();
  v.rotate = req.num_to_find < v.count;
  v.start = req.start;
  if (req.candidates)
    v.order = req.candidates->data();
  else if (v.rotate)
    v.order = snap.tree_order().data();
  return v;
}

void order_equal_keys_by_node(const uint64_t* keys, uint32_t* nodes, size_t count) {
  for (size_t i = 0; i < count;) {
    size_t j = i + 1;
    while (j < count && keys[j] == keys[i]) ++j;
    if (j - i > 1) std::sort(nodes + i, nodes + j);
    i = j;
  }
}

}  // namespace bulkscore
