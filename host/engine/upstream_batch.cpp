#include "host/engine/upstream_batch.hpp"

#include <algorithm>
#include <set>

#include "host/input/pod_resources.hpp"
#include "host/io/json_writer.hpp"

namespace bulkscore {
namespace {

// Every plugin of the profile, at any point it runs.
std::set<std::string> profile_plugins(const ProfileConfig& p) {
  std::set<std::string> out(p.pre_filter.begin(), p.pre_filter.end());
  out.insert(p.filter.begin(), p.filter.end());
  out.insert(p.pre_score.begin(), p.pre_score.end());
  for (const auto& e : p.score) out.insert(e.name);
  return out;
}

// The plugins v1.35.4 gives a SignPlugin implementation; any other plugin in
// the profile disables signatures for it.
bool signs(const std::string& plugin) {
  static const std::set<std::string> kSigning = {"NodeUnschedulable",  "NodeName",
                                                 "TaintToleration",    "NodeAffinity",
                                                 "NodePorts",          "NodeResourcesFit",
                                                 "VolumeRestrictions", "NodeVolumeLimits",
                                                 "VolumeBinding",      "VolumeZone",
                                                 "PodTopologySpread",  "InterPodAffinity",
                                                 "DynamicResources",   "NodeResourcesBalancedAllocation",
                                                 "ImageLocality"};
  return kSigning.count(plugin) > 0;
}

std::string requirement_text(const NodeSelectorRequirement& r) {
  std::vector<std::string> values = r.values;
  std::sort(values.begin(), values.end());
  std::string s;
  JsonWriter w(s);
  w.begin_object().field("key", r.key).field("operator", r.op).key("values").begin_array();
  for (const auto& v : values) w.value(v);
  w.end_array().end_object();
  return s;
}

// A term with its requirements, and their values, sorted: the canonical form
// upstream's NodeAffinity fragment takes.
std::string term_text(const NodeSelectorTerm& t) {
  std::vector<std::string> exprs, fields;
  exprs.reserve(t.match_expressions.size());
  fields.reserve(t.match_fields.size());
  for (const auto& r : t.match_expressions) exprs.push_back(requirement_text(r));
  for (const auto& r : t.match_fields) fields.push_back(requirement_text(r));
  std::sort(exprs.begin(), exprs.end());
  std::sort(fields.begin(), fields.end());
  std::string s = "{\"matchExpressions\":[";
  for (size_t i = 0; i < exprs.size(); ++i) s += (i ? "," : "") + exprs[i];
  s += "],\"matchFields\":[";
  for (size_t i = 0; i < fields.size(); ++i) s += (i ? "," : "") + fields[i];
  return s + "]}";
}

std::string node_affinity_text(const NodeAffinity& na) {
  std::string s = "{\"required\":";
  if (na.required) {
    std::vector<std::string> terms;
    terms.reserve(na.required->terms.size());
    for (const auto& t : na.required->terms) terms.push_back(term_text(t));
    std::sort(terms.begin(), terms.end());
    s += "[";
    for (size_t i = 0; i < terms.size(); ++i) s += (i ? "," : "") + terms[i];
    s += "]";
  } else {
    s += "null";
  }
  std::vector<std::string> preferred;
  preferred.reserve(na.preferred.size());
  for (const auto& p : na.preferred)
    preferred.push_back("{\"weight\":" + std::to_string(p.weight) + ",\"preference\":" + term_text(p.preference) + "}");
  std::sort(preferred.begin(), preferred.end());
  s += ",\"preferred\":[";
  for (size_t i = 0; i < preferred.size(); ++i) s += (i ? "," : "") + preferred[i];
  return s + "]}";
}

}  // namespace

std::optional<std::string> upstream_pod_signature(const Pod& pod, const ProfilePlan& plan) {
  const ProfileConfig& profile = plan.config;
  const std::set<std::string> plugins = profile_plugins(profile);
  for (const auto& p : plugins)
    if (!signs(p)) return std::nullopt;  // signatures are disabled for the profile
  const auto has = [&](const char* name) { return plugins.count(name) > 0; };
  // The refusals.
  if (has("PodTopologySpread")) {
    const PodTopologySpreadArgs& a = profile.pod_topology_spread_args;
    if (!pod.topology_spread_constraints.empty() || a.defaulting_type == "System" || !a.default_constraints.empty())
      return std::nullopt;
  }
  if (has("InterPodAffinity") && pod.affinity && (pod.affinity->pod_affinity || pod.affinity->pod_anti_affinity))
    return std::nullopt;

  // The fragments, by key (a map: keys sorted, as Go's JSON of a map).
  std::map<std::string, std::string> fragments;
  fragments["v1.Pod.Spec.SchedulerName"] = "\"" + pod.scheduler_name + "\"";
  if (has("TaintToleration") || has("NodeUnschedulable")) {
    std::vector<Toleration> tolerations = pod.tolerations;
    std::stable_sort(tolerations.begin(), tolerations.end(), [](const Toleration& a, const Toleration& b) {
      return a.key != b.key ? a.key < b.key : a.value < b.value;
    });
    std::string s;
    JsonWriter w(s);
    w.begin_array();
    for (const auto& t : tolerations)
      w.begin_object()
          .field("key", t.key)
          .field("operator", t.op)
          .field("value", t.value)
          .field("effect", t.effect)
          .end_object();
    w.end_array();
    fragments["v1.Pod.Spec.Tolerations"] = s;
  }
  if (has("NodeAffinity")) {
    const NodeAffinity none;
    fragments["v1.Pod.Spec.Affinity.NodeAffinity"] =
        node_affinity_text(pod.affinity && pod.affinity->node_affinity ? *pod.affinity->node_affinity : none);
    std::string s;
    JsonWriter w(s);
    w.begin_object();
    for (const auto& [k, v] : pod.node_selector) w.field(k, v);
    w.end_object();
    fragments["v1.Pod.Spec.Affinity.NodeSelector"] = s;
  }
  if (has("NodeName")) fragments["v1.Pod.Spec.NodeName"] = "\"" + pod.node_name + "\"";
  if (has("NodePorts")) {
    std::set<int32_t> ports;
    for (const auto* list : {&pod.containers, &pod.init_containers})
      for (const auto& c : *list)
        for (const auto& p : c.ports)
          if (p.host_port != 0) ports.insert(p.host_port);
    std::string s = "[";
    for (int32_t p : ports) s += (s.size() > 1 ? "," : "") + std::to_string(p);
    fragments["v1.Pod.Spec.HostPorts()"] = s + "]";
  }
  if (has("NodeResourcesFit") || has("NodeResourcesBalancedAllocation")) {
    std::string s;
    JsonWriter w(s);
    w.begin_object();
    for (const auto& [name, v] : pod_requests(pod)) w.field(name, v);
    w.end_object();
    fragments["v1.Pod.Spec.ContainerRequestsAndOverheads()"] = s;
  }
  if (has("ImageLocality")) {
    std::set<std::string> images;
    for (const auto* list : {&pod.containers, &pod.init_containers})
      for (const auto& c : *list) images.insert(normalize_image_name(c.image));
    std::string s;
    JsonWriter w(s);
    w.begin_array();
    for (const auto& i : images) w.value(i);
    w.end_array();
    fragments["v1.Pod.Spec.CanonicalImageNames()"] = s;
  }
  if (has("InterPodAffinity") && !profile.inter_pod_affinity_args.ignore_preferred_terms_of_existing_pods) {
    std::string s;
    JsonWriter w(s);
    w.begin_object();
    for (const auto& [k, v] : pod.labels) w.field(k, v);
    w.end_object();
    fragments["v1.Pod.Labels"] = s;
  }
  // Volume plugins: bulkscore reads no volumes, so their fragment is the
  // empty list for every pod.
  if (has("VolumeRestrictions") || has("NodeVolumeLimits") || has("VolumeBinding") || has("VolumeZone"))
    fragments["v1.Pod.Spec.Volumes.NonSyntheticSources()"] = "[]";

  std::string sig = "{";
  for (const auto& [k, v] : fragments) sig += (sig.size() > 1 ? "," : "") + ("\"" + k + "\":") + v;
  return sig + "}";
}

// ---- GetNodeHint ----------------------------------------------------------------

int32_t UpstreamBatch::hint(const Snapshot& snap, uint64_t cycle, const std::optional<std::string>& signature,
                            PodQuery& query, Clock::time_point now, FlushReason& why, BatchCounters& counters) {
  why = FlushReason::kNoState;
  hint_node_ = -1;
  const auto flush = [&](FlushReason r) {
    why = r;
    ++counters.flushed[static_cast<size_t>(r)];
    return -1;
  };
  if (!has_state_ || remaining_.empty()) return -1;
  if (cycle != last_cycle_ + 1) return flush(FlushReason::kPodSkipped);
  if (!last_succeeded_) return flush(FlushReason::kPodFailed);
  if (!signature || *signature != signature_) return flush(FlushReason::kPodIncompatible);
  if (now > created_ + kMaxBatchAge) return flush(FlushReason::kExpired);
  if (last_chosen_ < 0 || static_cast<uint32_t>(last_chosen_) >= snap.num_nodes() ||
      snap.node_name(static_cast<uint32_t>(last_chosen_)) != last_chosen_name_)
    return flush(FlushReason::kNodeMissing);
  // The KEP update: the last chosen node is filtered for this pod; if it
  // still fits it is rescored into the list (PreScore over the cached nodes
  // and it, its raw scores, normalization over the whole list).
  const SnapshotView s = snap.view();
  const auto last = static_cast<uint32_t>(last_chosen_);
  if (filter_node(s, query.view(), last).feasible()) {
    ++counters.rescore_attempts;
    std::vector<uint32_t> nodes;
    nodes.reserve(remaining_.size() + 1);
    for (const Entry& e : remaining_) nodes.push_back(e.node);
    nodes.push_back(last);
    if (query.header.prescore_feasible)
      run_feasible_prescore(snap, query, nodes.data(), static_cast<uint32_t>(nodes.size()));
    const PodQueryView v = query.view();
    if (v.num_scores != num_scores_) return flush(FlushReason::kPodIncompatible);
    remaining_.push_back(Entry{last, 0, 0});
    for (uint32_t slot = 0; slot < num_scores_; ++slot) raw_.push_back(run_score(v.scores[slot], s, v, last));
    counters.rescored_nodes += num_scores_;
    resort(v);
  }
  // Pop the best.
  const Entry best = remaining_.front();
  remaining_.erase(remaining_.begin());
  raw_.erase(raw_.begin(), raw_.begin() + num_scores_);
  hint_node_ = static_cast<int32_t>(best.node);
  hint_total_ = best.total;
  return hint_node_;
}

int64_t UpstreamBatch::cached_total(int32_t node) const { return node == hint_node_ ? hint_total_ : 0; }

// Normalizes every entry's (possibly stale) raw scores over the list, totals
// and orders it, best first.
void UpstreamBatch::resort(const PodQueryView& q) {
  const size_t n = remaining_.size();
  NormStats stats[kMaxProfilePlugins];
  for (uint32_t slot = 0; slot < num_scores_; ++slot) {
    stats[slot] = empty_norm_stats();
    if (needs_stats(q.normalize[slot]))
      for (size_t i = 0; i < n; ++i) add_to_stats(stats[slot], raw_[i * num_scores_ + slot]);
  }
  for (size_t i = 0; i < n; ++i) {
    Entry& e = remaining_[i];
    e.total = weighted_total(
        q, stats, [&](uint32_t slot) { return raw_[i * num_scores_ + slot]; }, [](uint32_t, int64_t) {});
    e.key = selection_key(e.total, e.node, q);
  }
  sort_entries();
}

void UpstreamBatch::sort_entries() {
  const size_t n = remaining_.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ranks_before(remaining_[a].key, remaining_[a].node, remaining_[b].key, remaining_[b].node);
  });
  std::vector<Entry> entries;
  std::vector<int64_t> raw;
  entries.reserve(n);
  raw.reserve(raw_.size());
  for (size_t i : order) {
    entries.push_back(remaining_[i]);
    raw.insert(raw.end(), raw_.begin() + static_cast<std::ptrdiff_t>(i * num_scores_),
               raw_.begin() + static_cast<std::ptrdiff_t>((i + 1) * num_scores_));
  }
  remaining_.swap(entries);
  raw_.swap(raw);
}

// ---- StoreScheduleResults -----------------------------------------------------------

void UpstreamBatch::store(const Snapshot& snap, uint64_t cycle, const std::optional<std::string>& signature,
                          int32_t hinted, int32_t chosen, PodQuery* query, const EvalResult* result,
                          Clock::time_point now, BatchCounters& counters) {
  last_cycle_ = cycle;
  last_chosen_ = chosen;
  last_chosen_name_ = chosen >= 0 ? snap.node_name(static_cast<uint32_t>(chosen)) : "";
  last_succeeded_ = true;
  if (hinted >= 0 && chosen == hinted) {
    ++counters.hint_used;
    return;  // the state stays, already popped
  }
  if (hinted >= 0) ++counters.hint_not_used;
  // The remaining list: the scored nodes but the chosen one, in order.
  const bool scored = result && result->scored && result->scored_nodes.size() > 1;
  if (signature && scored && query) {
    const PodQueryView v = query->view();
    const size_t F = result->scored_nodes.size();
    num_scores_ = v.num_scores;
    remaining_.clear();
    raw_.clear();
    remaining_.reserve(F - 1);
    raw_.reserve((F - 1) * num_scores_);
    // The totals as this pod's scoring gave them (upstream stores the heap
    // as it is); they are renormalized only when a node is rescored in.
    for (size_t i = 0; i < F; ++i) {
      const uint32_t node = result->scored_nodes[i];
      if (static_cast<int32_t>(node) == chosen) continue;
      const int64_t total = result->totals[i];
      remaining_.push_back(Entry{node, total, selection_key(total, node, v)});
      for (uint32_t slot = 0; slot < num_scores_; ++slot) raw_.push_back(result->raw_scores[slot * F + i]);
    }
    sort_entries();
    has_state_ = true;
    signature_ = *signature;
    created_ = now;
    return;
  }
  has_state_ = false;
  remaining_.clear();
  raw_.clear();
  ++counters.flushed[static_cast<size_t>(signature ? FlushReason::kEmptyList : FlushReason::kPodNotBatchable)];
}

}  // namespace bulkscore
