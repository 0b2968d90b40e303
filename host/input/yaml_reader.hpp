// The one strict YAML reader: what Kubernetes' Go decoding accepts, read with
// yaml-cpp.
//
// Kubernetes never reads YAML directly. sigs.k8s.io/yaml resolves the YAML
// with its goyaml.v2 fork (YAML 1.1 rules), turns it into JSON, and a JSON
// decoder fills the Go structs. So:
//
// * Plain scalars resolve as YAML 1.1: y/Y/yes/Yes/YES/true/True/TRUE/on/On/ON
//   are true and n/N/no/No/NO/false/False/FALSE/off/Off/OFF false;
//   ""/~/null/Null/NULL are null; integers may have a sign, '_' separators
//   and a 0x/0o/0b prefix, and a leading 0 means octal (010 is 8); floats are
//   [-+]?(.d+|d+(.d*)?)([eE][-+]?d+)? or .inf/.nan. Quoted scalars and
//   scalars tagged !!str are always strings. (The YAML 1.2 core schema of
//   most other tools knows only true/false; kube-scheduler reads `yes` as
//   true, and so does this reader.)
// * The JSON decoding decides what a field accepts: an integer field takes
//   an integer, or a float with an integral value (5.0), within the field's
//   range; a bool field only a bool; a string field only a string (a
//   number or bool there is an error, as in the API machinery's decoder).
//   Null is the same as an absent field.
// * Strictness: a field name given twice, or unknown to the object, is an
//   error. Field names match exactly (the API machinery's case-sensitive
//   decoder) or, with FieldNames::IgnoreCase, ASCII case-insensitively (Go's
//   encoding/json, which sigs.k8s.io/yaml.UnmarshalStrict uses).
// * ScalarStrings::Convert gives string fields sigs.k8s.io/yaml.Unmarshal's
//   typed-target behaviour: numbers and bools become their Go text ("8" for
//   010, "true" for yes) instead of an error.
//
// Errors are InputError "<origin>: <object: ><path>: <problem> (line L,
// column C)".
#pragma once

// yaml-cpp 0.7's node headers trip a known false positive of GCC >= 12.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif
#include <yaml-cpp/yaml.h>
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic pop
#endif

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace bulkscore {

// A scalar as goyaml.v2 resolves it.
struct YamlScalar {
  enum class Type { Null, Bool, Int, Float, String };
  Type type = Type::Null;
  bool boolean = false;
  // Int: `integer` holds it when it fits int64 (`fits_int64`); `text` is its
  // decimal form; `big` when it is beyond 64 bits (goyaml.v2 keeps those as
  // big integers, which no Go integer or string field accepts).
  int64_t integer = 0;
  bool fits_int64 = false;
  bool big = false;
  // Float (and Int, converted): the value; NaN and infinities included.
  double number = 0;
  // String: the text; Int: its decimal form.
  std::string text;
};

// Resolves a scalar node (null nodes too) with its tag, as goyaml.v2 does.
// Throws std::invalid_argument for a tag that does not fit the value
// (!!int "x"); YamlReader reports it as an InputError.
YamlScalar resolve_yaml_scalar(const YAML::Node& node);
// The same for the text of an untagged plain scalar.
YamlScalar resolve_yaml_plain(std::string_view text);

// How deep mappings and lists may nest in a YAML file bulkscore reads (a
// configuration, a scheduler_perf file or template): far above any real
// one (a pod template nests about 12 deep), well below the depth at which
// yaml-cpp 0.7's recursion guard stops with "bad file" (about 500). go-yaml
// allows 10,000.
constexpr size_t kMaxYamlDepth = 100;

// Run on a text before YAML::LoadAll loads it; one pass over the parser's
// events, expanding nothing.
// * Nesting deeper than kMaxYamlDepth: throws InputError naming `origin`,
//   the limit, and the line and column of the collection past it.
// * go-yaml's guard against alias bombs ("billion laughs"), which
//   kube-scheduler and scheduler_perf get through sigs.k8s.io/yaml: throws
//   InputError naming `origin` and the line when aliases expand to too large
//   a share of the nodes decoded.
// * yaml-cpp 0.7 never finishes a stream with a document that starts at a
//   token no node begins with ("," alone): LoadAll appends empty documents
//   until memory runs out. Throws YAML::ParserException "did not find
//   expected node content" (go-yaml's words) at that token instead.
void check_yaml_stream(const std::string& text, const std::string& origin);

// A yaml-cpp parser error's text for a message: its own, except "bad file"
// from its recursion guard (YAML::DeepRecursion), which gets the nesting
// limit's words.
std::string yaml_error_text(const YAML::ParserException& e);

// "a.b" and "a[3]", for error paths.
std::string yaml_child(const std::string& path, std::string_view field);
std::string yaml_at(const std::string& path, size_t index);

// Null counts as absent, as in JSON decoding.
inline bool yaml_absent(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

enum class FieldNames { Exact, IgnoreCase };
enum class ScalarStrings { Reject, Convert };

class YamlReader {
 public:
  explicit YamlReader(std::string origin, FieldNames names = FieldNames::Exact,
                      ScalarStrings strings = ScalarStrings::Reject);

  // Errors from this reader name `object` first ("profiles[0].pluginConfig[1]
  // (NodeResourcesFit): scoringStrategy.type: ..."); paths are relative to it.
  YamlReader for_object(const std::string& object) const;

  const std::string& origin() const { return origin_; }

  [[noreturn]] void fail(const std::string& path, const std::string& message) const;
  // The same, adding where `node` is in the file.
  [[noreturn]] void fail_at(const YAML::Node& node, const std::string& path, const std::string& message) const;

  // The documents of `text`; a trailing empty document ("---" at the end)
  // is dropped. Malformed YAML is an error with its line and column.
  std::vector<YAML::Node> load_documents(const std::string& text) const;
  // Exactly one non-empty document that is a mapping.
  YAML::Node load_single_mapping(const std::string& text, const std::string& expected) const;

  // Requires a mapping whose field names are all in `allowed` (per the
  // FieldNames rule) and given once each.
  void check_map(const YAML::Node& n, const std::string& path, std::initializer_list<std::string_view> allowed) const;
  void check_map(const YAML::Node& n, const std::string& path, const std::vector<std::string>& allowed) const;
  // The value of `name` in mapping `map` (undefined when absent).
  YAML::Node field(const YAML::Node& map, std::string_view name) const;
  void check_sequence(const YAML::Node& n, const std::string& path) const;

  // Typed values. Callers check yaml_absent() first where a field is optional.
  int64_t read_int(const YAML::Node& n, const std::string& path, int64_t lo, int64_t hi, const char* type_name) const;
  int32_t read_int32(const YAML::Node& n, const std::string& path) const;
  int64_t read_int64(const YAML::Node& n, const std::string& path) const;
  double read_number(const YAML::Node& n, const std::string& path) const;
  bool read_bool(const YAML::Node& n, const std::string& path) const;
  std::string read_string(const YAML::Node& n, const std::string& path) const;
  // Absent is an empty list.
  std::vector<std::string> read_string_list(const YAML::Node& n, const std::string& path) const;

  // The resolved scalar, or an error naming `path` when `n` is not a scalar
  // or its tag does not fit.
  YamlScalar read_scalar(const YAML::Node& n, const std::string& path) const;

 private:
  YamlReader(std::string origin, std::string prefix, FieldNames names, ScalarStrings strings);
  bool same_name(std::string_view a, std::string_view b) const;
  template <typename Names>
  void check_map_impl(const YAML::Node& n, const std::string& path, const Names& allowed) const;

  std::string origin_;
  std::string prefix_;
  FieldNames names_;
  ScalarStrings strings_;
};

}  // namespace bulkscore
