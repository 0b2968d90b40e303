// Tests for `bulkscore perf`: the scheduler_perf format (with parameter
// substitution and templates), its error messages, the throughput collector,
// tiny workloads end to end, the results JSON and the comparison table.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "bench/perf/go_template.hpp"
#include "bench/perf/perf.hpp"
#include "bench/perf/yaml_json.hpp"
#include "host/common.hpp"
#include "host/io/io.hpp"

namespace bulkscore {
namespace {

const std::string kDataDir = std::string(BULKSCORE_SOURCE_DIR) + "/tests/data/perf";
const std::string kTiny = kDataDir + "/tiny-config.yaml";

// A scratch folder per test, removed afterwards.
class PerfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("bulkscore_test_perf_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "templates");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // The InputError message from loading `yaml` as a config file.
  std::string load_error(const std::string& yaml) {
    const std::string path = write("config.yaml", yaml);
    try {
      load_perf_config(path);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  }

  std::filesystem::path dir_;
};

const PerfWorkloadResult& only(const PerfRunResult& r) {
  EXPECT_EQ(r.workloads.size(), 1u);
  return r.workloads.at(0);
}

PerfRunResult run_named(const std::string& name, PerfRunOptions opt = {}) {
  const PerfConfig cfg = load_perf_config(kTiny);
  opt.backend = "cpu";
  return run_perf(cfg, select_perf_workloads(cfg, name, ""), opt);
}

const std::string kMinimalOps = R"(
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: w
)";

// ---------------------------------------------------------------- parsing

TEST_F(PerfTest, ParsesTestCasesOpsAndWorkloads) {
  const PerfConfig cfg = load_perf_config(kTiny);
  ASSERT_GE(cfg.test_cases.size(), 6u);
  const PerfTestCase& basic = cfg.test_cases[0];
  EXPECT_EQ(basic.name, "TinyBasic");
  ASSERT_EQ(basic.ops.size(), 4u);
  EXPECT_EQ(basic.ops[0].kind, PerfOpKind::CreateNodes);
  EXPECT_EQ(basic.ops[0].count_param, "$nodes");
  ASSERT_TRUE(basic.ops[0].node_template_path.has_value());
  // Template paths are relative to the config file's folder.
  EXPECT_EQ(*basic.ops[0].node_template_path, kDataDir + "/templates/node-small.yaml");
  ASSERT_TRUE(basic.default_pod_template_path.has_value());
  EXPECT_EQ(*basic.default_pod_template_path, kDataDir + "/templates/pod-small.yaml");
  EXPECT_EQ(basic.ops[2].kind, PerfOpKind::Barrier);
  EXPECT_TRUE(basic.ops[3].collect_metrics);
  ASSERT_EQ(basic.workloads.size(), 2u);
  EXPECT_EQ(basic.workloads[0].name, "10Nodes");
  EXPECT_EQ(basic.workloads[0].params.at("nodes").number, 10);
  EXPECT_EQ(basic.workloads[0].threshold, 1);
  EXPECT_EQ(cfg.test_cases[3].ops[1].kind, PerfOpKind::Unsupported);
  EXPECT_EQ(cfg.test_cases[3].ops[1].opcode, "churn");
  EXPECT_EQ(cfg.test_cases[2].ops[1].node_allocatable.at("example.com/gpu"), "2");
  EXPECT_TRUE(cfg.test_cases[2].ops[1].csi_node_allocatable_ignored);
}

TEST_F(PerfTest, FieldNamesMatchCaseInsensitivelyLikeGo) {
  const std::string path = write("config.yaml", R"(
- Name: Upper
  WorkloadTemplate:
  - Opcode: createPods
    Count: 3
    CollectMetrics: true
  Workloads:
  - Name: w
)");
  const PerfConfig cfg = load_perf_config(path);
  EXPECT_EQ(cfg.test_cases[0].ops[0].count, 3);
  EXPECT_TRUE(cfg.test_cases[0].ops[0].collect_metrics);
}

TEST_F(PerfTest, ParamsAreSubstitutedIntoCounts) {
  const PerfRunResult r = run_named("TinyBasic/10Nodes");
  const PerfWorkloadResult& w = only(r);
  EXPECT_EQ(w.nodes, 10u);
  EXPECT_EQ(w.setup_pods, 5u);
  ASSERT_EQ(w.measurements.size(), 1u);
  EXPECT_EQ(w.measurements[0].attempted, 20u);
  EXPECT_EQ(w.measurements[0].scheduled, 20u);
  EXPECT_EQ(w.measurements[0].nodes, 10u);

  const PerfRunResult r20 = run_named("TinyBasic/20Nodes");
  EXPECT_EQ(only(r20).nodes, 20u);
  EXPECT_EQ(only(r20).setup_pods, 0u);
  EXPECT_EQ(only(r20).measurements.at(0).attempted, 30u);
}

TEST_F(PerfTest, BuiltInNodeAndPodMatchUpstreamDefaults) {
  // 4 cpu nodes and 100m pods: 40 per node.
  const PerfWorkloadResult w = only(run_named("TinyDefaults"));
  ASSERT_EQ(w.measurements.size(), 1u);
  EXPECT_EQ(w.measurements[0].scheduled, 80u);
  EXPECT_EQ(w.measurements[0].unschedulable, 5u);
  EXPECT_EQ(w.measurements[0].name, "TinyDefaults/2Nodes/namespace-1");
}

TEST_F(PerfTest, LabelAndAllocatableStrategiesShapeTheNodes) {
  const PerfWorkloadResult w = only(run_named("TinyStrategies"));
  ASSERT_EQ(w.measurements.size(), 2u);
  EXPECT_EQ(w.nodes, 20u);
  EXPECT_EQ(w.measurements[0].scheduled, 10u);  // 5 zone1 nodes x 2 pods
  EXPECT_EQ(w.measurements[0].unschedulable, 4u);
  EXPECT_EQ(w.measurements[1].scheduled, 20u);  // 10 nodes x 2 GPUs
  EXPECT_EQ(w.measurements[1].unschedulable, 5u);
  bool csi_note = false;
  for (const auto& n : w.notes) csi_note |= n.find("csiNodeAllocatable") != std::string::npos;
  EXPECT_TRUE(csi_note);
}

TEST_F(PerfTest, GoTemplatesAreExpandedPerObject) {
  const PerfWorkloadResult w = only(run_named("TinyTemplated"));
  ASSERT_EQ(w.measurements.size(), 1u);
  EXPECT_EQ(w.measurements[0].scheduled, 6u);
  EXPECT_EQ(w.measurements[0].unschedulable, 0u);
}

TEST_F(PerfTest, UnsupportedOpsAreReportedByName) {
  const PerfWorkloadResult w = only(run_named("TinyUnsupported"));
  ASSERT_EQ(w.not_honoured.size(), 2u);
  EXPECT_EQ(w.not_honoured[0], "churn (op 1)");
  EXPECT_EQ(w.not_honoured[1], "deletePods (op 4)");
  bool sleep_note = false, gate_note = false, batching_note = false;
  for (const auto& n : w.notes) {
    sleep_note |= n.find("sleep 5s skipped") != std::string::npos;
    gate_note |= n.find("SchedulerQueueingHints=true") != std::string::npos;
    batching_note |= n.find("OpportunisticBatching") != std::string::npos;
  }
  EXPECT_TRUE(sleep_note);
  EXPECT_TRUE(gate_note);
  EXPECT_FALSE(batching_note) << "OpportunisticBatching=false is what bulkscore does";
  EXPECT_EQ(w.measurements.at(0).scheduled, 4u);
}

TEST_F(PerfTest, CollectorOpsAndPodSetsMeasureTheirNamespaces) {
  const PerfWorkloadResult w = only(run_named("TinyPodSets"));
  ASSERT_EQ(w.measurements.size(), 4u);
  EXPECT_EQ(w.measurements[0].name, "TinyPodSets/4Nodes/collected");
  EXPECT_EQ(w.measurements[0].attempted, 5u);  // ns-0 and ns-1 only
  EXPECT_EQ(w.setup_pods, 5u);                 // the "other" namespace
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(w.measurements[1 + i].name, "TinyPodSets/4Nodes/set-" + std::to_string(i));
    EXPECT_EQ(w.measurements[1 + i].attempted, 2u);
  }
}

TEST_F(PerfTest, GatedPodsStayPendingAndAreNotAttempted) {
  const PerfWorkloadResult w = only(run_named("TinyGated"));
  EXPECT_EQ(w.gated_pods, 3u);
  EXPECT_EQ(w.setup_pods, 0u);
  ASSERT_EQ(w.measurements.size(), 1u);
  EXPECT_EQ(w.measurements[0].attempted, 2u);
  EXPECT_EQ(w.measurements[0].scheduled, 2u);
}

// ---------------------------------------------------------------- errors

TEST_F(PerfTest, UnknownFieldIsAnErrorNamingFileAndField) {
  const std::string msg = load_error(R"(
- name: Bad
  workloadTemplate:
  - opcode: createPods
    cuont: 3
    collectMetrics: true
  workloads:
  - name: w
)");
  EXPECT_NE(msg.find("config.yaml:5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown field \"cuont\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("workloadTemplate[0]"), std::string::npos) << msg;
}

TEST_F(PerfTest, CountParamMustNameAParameter) {
  const std::string msg = load_error(R"(
- name: Bad
  workloadTemplate:
  - opcode: createNodes
    countParam: nodes
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: w
)");
  EXPECT_NE(msg.find("config.yaml"), std::string::npos) << msg;
  EXPECT_NE(msg.find("countParam"), std::string::npos) << msg;
  EXPECT_NE(msg.find("$nodes"), std::string::npos) << msg;
}

TEST_F(PerfTest, WrongTypesAndInvalidCombinationsAreErrors) {
  EXPECT_NE(
      load_error("- name: Bad\n  workloadTemplate:\n  - opcode: createPods\n    count: many\n    collectMetrics: true\n"
                 "  workloads:\n  - name: w\n")
          .find("count: expected an integer"),
      std::string::npos);
  EXPECT_NE(
      load_error("- name: Bad\n  workloadTemplate:\n  - opcode: createPods\n    count: 1\n    collectMetrics: true\n"
                 "    skipWaitToCompletion: true\n  workloads:\n  - name: w\n")
          .find("cannot be true at the same time"),
      std::string::npos);
  EXPECT_NE(
      load_error("- name: Bad\n  workloadTemplate:\n  - opcode: createPods\n    count: 1\n  workloads:\n  - name: w\n")
          .find("no op in the workload template collects metrics"),
      std::string::npos);
  EXPECT_NE(
      load_error("- name: Bad\n" + kMinimalOps.substr(0, kMinimalOps.find("  workloads"))).find("no workloads defined"),
      std::string::npos);
  EXPECT_NE(load_error("- name: A" + kMinimalOps + "- name: A" + kMinimalOps).find("name is not unique"),
            std::string::npos);
  EXPECT_NE(load_error("- name: Bad\n  workloadTemplate: [{opcode: createPods, count: 1, collectMetrics: true}]\n"
                       "  workloads:\n  - name: w\n  - name: w\n")
                .find("workload name w is not unique"),
            std::string::npos);
  EXPECT_NE(
      load_error("- name: Bad\n  workloadTemplate:\n  - count: 1\n  workloads:\n  - name: w\n").find("opcode: missing"),
      std::string::npos);
}

TEST_F(PerfTest, UnknownOpcodeIsAnErrorAsUpstreams) {
  const std::string msg = load_error(R"(
- name: Bad
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPodz
    count: 1
    collectMetrics: true
  workloads:
  - name: w
)");
  EXPECT_NE(msg.find("config.yaml:6"), std::string::npos) << msg;
  EXPECT_NE(msg.find("workloadTemplate[1] (createPodz).opcode: unknown opcode \"createPodz\""), std::string::npos)
      << msg;

  // Ops upstream knows but bulkscore does not run are listed, not errors.
  const std::string path = write("config.yaml", R"(
- name: Known
  workloadTemplate:
  - opcode: createPodGroups
    countParam: $groups
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: w
    params: {groups: 2}
)");
  const PerfConfig cfg = load_perf_config(path);
  EXPECT_EQ(cfg.test_cases[0].ops[0].kind, PerfOpKind::Unsupported);

  PerfCliOptions o;
  o.config_path = write("bad.yaml", "- name: Bad\n  workloadTemplate:\n  - opcode: nope\n  workloads:\n  - name: w\n");
  o.verbosity = 0;
  testing::internal::CaptureStderr();
  EXPECT_EQ(perf_main(o), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("unknown opcode \"nope\""), std::string::npos);
}

TEST_F(PerfTest, CountsAreBoundedAndCheckedBeforeAllocation) {
  auto run_error = [this](const std::string& yaml) -> std::string {
    const PerfConfig cfg = load_perf_config(write("config.yaml", yaml));
    PerfRunOptions opt;
    opt.backend = "cpu";
    try {
      run_perf_workload(cfg, cfg.test_cases[0], cfg.test_cases[0].workloads[0], opt);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  const auto started = std::chrono::steady_clock::now();
  const std::string tail =
      "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n  workloads:\n  - name: w\n";
  // A count parameter that does not fit an integer (Go's int() would be
  // platform-defined).
  EXPECT_NE(run_error("- name: T\n  workloadTemplate:\n  - opcode: createNodes\n    countParam: $n\n" + tail +
                      "    params: {n: 1e30}\n")
                .find("parameter n = 1e+30 does not fit an integer"),
            std::string::npos);
  // Above the limit, literal or parameter, one op or the sum of several.
  const std::string big =
      run_error("- name: T\n  workloadTemplate:\n  - opcode: createNodes\n    count: 2000000\n" + tail);
  EXPECT_NE(big.find("count resolves to 2000000 nodes; bulkscore's limit is 1000000"), std::string::npos) << big;
  EXPECT_NE(big.find("workloadTemplate[0] (createNodes)"), std::string::npos) << big;
  EXPECT_NE(run_error("- name: T\n  workloadTemplate:\n  - opcode: createNodes\n    count: 600000\n"
                      "  - opcode: createNodes\n    count: 600000\n" +
                      tail)
                .find("creates 1200000 nodes and 0 pods"),
            std::string::npos);
  // count x countMultiplierParam overflowing 64 bits.
  EXPECT_NE(run_error("- name: T\n  workloadTemplate:\n  - opcode: createPods\n    count: 4611686018427387904\n"
                      "    countMultiplierParam: $m\n    collectMetrics: true\n  workloads:\n  - name: w\n"
                      "    params: {m: 4}\n")
                .find("overflows a 64-bit integer"),
            std::string::npos);
  // Pod sets and namespaces: refused before a loop of 10^12 steps.
  EXPECT_NE(run_error("- name: T\n  workloadTemplate:\n  - opcode: createPodSets\n    count: 1000000000000\n"
                      "    namespacePrefix: ns\n    createPodsOp:\n      opcode: createPods\n      count: 1\n"
                      "      collectMetrics: true\n  workloads:\n  - name: w\n")
                .find("pod sets; bulkscore's limit"),
            std::string::npos);
  EXPECT_NE(run_error("- name: T\n  workloadTemplate:\n  - opcode: createPodSets\n    count: 1000\n"
                      "    namespacePrefix: ns\n    createPodsOp:\n      opcode: createPods\n      count: 5000\n"
                      "      collectMetrics: true\n  workloads:\n  - name: w\n")
                .find("1000 pod sets of 5000 pods exceed"),
            std::string::npos);
  EXPECT_NE(run_error("- name: T\n  workloadTemplate:\n  - opcode: createNamespaces\n    prefix: ns\n"
                      "    count: 1000000000000\n" +
                      tail)
                .find("namespaces; bulkscore's limit"),
            std::string::npos);
  EXPECT_NE(run_error("- name: T\n  workloadTemplate:\n  - opcode: createPods\n    count: 1\n"
                      "    signatureBatchSizeParam: $s\n    collectMetrics: true\n  workloads:\n  - name: w\n"
                      "    params: {s: -2}\n")
                .find("signatureBatchSize resolves to -2"),
            std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

// "Billion laughs": nine levels of ten aliases are 10^9 nodes once expanded.
TEST_F(PerfTest, AliasExpansionIsBoundedLikeGoYaml) {
  std::string bomb = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    const char p = static_cast<char>(c - 1);
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int k = 0; k < 10; ++k) bomb += std::string(k ? "," : "") + "*" + p;
    bomb += "]\n";
  }
  ASSERT_LT(bomb.size(), 500u);
  const auto started = std::chrono::steady_clock::now();
  try {
    yaml_to_json(bomb, "bomb.yaml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bomb.yaml:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("excessive aliasing"), std::string::npos) << e.what();
  }
  // The same in a workload file: refused when the file is read.
  std::string params;
  for (size_t at = 0, end; at < bomb.size(); at = end + 1) {
    end = bomb.find('\n', at);
    params += "      " + bomb.substr(at, end - at) + "\n";
  }
  EXPECT_NE(load_error("- name: T\n  workloads:\n  - name: w\n    params:\n" + params).find("excessive aliasing"),
            std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));

  // Ordinary anchors and aliases still work.
  EXPECT_EQ(yaml_to_json("a: &x {b: 1}\nc: *x\nd: [*x, *x]\n", "t"),
            R"({"a":{"b":1},"c":{"b":1},"d":[{"b":1},{"b":1}]})");
  EXPECT_THROW(yaml_to_json("a: &x [1, *x]\n", "t"), InputError);
}

// yaml-cpp 0.7 looped forever on a document starting at a stray ','
// (tests/test_yaml_reader.cpp, YamlReaderStream): the scheduler_perf reader
// shares the check.
TEST_F(PerfTest, YamlStreamThatNeverEndsInYamlCppIsRefused) {
  const auto started = std::chrono::steady_clock::now();
  for (const char* text : {",", "- name: T\n,\n", "a: 1\n---\n,\n"}) {
    try {
      yaml_to_json(text, "stall.yaml");
      FAIL() << "expected an InputError for " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("stall.yaml:"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("did not find expected node content"), std::string::npos) << e.what();
    }
  }
  EXPECT_NE(load_error("- name: T\n,\n").find("did not find expected node content"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

// Deep nesting is refused by the shared stream check, naming the limit and
// the line: yaml-cpp's guard said "invalid YAML: bad file", and nesting
// between 200 and 500 deep "document nested too deeply".
TEST_F(PerfTest, DeepNestingNamesTheLimitAndTheLine) {
  for (size_t depth : {150U, 300U, 5000U}) {
    const std::string text = "- name: T\n  x: " + std::string(depth, '[') + std::string(depth, ']') + "\n";
    try {
      yaml_to_json(text, "deep.yaml");
      FAIL() << "expected an InputError at depth " << depth;
    } catch (const InputError& e) {
      // The sequence, the mapping, then lists from column 6: the 99th '['.
      EXPECT_NE(std::string(e.what()).find("deep.yaml:2: column 104: mappings and lists nested more than 100 deep"),
                std::string::npos)
          << e.what();
    }
    const std::string msg = load_error(text);
    EXPECT_NE(msg.find("config.yaml:2: column 104: mappings and lists nested more than 100 deep"), std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("bad file"), std::string::npos) << msg;
  }
}

TEST_F(PerfTest, YamlSyntaxErrorNamesFileAndLine) {
  const std::string msg = load_error("- name: Bad\n  workloadTemplate: [\n");
  EXPECT_NE(msg.find("config.yaml"), std::string::npos) << msg;
  EXPECT_NE(msg.find("invalid YAML"), std::string::npos) << msg;
}

TEST_F(PerfTest, UndefinedAndUnusedParamsAreErrorsNamingTheParam) {
  const std::string path = write("config.yaml", R"(
- name: Params
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: undefined
    params: {notNodes: 1}
  - name: unused
    params: {nodes: 1, typo: 2}
)");
  const PerfConfig cfg = load_perf_config(path);
  PerfRunOptions opt;
  opt.backend = "cpu";
  try {
    run_perf_workload(cfg, cfg.test_cases[0], cfg.test_cases[0].workloads[0], opt);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("parameter nodes is undefined"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("config.yaml"), std::string::npos) << e.what();
  }
  try {
    run_perf_workload(cfg, cfg.test_cases[0], cfg.test_cases[0].workloads[1], opt);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("[typo]"), std::string::npos) << e.what();
  }
}

TEST_F(PerfTest, BadTemplateIsAnErrorNamingTheTemplate) {
  write("templates/pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: p-\n  labels:\n    a: \"{{ if .Index }}\"\n");
  const std::string path = write("config.yaml", R"(
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPods
    count: 1
    podTemplatePath: templates/pod.yaml
    collectMetrics: true
  workloads:
  - name: w
)");
  const PerfConfig cfg = load_perf_config(path);
  PerfRunOptions opt;
  opt.backend = "cpu";
  try {
    run_perf_workload(cfg, cfg.test_cases[0], cfg.test_cases[0].workloads[0], opt);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("templates/pod.yaml:6"), std::string::npos) << msg;
    EXPECT_NE(msg.find("\"if\" action is not supported"), std::string::npos) << msg;
  }
}

TEST_F(PerfTest, SelectionByNamePatternAndLabels) {
  const PerfConfig cfg = load_perf_config(kTiny);
  EXPECT_EQ(select_perf_workloads(cfg, "TinyBasic", "").size(), 2u);
  EXPECT_EQ(select_perf_workloads(cfg, "TinyBasic/10Nodes", "").size(), 1u);
  EXPECT_EQ(select_perf_workloads(cfg, "Tiny*/2*", "").size(), 3u);  // 20Nodes, 2Nodes, 20Nodes
  EXPECT_EQ(select_perf_workloads(cfg, "", "performance").size(), 1u);
  EXPECT_EQ(select_perf_workloads(cfg, "TinyBasic", "integration-test,-short").size(), 1u);
  EXPECT_THROW(select_perf_workloads(cfg, "NoSuchCase", ""), InputError);
}

// ---------------------------------------------------------------- throughput

TEST(PerfThroughput, PercentilesFollowUpstreamIndexing) {
  std::vector<double> s;
  for (int i = 100; i >= 1; --i) s.push_back(i);
  const PerfThroughput t = summarize_throughput(s);
  EXPECT_DOUBLE_EQ(t.average, 50.5);
  EXPECT_DOUBLE_EQ(t.perc50, 50);
  EXPECT_DOUBLE_EQ(t.perc90, 90);
  EXPECT_DOUBLE_EQ(t.perc95, 95);
  EXPECT_DOUBLE_EQ(t.perc99, 99);
  const PerfThroughput three = summarize_throughput({3, 1, 2});
  EXPECT_DOUBLE_EQ(three.perc50, 2);  // index ceil(1.5)-1
  EXPECT_DOUBLE_EQ(three.perc90, 3);
  EXPECT_DOUBLE_EQ(three.average, 2);
}

TEST(PerfThroughput, CountsPodsPerOneSecondWindowAndDropsThePartialTail) {
  const int64_t s = 1000000000;
  ThroughputCollector c(0);
  // 10 pods per second for 3.5 s.
  for (int i = 1; i <= 35; ++i) c.pod_done(i * s / 10 - 1, true);
  const PerfThroughput t = c.finish(35 * s / 10);
  ASSERT_EQ(t.samples.size(), 3u);
  EXPECT_DOUBLE_EQ(t.samples[0], 10);
  EXPECT_DOUBLE_EQ(t.samples[2], 10);
  EXPECT_FALSE(t.whole_op_fallback);
  EXPECT_EQ(c.scheduled(), 35u);
}

TEST(PerfThroughput, EmptyWindowsMergeIntoTheNextAsUpstreamDoes) {
  const int64_t s = 1000000000;
  ThroughputCollector c(0);
  c.pod_done(s / 2, true);           // window 1: 1 pod
  c.pod_done(5 * s / 2, true);       // window 2 empty, window 3: 1 pod -> 0.5/s twice
  c.pod_done(5 * s / 2 + 1, false);  // unschedulable pods are not counted
  const PerfThroughput t = c.finish(3 * s + s / 5);
  ASSERT_EQ(t.samples.size(), 3u);
  EXPECT_DOUBLE_EQ(t.samples[0], 1);
  EXPECT_DOUBLE_EQ(t.samples[1], 0.5);
  EXPECT_DOUBLE_EQ(t.samples[2], 0.5);
}

TEST(PerfThroughput, ShortOpFallsBackToItsOverallRate) {
  ThroughputCollector c(0);
  for (int i = 1; i <= 50; ++i) c.pod_done(i * 10000000LL, true);  // 50 pods in 0.5 s
  const PerfThroughput t = c.finish(500000000);
  ASSERT_EQ(t.samples.size(), 1u);
  EXPECT_TRUE(t.whole_op_fallback);
  EXPECT_DOUBLE_EQ(t.average, 100);
}

// ---------------------------------------------------------------- helpers

// Booleans resolve as the one YAML reader resolves them (YAML 1.1, as
// goyaml.v2 under sigs.k8s.io/yaml, which scheduler_perf decodes with):
// `yes` is true there, as in the scheduler's own configuration.
TEST(PerfYaml, PlainScalarsFollowTheCoreSchemaAndQuotedStayStrings) {
  const std::string json = yaml_to_json(
      "a: 1\nb: '1'\nc: true\nd: 'true'\ne: ~\nf: 1.5\ng: .5\nh: 0x1F\ni: yes\nj: !!str 5\nk: 007\nl: -3\nm: 1e3\n"
      "n: [x, 2]\no: \"\"\n",
      "inline");
  EXPECT_EQ(json,
            "{\"a\":1,\"b\":\"1\",\"c\":true,\"d\":\"true\",\"e\":null,\"f\":1.5,\"g\":0.5,\"h\":31,\"i\":true,"
            "\"j\":\"5\",\"k\":7,\"l\":-3,\"m\":1e3,\"n\":[\"x\",2],\"o\":\"\"}");
}

TEST(PerfYaml, IntegersAreReadWithFromCharsAndRangeChecked) {
  using perf_detail::yaml_int_value;
  EXPECT_EQ(yaml_int_value("42"), 42);
  EXPECT_EQ(yaml_int_value("+42"), 42);
  EXPECT_EQ(yaml_int_value("-007"), -7);
  EXPECT_EQ(yaml_int_value("0x1F"), 31);
  EXPECT_EQ(yaml_int_value("0o17"), 15);
  EXPECT_EQ(yaml_int_value("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(yaml_int_value("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(yaml_int_value("9223372036854775808").has_value());
  EXPECT_FALSE(yaml_int_value("0xffffffffffffffff").has_value());
  EXPECT_FALSE(yaml_int_value("0x").has_value());
}

TEST(PerfTemplate, ExpandsFieldsFunctionsAndTrimMarkers) {
  PerfValueMap env;
  env["Index"] = PerfValue::of_number(7);
  env["Count"] = PerfValue::of_number(10);
  env["big"] = PerfValue::of_number(1000000);
  env["half"] = PerfValue::of_number(0.5);
  env["name"] = PerfValue::of_string("x");
  EXPECT_EQ(render_perf_template("n-{{.Index}}/{{ .Count }}", env, "t"), "n-7/10");
  EXPECT_EQ(render_perf_template("{{ AddInt .Index 1 }} {{ Mod .Index 3 }} {{ DivideInt .Count 3 }}", env, "t"),
            "8 1 3");
  EXPECT_EQ(render_perf_template("{{ MultiplyFloat .half 3 }} {{ SubtractInt (AddInt .Index 3) 1 }}", env, "t"),
            "1.5 9");
  // Parameters are float64 in Go: a million prints in exponent form.
  EXPECT_EQ(render_perf_template("{{.big}} {{.name}}", env, "t"), "1e+06 x");
  EXPECT_EQ(render_perf_template("a  {{- .Index -}}  b{{/* gone */}}", env, "t"), "a7b");
  EXPECT_THROW(render_perf_template("{{ range .Index }}", env, "t"), InputError);
  EXPECT_THROW(render_perf_template("{{ .Missing }}", env, "t"), InputError);
  EXPECT_THROW(render_perf_template("{{ Mod .Index 0 }}", env, "t"), InputError);
}

// The InputError message of rendering `text`, or "(no error)".
std::string render_error(const std::string& text) {
  try {
    render_perf_template(text, {}, "t.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// Deeply nested parentheses are an error, not a stack overflow (a fuzzing
// finding: tests/fuzz/corpus/fuzz_perf/deep-parentheses); nesting within
// the bound still works.
TEST(PerfTemplate, DeepParenthesesAreAnErrorNotACrash) {
  const std::string deep = "{{ AddInt" + std::string(5000, '(') + " 1" + std::string(5000, ')') + " 1 }}";
  EXPECT_NE(render_error(deep).find("nested more than 100 deep"), std::string::npos) << render_error(deep);
  std::string ok = "1";
  for (int i = 0; i < 50; ++i) ok = "(AddInt " + ok + " 1)";
  EXPECT_EQ(render_perf_template("{{ " + ok + " }}", {}, "t"), "51");
}

TEST(PerfTemplate, IntegerLiteralsFollowGosParseIntWithBaseZero) {
  using perf_detail::parse_go_int;
  using perf_detail::parse_go_uint;
  EXPECT_EQ(parse_go_int("42"), 42);
  EXPECT_EQ(parse_go_int("+5"), 5);
  EXPECT_EQ(parse_go_int("-0x10"), -16);
  EXPECT_EQ(parse_go_int("0x1F"), 31);
  EXPECT_EQ(parse_go_int("0X1f"), 31);
  EXPECT_EQ(parse_go_int("0o17"), 15);
  EXPECT_EQ(parse_go_int("0O17"), 15);
  EXPECT_EQ(parse_go_int("017"), 15);  // a leading 0 alone: octal
  EXPECT_EQ(parse_go_int("0"), 0);
  EXPECT_EQ(parse_go_int("0b101"), 5);
  EXPECT_EQ(parse_go_int("1_000_000"), 1000000);
  EXPECT_EQ(parse_go_int("0x_ff"), 255);  // '_' may follow the prefix
  EXPECT_EQ(parse_go_int("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parse_go_int("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(parse_go_uint("18446744073709551615"), std::numeric_limits<uint64_t>::max());
  for (const char* bad : {"", "-", "9223372036854775808", "-9223372036854775809", "_1", "1_", "1__0", "08", "0x", "0b2",
                          "1e3", "1.0", " 1", "0x1p4", "1_0x"})
    EXPECT_FALSE(parse_go_int(bad).has_value()) << bad;
  EXPECT_FALSE(parse_go_uint("-1").has_value());
  EXPECT_FALSE(parse_go_uint("18446744073709551616").has_value());
}

TEST(PerfTemplate, FloatTextFollowsGosParseFloat) {
  using perf_detail::parse_go_float;
  EXPECT_EQ(parse_go_float("1.5"), 1.5);
  EXPECT_EQ(parse_go_float(".5"), 0.5);
  EXPECT_EQ(parse_go_float("-2e3"), -2000);
  EXPECT_EQ(parse_go_float("1_000.5"), 1000.5);
  EXPECT_EQ(parse_go_float("0x1p-2"), 0.25);
  EXPECT_EQ(parse_go_float("0x1.8P1"), 3);
  EXPECT_EQ(parse_go_float("1e-400"), 0);  // underflow is zero in Go, not an error
  EXPECT_EQ(parse_go_float("+Inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(parse_go_float("-infinity"), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(*parse_go_float("NaN")));
  for (const char* bad : {"", "1e", "1e+", "0x1", "0x1.8", "1e400", "1..2", "_1.5", "1_.5", "abc", "+nan", "1.5x"})
    EXPECT_FALSE(parse_go_float(bad).has_value()) << bad;
}

TEST(PerfTemplate, NumberLiteralsPrintAsTextTemplatePrintsThem) {
  EXPECT_EQ(render_perf_template("{{ 0x10 }} {{ 0o17 }} {{ 0b11 }} {{ 1_000 }} {{ 017 }} {{ -0 }} {{ 0x1E }}", {}, "t"),
            "16 15 3 1000 15 0 30");
  EXPECT_EQ(render_perf_template("{{ 1e3 }} {{ 1.5 }} {{ .5 }} {{ 0x1p4 }} {{ 1e6 }}", {}, "t"),
            "1000 1.5 0.5 16 1e+06");
  EXPECT_NE(render_error("{{ 18446744073709551615 }}").find("overflows int"), std::string::npos);
  EXPECT_NE(render_error("{{ 99999999999999999999 }}").find("integer overflow"), std::string::npos);
  EXPECT_NE(render_error("{{ 08 }}").find("integer overflow"), std::string::npos);  // as Go's parser says
  EXPECT_NE(render_error("{{ 1e400 }}").find("illegal number syntax"), std::string::npos);
  EXPECT_NE(render_error("{{ 12abc }}").find("illegal number syntax"), std::string::npos);
}

// Regression (issue 10): Mod of the minimum int by -1 raised SIGFPE, and
// out-of-range float-to-int conversions were undefined behaviour.
TEST(PerfTemplate, ArithmeticHasGosSemanticsWithoutUndefinedBehaviour) {
  EXPECT_EQ(render_perf_template("{{ Mod -9223372036854775808 -1 }}", {}, "t"), "0");
  EXPECT_EQ(render_perf_template("{{ Mod 7 -1 }} {{ Mod -7 3 }} {{ Mod 7.9 2 }}", {}, "t"), "0 -1 1");
  EXPECT_EQ(render_perf_template("{{ SubtractInt -9223372036854775808 0 }}", {}, "t"), "-9223372036854775808");
  EXPECT_EQ(render_perf_template("{{ DivideInt -7 2 }} {{ DivideFloat -7 2 }}", {}, "t"), "-3 -3.5");
  EXPECT_EQ(render_perf_template("{{ AddInt }} {{ MultiplyInt }} {{ AddInt \"2\" 3 }}", {}, "t"), "0 1 5");
  EXPECT_EQ(render_perf_template("{{ MultiplyFloat 1e300 1e300 }} {{ AddFloat \"-inf\" 1 }}", {}, "t"), "+Inf -Inf");

  // Upstream's Int helpers compute in float64: 2^63 does not fit Go's int.
  EXPECT_NE(render_error("{{ AddInt 9223372036854775807 1 }}").find("does not fit Go's int"), std::string::npos);
  EXPECT_NE(render_error("{{ MultiplyInt 1e300 1e300 }}").find("does not fit Go's int"), std::string::npos);
  EXPECT_NE(render_error("{{ Mod 1e19 3 }}").find("does not fit Go's int"), std::string::npos);
  EXPECT_NE(render_error("{{ AddInt \"nan\" 0 }}").find("NaN does not fit"), std::string::npos);
  // Division and remainder by zero: errors naming the template and the call.
  const std::string div = render_error("x\n{{ DivideInt 1 0 }}");
  EXPECT_NE(div.find("t.yaml:2"), std::string::npos) << div;
  EXPECT_NE(div.find("DivideInt: division by zero"), std::string::npos) << div;
  EXPECT_NE(render_error("{{ DivideFloat 1 -0.0 }}").find("division by zero"), std::string::npos);
  EXPECT_NE(render_error("{{ Mod 1 0 }}").find("integer divide by zero"), std::string::npos);
  EXPECT_NE(render_error("{{ Mod 1 0.5 }}").find("integer divide by zero"), std::string::npos);  // int(0.5) is 0
  EXPECT_NE(render_error("{{ AddInt true 1 }}").find("cannot cast true to float64"), std::string::npos);
  EXPECT_NE(render_error("{{ SubtractInt 1 }}").find("wrong number of args for SubtractInt"), std::string::npos);
}

// ---------------------------------------------------------------- end to end

// Issue 20, item 15: a podTemplatePath that is not a Pod (here a 1 MB
// scalar with escape sequences) is named in a line, not echoed whole.
TEST_F(PerfTest, TemplateThatIsNotAPodIsQuotedShortNotEchoedWhole) {
  write("templates/pod.yaml", "\x1b[2J" + std::string(1 << 20, 'x') + "\n");
  const std::string path = write("config.yaml", R"(
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPods
    count: 1
    podTemplatePath: templates/pod.yaml
    collectMetrics: true
  workloads:
  - name: w
)");
  const PerfConfig cfg = load_perf_config(path);
  PerfRunOptions opt;
  opt.backend = "cpu";
  try {
    run_perf_workload(cfg, cfg.test_cases[0], cfg.test_cases[0].workloads[0], opt);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("templates/pod.yaml: expected a Pod object, got \"\\x1b[2Jxxx"), std::string::npos)
        << msg.substr(0, 300);
    EXPECT_NE(msg.find("... (1048580 bytes)"), std::string::npos) << msg.substr(0, 300);
    EXPECT_EQ(msg.find('\x1b'), std::string::npos);
    EXPECT_LT(msg.size(), 400u) << msg.substr(0, 400);
  }
  // Template and config text echoed elsewhere is quoted too.
  EXPECT_NE(render_error("{{ .a.\x1b[2J }}").find("nested fields (\".a.\\x1b[2J"), std::string::npos)
      << render_error("{{ .a.\x1b[2J }}");
  const std::string unknown = load_error("- name: T\n  \"odd\\e[1mkey\": 1\n" + kMinimalOps);
  EXPECT_NE(unknown.find("unknown field \"odd\\x1b[1mkey\""), std::string::npos) << unknown;
}

TEST_F(PerfTest, ResultsJsonHasUpstreamShapeAndOurExtraFigures) {
  const PerfRunResult r = run_named("TinyBasic/10Nodes");
  const std::string json = perf_results_json(r);
  EXPECT_EQ(json.rfind("{\n  \"version\": \"v1\",\n  \"dataItems\": [", 0), 0u) << json.substr(0, 80);
  EXPECT_NE(json.find("\"Metric\": \"SchedulingThroughput\""), std::string::npos);
  EXPECT_NE(json.find("\"Name\": \"TinyBasic/10Nodes/namespace-3\""), std::string::npos);
  EXPECT_NE(json.find("\"unit\": \"pods/s\""), std::string::npos);
  EXPECT_NE(json.find("\"AverageThreshold\": 1"), std::string::npos);
  EXPECT_NE(json.find("\"Metric\": \"bulkscore_ns_per_node_per_pod\""), std::string::npos);
  EXPECT_NE(json.find("\"Backend\": \"cpu\""), std::string::npos);
  EXPECT_NE(json.find("\"Nodes\": \"10\""), std::string::npos);

  // Our own reader finds the throughput and the ns/node/pod figure again.
  const std::vector<PerfCompareRow> rows = parse_perf_results(json, "run.json");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].workload, "TinyBasic/10Nodes/namespace-3");
  EXPECT_EQ(rows[0].backend, "cpu");
  EXPECT_EQ(rows[0].nodes, "10");
  EXPECT_GT(rows[0].average, 0);
  ASSERT_TRUE(rows[0].ns_per_node_per_pod.has_value());
  EXPECT_GT(*rows[0].ns_per_node_per_pod, 0);
  const PerfMeasurement& m = only(r).measurements.at(0);
  EXPECT_DOUBLE_EQ(*rows[0].ns_per_node_per_pod, m.ns_per_node_per_pod);
  EXPECT_NEAR(m.ns_per_node_per_pod, m.elapsed_seconds * 1e9 / (20.0 * 10.0), 1e-6 * m.ns_per_node_per_pod);
  EXPECT_DOUBLE_EQ(m.nodes_scored_percent, 100);  // bulkscore's default profile scores every node
}

TEST_F(PerfTest, PercentageOverrideReportsUpstreamSampling) {
  PerfRunOptions opt;
  opt.percentage_of_nodes_to_score = 0;  // upstream's adaptive default
  const PerfWorkloadResult w = only(run_named("TinyBasic/10Nodes", opt));
  EXPECT_EQ(w.percentage_of_nodes_to_score, 0);
  // Fewer than 100 nodes: all are scored.
  EXPECT_DOUBLE_EQ(w.measurements.at(0).nodes_scored_percent, 100);
}

TEST_F(PerfTest, StopFlagEndsTheRunWithPartialResults) {
  std::atomic<bool> stop{false};
  PerfRunOptions opt;
  opt.stop = &stop;
  opt.on_progress = [&stop](const PerfProgress& p) {
    if (p.measured && p.phase == "measured pods" && p.done == 7) stop = true;
  };
  const PerfRunResult r = run_named("TinyBasic", opt);
  EXPECT_TRUE(r.interrupted);
  ASSERT_EQ(r.workloads.size(), 1u) << "the second workload must not start";
  const PerfWorkloadResult& w = r.workloads[0];
  EXPECT_TRUE(w.interrupted);
  ASSERT_EQ(w.measurements.size(), 1u);
  EXPECT_TRUE(w.measurements[0].interrupted);
  EXPECT_EQ(w.measurements[0].attempted, 7u);
}

TEST_F(PerfTest, CompareTabulatesOurAndUpstreamFiles) {
  const std::string ours = write("ours.json", perf_results_json(run_named("TinyBasic/10Nodes")));
  const std::string upstream = write("upstream.json", R"({
  "version": "v1",
  "dataItems": [
    {"data": {"Average": 712.5, "Perc50": 700, "Perc90": 800, "Perc95": 810, "Perc99": 820},
     "unit": "pods/s",
     "labels": {"Metric": "SchedulingThroughput", "Name": "SchedulingBasic/5000Nodes_10000Pods/namespace-2"}},
    {"data": {"Perc50": 1.5, "Average": 2}, "unit": "ms",
     "labels": {"Metric": "scheduler_framework_extension_point_duration_seconds", "Name": "x"}}
  ]
})");
  const std::string table = perf_compare({ours, upstream});
  EXPECT_EQ(table.rfind("workload", 0), 0u) << table;
  EXPECT_NE(table.find("ns/node/pod"), std::string::npos);
  EXPECT_NE(table.find("TinyBasic/10Nodes/namespace-3"), std::string::npos);
  EXPECT_NE(table.find("SchedulingBasic/5000Nodes_10000Pods/namespace-2"), std::string::npos);
  EXPECT_NE(table.find("712.5"), std::string::npos);
  EXPECT_NE(table.find("820.0"), std::string::npos);
  EXPECT_NE(table.find("upstream.json"), std::string::npos) << "rows from several files name their file";
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 3);  // header + 2 rows

  EXPECT_THROW(perf_compare({write("bad.json", "{\"version\": \"v1\"}")}), InputError);
}

TEST_F(PerfTest, CompareRefusesFilesThatAreNotResultsFiles) {
  auto error = [this](const std::string& text) -> std::string {
    try {
      perf_compare({write("x.json", text)});
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_NE(error(R"({"apiVersion": "v1", "kind": "NodeList", "items": []})").find("x.json: version: missing"),
            std::string::npos);
  EXPECT_NE(error(R"({"version": "v1", "items": []})").find("x.json: dataItems: missing"), std::string::npos);
  EXPECT_NE(error("[1, 2]").find("expected a results object"), std::string::npos);
  EXPECT_NE(error(R"({"version": 1, "dataItems": []})").find("version: expected a string"), std::string::npos);
  EXPECT_NE(error(R"({"version": "v1", "dataItems": {}})").find("dataItems: expected an array"), std::string::npos);
  EXPECT_NE(error(R"({"version": "v1", "dataItems": [1]})").find("x.json: dataItems[0]: expected an object"),
            std::string::npos);
  EXPECT_NE(error(R"({"version": "v1", "dataItems": [{"unit": "s"}]})").find("dataItems[0].data: missing"),
            std::string::npos);
  EXPECT_NE(error(R"({"version": "v1", "dataItems": [{"data": {"Average": "fast"}}]})")
                .find("dataItems[0].data.Average: expected a number, got a string"),
            std::string::npos);
  EXPECT_NE(error(R"({"version": "v1", "dataItems": [{"data": {}, "labels": {"Metric": 3}}]})")
                .find("dataItems[0].labels.Metric: expected a string"),
            std::string::npos);
  EXPECT_EQ(error(R"({"version": "v1", "dataItems": []})"), "(no error)");

  PerfCliOptions o;
  o.compare_files = {write("nodes.json", R"({"kind": "NodeList", "items": []})")};
  testing::internal::CaptureStderr();
  EXPECT_EQ(perf_main(o), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("nodes.json: version: missing"), std::string::npos);
}

TEST_F(PerfTest, PerfMainWritesResultsAndMapsErrorsToExitCodes) {
  PerfCliOptions o;
  o.config_path = kTiny;
  o.workload_filter = "TinyDefaults";
  o.backend = "cpu";
  o.verbosity = 0;
  o.output_path = (dir_ / "out.json").string();
  testing::internal::CaptureStdout();
  EXPECT_EQ(perf_main(o), 0);
  const std::string table = testing::internal::GetCapturedStdout();
  EXPECT_NE(table.find("TinyDefaults/2Nodes/namespace-1"), std::string::npos) << table;
  const std::vector<PerfCompareRow> rows = read_perf_results(o.output_path);
  ASSERT_EQ(rows.size(), 1u);

  PerfCliOptions bad = o;
  bad.workload_filter = "NoSuchWorkload";
  testing::internal::CaptureStderr();
  EXPECT_EQ(perf_main(bad), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("NoSuchWorkload"), std::string::npos);

  PerfCliOptions cmp;
  cmp.compare_files = {o.output_path};
  testing::internal::CaptureStdout();
  EXPECT_EQ(perf_main(cmp), 0);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("TinyDefaults/2Nodes"), std::string::npos);
}

// The results file never replaces what the run reads: the workload file,
// a template, the scheduler configuration (exit 2, checked before the run,
// the file unchanged).
TEST_F(PerfTest, ResultsNeverReplaceAnInput) {
  std::filesystem::copy(kDataDir, dir_ / "data", std::filesystem::copy_options::recursive);
  const std::string config = (dir_ / "data" / "tiny-config.yaml").string();
  for (const std::string& victim :
       {config, (dir_ / "data" / "templates" / "pod-small.yaml").string(),
        (dir_ / "data" / "templates" / "node-small.yaml").string()}) {
    const std::string before = read_file(victim);
    PerfCliOptions o;
    o.config_path = config;
    o.workload_filter = "TinyDefaults";
    o.backend = "cpu";
    o.verbosity = 0;
    o.output_path = victim;
    testing::internal::CaptureStderr();
    EXPECT_EQ(perf_main(o), 2) << victim;
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("would replace"), std::string::npos) << err;
    EXPECT_EQ(read_file(victim), before) << victim;
  }
}

}  // namespace
}  // namespace bulkscore

namespace bulkscore {
namespace {

// The bundled benchmark file stays runnable: every workload parses, and the
// quick (smoke) topology shapes run with upstream's expectations: every
// measured pod placed (spreading, affinity to the zone of earlier blue pods,
// preferred terms) except anti-affinity pods beyond one per host.
TEST(BenchWorkloads, TopologySmokeWorkloadsRunAsUpstreamExpects) {
  const std::string path = std::string(BULKSCORE_SOURCE_DIR) + "/bench/workloads/performance-config.yaml";
  const PerfConfig cfg = load_perf_config(path);
  PerfRunOptions opt;
  opt.backend = "cpu";
  for (const char* name :
       {"TopologySpreading/500Nodes", "PreferredTopologySpreading/500Nodes", "SchedulingPodAntiAffinity/500Nodes",
        "SchedulingPodAffinity/500Nodes", "SchedulingPreferredPodAffinity/500Nodes",
        "SchedulingPreferredPodAntiAffinity/500Nodes", "MixedTopology/500Nodes", "DistinctPods/500Nodes"}) {
    const PerfRunResult r = run_perf(cfg, select_perf_workloads(cfg, name, ""), opt);
    ASSERT_EQ(r.workloads.size(), 1u) << name;
    for (const PerfMeasurement& m : r.workloads[0].measurements) {
      EXPECT_GT(m.attempted, 0u) << name;
      EXPECT_EQ(m.errors, 0u) << name;
      EXPECT_EQ(m.scheduled, m.attempted) << name << ": " << m.unschedulable << " unschedulable";
    }
  }
}

}  // namespace
}  // namespace bulkscore
