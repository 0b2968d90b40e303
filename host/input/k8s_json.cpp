#include "host/input/k8s_json.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "host/common.hpp"
#include "host/input/device_groups.hpp"
#include "host/input/devices.hpp"
#include "host/input/labels.hpp"
#include "host/input/priority.hpp"
#include "host/input/quantity.hpp"
#include "host/input/quote.hpp"
#include "host/input/timestamp.hpp"
#include "host/input/resource_names.hpp"
#include "host/io/io.hpp"

namespace bulkscore {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// A field path inside one object ("spec.containers[0].resources"), kept as a
// chain of stack frames so that nothing is built unless an error is reported.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;
  int64_t index = -1;

  Path field(std::string_view k) const { return Path{this, k, -1}; }
  Path at(size_t i) const { return Path{this, {}, static_cast<int64_t>(i)}; }

  void render(std::string& out) const {
    if (parent != nullptr) parent->render(out);
    if (index >= 0) {
      out += '[';
      out += std::to_string(index);
      out += ']';
    } else if (parent != nullptr) {
      append_path_key(out, key);  // a map key from the input may be anything, "" too
    }
  }
};

const char* type_name(element_type t) {
  switch (t) {
    case element_type::ARRAY:
      return "an array";
    case element_type::OBJECT:
      return "an object";
    case element_type::INT64:
    case element_type::UINT64:
      return "an integer";
    case element_type::DOUBLE:
      return "a number";
    case element_type::STRING:
      return "a string";
    case element_type::BOOL:
      return "a boolean";
    case element_type::NULL_VALUE:
      return "null";
  }
  return "an unknown value";
}

// Input text in a message: shortened, control characters escaped.
std::string quote(std::string_view s) { return quote_for_message(s); }

// Converts one Node or Pod object; knows where it is for error messages:
// "<origin>: items[<i>] (<kind> \"<name>\"): <path>: <problem>".
class Reader {
 public:
  Reader(const std::string& origin, const char* kind, std::optional<size_t> item)
      : origin_(origin), kind_(kind), item_(item) {}

  void set_name(std::string_view name) { name_ = name; }

  // "<origin>: items[<i>]", or "<origin>" for a single object.
  std::string location() const {
    std::string s = origin_;
    if (item_) s += ": items[" + std::to_string(*item_) + "]";
    return s;
  }

  [[noreturn]] void fail(const Path& path, std::string_view problem) const {
    std::string msg = location();
    if (!name_.empty() && item_) {
      msg += " (";
      msg += kind_;
      msg += ' ';
      msg += quote(name_);
      msg += ')';
    } else if (!name_.empty()) {
      msg += ": ";
      msg += kind_;
      msg += ' ';
      msg += quote(name_);
    } else if (!item_) {
      msg += ": ";
      msg += kind_;
    }
    std::string rendered;
    path.render(rendered);
    if (!rendered.empty()) {
      msg += ": ";
      msg += rendered;
    }
    msg += ": ";
    msg.append(problem.data(), problem.size());
    throw InputError(msg);
  }

  [[noreturn]] void wrong_type(element v, const Path& path, const char* expected) const {
    fail(path, std::string("expected ") + expected + ", got " + type_name(v.type()));
  }

  object as_object(element v, const Path& path) const {
    object o;
    if (v.get_object().get(o) != simdjson::SUCCESS) wrong_type(v, path, "an object");
    return o;
  }

  array as_array(element v, const Path& path) const {
    array a;
    if (v.get_array().get(a) != simdjson::SUCCESS) wrong_type(v, path, "an array");
    return a;
  }

  // Go's decoder leaves a field at its zero value for null; so do we.
  std::string_view as_string_view(element v, const Path& path) const {
    if (v.is_null()) return {};
    std::string_view s;
    if (v.get_string().get(s) != simdjson::SUCCESS) wrong_type(v, path, "a string");
    return s;
  }

  std::string as_string(element v, const Path& path) const { return std::string(as_string_view(v, path)); }

  bool as_bool(element v, const Path& path) const {
    if (v.is_null()) return false;
    bool b = false;
    if (v.get_bool().get(b) != simdjson::SUCCESS) wrong_type(v, path, "a boolean");
    return b;
  }

  int64_t as_int64(element v, const Path& path) const {
    if (v.is_null()) return 0;
    int64_t i = 0;
    if (v.get_int64().get(i) != simdjson::SUCCESS) {
      if (v.type() == element_type::UINT64) fail(path, "integer out of range");
      wrong_type(v, path, "an integer");
    }
    return i;
  }

  int32_t as_int32(element v, const Path& path) const {
    const int64_t i = as_int64(v, path);
    if (i < std::numeric_limits<int32_t>::min() || i > std::numeric_limits<int32_t>::max())
      fail(path, "integer out of range: " + std::to_string(i));
    return static_cast<int32_t>(i);
  }

  // Calls f(key, value, path) for each non-null member of an object.
  template <typename F>
  void for_each_field(element v, const Path& path, F&& f) const {
    for (const simdjson::dom::key_value_pair kv : as_object(v, path)) {
      if (kv.value.is_null()) continue;
      f(kv.key, kv.value, path.field(kv.key));
    }
  }

  // Calls f(element, path) for each array item.
  template <typename F>
  void for_each_item(element v, const Path& path, F&& f) const {
    size_t i = 0;
    for (const element item : as_array(v, path)) {
      f(item, path.at(i));
      ++i;
    }
  }

  StringMap as_string_map(element v, const Path& path) const {
    StringMap out;
    for (const simdjson::dom::key_value_pair kv : as_object(v, path)) {
      out[std::string(kv.key)] = as_string(kv.value, path.field(kv.key));
    }
    return out;
  }

  std::vector<std::string> as_string_list(element v, const Path& path) const {
    std::vector<std::string> out;
    for_each_item(v, path, [&](element item, const Path& p) { out.push_back(as_string(item, p)); });
    return out;
  }

  // A resources map: cpu in millicores, everything else in base units. apimachinery
  // also decodes a bare JSON number as a quantity; its text is used as written.
  // `whole_extended`: extended resources must be whole numbers, as the API
  // server requires of a container's requests and limits.
  ResourceList as_resources(element v, const Path& path, bool whole_extended = false) const {
    ResourceList out;
    for_each_field(v, path, [&](std::string_view name, element value, const Path& p) {
      std::string text;
      switch (value.type()) {
        case element_type::STRING:
          text = std::string(value.get_string().value_unsafe());
          break;
        case element_type::INT64:
          text = std::to_string(value.get_int64().value_unsafe());
          break;
        case element_type::UINT64:
          text = std::to_string(value.get_uint64().value_unsafe());
          break;
        case element_type::DOUBLE: {
          char buf[64];
          const auto res = std::to_chars(buf, buf + sizeof buf, value.get_double().value_unsafe());
          text.assign(buf, res.ptr);
          break;
        }
        default:
          wrong_type(value, p, "a quantity string");
      }
      int64_t amount = 0;
      try {
        amount = parse_resource_quantity(name, text);
      } catch (const InputError& e) {
        fail(p, e.what());
      }
      if (amount < 0) fail(p, "negative quantity " + quote(text));
      if (whole_extended && is_extended_resource_name(name) && parse_quantity_scaled(text, 3) % 1000 != 0)
        fail(p, "must be an integer (an extended resource), got " + quote(text));
      out[std::string(name)] = amount;
    });
    return out;
  }

  // ---- the API server's validation of the fields the scheduler reads ----
  //
  // kubectl output passed it already; hand-written or generated input may
  // not, and bulkscore would then compute what no cluster can hold (a
  // negative preferred weight gives negative scores). So the rules the API
  // server applies (pkg/apis/core/validation) are applied here too.

  // validatePreferredSchedulingTerms / validateWeightedPodAffinityTerms.
  void check_preferred_weight(int32_t weight, const Path& term) const {
    if (weight < 1 || weight > 100) {
      fail(term.field("weight"), "must be in the range [1, 100], got " + std::to_string(weight));
    }
  }

  // validateTopologySpreadConstraints, for one constraint after those before
  // it; `seen` maps each {topologyKey, whenUnsatisfiable} before it to its
  // index (a set, not a scan: nothing bounds the number of constraints).
  void check_spread_constraint(const TopologySpreadConstraint& c,
                               const std::map<std::pair<std::string, std::string>, size_t>& seen,
                               const Path& p) const {
    if (c.max_skew <= 0) fail(p.field("maxSkew"), "must be greater than 0, got " + std::to_string(c.max_skew));
    if (c.topology_key.empty()) fail(p.field("topologyKey"), "required");
    if (c.when_unsatisfiable != "DoNotSchedule" && c.when_unsatisfiable != "ScheduleAnyway") {
      fail(p.field("whenUnsatisfiable"),
           "unsupported value " + quote(c.when_unsatisfiable) + " (expected DoNotSchedule or ScheduleAnyway)");
    }
    if (const auto it = seen.find({c.topology_key, c.when_unsatisfiable}); it != seen.end()) {
      fail(p, "duplicate constraint {" + name_for_message(c.topology_key) + ", " + c.when_unsatisfiable +
                  "} (same topologyKey and whenUnsatisfiable as constraint " + std::to_string(it->second) + ")");
    }
    if (c.min_domains) {
      if (*c.min_domains <= 0) {
        fail(p.field("minDomains"), "must be greater than 0, got " + std::to_string(*c.min_domains));
      }
      if (c.when_unsatisfiable != "DoNotSchedule") {
        fail(p.field("minDomains"), "may only be set with whenUnsatisfiable DoNotSchedule");
      }
    }
    const auto check_policy = [&](const char* field, const std::string& value) {
      if (!value.empty() && value != "Honor" && value != "Ignore") {
        fail(p.field(field), "unsupported value " + quote(value) + " (expected Honor or Ignore)");
      }
    };
    check_policy("nodeAffinityPolicy", c.node_affinity_policy);
    check_policy("nodeTaintsPolicy", c.node_taints_policy);
    // With MatchLabelKeysInPodTopologySpreadSelectorMerge (on in v1.35) the
    // keys are validated as a pod affinity term's; the selector strictly.
    check_label_keys("matchLabelKeys", c.match_label_keys, c.label_selector.has_value(), p);
    if (c.label_selector) check_label_selector(*c.label_selector, p.field("labelSelector"));
  }

  // ---- shared pieces of the Pod spec ----

  template <typename Requirement>
  std::vector<Requirement> as_requirements(element v, const Path& path) const {
    std::vector<Requirement> out;
    for_each_item(v, path, [&](element item, const Path& p) {
      Requirement r;
      if (!item.is_null()) {
        for_each_field(item, p, [&](std::string_view k, element fv, const Path& fp) {
          if (k == "key")
            r.key = as_string(fv, fp);
          else if (k == "operator")
            r.op = as_string(fv, fp);
          else if (k == "values")
            r.values = as_string_list(fv, fp);
        });
      }
      out.push_back(std::move(r));
    });
    return out;
  }

  LabelSelector as_label_selector(element v, const Path& path) const {
    LabelSelector sel;
    for_each_field(v, path, [&](std::string_view k, element fv, const Path& fp) {
      if (k == "matchLabels")
        sel.match_labels = as_string_map(fv, fp);
      else if (k == "matchExpressions")
        sel.match_expressions = as_requirements<LabelSelectorRequirement>(fv, fp);
    });
    return sel;
  }

  NodeSelectorTerm as_node_selector_term(element v, const Path& path) const {
    NodeSelectorTerm term;
    if (v.is_null()) return term;
    for_each_field(v, path, [&](std::string_view k, element fv, const Path& fp) {
      if (k == "matchExpressions")
        term.match_expressions = as_requirements<NodeSelectorRequirement>(fv, fp);
      else if (k == "matchFields")
        term.match_fields = as_requirements<NodeSelectorRequirement>(fv, fp);
    });
    return term;
  }

  NodeAffinity as_node_affinity(element v, const Path& path) const {
    NodeAffinity na;
    for_each_field(v, path, [&](std::string_view k, element fv, const Path& fp) {
      if (k == "requiredDuringSchedulingIgnoredDuringExecution") {
        NodeSelector sel;
        for_each_field(fv, fp, [&](std::string_view k2, element v2, const Path& p2) {
          if (k2 != "nodeSelectorTerms") return;
          sel.terms.clear();
          for_each_item(v2, p2, [&](element t, const Path& tp) { sel.terms.push_back(as_node_selector_term(t, tp)); });
        });
        na.required = std::move(sel);
      } else if (k == "preferredDuringSchedulingIgnoredDuringExecution") {
        na.has_preferred = true;
        na.preferred.clear();
        for_each_item(fv, fp, [&](element item, const Path& ip) {
          PreferredSchedulingTerm pt;
          if (!item.is_null()) {
            for_each_field(item, ip, [&](std::string_view k2, element v2, const Path& p2) {
              if (k2 == "weight")
                pt.weight = as_int32(v2, p2);
              else if (k2 == "preference")
                pt.preference = as_node_selector_term(v2, p2);
            });
          }
          check_preferred_weight(pt.weight, ip);
          na.preferred.push_back(std::move(pt));
        });
      }
    });
    return na;
  }

  PodAffinityTerm as_pod_affinity_term(element v, const Path& path) const {
    PodAffinityTerm term;
    if (v.is_null()) {
      check_pod_affinity_term(term, path);  // a null term decodes as a zero one: no topologyKey
      return term;
    }
    for_each_field(v, path, [&](std::string_view k, element fv, const Path& fp) {
      if (k == "labelSelector")
        term.label_selector = as_label_selector(fv, fp);
      else if (k == "namespaces")
        term.namespaces = as_string_list(fv, fp);
      else if (k == "topologyKey")
        term.topology_key = as_string(fv, fp);
      else if (k == "namespaceSelector")
        term.namespace_selector = as_label_selector(fv, fp);
      else if (k == "matchLabelKeys")
        term.match_label_keys = as_string_list(fv, fp);
      else if (k == "mismatchLabelKeys")
        term.mismatch_label_keys = as_string_list(fv, fp);
    });
    check_pod_affinity_term(term, path);
    return term;
  }

  // ValidateLabelSelector, strict as the API server is on creation:
  // matchLabels as labels; each requirement's operator and the number of
  // its values, its key a label key and its values label values.
  void check_label_selector(const LabelSelector& sel, const Path& path) const {
    check_labels(sel.match_labels, path.field("matchLabels"));
    const Path exprs = path.field("matchExpressions");
    for (size_t i = 0; i < sel.match_expressions.size(); ++i) {
      const LabelSelectorRequirement& r = sel.match_expressions[i];
      const Path rp = exprs.at(i);
      if (r.op == "In" || r.op == "NotIn") {
        if (r.values.empty()) fail(rp.field("values"), "must be specified when `operator` is 'In' or 'NotIn'");
      } else if (r.op == "Exists" || r.op == "DoesNotExist") {
        if (!r.values.empty()) fail(rp.field("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
      } else {
        fail(rp.field("operator"), "unsupported value " + quote(r.op) + " (expected In, NotIn, Exists or DoesNotExist)");
      }
      if (!is_qualified_name(r.key))
        fail(rp.field("key"), "invalid label key " + quote(r.key) + ": " + qualified_name_problem(r.key));
      const Path values = rp.field("values");
      for (size_t j = 0; j < r.values.size(); ++j) {
        if (!is_valid_label_value(r.values[j]))
          fail(values.at(j), "invalid value " + quote(r.values[j]) + ": " + label_value_problem(r.values[j]));
      }
    }
  }

  // matchLabelKeys / mismatchLabelKeys (validateLabelKeys): label keys,
  // and only beside a labelSelector.
  void check_label_keys(std::string_view field, const std::vector<std::string>& keys, bool has_selector,
                        const Path& path) const {
    if (keys.empty()) return;
    const Path fp = path.field(field);
    if (!has_selector) fail(fp, "must not be specified when labelSelector is not set");
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!is_qualified_name(keys[i]))
        fail(fp.at(i), "invalid label key " + quote(keys[i]) + ": " + qualified_name_problem(keys[i]));
    }
  }

  // validatePodAffinityTerm as the API server runs it (the matchLabelKeys
  // keys against the selector: check_match_label_keys_once, once the pod's
  // labels are known).
  void check_pod_affinity_term(const PodAffinityTerm& t, const Path& path) const {
    if (t.topology_key.empty()) fail(path.field("topologyKey"), "required: can not be empty");
    if (!is_qualified_name(t.topology_key))
      fail(path.field("topologyKey"),
           "invalid label key " + quote(t.topology_key) + ": " + qualified_name_problem(t.topology_key));
    if (t.label_selector) check_label_selector(*t.label_selector, path.field("labelSelector"));
    if (t.namespace_selector) check_label_selector(*t.namespace_selector, path.field("namespaceSelector"));
    const Path namespaces = path.field("namespaces");
    for (size_t i = 0; i < t.namespaces.size(); ++i) {
      const std::string problem = dns1123_label_problem(t.namespaces[i]);
      if (!problem.empty()) fail(namespaces.at(i), "invalid namespace name " + quote(t.namespaces[i]) + ": " + problem);
    }
    check_label_keys("matchLabelKeys", t.match_label_keys, t.label_selector.has_value(), path);
    check_label_keys("mismatchLabelKeys", t.mismatch_label_keys, t.label_selector.has_value(), path);
    if (!t.match_label_keys.empty() && !t.mismatch_label_keys.empty()) {
      const std::set<std::string_view> mismatch(t.mismatch_label_keys.begin(), t.mismatch_label_keys.end());
      for (const auto& k : t.match_label_keys)
        if (mismatch.count(k))
          fail(path.field("matchLabelKeys"), quote(k) + " exists in both matchLabelKeys and mismatchLabelKeys");
    }
  }

  // The API server validates matchLabelKeys after it merged them into the
  // selector (a requirement `key In (the pod's value)` appended for each key
  // the pod's labels have): a matchLabelKeys key may then appear in the
  // selector once (matchLabels first, then the requirements in order). A
  // selector read back from the API server holds the merged requirements
  // already, so the merge is simulated only for keys no requirement names
  // (a requirement on such a key written by hand, which the API server
  // would refuse beside the merged one, cannot be told from a merged one).
  void check_match_label_keys_once(const std::vector<std::string>& keys, const LabelSelector& sel,
                                   const StringMap& pod_labels, const Path& path) const {
    if (keys.empty()) return;
    std::unordered_map<std::string_view, size_t> position;  // the last, as upstream's map keeps it
    for (size_t i = 0; i < keys.size(); ++i) position[keys[i]] = i;
    const auto required = [&](std::string_view k) {
      return std::any_of(sel.match_expressions.begin(), sel.match_expressions.end(),
                         [&](const LabelSelectorRequirement& r) { return r.key == k; });
    };
    std::vector<std::string_view> requirement_keys;
    requirement_keys.reserve(sel.match_expressions.size() + keys.size());
    for (const auto& r : sel.match_expressions) requirement_keys.push_back(r.key);
    for (const auto& k : keys)
      if (pod_labels.count(k) != 0 && !required(k)) requirement_keys.push_back(k);
    std::unordered_set<std::string_view> seen;
    for (const auto& [k, v] : sel.match_labels) seen.insert(k);
    const Path fp = path.field("matchLabelKeys");
    for (const std::string_view k : requirement_keys) {
      const auto it = position.find(k);
      if (it != position.end() && seen.count(k) != 0)
        fail(fp.at(it->second), quote(k) + " exists in both matchLabelKeys and labelSelector");
      seen.insert(k);
    }
  }

  PodAffinity as_pod_affinity(element v, const Path& path) const {
    PodAffinity pa;
    for_each_field(v, path, [&](std::string_view k, element fv, const Path& fp) {
      if (k == "requiredDuringSchedulingIgnoredDuringExecution") {
        pa.required.clear();
        for_each_item(fv, fp,
                      [&](element item, const Path& ip) { pa.required.push_back(as_pod_affinity_term(item, ip)); });
      } else if (k == "preferredDuringSchedulingIgnoredDuringExecution") {
        pa.preferred.clear();
        for_each_item(fv, fp, [&](element item, const Path& ip) {
          WeightedPodAffinityTerm wt;
          bool has_term = false;
          if (!item.is_null()) {
            for_each_field(item, ip, [&](std::string_view k2, element v2, const Path& p2) {
              if (k2 == "weight") {
                wt.weight = as_int32(v2, p2);
              } else if (k2 == "podAffinityTerm") {
                wt.term = as_pod_affinity_term(v2, p2);
                has_term = true;
              }
            });
          }
          check_preferred_weight(wt.weight, ip);
          if (!has_term) check_pod_affinity_term(wt.term, ip.field("podAffinityTerm"));
          pa.preferred.push_back(std::move(wt));
        });
      }
    });
    return pa;
  }

  Affinity as_affinity(element v, const Path& path) const {
    Affinity a;
    for_each_field(v, path, [&](std::string_view k, element fv, const Path& fp) {
      if (k == "nodeAffinity")
        a.node_affinity = as_node_affinity(fv, fp);
      else if (k == "podAffinity")
        a.pod_affinity = as_pod_affinity(fv, fp);
      else if (k == "podAntiAffinity")
        a.pod_anti_affinity = as_pod_affinity(fv, fp);
    });
    return a;
  }

  // The API server's toleration rules: a key is a qualified name; an empty
  // key needs operator Exists; Exists takes no value; Equal's value is a
  // label value; the effect, if any, is a taint effect.
  void check_toleration(const Toleration& t, const Path& ip) const {
    if (!t.key.empty() && !is_qualified_name(t.key))
      fail(ip.field("key"), "invalid key " + quote_for_message(t.key) + ": " + qualified_name_problem(t.key));
    if (t.op != "" && t.op != "Equal" && t.op != "Exists" && t.op != "Gt" && t.op != "Lt")
      fail(ip.field("operator"), "unsupported operator " + quote_for_message(t.op) + " (expected Equal or Exists)");
    if (t.key.empty() && t.op != "Exists")
      fail(ip.field("operator"), "must be Exists when `key` is empty, which means \"match all values and all keys\"");
    if (t.op == "Exists" && !t.value.empty()) fail(ip.field("value"), "must be empty when `operator` is 'Exists'");
    if ((t.op == "" || t.op == "Equal") && !is_valid_label_value(t.value))
      fail(ip.field("value"), "invalid value " + quote_for_message(t.value) + ": " + label_value_problem(t.value));
    if (!t.effect.empty() && t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" && t.effect != "NoExecute")
      fail(ip.field("effect"), "unsupported effect " + quote_for_message(t.effect) +
                                   " (expected NoSchedule, PreferNoSchedule or NoExecute)");
  }

  // metadata.labels as the API server validates them.
  void check_labels(const StringMap& labels, const Path& path) const {
    for (const auto& [k, v] : labels) {
      if (!is_qualified_name(k))
        fail(path, "invalid label key " + quote_for_message(k) + ": " + qualified_name_problem(k));
      if (!is_valid_label_value(v))
        fail(path, "invalid value " + quote_for_message(v) + " of label " + quote_for_message(k) + ": " +
                       label_value_problem(v));
    }
  }

  std::vector<Toleration> as_tolerations(element v, const Path& path) const {
    std::vector<Toleration> out;
    for_each_item(v, path, [&](element item, const Path& ip) {
      Toleration t;
      if (!item.is_null()) {
        for_each_field(item, ip, [&](std::string_view k, element fv, const Path& fp) {
          if (k == "key")
            t.key = as_string(fv, fp);
          else if (k == "operator")
            t.op = as_string(fv, fp);
          else if (k == "value")
            t.value = as_string(fv, fp);
          else if (k == "effect")
            t.effect = as_string(fv, fp);
        });
      }
      check_toleration(t, ip);
      out.push_back(std::move(t));
    });
    return out;
  }

  // nodeAffinityPolicy / nodeTaintsPolicy: null is unset, but "" is a value
  // the API server refuses (no defaulting turns it into unset).
  std::string as_policy(element v, const Path& path) const {
    std::string s = as_string(v, path);
    if (s.empty()) fail(path, "unsupported value \"\" (expected Honor or Ignore)");
    return s;
  }

  std::vector<TopologySpreadConstraint> as_spread_constraints(element v, const Path& path) const {
    std::vector<TopologySpreadConstraint> out;
    std::map<std::pair<std::string, std::string>, size_t> seen;
    for_each_item(v, path, [&](element item, const Path& ip) {
      TopologySpreadConstraint c;
      if (!item.is_null()) {
        for_each_field(item, ip, [&](std::string_view k, element fv, const Path& fp) {
          if (k == "maxSkew")
            c.max_skew = as_int32(fv, fp);
          else if (k == "topologyKey")
            c.topology_key = as_string(fv, fp);
          else if (k == "whenUnsatisfiable")
            c.when_unsatisfiable = as_string(fv, fp);
          else if (k == "labelSelector")
            c.label_selector = as_label_selector(fv, fp);
          else if (k == "minDomains")
            c.min_domains = as_int32(fv, fp);
          else if (k == "nodeAffinityPolicy")
            c.node_affinity_policy = as_policy(fv, fp);
          else if (k == "nodeTaintsPolicy")
            c.node_taints_policy = as_policy(fv, fp);
          else if (k == "matchLabelKeys")
            c.match_label_keys = as_string_list(fv, fp);
        });
      }
      check_spread_constraint(c, seen, ip);
      seen.emplace(std::pair{c.topology_key, c.when_unsatisfiable}, out.size());
      out.push_back(std::move(c));
    });
    return out;
  }

  std::vector<Container> as_containers(element v, const Path& path) const {
    std::vector<Container> out;
    for_each_item(v, path, [&](element item, const Path& ip) {
      Container c;
      if (!item.is_null()) {
        for_each_field(item, ip, [&](std::string_view k, element fv, const Path& fp) {
          if (k == "name") {
            c.name = as_string(fv, fp);
          } else if (k == "image") {
            c.image = as_string(fv, fp);
          } else if (k == "restartPolicy") {
            c.restart_policy_always = as_string_view(fv, fp) == "Always";
          } else if (k == "resources") {
            ResourceList limits;
            for_each_field(fv, fp, [&](std::string_view k2, element v2, const Path& p2) {
              if (k2 == "requests")
                c.requests = as_resources(v2, p2, true);
              else if (k2 == "limits")
                limits = as_resources(v2, p2, true);
            });
            // The API server's Pod defaulting: a limit without a request
            // becomes the request (extended resources such as GPUs are
            // usually written as limits only).
            for (const auto& [name, amount] : limits) c.requests.emplace(name, amount);
          } else if (k == "ports") {
            c.ports.clear();
            for_each_item(fv, fp, [&](element port, const Path& pp) {
              ContainerPort cp;
              if (!port.is_null()) {
                for_each_field(port, pp, [&](std::string_view k2, element v2, const Path& p2) {
                  if (k2 == "containerPort")
                    cp.container_port = as_int32(v2, p2);
                  else if (k2 == "hostPort")
                    cp.host_port = as_int32(v2, p2);
                  else if (k2 == "protocol")
                    cp.protocol = as_string(v2, p2);
                  else if (k2 == "hostIP")
                    cp.host_ip = as_string(v2, p2);
                });
              }
              // As the API server validates ports: a container port in
              // 1..65535, a host port 0 (none) or in 1..65535.
              if (cp.container_port < 1 || cp.container_port > 65535)
                fail(pp.field("containerPort"),
                     "must be between 1 and 65535, inclusive, got " + std::to_string(cp.container_port));
              if (cp.host_port < 0 || cp.host_port > 65535)
                fail(pp.field("hostPort"),
                     "must be between 1 and 65535, inclusive, got " + std::to_string(cp.host_port));
              c.ports.push_back(std::move(cp));
            });
          }
        });
      }
      out.push_back(std::move(c));
    });
    return out;
  }

  // metadata.name, read before anything else so every later error names the object.
  std::string_view required_name(object root) const {
    const Path root_path;
    const Path metadata_path = root_path.field("metadata");
    element metadata;
    if (root["metadata"].get(metadata) != simdjson::SUCCESS || metadata.is_null()) {
      fail(metadata_path.field("name"), "missing");
    }
    std::string_view name;
    bool found = false;
    for (const simdjson::dom::key_value_pair kv : as_object(metadata, metadata_path)) {
      if (kv.key != "name") continue;
      name = as_string_view(kv.value, metadata_path.field("name"));
      found = !kv.value.is_null();
    }
    if (!found) fail(metadata_path.field("name"), "missing");
    if (name.empty()) fail(metadata_path.field("name"), "empty");
    return name;
  }

 private:
  const std::string& origin_;
  const char* kind_;
  std::optional<size_t> item_;
  std::string_view name_;
};

Node convert_node(element item, Reader& r) {
  const Path root;
  const object obj = r.as_object(item, root);
  Node node;
  const std::string_view name = r.required_name(obj);
  r.set_name(name);
  node.name = std::string(name);

  std::optional<element> capacity;
  bool has_allocatable = false;

  r.for_each_field(item, root, [&](std::string_view k, element v, const Path& p) {
    if (k == "metadata") {
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 == "labels") {
          node.labels = r.as_string_map(v2, p2);
          r.check_labels(node.labels, p2);
        }
      });
    } else if (k == "spec") {
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 == "unschedulable") {
          node.unschedulable = r.as_bool(v2, p2);
        } else if (k2 == "taints") {
          node.taints.clear();
          r.for_each_item(v2, p2, [&](element t, const Path& tp) {
            Taint taint;
            if (!t.is_null()) {
              r.for_each_field(t, tp, [&](std::string_view k3, element v3, const Path& p3) {
                if (k3 == "key")
                  taint.key = r.as_string(v3, p3);
                else if (k3 == "value")
                  taint.value = r.as_string(v3, p3);
                else if (k3 == "effect")
                  taint.effect = r.as_string(v3, p3);
              });
            }
            if (taint.key.empty()) r.fail(tp.field("key"), "required");
            if (!is_qualified_name(taint.key))
              r.fail(tp.field("key"),
                     "invalid key " + quote_for_message(taint.key) + ": " + qualified_name_problem(taint.key));
            if (!is_valid_label_value(taint.value))
              r.fail(tp.field("value"),
                     "invalid value " + quote_for_message(taint.value) + ": " + label_value_problem(taint.value));
            if (taint.effect != "NoSchedule" && taint.effect != "PreferNoSchedule" && taint.effect != "NoExecute") {
              r.fail(tp.field("effect"), "unknown taint effect " + quote(taint.effect) +
                                             " (expected NoSchedule, PreferNoSchedule or NoExecute)");
            }
            node.taints.push_back(std::move(taint));
          });
        }
      });
    } else if (k == "status") {
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 == "allocatable") {
          node.allocatable = r.as_resources(v2, p2);
          has_allocatable = true;
        } else if (k2 == "capacity") {
          capacity = v2;  // parsed below, only if there is no allocatable
        } else if (k2 == "images") {
          node.images.clear();
          r.for_each_item(v2, p2, [&](element img, const Path& ip) {
            ContainerImage ci;
            if (!img.is_null()) {
              r.for_each_field(img, ip, [&](std::string_view k3, element v3, const Path& p3) {
                if (k3 == "names")
                  ci.names = r.as_string_list(v3, p3);
                else if (k3 == "sizeBytes")
                  ci.size_bytes = r.as_int64(v3, p3);
              });
            }
            node.images.push_back(std::move(ci));
          });
        }
      });
    }
  });
  // Like API defaulting: a node without status.allocatable offers its capacity.
  if (!has_allocatable && capacity) {
    const Path status = root.field("status");
    node.allocatable = r.as_resources(*capacity, status.field("capacity"));
  }
  return node;
}

Pod convert_pod(element item, Reader& r, std::string origin) {
  const Path root;
  const object obj = r.as_object(item, root);
  Pod pod;
  const std::string_view name = r.required_name(obj);
  r.set_name(name);
  pod.name = std::string(name);
  pod.origin = std::move(origin);

  r.for_each_field(item, root, [&](std::string_view k, element v, const Path& p) {
    if (k == "metadata") {
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 == "namespace") {
          pod.namespace_name = r.as_string(v2, p2);
        } else if (k2 == "uid") {
          pod.uid = r.as_string(v2, p2);
        } else if (k2 == "labels") {
          pod.labels = r.as_string_map(v2, p2);
          r.check_labels(pod.labels, p2);
        } else if (k2 == "annotations") {
          pod.annotations = r.as_string_map(v2, p2);
        } else if (k2 == "deletionTimestamp") {
          r.as_string_view(v2, p2);  // type check only
          pod.deleting = true;
        } else if (k2 == "ownerReferences") {
          pod.owner_references.clear();
          r.for_each_item(v2, p2, [&](element ref, const Path& rp) {
            OwnerReference o;
            if (!ref.is_null()) {
              r.for_each_field(ref, rp, [&](std::string_view k3, element v3, const Path& p3) {
                if (k3 == "apiVersion")
                  o.api_version = r.as_string(v3, p3);
                else if (k3 == "kind")
                  o.kind = r.as_string(v3, p3);
                else if (k3 == "name")
                  o.name = r.as_string(v3, p3);
                else if (k3 == "uid")
                  o.uid = r.as_string(v3, p3);
                else if (k3 == "controller")
                  o.controller = r.as_bool(v3, p3);
              });
            }
            pod.owner_references.push_back(std::move(o));
          });
        }
      });
    } else if (k == "spec") {
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 == "nodeName")
          pod.node_name = r.as_string(v2, p2);
        else if (k2 == "schedulerName")
          pod.scheduler_name = r.as_string(v2, p2);
        else if (k2 == "priority") {
          pod.priority = r.as_int32(v2, p2);
          pod.has_priority = true;
        } else if (k2 == "workloadRef") {
          // As the API server validates it: name a DNS subdomain, podGroup
          // and podGroupReplicaKey DNS labels, the first two required.
          r.for_each_field(v2, p2, [&](std::string_view k3, element v3, const Path& p3) {
            std::string* into = k3 == "name"                 ? &pod.workload_name
                                : k3 == "podGroup"           ? &pod.workload_pod_group
                                : k3 == "podGroupReplicaKey" ? &pod.workload_replica_key
                                                             : nullptr;
            if (into == nullptr) return;
            *into = r.as_string(v3, p3);
            const std::string problem =
                k3 == "name" ? dns1123_subdomain_problem(*into) : dns1123_label_problem(*into);
            if (!into->empty() && !problem.empty()) r.fail(p3, "invalid name " + quote(*into) + ": " + problem);
          });
          if (pod.workload_name.empty()) r.fail(p2.field("name"), "required");
          if (pod.workload_pod_group.empty()) r.fail(p2.field("podGroup"), "required");
        } else if (k2 == "schedulingGroup") {
          // v1.36's PodSchedulingGroup, a union whose one member today is
          // podGroupName: once the object is there, the name is required
          // (an empty one included) and a DNS subdomain, as PodGroup names are.
          bool named = false;
          r.for_each_field(v2, p2, [&](std::string_view k3, element v3, const Path& p3) {
            if (k3 != "podGroupName") return;
            named = true;
            pod.scheduling_group = r.as_string(v3, p3);
            if (pod.scheduling_group.empty()) r.fail(p3, "required");
            if (const std::string problem = dns1123_subdomain_problem(pod.scheduling_group); !problem.empty())
              r.fail(p3, "invalid name " + quote(pod.scheduling_group) + ": " + problem);
          });
          if (!named) r.fail(p2.field("podGroupName"), "required (exactly one of `podGroupName` must be set)");
        } else if (k2 == "priorityClassName") {
          pod.priority_class_name = r.as_string(v2, p2);
          if (const std::string problem = dns1123_subdomain_problem(pod.priority_class_name);
              !pod.priority_class_name.empty() && !problem.empty())
            r.fail(p2, "invalid name " + quote(pod.priority_class_name) + ": " + problem);
        } else if (k2 == "preemptionPolicy") {
          pod.preemption_policy = r.as_string(v2, p2);
          if (pod.preemption_policy != "PreemptLowerPriority" && pod.preemption_policy != "Never")
            r.fail(p2, "unsupported value " + quote(pod.preemption_policy) +
                           " (expected PreemptLowerPriority or Never)");
        } else if (k2 == "nodeSelector") {
          pod.node_selector = r.as_string_map(v2, p2);
          pod.has_node_selector = true;
        } else if (k2 == "affinity")
          pod.affinity = r.as_affinity(v2, p2);
        else if (k2 == "tolerations")
          pod.tolerations = r.as_tolerations(v2, p2);
        else if (k2 == "topologySpreadConstraints")
          pod.topology_spread_constraints = r.as_spread_constraints(v2, p2);
        else if (k2 == "containers")
          pod.containers = r.as_containers(v2, p2);
        else if (k2 == "initContainers")
          pod.init_containers = r.as_containers(v2, p2);
        else if (k2 == "overhead")
          pod.overhead = r.as_resources(v2, p2);
        else if (k2 == "resources") {
          r.for_each_field(v2, p2, [&](std::string_view k3, element v3, const Path& p3) {
            if (k3 == "requests") pod.pod_level_requests = r.as_resources(v3, p3);
          });
        }
      });
    } else if (k == "status") {
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 == "phase")
          pod.phase = r.as_string(v2, p2);
        else if (k2 == "nominatedNodeName")
          pod.nominated_node_name = r.as_string(v2, p2);
        else if (k2 == "startTime") {
          const std::string_view t = r.as_string_view(v2, p2);
          pod.start_time_ns = parse_rfc3339_ns(t);
          if (!pod.start_time_ns) r.fail(p2, "invalid time " + quote(t) + " (expected RFC 3339, e.g. 2026-11-26T21:37:05Z)");
        } else if (k2 == "conditions") {
          // DisruptionTarget True for PreemptionByScheduler: the scheduler's
          // preemption is ending this pod (podTerminatingByPreemption).
          r.for_each_item(v2, p2, [&](element c, const Path& cp) {
            std::string type, st, reason;
            r.for_each_field(c, cp, [&](std::string_view k3, element v3, const Path& p3) {
              if (k3 == "type")
                type = r.as_string(v3, p3);
              else if (k3 == "status")
                st = r.as_string(v3, p3);
              else if (k3 == "reason")
                reason = r.as_string(v3, p3);
            });
            if (type == "DisruptionTarget")
              pod.preempted_by_scheduler = st == "True" && reason == "PreemptionByScheduler";
          });
        }
      });
    }
  });
  // No Kubernetes release has both: v1.36 replaced spec.workloadRef (v1.35)
  // with spec.schedulingGroup, so such a pod mixes two API versions and
  // would name two groups; bulkscore refuses it rather than pick one.
  if (!pod.workload_name.empty() && !pod.scheduling_group.empty())
    r.fail(root.field("spec").field("schedulingGroup"),
           "cannot be set together with spec.workloadRef (v1.36's schedulingGroup replaced v1.35's workloadRef; "
           "a pod names one pod group)");
  // matchLabelKeys / mismatchLabelKeys, as the API server merges them at
  // creation (MatchLabelKeysInPodAffinity, GA): for each key the pod has, a
  // `key In [value]` (`NotIn` for mismatch) requirement joins the term's
  // labelSelector. A pod read back from the API server already carries
  // them; a requirement already present is not added twice.
  // What the API server checks after its merge, before bulkscore's own.
  {
    const Path spec = root.field("spec");
    const Path spread = spec.field("topologySpreadConstraints");
    for (size_t i = 0; i < pod.topology_spread_constraints.size(); ++i) {
      const TopologySpreadConstraint& c = pod.topology_spread_constraints[i];
      if (c.label_selector)
        r.check_match_label_keys_once(c.match_label_keys, *c.label_selector, pod.labels, spread.at(i));
    }
    if (pod.affinity) {
      const Path affinity = spec.field("affinity");
      const auto check_side = [&](const std::optional<PodAffinity>& side, std::string_view field) {
        if (!side) return;
        const Path sp = affinity.field(field);
        const Path required = sp.field("requiredDuringSchedulingIgnoredDuringExecution");
        for (size_t i = 0; i < side->required.size(); ++i) {
          const PodAffinityTerm& t = side->required[i];
          if (t.label_selector)
            r.check_match_label_keys_once(t.match_label_keys, *t.label_selector, pod.labels, required.at(i));
        }
        const Path preferred = sp.field("preferredDuringSchedulingIgnoredDuringExecution");
        for (size_t i = 0; i < side->preferred.size(); ++i) {
          const PodAffinityTerm& t = side->preferred[i].term;
          const Path item = preferred.at(i);
          if (t.label_selector)
            r.check_match_label_keys_once(t.match_label_keys, *t.label_selector, pod.labels,
                                          item.field("podAffinityTerm"));
        }
      };
      check_side(pod.affinity->pod_affinity, "podAffinity");
      check_side(pod.affinity->pod_anti_affinity, "podAntiAffinity");
    }
  }
  if (pod.affinity) {
    const auto merge = [&](PodAffinityTerm& t) {
      if (!t.label_selector) return;
      if (t.match_label_keys.empty() && t.mismatch_label_keys.empty()) return;
      auto& exprs = t.label_selector->match_expressions;
      // The keys with a requirement (a set: nothing bounds either list).
      std::set<std::string> present;
      for (const auto& e : exprs) present.insert(e.key);
      const auto add = [&](const std::string& key, const char* op) {
        const auto it = pod.labels.find(key);
        if (it == pod.labels.end()) return;
        // The API server refuses a user's requirement on a matchLabelKeys
        // key, so one already there is the creation-time merge (perhaps of
        // a label value since changed): keep it, add nothing.
        if (!present.insert(key).second) return;
        exprs.push_back(LabelSelectorRequirement{key, op, {it->second}});
      };
      for (const auto& k : t.match_label_keys) add(k, "In");
      for (const auto& k : t.mismatch_label_keys) add(k, "NotIn");
    };
    for (auto* side : {&pod.affinity->pod_affinity, &pod.affinity->pod_anti_affinity}) {
      if (!*side) continue;
      for (auto& t : (*side)->required) merge(t);
      for (auto& w : (*side)->preferred) merge(w.term);
    }
  }
  // The API server stores no pod without a container.
  if (pod.containers.empty())
    r.fail(root.field("spec").field("containers"), "required: a pod has at least one container");
  // API defaulting for the two fields the scheduler keys on.
  if (pod.namespace_name.empty()) pod.namespace_name = "default";
  if (pod.scheduler_name.empty()) pod.scheduler_name = "default-scheduler";
  return pod;
}

// Walks a NodeList / PodList / List or a single object, calling
// convert(item, index) for each Node or Pod (index empty for a single object).
template <typename Convert>
void for_each_object(element root, const std::string& origin, const char* kind, const char* list_kind,
                     Convert&& convert, bool kindless_is_one = false) {
  const std::string expected = std::string(kind) + ", " + list_kind + " or List";
  object obj;
  if (root.get_object().get(obj) != simdjson::SUCCESS) {
    throw InputError(origin + ": expected a JSON object (" + expected + "), got " + type_name(root.type()));
  }
  element kind_value;
  std::string_view doc_kind;
  if (obj["kind"].get(kind_value) != simdjson::SUCCESS || kind_value.is_null()) {
    // client-go's typed objects carry no kind: one object of the kind asked for.
    if (kindless_is_one) {
      convert(root, std::optional<size_t>());
      return;
    }
    throw InputError(origin + ": kind: missing (expected " + expected + ")");
  }
  if (kind_value.get_string().get(doc_kind) != simdjson::SUCCESS) {
    throw InputError(origin + ": kind: expected a string, got " + type_name(kind_value.type()));
  }
  if (doc_kind == kind) {
    convert(root, std::optional<size_t>());
    return;
  }
  const bool generic_list = doc_kind == "List";
  if (!generic_list && doc_kind != list_kind) {
    throw InputError(origin + ": kind " + quote(doc_kind) + ": expected " + expected);
  }
  element items_value;
  if (obj["items"].get(items_value) != simdjson::SUCCESS || items_value.is_null()) return;
  array items;
  if (items_value.get_array().get(items) != simdjson::SUCCESS) {
    throw InputError(origin + ": items: expected an array, got " + type_name(items_value.type()));
  }
  size_t i = 0;
  for (const element item : items) {
    const std::string where = origin + ": items[" + std::to_string(i) + "]";
    object item_obj;
    if (item.get_object().get(item_obj) != simdjson::SUCCESS) {
      throw InputError(where + ": expected an object (a " + kind + "), got " + type_name(item.type()));
    }
    element item_kind;
    if (item_obj["kind"].get(item_kind) == simdjson::SUCCESS && !item_kind.is_null()) {
      std::string_view s;
      if (item_kind.get_string().get(s) != simdjson::SUCCESS) {
        throw InputError(where + ": kind: expected a string, got " + type_name(item_kind.type()));
      }
      if (s != kind) throw InputError(where + ": kind " + quote(s) + ": expected " + kind);
    } else if (generic_list) {
      // A typed list implies its items' kind; a generic List does not.
      throw InputError(where + ": kind: missing (a List item must be a " + kind + ")");
    }
    convert(item, std::optional<size_t>(i));
    ++i;
  }
}

// Items in a list, for reserving; 0 if it is not a list.
size_t item_count(element root) {
  array items;
  if (root["items"].get_array().get(items) != simdjson::SUCCESS) return 0;
  return items.size();
}

// Walks a value with On-Demand, which (unlike DOM) knows where it stopped.
simdjson::error_code walk(simdjson::ondemand::value v, int depth) {
  using simdjson::ondemand::json_type;
  json_type t;
  if (const auto err = v.type().get(t)) return err;
  if (depth > 1024) return simdjson::DEPTH_ERROR;
  switch (t) {
    case json_type::object: {
      simdjson::ondemand::object obj;
      if (const auto err = v.get_object().get(obj)) return err;
      for (auto field : obj) {
        simdjson::ondemand::value fv;
        if (const auto err = field.value().get(fv)) return err;
        if (const auto err = walk(fv, depth + 1)) return err;
      }
      return simdjson::SUCCESS;
    }
    case json_type::array: {
      simdjson::ondemand::array arr;
      if (const auto err = v.get_array().get(arr)) return err;
      for (auto item : arr) {
        simdjson::ondemand::value iv;
        if (const auto err = item.get(iv)) return err;
        if (const auto err = walk(iv, depth + 1)) return err;
      }
      return simdjson::SUCCESS;
    }
    case json_type::number:
      return v.get_number().error();
    case json_type::string:
      return v.get_string().error();
    case json_type::boolean:
      return v.get_bool().error();
    case json_type::null:
      return v.is_null().error();
  }
  return simdjson::TAPE_ERROR;
}

// Where a document DOM refused goes wrong, as " at line L, column C"; empty
// if On-Demand cannot tell. Runs only after a failure.
std::string error_location(const simdjson::padded_string_view json) {
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(json).get(doc) != simdjson::SUCCESS) return {};
  // Stops at the first error; after a clean walk, a location still left is
  // trailing content.
  simdjson::ondemand::value root;
  if (doc.get_value().get(root) == simdjson::SUCCESS) (void)walk(root, 0);
  const char* where = nullptr;
  if (doc.current_location().get(where) != simdjson::SUCCESS || where < json.data() ||
      where > json.data() + json.size()) {
    return {};
  }
  size_t line = 1;
  const char* line_start = json.data();
  for (const char* c = json.data(); c < where; ++c) {
    if (*c == '\n') {
      ++line;
      line_start = c + 1;
    }
  }
  return " at line " + std::to_string(line) + ", column " + std::to_string(where - line_start + 1) + " (byte " +
         std::to_string(where - json.data()) + ")";
}

[[noreturn]] void throw_json_error(const std::string& origin, simdjson::error_code err,
                                   const simdjson::padded_string_view json) {
  throw InputError(origin + ": invalid JSON: " + simdjson::error_message(err) + error_location(json));
}

// A UTF-8 byte order mark before the JSON, as some editors and Windows tools
// write it, is skipped (kubectl and the API server accept it). The padding
// simdjson needs is at the end, so a later start stays valid.
bool has_bom(simdjson::padded_string_view json) {
  return json.size() >= 3 && static_cast<unsigned char>(json.data()[0]) == 0xEF &&
         static_cast<unsigned char>(json.data()[1]) == 0xBB && static_cast<unsigned char>(json.data()[2]) == 0xBF;
}
const char* without_bom(simdjson::padded_string_view json) { return json.data() + (has_bom(json) ? 3 : 0); }
size_t without_bom_size(simdjson::padded_string_view json) { return json.size() - (has_bom(json) ? 3 : 0); }

// A SharedDeviceGroup (deviceshare.io/v1alpha1): spec.resources (device
// resource -> count), spec.nodeSelector, spec.schedulingStrategy (binpack |
// spread), and status.nodeName / status.selectedDevices once bound.
SharedDeviceGroup convert_device_group(element item, Reader& r, std::string_view name, std::string origin) {
  const Path root;
  SharedDeviceGroup g;
  g.name = std::string(name);
  g.origin = std::move(origin);
  std::string phase;
  std::string selected_json_where;
  r.for_each_field(item, root, [&](std::string_view k, element v, const Path& p) {
    if (k == "apiVersion") {
      const std::string_view api = r.as_string_view(v, p);
      if (api != "deviceshare.io/v1alpha1")
        r.fail(p, "expected deviceshare.io/v1alpha1, got " + quote(api));
    } else if (k == "spec") {
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 == "resources") {
          r.for_each_field(v2, p2, [&](std::string_view resource, element v3, const Path& p3) {
            const std::string problem = qualified_name_problem(std::string(resource));
            if (!problem.empty()) r.fail(p3, "resource name " + quote(resource) + ": " + problem);
            const int64_t count = r.as_int64(v3, p3);
            if (count < 1 || count > static_cast<int64_t>(kMaxDevicesPerNode))
              r.fail(p3, "must be a device count in 1.." + std::to_string(kMaxDevicesPerNode) + ", got " +
                             std::to_string(count));
            g.resources[std::string(resource)] = static_cast<int32_t>(count);
          });
        } else if (k2 == "nodeSelector") {
          g.node_selector = r.as_string_map(v2, p2);
        } else if (k2 == "schedulingStrategy") {
          std::string s = r.as_string(v2, p2);
          std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
          if (s == "binpack" || s.empty()) {
            g.strategy = SharedDeviceGroup::Strategy::BinPack;
          } else if (s == "spread") {
            g.strategy = SharedDeviceGroup::Strategy::Spread;
          } else {
            r.fail(p2, "expected binpack or spread, got " + quote(r.as_string(v2, p2)));
          }
        }
      });
    } else if (k == "status") {
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 == "phase") phase = r.as_string(v2, p2);
        if (k2 == "nodeName") g.bound_node = r.as_string(v2, p2);
        if (k2 == "selectedDevices") {
          // The controller writes it as the pods' annotation does: a map of
          // resource name to a device list string.
          for (const auto& [resource, text] : r.as_string_map(v2, p2)) {
            const Path at = p2.field(resource);
            try {
              g.bound_devices[resource] = parse_device_list(text, "");
            } catch (const InputError& e) {
              r.fail(at, std::string_view(e.what()).substr(2));  // past parse_device_list's ": "
            }
          }
        }
      });
    }
  });
  if (g.resources.empty()) r.fail(root.field("spec").field("resources"), "at least one device resource is required");
  std::map<std::string, std::string> by_env;  // environment variable -> resource
  // Each Path points at its parent: the chain lives in named variables.
  const Path spec = root.field("spec");
  const Path resources = spec.field("resources");
  for (const auto& entry : g.resources) {
    const std::string& resource = entry.first;
    const Path at = resources.field(resource);
    // Devices come from device plugins, as extended resources; cpu or
    // memory here would make every pod requesting them a device user.
    if (!is_extended_resource_name(resource))
      r.fail(at, "must be an extended resource name (a device plugin's, like nvidia.com/gpu), got " + quote(resource));
    const auto [it, fresh] = by_env.emplace(visible_devices_env(resource), resource);
    if (!fresh)
      r.fail(at, "sets " + it->first + " as " + quote(it->second) +
                     " does; a group takes one resource per device plugin's variable");
  }
  // A group is bound when its status names a node; a phase other than Bound
  // beside a node name is the controller mid-update: the node decides.
  if (g.bound_node.empty()) g.bound_devices.clear();
  for (const auto& [resource, list] : g.bound_devices) {
    const auto it = g.resources.find(resource);
    if (it == g.resources.end())
      r.fail(root.field("status").field("selectedDevices").field(resource),
             "the group's spec.resources does not name " + quote(resource));
    if (list.size() != static_cast<size_t>(it->second))
      r.fail(root.field("status").field("selectedDevices").field(resource),
             "lists " + std::to_string(list.size()) + " device(s), spec.resources asks for " +
                 std::to_string(it->second));
  }
  if (phase == "Bound" && g.bound_node.empty())
    r.fail(root.field("status").field("nodeName"), "missing (status.phase is Bound)");
  return g;
}

// A pod group policy (a Workload's podGroups[].policy, a v1alpha2
// PodGroup's spec.schedulingPolicy): exactly one of basic and gang,
// gang.minCount positive, as the API server validates them.
void convert_pod_group_policy(element v, Reader& r, const Path& p, PodGroupObject& g) {
  bool basic = false, gang = false;
  r.for_each_field(v, p, [&](std::string_view k, element v2, const Path& p2) {
    if (k == "basic") {
      r.as_object(v2, p2);
      basic = true;
    } else if (k == "gang") {
      gang = true;
      bool min_given = false;
      r.for_each_field(v2, p2, [&](std::string_view k3, element v3, const Path& p3) {
        if (k3 != "minCount") return;
        const int64_t n = r.as_int64(v3, p3);
        if (n <= 0 || n > INT32_MAX) r.fail(p3, "must be greater than zero, got " + std::to_string(n));
        g.min_count = static_cast<int32_t>(n);
        min_given = true;
      });
      if (!min_given) r.fail(p2.field("minCount"), "must be greater than zero, got 0");
    }
  });
  if (!basic && !gang) r.fail(p, "exactly one of `basic`, `gang` is required");
  if (basic && gang) r.fail(p, "exactly one of `basic`, `gang` is required, but multiple fields are set");
  g.gang = gang;
}

// The topology-aware gang annotations of a Workload or PodGroup
// (kGangRequiredTopology, kGangPreferredTopology): at most one, its value
// a node label key (a qualified name, as a label key is validated).
void read_gang_topology(element annotations, Reader& r, const Path& p, std::string& key, bool& required) {
  bool seen = false;
  r.for_each_field(annotations, p, [&](std::string_view k, element v, const Path& p2) {
    const bool req = k == kGangRequiredTopology;
    if (!req && k != kGangPreferredTopology) return;
    if (seen)
      r.fail(p2, std::string("at most one of ") + kGangRequiredTopology + " and " + kGangPreferredTopology +
                     " may be set");
    seen = true;
    key = r.as_string(v, p2);
    required = req;
    if (const std::string problem = qualified_name_problem(key); !problem.empty())
      r.fail(p2, "invalid node label key " + quote(key) + ": " + problem);
  });
}

// A Workload, validated as the API server does either version: 1 to 8
// groups, names DNS labels and unique, each with exactly one policy.
//  * scheduling.k8s.io/v1alpha1 (v1.35): spec.podGroups[] {name, policy};
//    one PodGroupObject per item, the groups pods name with workloadRef.
//  * scheduling.k8s.io/v1alpha2 (v1.36): spec.podGroupTemplates[] {name,
//    schedulingPolicy}; templates a controller copies into PodGroups, which
//    are what pods name (spec.schedulingGroup), so it adds no group here.
void convert_workload(element item, Reader& r, bool v1alpha2, std::string_view ns, std::string_view name,
                      const std::string& origin, ClusterObjects& out) {
  const Path root;
  const Path spec = root.field("spec");
  const char* const list_field = v1alpha2 ? "podGroupTemplates" : "podGroups";
  const char* const policy_field = v1alpha2 ? "schedulingPolicy" : "policy";
  const Path groups = spec.field(list_field);
  std::vector<PodGroupObject> found;
  bool listed = false;
  r.for_each_field(item, root, [&](std::string_view k, element v, const Path& p) {
    if (k != "spec") return;
    r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
      if (k2 != list_field) return;
      listed = true;
      const size_t n = r.as_array(v2, p2).size();
      if (n > 8) r.fail(p2, "must have at most 8 items, got " + std::to_string(n));
      r.for_each_item(v2, p2, [&](element g, const Path& gp) {
        PodGroupObject o;
        o.api = PodGroupObject::Api::kWorkload;
        o.namespace_name = std::string(ns);
        o.name = std::string(name);
        o.origin = origin;
        bool policy = false;
        r.for_each_field(g, gp, [&](std::string_view k3, element v3, const Path& p3) {
          if (k3 == "name") {
            o.pod_group = r.as_string(v3, p3);
            if (const std::string problem = dns1123_label_problem(o.pod_group); !problem.empty())
              r.fail(p3, "invalid name " + quote(o.pod_group) + ": " + problem);
            for (const PodGroupObject& before : found)
              if (before.pod_group == o.pod_group) r.fail(p3, "duplicate value " + quote(o.pod_group));
          } else if (k3 == policy_field) {
            policy = true;
            convert_pod_group_policy(v3, r, p3, o);
          }
        });
        if (o.pod_group.empty()) r.fail(gp.field("name"), "required");
        if (!policy) r.fail(gp.field(policy_field), "exactly one of `basic`, `gang` is required");
        found.push_back(std::move(o));
      });
    });
  });
  if (!listed || found.empty()) r.fail(groups, "must have at least one item");
  if (v1alpha2) {
    out.template_workloads.push_back(TemplateWorkload{std::string(ns), std::string(name), origin});
    return;
  }
  for (PodGroupObject& o : found) out.pod_groups.push_back(std::move(o));
}

// A PodGroup: scheduling.k8s.io/v1alpha2 (v1.36: spec.schedulingPolicy,
// basic or gang.minCount as a Workload's group's policy; the other spec
// fields do not change where a pod may go in a bulk run and are not read) or
// scheduling.x-k8s.io/v1alpha1 (Coscheduling: spec.minMember,
// spec.minResources, spec.scheduleTimeoutSeconds; never negative).
PodGroupObject convert_pod_group(element item, Reader& r, bool coscheduling, std::string_view ns,
                                 std::string_view name, const std::string& origin) {
  const Path root;
  PodGroupObject o;
  o.api = coscheduling ? PodGroupObject::Api::kCoscheduling : PodGroupObject::Api::kPodGroup;
  o.namespace_name = std::string(ns);
  o.name = std::string(name);
  o.origin = origin;
  o.gang = coscheduling;
  // The policy's field: v1.36 names it schedulingPolicy. `policy` is the
  // name bulkscore read before v1.36's API was published (no release has
  // it), still taken so that files written for bulkscore keep working.
  // Exactly one of the two.
  const char* policy = nullptr;
  r.for_each_field(item, root, [&](std::string_view k, element v, const Path& p) {
    if (k != "spec") return;
    r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
      if (!coscheduling) {
        if (k2 == "schedulingPolicy" || k2 == "policy") {
          const char* field = k2 == "policy" ? "policy" : "schedulingPolicy";
          if (policy)
            r.fail(p2, std::string("cannot be set together with spec.") + policy +
                           " (`policy` is bulkscore's earlier name for v1.36's `schedulingPolicy`)");
          policy = field;
          convert_pod_group_policy(v2, r, p2, o);
        }
        return;
      }
      if (k2 == "minMember" || k2 == "scheduleTimeoutSeconds") {
        const int64_t n = r.as_int64(v2, p2);
        if (n < 0 || n > INT32_MAX) r.fail(p2, "must be a non-negative 32-bit integer, got " + std::to_string(n));
        (k2 == "minMember" ? o.min_count : o.schedule_timeout_seconds) = static_cast<int32_t>(n);
      } else if (k2 == "minResources") {
        o.min_resources = r.as_resources(v2, p2);
      }
    });
  });
  if (!coscheduling && !policy)
    r.fail(root.field("spec").field("schedulingPolicy"), "exactly one of `basic`, `gang` is required");
  return o;
}

// The objects of every --objects file read so far, by kind, namespace and
// name: the API server holds one of each, so a second is an error naming
// both.
class ObjectIndex {
 public:
  explicit ObjectIndex(const ClusterObjects& out) {
    for (const Namespace& ns : out.namespaces) where_.emplace(key("Namespace", "", ns.name), ns.origin);
    for (const SelectingObject& o : out.selecting)
      where_.emplace(key(kind_name(o.kind), o.namespace_name, o.name), o.origin);
    for (const SharedDeviceGroup& g : out.device_groups) where_.emplace(key("SharedDeviceGroup", "", g.name), g.origin);
    for (const PriorityClass& c : out.priority_classes) where_.emplace(key("PriorityClass", "", c.name), c.origin);
    for (const PodDisruptionBudget& b : out.pdbs)
      where_.emplace(key("PodDisruptionBudget", b.namespace_name, b.name), b.origin);
    for (const PodGroupObject& g : out.pod_groups)
      where_.emplace(key(pod_group_kind(g.api), g.namespace_name, g.name), g.origin);
    for (const TemplateWorkload& w : out.template_workloads)
      where_.emplace(key("Workload", w.namespace_name, w.name), w.origin);
  }

  // The index's kind of a pod group's object: the two PodGroup kinds are
  // different resources (API groups) and may share a name.
  static const char* pod_group_kind(PodGroupObject::Api api) {
    return api == PodGroupObject::Api::kWorkload  ? "Workload"
           : api == PodGroupObject::Api::kPodGroup ? "PodGroup.scheduling.k8s.io"
                                                   : "PodGroup.scheduling.x-k8s.io";
  }

  // The origin of an object already read with this kind, namespace ("" for
  // cluster-scoped kinds) and name, else nullptr; records this one.
  const std::string* add(std::string_view kind, std::string_view ns, std::string_view name, const std::string& origin) {
    const auto [it, fresh] = where_.emplace(key(kind, ns, name), origin);
    return fresh ? nullptr : &it->second;
  }

  static const char* kind_name(SelectingObject::Kind k) {
    using K = SelectingObject::Kind;
    return k == K::Service                 ? "Service"
           : k == K::ReplicationController ? "ReplicationController"
           : k == K::ReplicaSet            ? "ReplicaSet"
                                           : "StatefulSet";
  }

 private:
  // Names hold no '/' once validated; the kind never does.
  static std::string key(std::string_view kind, std::string_view ns, std::string_view name) {
    std::string k(kind);
    k += '/';
    k.append(ns.data(), ns.size());
    k += '/';
    k.append(name.data(), name.size());
    return k;
  }

  std::unordered_map<std::string, std::string> where_;
};

// metadata.name as the API server requires it of each kind (ValidateObjectMeta
// with the kind's name rule). StatefulSets: v1.35 creates only DNS-1123
// labels, but one created before keeps its subdomain name, so a subdomain
// is accepted.
std::string object_name_problem(std::string_view kind, std::string_view name) {
  if (kind == "Namespace") return dns1123_label_problem(name);
  if (kind == "Service") return dns1035_label_problem(name);
  return dns1123_subdomain_problem(name);  // RCs, ReplicaSets, StatefulSets, custom resources
}

constexpr int64_t kHighestUserDefinablePriority = 1000000000;

// A PriorityClass (scheduling.k8s.io/v1), validated as ValidatePriorityClass
// does: a name of the system- prefix only for the system classes, with
// their values; a user class's value at most 1,000,000,000.
void convert_priority_class(element item, Reader& r, std::string_view name, std::string origin,
                            ClusterObjects& out) {
  const Path root;
  PriorityClass c;
  c.name = std::string(name);
  c.origin = std::move(origin);
  bool has_value = false;
  r.for_each_field(item, root, [&](std::string_view k, element v, const Path& p) {
    if (k == "value") {
      c.value = r.as_int32(v, p);
      has_value = true;
    } else if (k == "globalDefault") {
      c.global_default = r.as_bool(v, p);
    } else if (k == "preemptionPolicy") {
      c.preemption_policy = r.as_string(v, p);
      if (c.preemption_policy != "PreemptLowerPriority" && c.preemption_policy != "Never")
        r.fail(p, "unsupported value " + quote(c.preemption_policy) + " (expected PreemptLowerPriority or Never)");
    }
  });
  if (!has_value) r.fail(root.field("value"), "required");
  bool system = false;
  for (const PriorityClass& sys : system_priority_classes())
    if (sys.name == c.name) {
      system = true;
      if (c.value != sys.value)
        r.fail(root.field("value"), "the system class " + quote(c.name) + " has value " + std::to_string(sys.value));
    }
  if (!system && c.name.rfind("system-", 0) == 0)
    r.fail(root.field("metadata").field("name"),
           "priority class names with the 'system-' prefix are reserved (system-node-critical, "
           "system-cluster-critical)");
  if (!system && c.value > kHighestUserDefinablePriority)
    r.fail(root.field("value"), "maximum allowed value of a user defined priority is " +
                                    std::to_string(kHighestUserDefinablePriority));
  out.priority_classes.push_back(std::move(c));
}

// An IntOrString of a PDB: a non-negative integer, or "N%" with N in
// 0..100 (ValidatePodDisruptionBudgetSpec), kept as written.
std::string pdb_int_or_percent(element v, Reader& r, const Path& p) {
  if (v.type() == element_type::STRING) {
    std::string t = r.as_string(v, p);
    const bool percent = !t.empty() && t.back() == '%';
    const std::string digits_part = percent ? t.substr(0, t.size() - 1) : t;
    int64_t n = -1;
    if (!digits_part.empty() && digits_part.size() <= 9 &&
        digits_part.find_first_not_of("0123456789") == std::string::npos)
      n = std::stoll(digits_part);
    if (!percent || n < 0 || n > 100)
      r.fail(p, "invalid value " + quote(t) + " (expected a non-negative integer or a percentage from 0% to 100%)");
    return t;
  }
  const int64_t n = r.as_int32(v, p);
  if (n < 0) r.fail(p, "must be greater than or equal to 0");
  return std::to_string(n);
}

// A PodDisruptionBudget (policy/v1): the selector, minAvailable or
// maxUnavailable, and the status the disruption controller keeps.
void convert_pdb(element item, Reader& r, std::string_view name, std::string origin, ClusterObjects& out,
                 ObjectIndex& index) {
  const Path root;
  PodDisruptionBudget b;
  b.name = std::string(name);
  b.namespace_name = "default";
  b.origin = std::move(origin);
  r.for_each_field(item, root, [&](std::string_view k, element v, const Path& p) {
    if (k == "metadata") {
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 == "namespace") b.namespace_name = r.as_string(v2, p2);
      });
    } else if (k == "spec") {
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 == "selector") {
          b.selector = r.as_label_selector(v2, p2);
          r.check_label_selector(*b.selector, p2);
        } else if (k2 == "minAvailable") {
          b.min_available = pdb_int_or_percent(v2, r, p2);
        } else if (k2 == "maxUnavailable") {
          b.max_unavailable = pdb_int_or_percent(v2, r, p2);
        }
      });
    } else if (k == "status") {
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        const auto non_negative = [&]() {
          const int32_t n = r.as_int32(v2, p2);
          if (n < 0) r.fail(p2, "must be greater than or equal to 0");
          return n;
        };
        if (k2 == "disruptionsAllowed")
          b.disruptions_allowed = non_negative();
        else if (k2 == "currentHealthy")
          b.current_healthy = non_negative();
        else if (k2 == "desiredHealthy")
          b.desired_healthy = non_negative();
        else if (k2 == "expectedPods")
          b.expected_pods = non_negative();
        else if (k2 == "disruptedPods")
          for (const auto& [pod, when] : r.as_string_map(v2, p2)) b.disrupted_pods.push_back(pod);
      });
    }
  });
  if (b.namespace_name.empty()) b.namespace_name = "default";
  if (const std::string problem = dns1123_label_problem(b.namespace_name); !problem.empty())
    r.fail(root.field("metadata").field("namespace"),
           "invalid namespace name " + quote(b.namespace_name) + ": " + problem);
  if (!b.min_available.empty() && !b.max_unavailable.empty())
    r.fail(root.field("spec"), "minAvailable and maxUnavailable cannot be both set");
  if (const std::string* first = index.add("PodDisruptionBudget", b.namespace_name, name, b.origin))
    r.fail(root.field("metadata").field("name"),
           "PodDisruptionBudget " + quote(b.namespace_name + "/" + b.name) + " is also " + *first);
  std::sort(b.disrupted_pods.begin(), b.disrupted_pods.end());
  out.pdbs.push_back(std::move(b));
}

// A Namespace, Service, ReplicationController, ReplicaSet, StatefulSet or
// SharedDeviceGroup reduced to what the plugins read, validated as the API
// server validates what bulkscore reads of it.
void convert_cluster_object(element item, std::string_view kind, Reader& r, std::string origin, ClusterObjects& out,
                            ObjectIndex& index) {
  const Path root;
  const Path metadata = root.field("metadata");
  const object obj = r.as_object(item, root);
  const std::string_view name = r.required_name(obj);
  r.set_name(name);
  if (const std::string problem = object_name_problem(kind, name); !problem.empty())
    r.fail(metadata.field("name"), "invalid name " + quote(name) + ": " + problem);
  if (kind == "PriorityClass") {
    if (const std::string* first = index.add(kind, "", name, origin))
      r.fail(metadata.field("name"), "PriorityClass " + quote(name) + " is also " + *first);
    convert_priority_class(item, r, name, std::move(origin), out);
    return;
  }
  if (kind == "PodDisruptionBudget") {
    convert_pdb(item, r, name, std::move(origin), out, index);
    return;
  }
  if (kind == "Workload" || kind == "PodGroup") {
    std::string ns = "default";
    std::string api;
    std::string topology_key;
    bool topology_required = false;
    r.for_each_field(item, root, [&](std::string_view k, element v, const Path& p) {
      if (k == "apiVersion") api = r.as_string(v, p);
      if (k != "metadata") return;
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 == "namespace") ns = r.as_string(v2, p2);
        if (k2 == "annotations") read_gang_topology(v2, r, p2, topology_key, topology_required);
      });
    });
    if (ns.empty()) ns = "default";
    using Api = PodGroupObject::Api;
    Api which = Api::kWorkload;
    if (kind == "Workload") {
      if (api != "scheduling.k8s.io/v1alpha1" && api != "scheduling.k8s.io/v1alpha2")
        r.fail(root.field("apiVersion"),
               "expected scheduling.k8s.io/v1alpha1 or scheduling.k8s.io/v1alpha2, got " + quote(api));
    } else if (api == "scheduling.k8s.io/v1alpha2") {
      which = Api::kPodGroup;
    } else if (api == "scheduling.x-k8s.io/v1alpha1") {
      which = Api::kCoscheduling;
    } else {
      r.fail(root.field("apiVersion"),
             "expected scheduling.k8s.io/v1alpha2 or scheduling.x-k8s.io/v1alpha1, got " + quote(api));
    }
    if (const std::string* first = index.add(ObjectIndex::pod_group_kind(which), ns, name, origin))
      r.fail(metadata.field("name"), std::string(kind) + " " + quote(ns + "/" + std::string(name)) + " is also " + *first);
    const size_t first_group = out.pod_groups.size();
    if (which == Api::kWorkload)
      convert_workload(item, r, api == "scheduling.k8s.io/v1alpha2", ns, name, origin, out);
    else
      out.pod_groups.push_back(convert_pod_group(item, r, which == Api::kCoscheduling, ns, name, origin));
    // A Workload's annotation applies to each of its groups.
    for (size_t i = first_group; i < out.pod_groups.size(); ++i) {
      out.pod_groups[i].topology_key = topology_key;
      out.pod_groups[i].topology_required = topology_required;
    }
    return;
  }
  if (kind == "SharedDeviceGroup") {
    if (const std::string* first = index.add(kind, "", name, origin))
      r.fail(metadata.field("name"), "SharedDeviceGroup " + quote(name) + " is also " + *first);
    out.device_groups.push_back(convert_device_group(item, r, name, std::move(origin)));
    return;
  }
  if (kind == "Namespace") {
    Namespace ns;
    ns.name = std::string(name);
    r.for_each_field(item, root, [&](std::string_view k, element v, const Path& p) {
      if (k != "metadata") return;
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 == "labels") {
          ns.labels = r.as_string_map(v2, p2);
          r.check_labels(ns.labels, p2);
        }
      });
    });
    if (const std::string* first = index.add(kind, "", name, origin))
      r.fail(metadata.field("name"), "Namespace " + quote(name) + " is also " + *first);
    // The API server sets this label on every namespace (NamespaceDefaultLabelName).
    ns.labels["kubernetes.io/metadata.name"] = ns.name;
    ns.origin = std::move(origin);
    out.namespaces.push_back(std::move(ns));
    return;
  }
  SelectingObject o;
  o.name = std::string(name);
  o.origin = std::move(origin);
  o.namespace_name = "default";
  using K = SelectingObject::Kind;
  o.kind = kind == "Service"                 ? K::Service
           : kind == "ReplicationController" ? K::ReplicationController
           : kind == "ReplicaSet"            ? K::ReplicaSet
                                             : K::StatefulSet;
  const bool map_selector = o.kind == K::Service || o.kind == K::ReplicationController;
  const Path spec = root.field("spec");
  const Path selector = spec.field("selector");
  r.for_each_field(item, root, [&](std::string_view k, element v, const Path& p) {
    if (k == "metadata") {
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 == "namespace") o.namespace_name = r.as_string(v2, p2);
      });
    } else if (k == "spec") {
      // for_each_field skips nulls: a null selector stays absent (a Service
      // without a selector selects nothing).
      r.for_each_field(v, p, [&](std::string_view k2, element v2, const Path& p2) {
        if (k2 != "selector") return;
        if (map_selector) {
          o.selector_map = r.as_string_map(v2, p2);
          o.has_selector = true;
        } else {
          o.label_selector = r.as_label_selector(v2, p2);
          o.has_selector = true;
        }
      });
    }
  });
  if (o.namespace_name.empty()) o.namespace_name = "default";
  if (const std::string problem = dns1123_label_problem(o.namespace_name); !problem.empty())
    r.fail(metadata.field("namespace"), "invalid namespace name " + quote(o.namespace_name) + ": " + problem);
  switch (o.kind) {
    case K::Service:
      // ValidateService: a selector, when there is one, is a set of labels.
      r.check_labels(o.selector_map, selector);
      break;
    case K::ReplicationController:
      // After defaulting (the template's labels when empty) the selector
      // must select something, and it must match the template's labels,
      // which are valid labels: so it is a non-empty set of labels.
      if (o.selector_map.empty()) r.fail(selector, "required: a ReplicationController selects its pods");
      r.check_labels(o.selector_map, selector);
      break;
    case K::ReplicaSet:
    case K::StatefulSet:
      // ValidateReplicaSetSpec / ValidateStatefulSetSpec: required, strict,
      // and not empty (it would select every pod of the namespace).
      if (!o.label_selector) r.fail(selector, "required");
      r.check_label_selector(*o.label_selector, selector);
      if (o.label_selector->match_labels.empty() && o.label_selector->match_expressions.empty())
        r.fail(selector,
               std::string("must not be empty (an empty selector is invalid for a ") + std::string(kind) + ")");
      break;
  }
  if (const std::string* first = index.add(kind, o.namespace_name, name, o.origin))
    r.fail(metadata.field("name"),
           std::string(kind) + " " + quote(o.namespace_name + "/" + o.name) + " is also " + *first);
  out.selecting.push_back(std::move(o));
}

bool is_cluster_object_kind(std::string_view k) {
  return k == "Namespace" || k == "Service" || k == "ReplicationController" || k == "ReplicaSet" ||
         k == "StatefulSet" || k == "SharedDeviceGroup" || k == "PriorityClass" || k == "PodDisruptionBudget" ||
         k == "Workload" || k == "PodGroup";
}

// Walks a List, a typed list of one of the kinds above, or a single object
// of one of them. Items of other kinds (a Deployment in `kubectl get all`)
// are skipped: nothing bulkscore evaluates reads them.
void objects_from(simdjson::dom::parser& parser, const simdjson::padded_string_view json, const std::string& origin,
                  ClusterObjects& out) {
  element root;
  if (const auto err = parser.parse(json.data(), json.size(), false).get(root)) throw_json_error(origin, err, json);
  const char* expected =
      "List, Namespace, Service, ReplicationController, ReplicaSet, StatefulSet, SharedDeviceGroup, PriorityClass, "
      "PodDisruptionBudget, Workload, PodGroup or a list of them";
  object obj;
  if (root.get_object().get(obj) != simdjson::SUCCESS)
    throw InputError(origin + ": expected a JSON object (" + expected + "), got " + type_name(root.type()));
  element kind_value;
  std::string_view doc_kind;
  if (obj["kind"].get(kind_value) != simdjson::SUCCESS || kind_value.is_null())
    throw InputError(origin + ": kind: missing (expected " + expected + ")");
  if (kind_value.get_string().get(doc_kind) != simdjson::SUCCESS)
    throw InputError(origin + ": kind: expected a string, got " + type_name(kind_value.type()));
  if (is_cluster_object_kind(doc_kind)) {
    const std::string kind(doc_kind);
    Reader reader(origin, kind.c_str(), std::nullopt);
    ObjectIndex index(out);
    convert_cluster_object(root, kind, reader, reader.location(), out, index);
    return;
  }
  std::string item_kind_default;  // a typed list implies its items' kind
  if (doc_kind != "List") {
    const bool typed = doc_kind.size() > 4 && doc_kind.substr(doc_kind.size() - 4) == "List" &&
                       is_cluster_object_kind(doc_kind.substr(0, doc_kind.size() - 4));
    if (!typed) throw InputError(origin + ": kind " + quote(doc_kind) + ": expected " + expected);
    item_kind_default = std::string(doc_kind.substr(0, doc_kind.size() - 4));
  }
  element items_value;
  if (obj["items"].get(items_value) != simdjson::SUCCESS || items_value.is_null()) return;
  array items;
  if (items_value.get_array().get(items) != simdjson::SUCCESS)
    throw InputError(origin + ": items: expected an array, got " + type_name(items_value.type()));
  ObjectIndex index(out);
  size_t i = 0;
  for (const element item : items) {
    const std::string where = origin + ": items[" + std::to_string(i) + "]";
    object item_obj;
    if (item.get_object().get(item_obj) != simdjson::SUCCESS)
      throw InputError(where + ": expected an object, got " + type_name(item.type()));
    std::string kind = item_kind_default;
    element item_kind;
    if (item_obj["kind"].get(item_kind) == simdjson::SUCCESS && !item_kind.is_null()) {
      std::string_view s;
      if (item_kind.get_string().get(s) != simdjson::SUCCESS)
        throw InputError(where + ": kind: expected a string, got " + type_name(item_kind.type()));
      if (!item_kind_default.empty() && s != item_kind_default)
        throw InputError(where + ": kind " + quote(s) + ": expected " + item_kind_default);
      kind = std::string(s);
    } else if (kind.empty()) {
      throw InputError(where + ": kind: missing (a List item must name its kind)");
    }
    if (is_cluster_object_kind(kind)) {
      Reader reader(origin, kind.c_str(), i);
      convert_cluster_object(item, kind, reader, reader.location(), out, index);
    }
    ++i;
  }
}

std::vector<Node> nodes_from(simdjson::dom::parser& parser, const simdjson::padded_string_view json,
                             const std::string& origin, bool kindless_is_one = false) {
  element root;
  if (const auto err = parser.parse(without_bom(json), without_bom_size(json), false).get(root))
    throw_json_error(origin, err, json);
  std::vector<Node> nodes;
  nodes.reserve(item_count(root));
  for_each_object(
      root, origin, "Node", "NodeList",
      [&](element item, std::optional<size_t> index) {
        Reader reader(origin, "Node", index);
        nodes.push_back(convert_node(item, reader));
      },
      kindless_is_one);
  return nodes;
}

std::vector<Pod> pods_from(simdjson::dom::parser& parser, const simdjson::padded_string_view json,
                           const std::string& origin, bool kindless_is_one = false) {
  element root;
  if (const auto err = parser.parse(without_bom(json), without_bom_size(json), false).get(root))
    throw_json_error(origin, err, json);
  std::vector<Pod> pods;
  pods.reserve(item_count(root));
  for_each_object(
      root, origin, "Pod", "PodList",
      [&](element item, std::optional<size_t> index) {
        Reader reader(origin, "Pod", index);
        pods.push_back(convert_pod(item, reader, reader.location()));
      },
      kindless_is_one);
  return pods;
}

simdjson::padded_string load_padded(const std::string& path) {
  // Pipes, FIFOs and standard input cannot be sized up front, and /proc
  // and sysfs files say size 0 and hold more: read them to the end first
  // (one extra copy, of a stream or a small file).
  if (!is_regular_file(path) || regular_file_size(path) == 0) return simdjson::padded_string(read_file(path));
  simdjson::padded_string data;
  errno = 0;
  if (const auto err = simdjson::padded_string::load(path).get(data)) {
    throw InputError(path + ": cannot read: " + (errno != 0 ? std::strerror(errno) : simdjson::error_message(err)));
  }
  return data;
}

}  // namespace

std::vector<Node> load_nodes_json(const std::string& path) {
  const simdjson::padded_string data = load_padded(path);
  simdjson::dom::parser parser;
  return nodes_from(parser, data, path);
}

std::vector<Pod> load_pods_json(const std::string& path) {
  const simdjson::padded_string data = load_padded(path);
  simdjson::dom::parser parser;
  return pods_from(parser, data, path);
}

std::vector<Node> parse_nodes_json(const std::string& text, const std::string& origin) {
  const simdjson::padded_string data(text);
  simdjson::dom::parser parser;
  return nodes_from(parser, data, origin);
}

std::vector<Pod> parse_pods_json(const std::string& text, const std::string& origin) {
  const simdjson::padded_string data(text);
  simdjson::dom::parser parser;
  return pods_from(parser, data, origin);
}

Node parse_node_object_json(const std::string& text, const std::string& origin) {
  const simdjson::padded_string data(text);
  simdjson::dom::parser parser;
  std::vector<Node> nodes = nodes_from(parser, data, origin, true);
  if (nodes.size() != 1) throw InputError(origin + ": expected one Node, got " + std::to_string(nodes.size()));
  return std::move(nodes.front());
}

Pod parse_pod_object_json(const std::string& text, const std::string& origin) {
  const simdjson::padded_string data(text);
  simdjson::dom::parser parser;
  std::vector<Pod> pods = pods_from(parser, data, origin, true);
  if (pods.size() != 1) throw InputError(origin + ": expected one Pod, got " + std::to_string(pods.size()));
  return std::move(pods.front());
}

void load_objects_json(const std::string& path, ClusterObjects& out) {
  const simdjson::padded_string data = load_padded(path);
  simdjson::dom::parser parser;
  objects_from(parser, data, path, out);
}

ClusterObjects parse_objects_json(const std::string& text, const std::string& origin) {
  ClusterObjects out;
  parse_objects_json(text, origin, out);
  return out;
}

void parse_objects_json(const std::string& text, const std::string& origin, ClusterObjects& out) {
  const simdjson::padded_string data(text);
  simdjson::dom::parser parser;
  objects_from(parser, data, origin, out);
}

Cluster assemble_cluster(std::vector<Node> nodes, std::vector<Pod> pods,
                         const std::vector<std::string>& scheduler_names, const std::string& nodes_origin,
                         const std::string& pods_origin) {
  std::unordered_map<std::string_view, size_t> node_index;
  node_index.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto [it, inserted] = node_index.emplace(nodes[i].name, i);
    if (!inserted) {
      throw InputError(nodes_origin + ": items[" + std::to_string(it->second) + "] and items[" + std::to_string(i) +
                       "] are both Node " + quote(nodes[i].name));
    }
  }

  const auto where = [&](const Pod& pod, size_t i) {
    return pod.origin.empty() ? pods_origin + ": items[" + std::to_string(i) + "]" : pod.origin;
  };
  std::unordered_map<std::string, size_t> pod_index;
  pod_index.reserve(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) {
    const auto [it, inserted] = pod_index.emplace(pods[i].key(), i);
    if (!inserted) {
      throw InputError(where(pods[it->second], it->second) + " and " + where(pods[i], i) + " are both Pod " +
                       quote(pods[i].key()));
    }
  }

  const std::unordered_set<std::string_view> schedulers(scheduler_names.begin(), scheduler_names.end());
  Cluster cluster;
  // Names and values from the input, quoted: a pod name may hold anything.
  const auto describe = [](const Pod& pod) { return "pod " + quote(pod.key()) + " (" + pod.origin + ")"; };
  for (Pod& pod : pods) {
    if (pod.phase == "Succeeded" || pod.phase == "Failed") {
      cluster.notes.push_back("ignoring " + describe(pod) + ": phase " + pod.phase);
    } else if (!pod.node_name.empty()) {
      if (node_index.count(pod.node_name) != 0) {
        cluster.running_pods.push_back(std::move(pod));
      } else {
        // kubectl's node and pod lists are two reads, not one snapshot.
        cluster.warnings.push_back("dropping " + describe(pod) + ": it runs on node " + quote(pod.node_name) +
                                   ", which is not in " + nodes_origin);
      }
    } else if (pod.deleting) {
      // Upstream skips pods being deleted instead of scheduling them.
      cluster.notes.push_back("ignoring pending " + describe(pod) + ": it is being deleted");
    } else if (schedulers.count(pod.scheduler_name) != 0) {
      cluster.pending_pods.push_back(std::move(pod));
    } else {
      cluster.notes.push_back("ignoring pending " + describe(pod) + ": scheduler " + quote(pod.scheduler_name) +
                              " is not ours");
    }
  }
  cluster.nodes = std::move(nodes);
  return cluster;
}

}  // namespace bulkscore
