#include "plugins/node_affinity.hpp"

#include <algorithm>
#include <set>

#include "host/input/labels.hpp"
#include "plugins/prepare.hpp"

namespace bulkscore::plugins {
namespace {

struct TermBuilder {
  const Snapshot& snap;
  Arena& arena;

  std::vector<int32_t> known_ids(const std::vector<std::string>& values) const {
    std::vector<int32_t> ids;
    for (const auto& v : values) {
      const int32_t id = snap.string_id(v);
      if (id != kNoId) ids.push_back(id);
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
  }

  // Compiles a label requirement; false when upstream's parser rejects it.
  bool expression(const NodeSelectorRequirement& r, AffinityRequirement& out) const {
    if (!is_qualified_name(r.key)) return false;
    const int32_t key = snap.string_id(r.key);
    out = AffinityRequirement{key, snap.dense_label_slot(key), {}, 0, AffinityRequirement::kIn};
    if (r.op == "In" || r.op == "NotIn") {
      if (r.values.empty()) return false;
      for (const auto& v : r.values)
        if (!is_valid_label_value(v)) return false;
      out.op = r.op == "In" ? AffinityRequirement::kIn : AffinityRequirement::kNotIn;
      out.values = arena.push(known_ids(r.values));
      return true;
    }
    if (r.op == "Exists" || r.op == "DoesNotExist") {
      if (!r.values.empty()) return false;
      out.op = r.op == "Exists" ? AffinityRequirement::kExists : AffinityRequirement::kDoesNotExist;
      return true;
    }
    if (r.op == "Gt" || r.op == "Lt") {
      // The value must also be a valid label value (so "-1" is rejected).
      if (r.values.size() != 1 || !is_valid_label_value(r.values[0]) || !parse_go_int64(r.values[0], out.bound))
        return false;
      out.op = r.op == "Gt" ? AffinityRequirement::kGt : AffinityRequirement::kLt;
      return true;
    }
    return false;
  }

  // Compiles a field requirement (only metadata.name exists on a node).
  bool field(const NodeSelectorRequirement& r, AffinityRequirement& out) const {
    if ((r.op != "In" && r.op != "NotIn") || r.values.size() != 1) return false;
    const bool in = r.op == "In";
    out = AffinityRequirement{kNoId, -1, {}, 0, in ? AffinityRequirement::kFieldIn : AffinityRequirement::kFieldNotIn};
    if (r.key != "metadata.name") {
      // Any other field reads as "" on a node.
      const bool equal = r.values[0].empty();
      out.op = (equal == in) ? AffinityRequirement::kAlways : AffinityRequirement::kNever;
      return true;
    }
    const int32_t id = snap.string_id(r.values[0]);
    if (id == kNoId) {
      out.op = in ? AffinityRequirement::kNever : AffinityRequirement::kAlways;
      return true;
    }
    out.values = arena.push(&id, 1);
    return true;
  }

  // A term; `empty` when it has no requirements (upstream drops such terms).
  AffinityTerm term(const NodeSelectorTerm& t, int32_t weight, bool& empty) const {
    empty = t.match_expressions.empty() && t.match_fields.empty();
    std::vector<AffinityRequirement> reqs;
    bool ok = true;
    for (const auto& r : t.match_expressions) {
      AffinityRequirement c{};
      ok = ok && expression(r, c);
      reqs.push_back(c);
    }
    for (const auto& r : t.match_fields) {
      AffinityRequirement c{};
      ok = ok && field(r, c);
      reqs.push_back(c);
    }
    AffinityTerm out{};
    out.unmatchable = !ok;
    out.weight = weight;
    if (ok) out.requirements = arena.push(reqs);
    return out;
  }

  Span<AffinityTerm> required(const NodeSelector& sel) const {
    std::vector<AffinityTerm> terms;
    for (const auto& t : sel.terms) {
      bool empty = false;
      AffinityTerm c = term(t, 0, empty);
      if (!empty) terms.push_back(c);
    }
    return arena.push(terms);
  }

  void preferred(const std::vector<PreferredSchedulingTerm>& pref, std::vector<AffinityTerm>& out,
                 std::string* error) const {
    for (const auto& p : pref) {
      if (p.weight == 0) continue;
      bool empty = false;
      AffinityTerm c = term(p.preference, p.weight, empty);
      if (empty) continue;
      if (c.unmatchable && error && error->empty()) error->assign("invalid preferred node affinity term");
      out.push_back(c);
    }
  }
};

}  // namespace

PrepareResult NodeAffinity::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  const Pod& pod = ctx.pod;
  const TermBuilder b{ctx.snapshot, arena};
  const auto& added = ctx.profile.node_affinity_args.added_affinity;
  const bulkscore::NodeAffinity* na =
      pod.affinity && pod.affinity->node_affinity ? &*pod.affinity->node_affinity : nullptr;
  const bool pod_required = na && na->required.has_value();
  const bool added_required = added && added->required.has_value();

  st = State{};
  PrepareResult r;
  if (!pod_required && !added_required && !pod.has_node_selector) r.prefilter = Code::Skip;

  std::vector<AffinityRequirement> selector;
  for (const auto& [k, v] : pod.node_selector) {
    const int32_t value = ctx.snapshot.string_id(v);
    const int32_t key = ctx.snapshot.string_id(k);
    AffinityRequirement req{key, ctx.snapshot.dense_label_slot(key), {}, 0, AffinityRequirement::kIn};
    if (value == kNoId)
      req.op = AffinityRequirement::kNever;
    else
      req.values = arena.push(&value, 1);
    selector.push_back(req);
  }
  st.node_selector = arena.push(selector);
  st.has_required = pod_required;
  if (pod_required) st.required = b.required(*na->required);
  st.has_added_required = added_required;
  if (added_required) st.added_required = b.required(*added->required);

  // PreFilterResult: node names from metadata.name In requirements.
  if (r.prefilter != Code::Skip && pod_required && !na->required->terms.empty()) {
    std::set<std::string> names;
    bool restricted = true;
    for (const auto& t : na->required->terms) {
      std::optional<std::set<std::string>> term_names;
      for (const auto& f : t.match_fields) {
        if (f.key != "metadata.name" || f.op != "In") continue;
        std::set<std::string> s(f.values.begin(), f.values.end());
        if (!term_names) {
          term_names = std::move(s);
        } else {
          std::set<std::string> both;
          std::set_intersection(term_names->begin(), term_names->end(), s.begin(), s.end(),
                                std::inserter(both, both.end()));
          term_names = std::move(both);
        }
      }
      if (!term_names) {
        restricted = false;
        break;
      }
      names.insert(term_names->begin(), term_names->end());
    }
    if (restricted) {
      if (names.empty()) {
        r.prefilter = Code::UnschedulableAndUnresolvable;
        r.message = "pod affinity terms conflict";
      } else {
        r.node_names = std::vector<std::string>(names.begin(), names.end());
      }
    }
  }

  // PreScore: the profile's preferred terms, then the pod's.
  std::vector<AffinityTerm> pref;
  if (added) b.preferred(added->preferred, pref, nullptr);
  const bool pod_has_preferred = na && na->has_preferred;
  if (pod_has_preferred) b.preferred(na->preferred, pref, &r.score_error);
  st.preferred = arena.push(pref);
  const bool added_has_preferred = added && !added->preferred.empty();
  r.skip_score = !pod_has_preferred && !added_has_preferred;
  return r;
}

void NodeAffinity::reasons(uint64_t bits, const Snapshot&, const State&, const uint8_t*, uint32_t,
                           std::vector<std::string>& out) {
  out.emplace_back(bits == kAddedAffinity ? "node(s) didn't match scheduler-enforced node affinity"
                                          : "node(s) didn't match Pod's node affinity/selector");
}

}  // namespace bulkscore::plugins
