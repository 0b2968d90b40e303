// The strict YAML reader: goyaml.v2's (YAML 1.1) scalar resolution and the
// JSON decoding rules Kubernetes applies after it.
#include "host/input/yaml_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "host/common.hpp"
#include "host/input/config.hpp"

namespace bulkscore {
namespace {

using ::testing::HasSubstr;
using Type = YamlScalar::Type;

YAML::Node value_of(const std::string& yaml) { return YAML::Load("v: " + yaml)["v"]; }
YamlScalar resolve(const std::string& yaml) { return resolve_yaml_scalar(value_of(yaml)); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

TEST(YamlScalars, Yaml11Booleans) {
  for (const char* t : {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}) {
    const YamlScalar s = resolve(t);
    EXPECT_EQ(s.type, Type::Bool) << t;
    EXPECT_TRUE(s.boolean) << t;
  }
  for (const char* f : {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}) {
    const YamlScalar s = resolve(f);
    EXPECT_EQ(s.type, Type::Bool) << f;
    EXPECT_FALSE(s.boolean) << f;
  }
  // Other spellings and quoted forms are strings.
  for (const char* s : {"tRUE", "oN", "yES", "'yes'", "\"true\"", "!!str true", "truthy"}) {
    EXPECT_EQ(resolve(s).type, Type::String) << s;
  }
  EXPECT_EQ(resolve("!!bool yes").type, Type::Bool);
}

TEST(YamlScalars, Nulls) {
  for (const char* s : {"", "~", "null", "Null", "NULL"}) EXPECT_EQ(resolve(s).type, Type::Null) << s;
  EXPECT_EQ(resolve("'null'").type, Type::String);
  EXPECT_EQ(resolve("nULL").type, Type::String);
}

TEST(YamlScalars, IntegersInEveryGoBase) {
  const auto as_int = [](const std::string& y) {
    const YamlScalar s = resolve(y);
    EXPECT_EQ(s.type, Type::Int) << y;
    EXPECT_TRUE(s.fits_int64) << y;
    return s.integer;
  };
  EXPECT_EQ(as_int("42"), 42);
  EXPECT_EQ(as_int("+42"), 42);
  EXPECT_EQ(as_int("-42"), -42);
  EXPECT_EQ(as_int("1_000"), 1000);
  EXPECT_EQ(as_int("0x1F"), 31);
  EXPECT_EQ(as_int("-0x10"), -16);
  EXPECT_EQ(as_int("0o17"), 15);
  EXPECT_EQ(as_int("0b101"), 5);
  EXPECT_EQ(as_int("010"), 8);  // a leading zero is octal in YAML 1.1
  EXPECT_EQ(as_int("0"), 0);
  EXPECT_EQ(as_int("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(as_int("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  // Beyond int64 but within uint64: still an integer, too big for int64.
  const YamlScalar u = resolve("18446744073709551615");
  EXPECT_EQ(u.type, Type::Int);
  EXPECT_FALSE(u.fits_int64);
  EXPECT_FALSE(u.big);
  EXPECT_EQ(u.text, "18446744073709551615");
  // Signed or larger: goyaml.v2 falls back to a float.
  EXPECT_EQ(resolve("-9223372036854775809").type, Type::Float);
  EXPECT_EQ(resolve("99999999999999999999").type, Type::Float);
  EXPECT_TRUE(resolve("0x1ffffffffffffffff").big);
  // "08" is no octal number, but it is a float.
  EXPECT_EQ(resolve("08").type, Type::Float);
  EXPECT_EQ(resolve("08").number, 8.0);
}

TEST(YamlScalars, FloatsAndStrings) {
  EXPECT_EQ(resolve("1.5").type, Type::Float);
  EXPECT_EQ(resolve("1.5").number, 1.5);
  EXPECT_EQ(resolve("1e3").number, 1000.0);
  EXPECT_EQ(resolve(".5").number, 0.5);
  EXPECT_EQ(resolve("-1.").number, -1.0);
  EXPECT_TRUE(std::isinf(resolve(".inf").number));
  EXPECT_TRUE(std::isinf(resolve("-.Inf").number));
  EXPECT_TRUE(std::isnan(resolve(".NaN").number));
  EXPECT_EQ(resolve("!!float 3").type, Type::Float);
  for (const char* s :
       {"1e400", "1.2.3", "12:30", "2001-12-14", "0x", "1e", "abc", "'5'", "!!str 5", "!custom 5", "_1", "1f"}) {
    EXPECT_EQ(resolve(s).type, Type::String) << s;
  }
  EXPECT_THROW(resolve("!!int abc"), std::invalid_argument);
}

TEST(YamlReader, IntegerFieldsTakeIntegralFloatsAndRespectTheRange) {
  const YamlReader r("f.yaml");
  EXPECT_EQ(r.read_int32(value_of("5"), "w"), 5);
  EXPECT_EQ(r.read_int32(value_of("5.0"), "w"), 5);
  EXPECT_EQ(r.read_int32(value_of("1e2"), "w"), 100);
  EXPECT_EQ(r.read_int32(value_of("0x10"), "w"), 16);
  EXPECT_EQ(r.read_int32(value_of("!!int '7'"), "w"), 7);
  EXPECT_EQ(r.read_int64(value_of("-9223372036854775808"), "w"), std::numeric_limits<int64_t>::min());
  EXPECT_THAT(error_of([&] { r.read_int32(value_of("1.5"), "w"); }), HasSubstr("f.yaml: w: must be an integer"));
  EXPECT_THAT(error_of([&] { r.read_int32(value_of("'5'"), "w"); }), HasSubstr("must be an integer (int32)"));
  EXPECT_THAT(error_of([&] { r.read_int32(value_of("true"), "w"); }), HasSubstr("the boolean true"));
  EXPECT_THAT(error_of([&] { r.read_int32(value_of("2147483648"), "w"); }), HasSubstr("does not fit in int32"));
  EXPECT_THAT(error_of([&] { r.read_int64(value_of("9223372036854775808"), "w"); }),
              HasSubstr("does not fit in int64"));
  EXPECT_THAT(error_of([&] { r.read_int64(value_of(".inf"), "w"); }), HasSubstr("must be an integer"));
  EXPECT_THAT(error_of([&] { r.read_int64(value_of("[1]"), "w"); }), HasSubstr("got a list"));
  EXPECT_THAT(error_of([&] { r.read_int32(value_of("x"), "a.b"); }), HasSubstr("(line 1, column 4)"));
}

TEST(YamlReader, BooleanFieldsTakeYaml11BooleansOnly) {
  const YamlReader r("f.yaml");
  EXPECT_TRUE(r.read_bool(value_of("yes"), "b"));
  EXPECT_FALSE(r.read_bool(value_of("off"), "b"));
  EXPECT_TRUE(r.read_bool(value_of("True"), "b"));
  EXPECT_THAT(error_of([&] { r.read_bool(value_of("'true'"), "b"); }), HasSubstr("b: must be a boolean"));
  EXPECT_THAT(error_of([&] { r.read_bool(value_of("1"), "b"); }), HasSubstr("must be a boolean"));
}

TEST(YamlReader, StringFieldsRejectOtherScalarsUnlessConverting) {
  const YamlReader strict("f.yaml");
  EXPECT_EQ(strict.read_string(value_of("abc"), "s"), "abc");
  EXPECT_EQ(strict.read_string(value_of("'123'"), "s"), "123");
  EXPECT_EQ(strict.read_string(value_of("2001-12-14"), "s"), "2001-12-14");
  EXPECT_THAT(error_of([&] { strict.read_string(value_of("123"), "s"); }),
              HasSubstr("must be a string, got the integer 123"));
  EXPECT_THAT(error_of([&] { strict.read_string(value_of("yes"), "s"); }), HasSubstr("the boolean true"));
  EXPECT_THAT(error_of([&] { strict.read_string(value_of("{a: 1}"), "s"); }), HasSubstr("got a mapping"));

  // sigs.k8s.io/yaml.Unmarshal into a typed string field converts.
  const YamlReader typed("f.yaml", FieldNames::IgnoreCase, ScalarStrings::Convert);
  EXPECT_EQ(typed.read_string(value_of("010"), "s"), "8");
  EXPECT_EQ(typed.read_string(value_of("yes"), "s"), "true");
  EXPECT_EQ(typed.read_string(value_of("18446744073709551615"), "s"), "18446744073709551615");
  EXPECT_EQ(typed.read_string(value_of("1.5"), "s"), "1.5");
  EXPECT_EQ(typed.read_string(value_of("0.1"), "s"), "0.1");
  EXPECT_EQ(typed.read_string(value_of("1e6"), "s"), "1e+06");
  EXPECT_EQ(typed.read_string(value_of("123456.0"), "s"), "123456");
  EXPECT_EQ(typed.read_string(value_of("0.0001"), "s"), "0.0001");
  EXPECT_EQ(typed.read_string(value_of("0.00001"), "s"), "1e-05");
  EXPECT_EQ(typed.read_string(value_of("3.14159265358979"), "s"), "3.1415927");
}

TEST(YamlReader, NumbersTakeIntegersAndFiniteFloats) {
  const YamlReader r("f.yaml");
  EXPECT_EQ(r.read_number(value_of("3"), "n"), 3.0);
  EXPECT_EQ(r.read_number(value_of("2.5e-1"), "n"), 0.25);
  EXPECT_THAT(error_of([&] { r.read_number(value_of(".nan"), "n"); }), HasSubstr("must be a finite number"));
  EXPECT_THAT(error_of([&] { r.read_number(value_of("'3'"), "n"); }), HasSubstr("must be a number"));
}

TEST(YamlReader, MappingsAreStrict) {
  const YamlReader exact("f.yaml");
  const YAML::Node m = YAML::Load("a: 1\nbB: 2\n");
  exact.check_map(m, "obj", {"a", "bB", "c"});
  EXPECT_EQ(exact.field(m, "bB").as<int>(), 2);
  EXPECT_FALSE(exact.field(m, "bb").IsDefined());
  EXPECT_THAT(error_of([&] { exact.check_map(m, "obj", {"a", "bb"}); }), HasSubstr("f.yaml: obj.bB: unknown field"));
  EXPECT_THAT(error_of([&] { exact.check_map(YAML::Load("a: 1\na: 2\n"), "", {"a"}); }),
              HasSubstr("a: field given more than once"));
  EXPECT_THAT(error_of([&] { exact.check_map(YAML::Load("[1]"), "obj", {"a"}); }),
              HasSubstr("obj: must be a mapping, got a list"));

  // encoding/json's matching: case-insensitive, and two spellings of one
  // field are one field given twice.
  const YamlReader folded("f.yaml", FieldNames::IgnoreCase);
  folded.check_map(m, "obj", {"A", "bb"});
  EXPECT_EQ(folded.field(m, "BB").as<int>(), 2);
  EXPECT_THAT(error_of([&] { folded.check_map(YAML::Load("a: 1\nA: 2\n"), "", {"a"}); }),
              HasSubstr("field given more than once"));
}

TEST(YamlReader, ObjectPrefixAndDocuments) {
  const YamlReader r = YamlReader("f.yaml").for_object("profiles[0].pluginConfig[1] (X)");
  EXPECT_EQ(error_of([&] { r.fail("a.b", "bad"); }), "f.yaml: profiles[0].pluginConfig[1] (X): a.b: bad");
  const YamlReader file("f.yaml");
  EXPECT_EQ(file.load_documents("a: 1\n---\n").size(), 1u);
  EXPECT_THAT(error_of([&] { file.load_single_mapping("a: 1\n---\nb: 2\n", "a Thing"); }),
              HasSubstr("expected one YAML document, found 2"));
  EXPECT_THAT(error_of([&] { file.load_single_mapping("", "a Thing"); }),
              HasSubstr("empty document: expected a Thing"));
  EXPECT_THAT(error_of([&] { file.load_single_mapping("a: [1\n", "a Thing"); }), HasSubstr("malformed YAML at line"));
  EXPECT_THAT(error_of([&] { file.load_single_mapping("- 1\n", "a Thing"); }), HasSubstr("must be a mapping"));
}

TEST(YamlReader, StringLists) {
  const YamlReader r("f.yaml");
  EXPECT_TRUE(r.read_string_list(value_of("~"), "l").empty());
  EXPECT_EQ(r.read_string_list(value_of("[a, 'b']"), "l"), (std::vector<std::string>{"a", "b"}));
  EXPECT_THAT(error_of([&] { r.read_string_list(value_of("[a, 5]"), "l"); }), HasSubstr("l[1]: must be a string"));
  EXPECT_THAT(error_of([&] { r.read_string_list(value_of("a"), "l"); }), HasSubstr("l: must be a list"));
}

}  // namespace
}  // namespace bulkscore

namespace bulkscore {
namespace {

// An alias bomb in a configuration is refused before anything expands it
// (found by fuzz_config: the reader's tree walk took gigabytes).
TEST(YamlReaderAliases, AliasBombInAConfigurationIsRefused) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) text += std::string(j ? ", " : "") + "*a" + std::to_string(i - 1);
    text += "]\n";
  }
  text += "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
  try {
    parse_scheduler_config(text, "bomb.yaml");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("excessive aliasing"), std::string::npos) << e.what();
  }
}


// yaml-cpp 0.7 never finishes a stream whose document starts at a token no
// node begins with: LoadAll appended empty documents until memory ran out
// (found by fuzz_config and fuzz_schedule: past 1.5 GB; corpus file
// tests/fuzz/corpus/fuzz_config/stalled-document.yaml). Refused at once,
// with the line and column, as go-yaml refuses it.
TEST(YamlReaderStream, DocumentThatConsumesNothingIsRefusedNotLoopedOn) {
  const auto started = std::chrono::steady_clock::now();
  const YamlReader file("f.yaml");
  for (const char* text : {",", " ,", ",,", "a: 1\n---\n,\n", "--- ,", "...\n,", "- a\n,", "&x ,", "!t ,",
                           "%YAML 1.1\n--- ,"}) {
    const std::string msg = error_of([&] { file.load_documents(text); });
    EXPECT_THAT(msg, HasSubstr("f.yaml: malformed YAML at line")) << text;
    EXPECT_THAT(msg, HasSubstr("did not find expected node content")) << text;
  }
  EXPECT_THAT(error_of([&] { file.load_documents("a: 1\n---\n,\n"); }), HasSubstr("at line 3, column 1"));
  // The configuration reader, as the fuzzers reached it: a comment line, a
  // stray ',' at the start of a line.
  EXPECT_THAT(error_of([&] {
                parse_scheduler_config("# a comment\n, apiVersion: kubescheduler.config.k8s.io/v1\n", "c.yaml");
              }),
              HasSubstr("c.yaml: malformed YAML at line 2, column 1: did not find expected node content"));
  // What does finish is unchanged.
  EXPECT_EQ(file.load_documents("a: 1\n---\nb: 2\n---\n").size(), 2u);
  EXPECT_EQ(file.load_documents("--- a\n--- b\n...\n--- c\n").size(), 3u);
  EXPECT_EQ(file.load_documents("[a, b]\n").size(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

// Nesting past kMaxYamlDepth is refused where it passes the limit, naming
// the limit, the line and the column; yaml-cpp's own guard (about 500 deep)
// said only "bad file", at a column far from the nesting.
TEST(YamlReaderStream, DeepNestingNamesTheLimitAndTheLine) {
  ASSERT_EQ(kMaxYamlDepth, 100U);
  const YamlReader file("deep.yaml");
  const auto flow = [](size_t depth) { return "a: 1\nb: " + std::string(depth, '[') + std::string(depth, ']') + "\n"; };
  // The root mapping and 99 lists: at the limit. One more is past it, at
  // the 100th '[' (column 4 + 99).
  EXPECT_EQ(file.load_documents(flow(99)).size(), 1u);
  EXPECT_THAT(error_of([&] { file.load_documents(flow(100)); }),
              HasSubstr("deep.yaml:2: column 103: mappings and lists nested more than 100 deep (bulkscore's limit)"));
  // Far past yaml-cpp's own guard: the same answer, never "bad file".
  const std::string far = error_of([&] { file.load_documents(flow(5000)); });
  EXPECT_THAT(far, HasSubstr("deep.yaml:2: column 103: mappings and lists nested more than 100 deep"));
  EXPECT_THAT(far, ::testing::Not(HasSubstr("bad file")));
  // Flow mappings and block collections count alike.
  std::string maps = "x: ";
  for (int i = 0; i < 600; ++i) maps += "{a: ";
  EXPECT_THAT(error_of([&] { file.load_documents(maps + "1" + std::string(600, '}') + "\n"); }),
              HasSubstr("deep.yaml:1: column 400: mappings and lists nested more than 100 deep"));
  std::string block = "a:\n";
  for (int i = 1; i <= 600; ++i) block += std::string(static_cast<size_t>(i), ' ') + "b:\n";
  EXPECT_THAT(error_of([&] { file.load_documents(block); }),
              HasSubstr("deep.yaml:101: column 101: mappings and lists nested more than 100 deep"));
  // The configuration reader, end to end.
  EXPECT_THAT(error_of([&] {
                parse_scheduler_config(
                    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: " +
                        std::string(3000, '[') + std::string(3000, ']') + "\n",
                    "c.yaml");
              }),
              HasSubstr("c.yaml:3: column 110: mappings and lists nested more than 100 deep"));
}

}  // namespace
}  // namespace bulkscore
