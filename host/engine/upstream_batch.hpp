// kube-scheduler v1.35.4's own batching (KEP-5598, `--batching upstream`),
// for users who want to see what it does (semantics doc §4): the pod
// signature (SignPod: which plugins refuse, the fragments), the state of the
// previous pod's remaining scored nodes, the checks that give a node hint or
// flush, the KEP update's rescoring of the last chosen node in place of the
// node_not_full flush, the hint's evaluation (Filter on that node only, no
// scoring) and what is stored after a cycle. Decisions may differ from
// unbatched scheduling exactly where upstream's would. Two differences, both
// stated in docs/batching.md: the remaining list is in bulkscore's total
// order (v1.35.4's heap order depends on a feasible-list order upstream
// itself does not fix), and the maximum age is measured on this process's
// steady clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/engine/backend.hpp"
#include "host/engine/batch_cache.hpp"
#include "host/engine/pod_query.hpp"
#include "host/input/model.hpp"
#include "host/snapshot/snapshot.hpp"

namespace bulkscore {

// v1.35.4's SignPod for `pod` under `plan`: nullopt when the pod is not
// batchable (PodTopologySpread with any constraint, the pod's or the
// profile's defaults; InterPodAffinity with pod (anti-)affinity; a plugin in
// the profile without a signature). Otherwise a JSON object of the
// fragments, keys sorted, compared byte for byte.
std::optional<std::string> upstream_pod_signature(const Pod& pod, const ProfilePlan& plan);

class UpstreamBatch {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kMaxBatchAge{500};  // v1.35.4's maxBatchAge

  // GetNodeHint, after PreFilter, for the pod of cycle `cycle` with its
  // signature and fresh query: a node to try, or -1 (then `why` says why, or
  // is kNoState when nothing was cached: no flush). Rescores the last chosen
  // node into the list when it still fits (KEP update).
  int32_t hint(const Snapshot& snap, uint64_t cycle, const std::optional<std::string>& signature, PodQuery& query,
               Clock::time_point now, FlushReason& why, BatchCounters& counters);

  // StoreScheduleResults after a successful cycle: `hinted` the hint given
  // (-1 none), `chosen` where the pod went; `result` the full evaluation
  // (want_scores) when there was one, nullptr when the hint was used.
  void store(const Snapshot& snap, uint64_t cycle, const std::optional<std::string>& signature, int32_t hinted,
             int32_t chosen, PodQuery* query, const EvalResult* result, Clock::time_point now, BatchCounters& counters);

  // The total the cached list gave `node` (the hint's reported score).
  int64_t cached_total(int32_t node) const;

 private:
  struct Entry {
    uint32_t node;
    int64_t total;
    uint64_t key;
  };
  // Renormalizes every entry's raw scores over the list, then sort_entries.
  void resort(const PodQueryView& q);
  // Orders the entries (and their raw rows) best first.
  void sort_entries();

  bool has_state_ = false;
  std::string signature_;
  Clock::time_point created_{};
  uint32_t num_scores_ = 0;
  std::vector<Entry> remaining_;  // best first
  std::vector<int64_t> raw_;      // [entry node's row * num_scores_ + slot], rows parallel to remaining_
  int64_t hint_total_ = 0;
  int32_t hint_node_ = -1;

  // lastCycle
  uint64_t last_cycle_ = 0;
  int32_t last_chosen_ = -1;
  std::string last_chosen_name_;
  bool last_succeeded_ = false;
};

}  // namespace bulkscore
