// NodeAffinityArgs (addedAffinity): decoding and validation as upstream's
// ValidateNodeAffinityArgs does it, through the parse errors of
// nodeaffinity.NewNodeSelector / NewPreferredSchedulingTerms; beside the
// plugin's rule.
#include <string>
#include <vector>

#include "host/input/go_int.hpp"
#include "host/input/labels.hpp"
#include "plugins/plugin_args.hpp"

namespace bulkscore {
namespace {

// Go's strconv.ParseInt(s, 10, 64), which the Gt/Lt operators use.
bool is_go_int64(std::string_view s) {
  int64_t v = 0;
  return parse_go_int64(s, v);
}

NodeSelectorRequirement parse_selector_requirement(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  r.check_map(n, path, {"key", "operator", "values"});
  NodeSelectorRequirement req;
  const YAML::Node key = r.field(n, "key");
  if (!yaml_absent(key)) req.key = r.read_string(key, yaml_child(path, "key"));
  const YAML::Node op = r.field(n, "operator");
  if (!yaml_absent(op)) req.op = r.read_string(op, yaml_child(path, "operator"));
  req.values = r.read_string_list(r.field(n, "values"), yaml_child(path, "values"));
  return req;
}

NodeSelectorTerm parse_selector_term(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  NodeSelectorTerm term;
  if (yaml_absent(n)) return term;
  r.check_map(n, path, {"matchExpressions", "matchFields"});
  for (const char* which : {"matchExpressions", "matchFields"}) {
    const YAML::Node list = r.field(n, which);
    const std::string list_path = yaml_child(path, which);
    if (yaml_absent(list)) continue;
    r.check_sequence(list, list_path);
    auto& dest = std::string_view(which) == "matchExpressions" ? term.match_expressions : term.match_fields;
    for (size_t i = 0; i < list.size(); ++i) {
      dest.push_back(parse_selector_requirement(r, list[i], yaml_at(list_path, i)));
    }
  }
  return term;
}

// nodeaffinity.NewNodeSelector / NewPreferredSchedulingTerms: the parse
// errors of one term.
void validate_selector_term(const YamlReader& r, const NodeSelectorTerm& term, const std::string& path) {
  for (size_t i = 0; i < term.match_expressions.size(); ++i) {
    const NodeSelectorRequirement& req = term.match_expressions[i];
    const std::string p = yaml_at(yaml_child(path, "matchExpressions"), i);
    const std::string& op = req.op;
    if (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist" && op != "Gt" && op != "Lt") {
      r.fail(yaml_child(p, "operator"),
             "unsupported value " + quoted(op) +
                 "; supported: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"");
    }
    const std::string key_problem = qualified_name_problem(req.key);
    if (!key_problem.empty()) r.fail(yaml_child(p, "key"), quoted(req.key) + ": " + key_problem);
    const std::string values_path = yaml_child(p, "values");
    if ((op == "In" || op == "NotIn") && req.values.empty()) {
      r.fail(values_path, "must not be empty for the In and NotIn operators");
    }
    if ((op == "Exists" || op == "DoesNotExist") && !req.values.empty()) {
      r.fail(values_path, "must be empty for the Exists and DoesNotExist operators");
    }
    if (op == "Gt" || op == "Lt") {
      if (req.values.size() != 1) {
        r.fail(values_path, "must have exactly one value for the Gt and Lt operators");
      }
      if (!is_go_int64(req.values[0])) {
        r.fail(yaml_at(values_path, 0), quoted(req.values[0]) + ": must be an integer for the Gt and Lt operators");
      }
    }
    for (size_t v = 0; v < req.values.size(); ++v) {
      const std::string problem = label_value_problem(req.values[v]);
      if (!problem.empty()) r.fail(yaml_at(values_path, v), quoted(req.values[v]) + ": " + problem);
    }
  }
  for (size_t i = 0; i < term.match_fields.size(); ++i) {
    const NodeSelectorRequirement& req = term.match_fields[i];
    const std::string p = yaml_at(yaml_child(path, "matchFields"), i);
    if (req.op != "In" && req.op != "NotIn") {
      r.fail(yaml_child(p, "operator"), "unsupported value " + quoted(req.op) + "; supported: \"In\", \"NotIn\"");
    }
    if (req.values.size() != 1) r.fail(yaml_child(p, "values"), "must have exactly one element");
  }
}

bool empty_term(const NodeSelectorTerm& t) { return t.match_expressions.empty() && t.match_fields.empty(); }

}  // namespace

NodeAffinityArgs parse_node_affinity_args(const YamlReader& r, const YAML::Node& n) {
  NodeAffinityArgs args;
  if (yaml_absent(n)) return args;
  r.check_map(n, "", {"apiVersion", "kind", "addedAffinity"});
  const YAML::Node added = r.field(n, "addedAffinity");
  if (yaml_absent(added)) return args;
  const std::string base = "addedAffinity";
  r.check_map(added, base,
              {"requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"});
  NodeAffinity affinity;

  const std::string req_path = yaml_child(base, "requiredDuringSchedulingIgnoredDuringExecution");
  const YAML::Node required = r.field(added, "requiredDuringSchedulingIgnoredDuringExecution");
  if (!yaml_absent(required)) {
    r.check_map(required, req_path, {"nodeSelectorTerms"});
    NodeSelector selector;
    const std::string terms_path = yaml_child(req_path, "nodeSelectorTerms");
    const YAML::Node terms = r.field(required, "nodeSelectorTerms");
    if (!yaml_absent(terms)) {
      r.check_sequence(terms, terms_path);
      for (size_t i = 0; i < terms.size(); ++i) {
        selector.terms.push_back(parse_selector_term(r, terms[i], yaml_at(terms_path, i)));
      }
    }
    // Empty terms are skipped, not rejected; they also match nothing.
    for (size_t i = 0; i < selector.terms.size(); ++i) {
      if (!empty_term(selector.terms[i])) {
        validate_selector_term(r, selector.terms[i], yaml_at(terms_path, i));
      }
    }
    affinity.required = std::move(selector);
  }

  const std::string pref_path = yaml_child(base, "preferredDuringSchedulingIgnoredDuringExecution");
  const YAML::Node preferred = r.field(added, "preferredDuringSchedulingIgnoredDuringExecution");
  if (!yaml_absent(preferred)) {
    r.check_sequence(preferred, pref_path);
    affinity.has_preferred = true;
    for (size_t i = 0; i < preferred.size(); ++i) {
      const std::string p = yaml_at(pref_path, i);
      r.check_map(preferred[i], p, {"weight", "preference"});
      PreferredSchedulingTerm term;
      const YAML::Node weight = r.field(preferred[i], "weight");
      if (!yaml_absent(weight)) term.weight = r.read_int32(weight, yaml_child(p, "weight"));
      // Upstream's args validation checks no range here; the API server
      // holds a pod's own terms to 1..100. A negative weight gives negative
      // scores, which upstream turns into a Score error for every pod the
      // term matches and which bulkscore's selection key cannot hold; above
      // 100 is refused like a pod's term (issue 10). 0 stays allowed: such a
      // term never counts and upstream skips it.
      if (term.weight < 0 || term.weight > 100) {
        r.fail(yaml_child(p, "weight"),
               "must be in the range [1, 100] (or 0, which turns the term off), got " + std::to_string(term.weight));
      }
      term.preference = parse_selector_term(r, r.field(preferred[i], "preference"), yaml_child(p, "preference"));
      // Terms that can never count (weight 0 or no requirements) are not
      // parsed upstream, so they cannot be wrong either.
      if (term.weight != 0 && !empty_term(term.preference)) {
        validate_selector_term(r, term.preference, yaml_child(p, "preference"));
      }
      affinity.preferred.push_back(std::move(term));
    }
  }
  args.added_affinity = std::move(affinity);
  return args;
}

}  // namespace bulkscore
