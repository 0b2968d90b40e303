// NodeData (bulkscore's own plugin, docs/plugins.md): the embedder's
// per-node data as a Filter and a Score. The rule on hand-made clusters
// (verdicts, reasons, the defaults of nodes without data, each
// normalization with its numbers); the engine's calls (FitError text,
// explain, rank, statuses, all-or-nothing bulk sets, the 63 reasons of a
// column, data following node events and load); the snapshot's columns
// (changes logged per node, a mirror kept exact); the batch cache deciding
// exactly as without it while node data changes between pods; and the
// configuration's args and their errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "host/engine/engine.hpp"
#include "host/snapshot/mirror_sync.hpp"
#include "tests/random_cluster.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;  // NOLINT(google-build-using-namespace): the builders and runners

using Op = Snapshot::NodeDataUpdate::Op;
using Kind = Snapshot::NodeDataKind;

const char* const kPlugin = "NodeData";
const char* const kLicense = "example.com/license";
const char* const kCost = "example.com/cost";
const char* const kExpired = "node(s) had an expired license";
const char* const kMaintenance = "node(s) were in a maintenance window";
constexpr int64_t kGiB = 1024 * kMiB;

Snapshot::NodeDataUpdate pass(uint32_t node) {
  Snapshot::NodeDataUpdate u;
  u.node = node;
  u.op = Op::kPass;
  return u;
}

Snapshot::NodeDataUpdate fail(uint32_t node, const std::string& reason) {
  Snapshot::NodeDataUpdate u;
  u.node = node;
  u.op = Op::kFail;
  u.reason = reason;
  return u;
}

Snapshot::NodeDataUpdate score(uint32_t node, int64_t value) {
  Snapshot::NodeDataUpdate u;
  u.node = node;
  u.op = Op::kScore;
  u.score = value;
  return u;
}

std::vector<Node> four_nodes() {
  return {make_node("a", 4000, 8 * kGiB), make_node("b", 4000, 8 * kGiB), make_node("c", 4000, 8 * kGiB),
          make_node("d", 4000, 8 * kGiB)};
}

ProfileConfig with_args(NodeDataArgs args) {
  ProfileConfig p;
  p.node_data_args = std::move(args);
  return p;
}

NodeDataArgs filter_args(bool default_fails) {
  NodeDataArgs args;
  args.filter_column = kLicense;
  args.filter_default_fails = default_fails;
  return args;
}

NodeDataArgs score_args(NodeDataNormalization normalization, int32_t score_default) {
  NodeDataArgs args;
  args.score_column = kCost;
  args.score_normalization = normalization;
  args.score_default = score_default;
  return args;
}

// a passes, b and c fail (two reasons), d has no data.
void license_data(Snapshot& snap) {
  snap.update_node_data(kLicense, Kind::kFilter, {pass(0), fail(1, kExpired), fail(2, kMaintenance)});
}

const NodeFilterResult kNoLicenseData{Code::UnschedulableAndUnresolvable, {"node(s) had no example.com/license data"}};

// ---- the rule: Filter -------------------------------------------------------------

TEST(NodeDataFilter, VerdictsWithTheirReasonsAndNodesWithoutData) {
  const Pod pod = make_pod("p", {container({{"cpu", 100}})});
  for (const bool default_fails : {false, true}) {
    SCOPED_TRACE(default_fails ? "filterDefault: Fail" : "filterDefault: Pass");
    const FilterRun r =
        run_filter(kPlugin, four_nodes(), {}, pod, with_args(filter_args(default_fails)), nullptr, license_data);
    EXPECT_EQ(r.prefilter, Code::Success);
    EXPECT_EQ(r.nodes.at(0), fits());
    EXPECT_EQ(r.nodes.at(1), rejected(Code::UnschedulableAndUnresolvable, {kExpired}));
    EXPECT_EQ(r.nodes.at(2), rejected(Code::UnschedulableAndUnresolvable, {kMaintenance}));
    EXPECT_EQ(r.nodes.at(3), default_fails ? kNoLicenseData : fits());
  }
}

TEST(NodeDataFilter, AColumnNobodySetIsEveryNodeWithoutData) {
  const Pod pod = make_pod("p", {container({{"cpu", 100}})});
  FilterRun r = run_filter(kPlugin, four_nodes(), {}, pod, with_args(filter_args(false)));
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(r.nodes.at(i), fits()) << i;
  r = run_filter(kPlugin, four_nodes(), {}, pod, with_args(filter_args(true)));
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(r.nodes.at(i), kNoLicenseData) << i;
  // A score column of that name is not a filter column.
  r = run_filter(kPlugin, four_nodes(), {}, pod, with_args(filter_args(true)), nullptr,
                 [](Snapshot& s) { s.update_node_data(kCost, Kind::kScore, {score(0, 10)}); });
  EXPECT_EQ(r.nodes.at(0), kNoLicenseData);
}

TEST(NodeDataFilter, WithoutAFilterColumnEveryNodePasses) {
  const Pod pod = make_pod("p", {container({{"cpu", 100}})});
  const FilterRun r = run_filter(kPlugin, four_nodes(), {}, pod, with_args(score_args(NodeDataNormalization::None, 0)),
                                 nullptr, license_data);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(r.nodes.at(i), fits()) << i;
}

// ---- the rule: Score --------------------------------------------------------------

// a 0, b 20, c 80, d without data (scoreDefault).
void cost_data(Snapshot& snap) {
  snap.update_node_data(kCost, Kind::kScore, {score(0, 0), score(1, 20), score(2, 80)});
}

TEST(NodeDataScore, EachNormalizationWithItsNumbers) {
  const Pod pod = make_pod("p", {container({{"cpu", 100}})});
  struct Case {
    NodeDataNormalization normalization;
    int32_t score_default;
    std::vector<int64_t> raw, normalized;
  };
  const Case cases[] = {
      // None: the raw scores as they are.
      {NodeDataNormalization::None, 10, {0, 20, 80, 10}, {0, 20, 80, 10}},
      // Default: 100 * raw / max (80): 20 -> 25, 10 -> 12 (12.5 truncated).
      {NodeDataNormalization::Default, 10, {0, 20, 80, 10}, {0, 25, 100, 12}},
      // Reverse: 100 - 100 * raw / max.
      {NodeDataNormalization::Reverse, 10, {0, 20, 80, 10}, {100, 75, 0, 88}},
      // A default above every score is the max: 100 * 80 / 90 = 88.
      {NodeDataNormalization::Default, 90, {0, 20, 80, 90}, {0, 22, 88, 100}},
      {NodeDataNormalization::Reverse, 100, {0, 20, 80, 100}, {100, 80, 20, 0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("normalization " + std::to_string(static_cast<int>(c.normalization)) + ", default " +
                 std::to_string(c.score_default));
    const ScoreRun r = run_score(kPlugin, four_nodes(), {}, pod,
                                 with_args(score_args(c.normalization, c.score_default)), nullptr, cost_data);
    ASSERT_FALSE(r.skipped);
    EXPECT_EQ(r.raw, c.raw);
    EXPECT_EQ(r.normalized, c.normalized);
  }
}

TEST(NodeDataScore, AllZeroScoresAndAColumnNobodySet) {
  const Pod pod = make_pod("p", {container({{"cpu", 100}})});
  const auto zeros = [](Snapshot& s) {
    s.update_node_data(kCost, Kind::kScore, {score(0, 0), score(1, 0), score(2, 0), score(3, 0)});
  };
  // Upstream's DefaultNormalizeScore with a max of 0: 0 stays 0, reversed 100.
  ScoreRun r = run_score(kPlugin, four_nodes(), {}, pod, with_args(score_args(NodeDataNormalization::Default, 0)),
                         nullptr, zeros);
  EXPECT_EQ(r.normalized, std::vector<int64_t>(4, 0));
  r = run_score(kPlugin, four_nodes(), {}, pod, with_args(score_args(NodeDataNormalization::Reverse, 0)), nullptr,
                zeros);
  EXPECT_EQ(r.normalized, std::vector<int64_t>(4, 100));
  // No column of that name: every node has the default.
  r = run_score(kPlugin, four_nodes(), {}, pod, with_args(score_args(NodeDataNormalization::None, 33)));
  EXPECT_EQ(r.raw, std::vector<int64_t>(4, 33));
  EXPECT_EQ(r.normalized, std::vector<int64_t>(4, 33));
}

TEST(NodeDataScore, WithoutAScoreColumnTheScoreIsSkipped) {
  const Pod pod = make_pod("p", {container({{"cpu", 100}})});
  const ScoreRun r = run_score(kPlugin, four_nodes(), {}, pod, with_args(filter_args(false)), nullptr, cost_data);
  EXPECT_TRUE(r.skipped);
}

// ---- the engine ----------------------------------------------------------------------

const char* const kEngineConfig = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled: [{name: NodeData}]
    score:
      disabled: [{name: '*'}]
      enabled: [{name: NodeData, weight: 2}]
  pluginConfig:
  - name: NodeData
    args:
      filterColumn: example.com/license
      filterDefault: Fail
      scoreColumn: example.com/cost
      scoreNormalization: Reverse
      scoreDefault: 50
)";

Cluster plain_cluster(const std::vector<std::string>& names) {
  Cluster c;
  for (const std::string& n : names) c.nodes.push_back(make_node(n, 4000, 8 * kGiB));
  return c;
}

Engine make_engine(const char* config = kEngineConfig) {
  EngineOptions options;
  options.backend = "cpu";
  options.tie_break = TieBreak::First;
  return Engine(parse_scheduler_config(config, "test config"), options);
}

void expect_ok(const EventStatus& s) { EXPECT_TRUE(s.ok()) << event_code_name(s.code) << ": " << s.message; }

TEST(NodeDataEngine, FitErrorAndExplainShowTheReasons) {
  Engine engine = make_engine();
  engine.load(plain_cluster({"n1", "n2", "n3", "n4"}));
  expect_ok(engine.set_node_filters(kLicense,
                                    {{"n1", false, kExpired}, {"n2", false, kExpired}, {"n3", false, kMaintenance}}));
  const Pod pod = make_pod("p", {container({{"cpu", 100}})});
  const ScheduleResult r = engine.peek(pod);
  EXPECT_EQ(r.node, -1);
  EXPECT_EQ(r.code, Code::Unschedulable);  // a FitError, whatever the Filter codes
  EXPECT_EQ(r.message,
            "0/4 nodes are available: 1 node(s) had no example.com/license data, 1 node(s) were in a maintenance "
            "window, 2 node(s) had an expired license.");
  const Explanation ex = engine.explain(pod);
  ASSERT_EQ(ex.nodes.size(), 4u);
  EXPECT_EQ(ex.nodes[0].filter_plugin, "NodeData");
  EXPECT_EQ(ex.nodes[0].filter_code, Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(ex.nodes[0].filter_reasons, std::vector<std::string>{kExpired});
  EXPECT_EQ(ex.nodes[2].filter_reasons, std::vector<std::string>{kMaintenance});
  EXPECT_EQ(ex.nodes[3].filter_reasons, std::vector<std::string>{"node(s) had no example.com/license data"});
  const Ranking rank = engine.rank(pod, 4);
  ASSERT_EQ(rank.rejections.size(), 3u);
  EXPECT_EQ(rank.rejections[0].plugin, "NodeData");
  EXPECT_EQ(rank.rejections[0].reason, kExpired);
  EXPECT_EQ(rank.rejections[0].nodes, 2u);

  // The default reason, and a node passing again.
  expect_ok(engine.set_node_filter(kLicense, "n4", false));
  expect_ok(engine.set_node_filter(kLicense, "n2", true));
  const ScheduleResult placed = engine.peek(pod);
  EXPECT_EQ(placed.node_name, "n2");
  EXPECT_EQ(engine.explain(pod).nodes[3].filter_reasons,
            std::vector<std::string>{"node(s) didn't pass example.com/license"});
}

TEST(NodeDataEngine, ScoresDecideWhereThePodGoes) {
  Engine engine = make_engine();
  engine.load(plain_cluster({"a", "b", "c"}));
  expect_ok(engine.set_node_filters(kLicense, {{"a", true, ""}, {"b", true, ""}, {"c", true, ""}}));
  // Reverse over a 80, b 20, c without data (50): a 0, b 100 - 25 = 75,
  // c 100 - 62 = 38; weight 2.
  expect_ok(engine.set_node_scores(kCost, {{"a", 80}, {"b", 20}}));
  const Pod pod = make_pod("p", {container({{"cpu", 100}})});
  const Ranking rank = engine.rank(pod, 3);
  ASSERT_EQ(rank.score_plugins, std::vector<std::string>{"NodeData"});
  ASSERT_EQ(rank.nodes.size(), 3u);
  EXPECT_EQ(rank.nodes[0].name, "b");
  EXPECT_EQ(rank.nodes[0].raw, std::vector<int64_t>{20});
  EXPECT_EQ(rank.nodes[0].total, 150);
  EXPECT_EQ(rank.nodes[1].name, "c");
  EXPECT_EQ(rank.nodes[1].total, 76);
  EXPECT_EQ(rank.nodes[2].name, "a");
  EXPECT_EQ(rank.nodes[2].total, 0);
  ScheduleResult r = engine.schedule(pod);
  EXPECT_EQ(r.node_name, "b");
  EXPECT_EQ(r.score, 150);
  // b turns expensive: the next pod goes to c.
  expect_ok(engine.set_node_score(kCost, "b", 100));
  r = engine.schedule(make_pod("q", {container({{"cpu", 100}})}));
  EXPECT_EQ(r.node_name, "c");
  const Explanation ex = engine.explain(make_pod("r", {container({{"cpu", 100}})}));
  ASSERT_EQ(ex.nodes[2].scores.size(), 1u);
  EXPECT_EQ(ex.nodes[2].scores[0].plugin, "NodeData");
  EXPECT_EQ(ex.nodes[2].scores[0].raw, 50);
  EXPECT_EQ(ex.nodes[2].scores[0].normalized, 50);
  EXPECT_EQ(ex.nodes[2].scores[0].weighted, 100);
}

TEST(NodeDataEngine, StatusesAndAllOrNothingUpdates) {
  Engine engine = make_engine();
  engine.load(plain_cluster({"a", "b"}));
  const Snapshot& snap = engine.snapshot();
  EXPECT_EQ(engine.set_node_score(kCost, "nope", 5).code, EventCode::kNotFound);
  EventStatus s = engine.set_node_score(kCost, "a", 101);
  EXPECT_EQ(s.code, EventCode::kInvalid);
  EXPECT_NE(s.message.find("must be in the range [0, 100], got 101"), std::string::npos) << s.message;
  EXPECT_EQ(engine.set_node_score(kCost, "a", -1).code, EventCode::kInvalid);
  // A refused update makes no column and changes no node.
  EXPECT_EQ(snap.find_node_data_column(kCost), -1);
  EXPECT_EQ(engine.set_node_scores(kCost, {{"a", 10}, {"b", 200}}).code, EventCode::kInvalid);
  EXPECT_EQ(engine.set_node_scores(kCost, {{"a", 10}, {"nope", 20}}).code, EventCode::kNotFound);
  EXPECT_EQ(snap.find_node_data_column(kCost), -1);
  expect_ok(engine.set_node_scores(kCost, {{"a", 10}}));
  const auto cost = static_cast<uint32_t>(snap.find_node_data_column(kCost));
  s = engine.set_node_scores(kCost, {{"b", 20}, {"a", 30}, {"b", 40}});
  EXPECT_EQ(s.code, EventCode::kInvalid);
  EXPECT_NE(s.message.find("\"b\" is given twice"), std::string::npos) << s.message;
  EXPECT_EQ(snap.node_data_entry(cost, 0), 10);
  EXPECT_EQ(snap.node_data_entry(cost, 1), kNodeDataNone);
  // One name space: a score column takes no verdicts.
  s = engine.set_node_filter(kCost, "a", true);
  EXPECT_EQ(s.code, EventCode::kInvalid);
  EXPECT_NE(s.message.find("is a score column, not a filter column"), std::string::npos) << s.message;
  s = engine.set_node_filter("Example Dot Com/license!", "a", true);
  EXPECT_EQ(s.code, EventCode::kInvalid);
  EXPECT_EQ(engine.set_node_filter("", "a", true).code, EventCode::kInvalid);
  s = engine.set_node_filter(kLicense, "a", false, "node(s) were\nbroken");
  EXPECT_EQ(s.code, EventCode::kInvalid);
  EXPECT_NE(s.message.find("without control characters"), std::string::npos) << s.message;
  EXPECT_EQ(engine.set_node_filter(kLicense, "a", false, std::string(257, 'x')).code, EventCode::kInvalid);
  EXPECT_EQ(engine.set_node_filter(kLicense, "a", false, "\xff\xfe").code, EventCode::kInvalid);
  EXPECT_EQ(snap.find_node_data_column(kLicense), -1);
  // Clears.
  EXPECT_EQ(engine.clear_node_data(kLicense).code, EventCode::kNotFound);
  EXPECT_EQ(engine.clear_node_data(kLicense, "a").code, EventCode::kNotFound);
  EXPECT_EQ(engine.clear_node_data(kCost, "nope").code, EventCode::kNotFound);
  expect_ok(engine.clear_node_data(kCost, "b"));  // no data: nothing to do, fine
  expect_ok(engine.clear_node_data(kCost, "a"));
  EXPECT_EQ(snap.node_data_entry(cost, 0), kNodeDataNone);
  expect_ok(engine.set_node_scores(kCost, {{"a", 0}, {"b", 100}}));
  expect_ok(engine.clear_node_data(kCost));
  EXPECT_EQ(snap.node_data_entry(cost, 0), kNodeDataNone);
  EXPECT_EQ(snap.node_data_entry(cost, 1), kNodeDataNone);
  EXPECT_EQ(snap.find_node_data_column(kCost), static_cast<int32_t>(cost)) << "an emptied column stays";
}

TEST(NodeDataEngine, AColumnHoldsSixtyThreeReasonsAtOnce) {
  std::vector<std::string> names;
  for (int i = 0; i < 70; ++i) names.push_back("n" + std::to_string(i));
  Engine engine = make_engine();
  engine.load(plain_cluster(names));
  const auto reason = [](int i) { return "node(s) failed check " + std::to_string(i); };
  std::vector<NodeFilterValue> values;
  for (int i = 0; i < 63; ++i) values.push_back({names[static_cast<size_t>(i)], false, reason(i)});
  expect_ok(engine.set_node_filters(kLicense, values));
  // A 64th text is refused, whole; reusing one of the 63 is fine.
  EventStatus s = engine.set_node_filters(kLicense, {{"n63", false, reason(63)}, {"n64", false, reason(5)}});
  EXPECT_EQ(s.code, EventCode::kInvalid);
  EXPECT_NE(s.message.find("more than 63 distinct reasons"), std::string::npos) << s.message;
  const Snapshot& snap = engine.snapshot();
  const auto c = static_cast<uint32_t>(snap.find_node_data_column(kLicense));
  EXPECT_EQ(snap.node_data_entry(c, 64), kNodeDataNone);
  expect_ok(engine.set_node_filter(kLicense, "n64", false, reason(5)));
  EXPECT_EQ(snap.node_data_entry(c, 64), snap.node_data_entry(c, 5));
  // n0 passing frees check 0's id; n5 and n64 still hold check 5's.
  expect_ok(engine.set_node_filter(kLicense, "n0", true));
  expect_ok(engine.set_node_filter(kLicense, "n63", false, reason(63)));
  expect_ok(engine.set_node_filter(kLicense, "n5", true));
  EXPECT_EQ(engine.set_node_filter(kLicense, "n65", false, reason(65)).code, EventCode::kInvalid);
  // Replacing the last holder of a text frees its id in the same call.
  expect_ok(engine.set_node_filters(kLicense, {{"n1", false, reason(100)}}));
  // The texts FitError shows are each node's own.
  const Pod pod = make_pod("p", {container({{"cpu", 100}})});
  const Explanation ex = engine.explain(pod);
  EXPECT_EQ(ex.nodes[1].filter_reasons, std::vector<std::string>{reason(100)});
  EXPECT_EQ(ex.nodes[2].filter_reasons, std::vector<std::string>{reason(2)});
  EXPECT_EQ(ex.nodes[63].filter_reasons, std::vector<std::string>{reason(63)});
  EXPECT_EQ(ex.nodes[64].filter_reasons, std::vector<std::string>{reason(5)});
  EXPECT_EQ(ex.nodes[0].filter_plugin, "") << "n0 passes";
  EXPECT_EQ(ex.nodes[5].filter_plugin, "") << "n5 passes NodeData's filter";
}

TEST(NodeDataEngine, DataFollowsNodeEventsAndLoad) {
  Engine engine = make_engine();
  engine.load(plain_cluster({"a", "b"}));
  const Snapshot& snap = engine.snapshot();
  expect_ok(engine.set_node_filter(kLicense, "b", false, kExpired));
  expect_ok(engine.set_node_score(kCost, "a", 10));
  const auto entry = [&](const char* column, const char* node) {
    return snap.node_data_entry(static_cast<uint32_t>(snap.find_node_data_column(column)),
                                static_cast<uint32_t>(snap.node_index(node)));
  };
  const uint8_t b_fails = entry(kLicense, "b");
  EXPECT_GE(b_fails, 1);
  // Updates keep it: in place (capacity), and structural (labels).
  Node b = make_node("b", 2000, 8 * kGiB);
  expect_ok(engine.update_node(b));
  EXPECT_EQ(entry(kLicense, "b"), b_fails);
  b.labels["pool"] = "blue";
  expect_ok(engine.update_node(b));
  EXPECT_EQ(entry(kLicense, "b"), b_fails);
  EXPECT_EQ(snap.node_data_reason(static_cast<uint32_t>(snap.find_node_data_column(kLicense)), b_fails), kExpired);
  // A new node has none; a removed node takes its data away, also when it comes back.
  expect_ok(engine.add_node(make_node("c", 4000, 8 * kGiB)));
  EXPECT_EQ(entry(kLicense, "c"), kNodeDataNone);
  EXPECT_EQ(entry(kCost, "c"), kNodeDataNone);
  expect_ok(engine.remove_node("a"));
  EXPECT_EQ(entry(kLicense, "b"), b_fails) << "b moved down one index with its data";
  expect_ok(engine.add_node(make_node("a", 4000, 8 * kGiB)));
  EXPECT_EQ(entry(kCost, "a"), kNodeDataNone);
  expect_ok(engine.set_node_score(kCost, "a", 70));
  // load keeps the data of the nodes loaded again, by name.
  engine.load(plain_cluster({"d", "a", "e"}));
  EXPECT_EQ(entry(kCost, "a"), 70);
  EXPECT_EQ(entry(kCost, "d"), kNodeDataNone);
  EXPECT_EQ(snap.node_index("b"), -1);
  const Pod pod = make_pod("p", {container({{"cpu", 100}})});
  // filterDefault Fail: no node has license data now.
  EXPECT_EQ(engine.peek(pod).message, "0/3 nodes are available: 3 node(s) had no example.com/license data.");
}

// ---- the snapshot's columns -------------------------------------------------------------

// A copy of every column kept by MirrorSync's plans, as the CUDA backend's
// mirror keeps it.
struct HostMirror {
  MirrorSync sync;
  std::vector<std::vector<uint8_t>> copies;
  size_t ranges = 0, whole = 0;

  void update(const Snapshot& s) {
    const auto cols = s.columns();
    const MirrorSync::Plan plan = sync.plan(s, cols);
    const auto copy_whole = [&](uint32_t c) {
      const auto* p = static_cast<const uint8_t*>(cols[c].data);
      copies[c].assign(p, p + cols[c].bytes);
    };
    if (plan.everything) {
      copies.assign(cols.size(), {});
      for (uint32_t c = 0; c < cols.size(); ++c) copy_whole(c);
    } else {
      for (uint32_t c : plan.whole) copy_whole(c);
      whole += plan.whole.size();
      for (const auto& t : plan.tails) {
        copies[t.column].resize(cols[t.column].bytes);
        std::memcpy(copies[t.column].data() + t.from, static_cast<const uint8_t*>(cols[t.column].data) + t.from,
                    cols[t.column].bytes - t.from);
      }
      for (const auto& r : plan.ranges) {
        const size_t eb = cols[r.column].element_bytes;
        for (uint32_t i = 0; i < r.count; ++i) {
          const size_t at = (r.first + i * r.stride) * eb;
          std::memcpy(copies[r.column].data() + at, static_cast<const uint8_t*>(cols[r.column].data) + at, eb);
        }
      }
      ranges += plan.ranges.size();
    }
    sync.synced(s, cols);
  }

  std::string first_difference(const Snapshot& s) const {
    const auto cols = s.columns();
    for (size_t c = 0; c < cols.size(); ++c) {
      const auto* p = static_cast<const uint8_t*>(cols[c].data);
      if (copies.at(c) != std::vector<uint8_t>(p, p + cols[c].bytes)) return cols[c].name;
    }
    return "";
  }
};

size_t column_index(const Snapshot& s, const char* name) {
  const auto cols = s.columns();
  for (size_t c = 0; c < cols.size(); ++c)
    if (std::strcmp(cols[c].name, name) == 0) return c;
  return cols.size();
}

TEST(NodeDataSnapshot, ChangesAreLoggedPerNodeAndANewColumnIsNotStructural) {
  // Enough nodes that a few nodes' ranges cost less than the columns.
  std::vector<Node> nodes;
  for (int i = 0; i < 200; ++i) nodes.push_back(make_node("n" + std::to_string(i), 4000, 8 * kGiB));
  Snapshot snap = Snapshot::build(nodes, {});
  HostMirror mirror;
  mirror.update(snap);
  const uint64_t version = snap.structure_version();
  const size_t col = column_index(snap, "node_score_data");
  ASSERT_LT(col, snap.columns().size());
  EXPECT_EQ(snap.columns()[col].kind, Snapshot::ColumnKind::kNodeRows);
  const uint64_t layout = snap.columns()[col].layout_version;

  snap.update_node_data(kCost, Kind::kScore, {score(2, 40)});
  EXPECT_EQ(snap.structure_version(), version);
  EXPECT_EQ(snap.mutation_log(), std::vector<uint32_t>{2});
  EXPECT_NE(snap.columns()[col].layout_version, layout) << "a new row: the column is laid out anew";
  mirror.update(snap);
  EXPECT_EQ(mirror.first_difference(snap), "");

  // The same value again changes nothing; a new one logs its node only,
  // and the mirror sends ranges, not the column.
  snap.update_node_data(kCost, Kind::kScore, {score(2, 40)});
  EXPECT_EQ(snap.mutation_log().size(), 1u);
  const size_t whole_before = mirror.whole;
  snap.update_node_data(kCost, Kind::kScore, {score(2, 41), score(0, 7)});
  EXPECT_EQ(snap.mutation_log(), (std::vector<uint32_t>{2, 2, 0}));
  mirror.update(snap);
  EXPECT_EQ(mirror.whole, whole_before);
  EXPECT_GT(mirror.ranges, 0u);
  EXPECT_EQ(mirror.first_difference(snap), "");
  EXPECT_EQ(snap.view().node_score_entry(0, 2), 41);
  EXPECT_EQ(snap.view().node_score_entry(0, 1), kNodeDataNone);
}

// Scores refreshed in bulk over and over: the log stays bounded (a change
// past the bound is structural instead), and a mirror stays exact.
TEST(NodeDataSnapshot, BulkRefreshesKeepTheMutationLogBounded) {
  Snapshot snap = Snapshot::build(four_nodes(), {});
  HostMirror mirror;
  mirror.update(snap);
  const uint64_t version = snap.structure_version();
  size_t longest = 0;
  for (int64_t i = 0; i < 20000; ++i) {
    snap.update_node_data(kCost, Kind::kScore,
                          {score(0, i % 101), score(1, (i + 1) % 101), score(2, (i + 2) % 101), score(3, (i + 3) % 101)});
    longest = std::max(longest, snap.mutation_log().size());
    if (i % 997 == 0) {
      mirror.update(snap);
      ASSERT_EQ(mirror.first_difference(snap), "") << "refresh " << i;
    }
  }
  EXPECT_LE(longest, (size_t(1) << 16) + 4);
  EXPECT_NE(snap.structure_version(), version) << "80,000 changes: past the bound at least once";
  mirror.update(snap);
  EXPECT_EQ(mirror.first_difference(snap), "");
}

TEST(NodeDataSnapshot, RandomChangesKeepAMirrorExact) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0xda7a11ull, seed);
    Cluster cluster = random_cluster(rng, ClusterShape{40, 0, 0.05}, scheduler_names());
    Snapshot snap = Snapshot::build(cluster.nodes, cluster.running_pods);
    HostMirror mirror;
    uint32_t next_node = 1000;
    for (int step = 0; step < 200; ++step) {
      const uint64_t what = rng.below(10);
      if (what < 7 || snap.num_nodes() < 3) {
        apply_node_data(snap, random_node_data(rng, snap.num_nodes(), rng.chance(0.1) ? snap.num_nodes() : 3));
      } else if (what < 8) {
        snap.add_node(random_node(rng, next_node++, false));
      } else if (what < 9) {
        snap.remove_node(snap.node_name(static_cast<uint32_t>(rng.below(snap.num_nodes()))));
      } else {
        Node n = random_node(rng, 0, false);
        n.name = snap.node_name(static_cast<uint32_t>(rng.below(snap.num_nodes())));
        snap.update_node(n);
      }
      if (rng.chance(0.5)) {
        mirror.update(snap);
        ASSERT_EQ(mirror.first_difference(snap), "") << "step " << step;
      }
    }
    // The reasons' uses match the entries that hold them: every reason in
    // use can still be set, and no id is held by a text nobody uses.
    for (uint32_t c = 0; c < snap.num_node_data_columns(); ++c) {
      if (snap.node_data_column_kind(c) != Kind::kFilter) continue;
      for (uint32_t n = 0; n < snap.num_nodes(); ++n) {
        const uint8_t e = snap.node_data_entry(c, n);
        if (e >= 1 && e <= kMaxNodeDataReasons) {
          EXPECT_FALSE(snap.node_data_reason(c, e).empty());
        }
      }
    }
  }
}

// ---- the batch cache ------------------------------------------------------------------------

std::string describe(const ScheduleResult& r) {
  return "{node \"" + r.node_name + "\", score " + std::to_string(r.score) + ", feasible " +
         std::to_string(r.feasible_nodes) + ", message \"" + r.message + "\"}";
}

// random_node_data's change through the engine's calls, by node name.
void apply_node_data_to(Engine& engine, const RandomNodeData& d) {
  const Snapshot& snap = engine.snapshot();
  const bool known = snap.find_node_data_column(d.column) >= 0;
  if (d.clear_column) {
    const EventStatus s = engine.clear_node_data(d.column);
    EXPECT_EQ(s.code, known ? EventCode::kOk : EventCode::kNotFound) << s.message;
    return;
  }
  std::vector<NodeFilterValue> filters;
  std::vector<NodeScoreValue> scores;
  std::vector<std::string> clears;
  for (const Snapshot::NodeDataUpdate& u : d.updates) {
    const std::string& name = snap.node_name(u.node);
    if (u.op == Op::kClear)
      clears.push_back(name);
    else if (u.op == Op::kScore)
      scores.push_back({name, u.score});
    else
      filters.push_back({name, u.op == Op::kPass, u.reason});
  }
  if (!filters.empty()) expect_ok(engine.set_node_filters(d.column, filters));
  if (!scores.empty()) expect_ok(engine.set_node_scores(d.column, scores));
  for (const std::string& name : clears) {
    const EventStatus s = engine.clear_node_data(d.column, name);
    EXPECT_EQ(s.code, snap.find_node_data_column(d.column) >= 0 ? EventCode::kOk : EventCode::kNotFound) << s.message;
  }
}

// Node data changes between pods (sets, bulk sets, clears) and now and
// then a node event: the batch cache must decide every pod as a full
// evaluation does.
std::vector<ScheduleResult> run_with_node_data(const SchedulerConfig& config, const Cluster& cluster,
                                               const std::vector<Pod>& pods, Batching batching, uint64_t seed,
                                               BatchCounters* counters) {
  EngineOptions options;
  options.backend = "cpu";
  options.seed = parity_seed();
  options.batching = batching;
  Engine engine(config, options);
  engine.load(cluster);
  SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0xda7a2ull, seed);
  for (int k = 0; k < 4; ++k) apply_node_data_to(engine, random_node_data(rng, engine.snapshot().num_nodes(), 1000));
  std::vector<ScheduleResult> out;
  uint32_t next_node = 5000;
  for (const Pod& p : pods) {
    if (rng.chance(0.35)) {
      const uint32_t n = engine.snapshot().num_nodes();
      apply_node_data_to(engine, random_node_data(rng, n, rng.chance(0.1) ? n : 3));
    }
    if (rng.chance(0.03)) {
      const EventStatus s = engine.add_node(random_node(rng, next_node++, false));
      EXPECT_TRUE(s.ok()) << s.message;
    }
    if (rng.chance(0.03) && engine.snapshot().num_nodes() > 2) {
      const std::string name =
          engine.snapshot().node_name(static_cast<uint32_t>(rng.below(engine.snapshot().num_nodes())));
      EXPECT_TRUE(engine.remove_node(name).ok());
    }
    out.push_back(engine.schedule(p));
  }
  if (counters) *counters = engine.batch_counters();
  return out;
}

TEST(NodeDataBatchCache, RandomUpdatesBetweenPodsDecideExactlyAsUnbatched) {
  SchedulerConfig whole = node_data_parity_config();
  for (auto& p : whole.profiles) p.percentage_of_nodes_to_score = 100;
  uint64_t hits = 0, attempts = 0, rescored = 0;
  for (uint32_t seed = 0; seed < 24; ++seed) {
    SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0xda7a3ull, seed);
    const SchedulerConfig& config = seed % 2 ? whole : parity_config();
    std::vector<std::string> schedulers;
    for (const auto& p : config.profiles) schedulers.push_back(p.scheduler_name);
    const uint32_t nodes = 2 + static_cast<uint32_t>(rng.below(seed % 4 == 3 ? 300 : 80));
    const Cluster cluster = random_cluster(rng, ClusterShape{nodes, 0, 0.05}, schedulers);
    // Runs of one pod template, so that the cache has something to answer.
    std::vector<Pod> pods;
    while (pods.size() < 120) {
      const Pod t = random_pending_pod(rng, static_cast<uint32_t>(pods.size()), nodes, schedulers);
      const uint32_t run = 1 + static_cast<uint32_t>(rng.below(20));
      for (uint32_t r = 0; r < run; ++r) {
        Pod p = t;
        p.name = t.name + "-" + std::to_string(pods.size());
        p.uid = "uid-" + std::to_string(pods.size());
        pods.push_back(std::move(p));
      }
    }
    BatchCounters counters;
    const auto off = run_with_node_data(config, cluster, pods, Batching::Off, seed, nullptr);
    const auto exact = run_with_node_data(config, cluster, pods, Batching::Exact, seed, &counters);
    ASSERT_EQ(off.size(), exact.size());
    for (size_t i = 0; i < off.size(); ++i) {
      const bool same = off[i].node == exact[i].node && off[i].node_name == exact[i].node_name &&
                        off[i].score == exact[i].score && off[i].feasible_nodes == exact[i].feasible_nodes &&
                        off[i].code == exact[i].code && off[i].message == exact[i].message;
      ASSERT_TRUE(same) << "seed " << seed << " (parity seed " << parity_seed() << "), " << nodes << " nodes, "
                        << (seed % 2 ? "NodeData in every profile" : "parity config") << ": first difference at pod "
                        << i << " (" << pods[i].key() << ", scheduler " << pods[i].scheduler_name << "): off "
                        << describe(off[i]) << ", exact " << describe(exact[i]);
    }
    hits += counters.hint_used;
    attempts += counters.hint_used + counters.no_hint;
    rescored += counters.rescored_nodes;
  }
  std::printf("[ node data ] %llu of %llu pods answered from the cache, %llu node scores recomputed\n",
              static_cast<unsigned long long>(hits), static_cast<unsigned long long>(attempts),
              static_cast<unsigned long long>(rescored));
  EXPECT_GT(hits, attempts / 10) << "the cache must answer some pods between node data changes";
  EXPECT_GT(rescored, 0u);
}

// ---- the configuration ------------------------------------------------------------------------

std::string config_with(const std::string& plugins, const std::string& args) {
  std::string c =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
      "- schedulerName: default-scheduler\n";
  if (!plugins.empty()) c += "  plugins:\n" + plugins;
  if (!args.empty()) c += "  pluginConfig:\n  - name: NodeData\n    args:\n" + args;
  return c;
}

const char* const kMultiPoint = "    multiPoint:\n      enabled:\n      - name: NodeData\n";

std::string config_error(const std::string& yaml) {
  try {
    parse_scheduler_config(yaml, "sched.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(NodeDataConfig, EnabledThroughMultiPointWithItsArgs) {
  const SchedulerConfig c = parse_scheduler_config(
      config_with(kMultiPoint,
                  "      filterColumn: example.com/license\n      filterDefault: Fail\n"
                  "      scoreColumn: cost\n      scoreNormalization: Reverse\n      scoreDefault: 25\n"),
      "sched.yaml");
  const ProfileConfig& p = c.profiles.at(0);
  EXPECT_NE(std::find(p.filter.begin(), p.filter.end(), "NodeData"), p.filter.end());
  EXPECT_TRUE(std::any_of(p.score.begin(), p.score.end(),
                          [](const PluginEntry& e) { return e.name == "NodeData" && e.weight == 1; }));
  EXPECT_EQ(std::find(p.pre_filter.begin(), p.pre_filter.end(), "NodeData"), p.pre_filter.end());
  EXPECT_EQ(p.node_data_args.filter_column, "example.com/license");
  EXPECT_TRUE(p.node_data_args.filter_default_fails);
  EXPECT_EQ(p.node_data_args.score_column, "cost");
  EXPECT_EQ(p.node_data_args.score_normalization, NodeDataNormalization::Reverse);
  EXPECT_EQ(p.node_data_args.score_default, 25);
}

TEST(NodeDataConfig, DefaultsAndOffByDefault) {
  const SchedulerConfig c = parse_scheduler_config(config_with(kMultiPoint, "      scoreColumn: cost\n"), "sched.yaml");
  const NodeDataArgs& a = c.profiles.at(0).node_data_args;
  EXPECT_EQ(a.filter_column, "");
  EXPECT_FALSE(a.filter_default_fails);
  EXPECT_EQ(a.score_normalization, NodeDataNormalization::None);
  EXPECT_EQ(a.score_default, 0);
  const SchedulerConfig defaults = default_scheduler_config();
  const ProfileConfig& d = defaults.profiles.at(0);
  EXPECT_EQ(std::find(d.filter.begin(), d.filter.end(), "NodeData"), d.filter.end());
  // Args for a plugin no profile enables are still checked, but need no column.
  EXPECT_EQ(config_error(config_with("", "      scoreDefault: 3\n")), "");
}

TEST(NodeDataConfig, ErrorsNameTheField) {
  struct Case {
    std::string plugins, args, want;
  };
  const std::string at = "sched.yaml: profiles[0].pluginConfig[0] (NodeData): ";
  const Case cases[] = {
      {kMultiPoint, "      filterColumn: \"\"\n", at + "filterColumn: must not be empty"},
      {kMultiPoint, "      filterColumn: \"bad name!\"\n", at + "filterColumn: \"bad name!\": "},
      {kMultiPoint, "      scoreColumn: 7\n", at + "scoreColumn: "},
      {kMultiPoint, "      filterColumn: a\n      filterDefault: fail\n",
       at + "filterDefault: must be \"Pass\" or \"Fail\", got \"fail\""},
      {kMultiPoint, "      scoreColumn: a\n      scoreNormalization: MinMax\n",
       at + "scoreNormalization: must be \"None\", \"Default\" or \"Reverse\", got \"MinMax\""},
      {kMultiPoint, "      scoreColumn: a\n      scoreDefault: 101\n",
       at + "scoreDefault: must be in the range [0, 100], got 101"},
      {kMultiPoint, "      scoreColumn: a\n      scoreDefault: \"5\"\n", at + "scoreDefault: "},
      {kMultiPoint, "      filterColumn: a\n      scoreColumn: a\n", at + "scoreColumn: must differ from filterColumn"},
      {kMultiPoint, "      filterColumns: [a]\n", at + ""},
      {kMultiPoint, "      filterDefault: Fail\n", at + "NodeData is enabled but reads no column"},
      {kMultiPoint, "", "sched.yaml: profiles[0] (NodeData): NodeData is enabled but reads no column"},
      {"    filter:\n      enabled:\n      - name: NodeData\n", "",
       "sched.yaml: profiles[0] (NodeData): NodeData is enabled but reads no column"},
  };
  for (const Case& c : cases) {
    const std::string got = config_error(config_with(c.plugins, c.args));
    SCOPED_TRACE(c.args);
    ASSERT_FALSE(got.empty()) << "accepted";
    EXPECT_EQ(got.rfind(c.want, 0), 0u) << got;
  }
}

}  // namespace
}  // namespace bulkscore
