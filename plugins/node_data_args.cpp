// NodeDataArgs: decoding, defaulting and validation of bulkscore's own
// NodeData plugin's args (docs/plugins.md), beside the plugin's rule.
// Every field is optional; an absent or null one keeps its default. A
// profile that enables the plugin must name at least one column.
#include <string>

#include "host/input/labels.hpp"
#include "plugins/plugin_args.hpp"

namespace bulkscore {
namespace {

std::string read_column(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  std::string name = r.read_string(n, path);
  if (name.empty()) r.fail_at(n, path, "must not be empty (leave the field out for no column)");
  const std::string problem = qualified_name_problem(name);
  if (!problem.empty()) r.fail_at(n, path, quoted(name) + ": " + problem);
  return name;
}

}  // namespace

NodeDataArgs parse_node_data_args(const YamlReader& r, const YAML::Node& n, const PluginArgsContext& ctx) {
  NodeDataArgs args;
  if (!yaml_absent(n)) {
    r.check_map(
        n, "",
        {"apiVersion", "kind", "filterColumn", "filterDefault", "scoreColumn", "scoreNormalization", "scoreDefault"});
    const YAML::Node filter = r.field(n, "filterColumn");
    if (!yaml_absent(filter)) args.filter_column = read_column(r, filter, "filterColumn");
    const YAML::Node filter_default = r.field(n, "filterDefault");
    if (!yaml_absent(filter_default)) {
      const std::string v = r.read_string(filter_default, "filterDefault");
      if (v != "Pass" && v != "Fail")
        r.fail_at(filter_default, "filterDefault", "must be \"Pass\" or \"Fail\", got " + quoted(v));
      args.filter_default_fails = v == "Fail";
    }
    const YAML::Node score = r.field(n, "scoreColumn");
    if (!yaml_absent(score)) args.score_column = read_column(r, score, "scoreColumn");
    const YAML::Node normalization = r.field(n, "scoreNormalization");
    if (!yaml_absent(normalization)) {
      const std::string v = r.read_string(normalization, "scoreNormalization");
      if (v == "None")
        args.score_normalization = NodeDataNormalization::None;
      else if (v == "Default")
        args.score_normalization = NodeDataNormalization::Default;
      else if (v == "Reverse")
        args.score_normalization = NodeDataNormalization::Reverse;
      else
        r.fail_at(normalization, "scoreNormalization",
                  "must be \"None\", \"Default\" or \"Reverse\", got " + quoted(v));
    }
    const YAML::Node score_default = r.field(n, "scoreDefault");
    if (!yaml_absent(score_default)) {
      const int64_t v = r.read_int64(score_default, "scoreDefault");
      if (v < 0 || v > 100) r.fail_at(score_default, "scoreDefault", range_message(0, 100, v));
      args.score_default = static_cast<int32_t>(v);
    }
  }
  // One name space for both kinds of column: a column is a filter or a score.
  if (!args.filter_column.empty() && args.filter_column == args.score_column)
    r.fail("scoreColumn", "must differ from filterColumn (a column holds verdicts or scores, not both), both are " +
                              quoted(args.score_column));
  if (ctx.enabled && args.filter_column.empty() && args.score_column.empty())
    r.fail("", "NodeData is enabled but reads no column: set filterColumn, scoreColumn or both");
  return args;
}

}  // namespace bulkscore
