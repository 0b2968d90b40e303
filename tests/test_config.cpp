// KubeSchedulerConfiguration parsing: defaults, plugin-set merging and
// MultiPoint expansion as kube-scheduler v1.35.4 does them, Score weights,
// plugin args validation, and error messages.
//
// Expected plugin lists are derived by hand from upstream's rules and its own
// tests: pkg/scheduler/apis/config/v1/default_plugins_test.go
// (TestMergePlugins) and pkg/scheduler/framework/runtime/framework_test.go
// (TestNewFrameworkMultiPointExpansion). Those tests use fake plugins that
// implement every extension point; here each case is restated with real
// plugins whose extension points are known (k8s-semantics.md §1.1).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "host/common.hpp"
#include "host/input/config.hpp"

namespace bulkscore {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char* const kOrigin = "sched.yaml";

std::string with_header(const std::string& body) {
  return "apiVersion: kubescheduler.config.k8s.io/v1\n"
         "kind: KubeSchedulerConfiguration\n" +
         body;
}

SchedulerConfig parse(const std::string& body) { return parse_scheduler_config(with_header(body), kOrigin); }

ProfileConfig parse_profile(const std::string& profile_body) {
  SchedulerConfig c = parse("profiles:\n- schedulerName: s\n" + profile_body);
  EXPECT_EQ(c.profiles.size(), 1u);
  return c.profiles.at(0);
}

// The InputError message of parsing `text`, or a marker when nothing threw.
std::string error_of_text(const std::string& text) {
  try {
    parse_scheduler_config(text, kOrigin);
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

std::string error_of(const std::string& body) { return error_of_text(with_header(body)); }

// pluginConfig for one plugin in a single profile, args given as YAML lines
// indented under `args:`.
std::string plugin_args(const std::string& plugin, const std::string& args) {
  return "profiles:\n"
         "- schedulerName: s\n"
         "  pluginConfig:\n"
         "  - name: " +
         plugin + "\n    args:\n" + args;
}

std::vector<std::pair<std::string, int32_t>> score_weights(const ProfileConfig& p) {
  std::vector<std::pair<std::string, int32_t>> out;
  for (const PluginEntry& e : p.score) out.emplace_back(e.name, e.weight);
  return out;
}

using W = std::vector<std::pair<std::string, int32_t>>;

// k8s-semantics.md §1.1, "Order per extension point in the default profile".
const std::vector<std::string> kDefaultPreFilter = {
    "NodeAffinity",  "NodePorts",  "NodeResourcesFit",  "VolumeRestrictions", "NodeVolumeLimits",
    "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity",   "DynamicResources"};
const std::vector<std::string> kDefaultFilter = {
    "NodeUnschedulable", "NodeName",           "TaintToleration",  "NodeAffinity",  "NodePorts",
    "NodeResourcesFit",  "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
    "PodTopologySpread", "InterPodAffinity",   "DynamicResources"};
const std::vector<std::string> kDefaultPreScore = {"TaintToleration",
                                                   "NodeAffinity",
                                                   "NodeResourcesFit",
                                                   "VolumeBinding",
                                                   "PodTopologySpread",
                                                   "InterPodAffinity",
                                                   "NodeResourcesBalancedAllocation"};
const W kDefaultScore = {
    {"TaintToleration", 3},   {"NodeAffinity", 2},     {"NodeResourcesFit", 1}, {"VolumeBinding", 1},
    {"PodTopologySpread", 2}, {"InterPodAffinity", 2}, {"DynamicResources", 2}, {"NodeResourcesBalancedAllocation", 1},
    {"ImageLocality", 1}};

// ---------------------------------------------------------------------------
// Defaults
// ---------------------------------------------------------------------------

TEST(DefaultConfig, HasOneDefaultSchedulerProfileScoringEveryNode) {
  const SchedulerConfig c = default_scheduler_config();
  ASSERT_EQ(c.profiles.size(), 1u);
  EXPECT_EQ(c.profiles[0].scheduler_name, "default-scheduler");
  EXPECT_EQ(c.profiles[0].percentage_of_nodes_to_score, 100);
  EXPECT_EQ(c.parallelism, 16);
}

TEST(DefaultConfig, PluginListsMatchUpstreamDefaultOrderAndWeights) {
  const ProfileConfig p = default_scheduler_config().profiles.at(0);
  EXPECT_EQ(p.pre_filter, kDefaultPreFilter);
  EXPECT_EQ(p.filter, kDefaultFilter);
  EXPECT_EQ(p.pre_score, kDefaultPreScore);
  EXPECT_EQ(score_weights(p), kDefaultScore);
}

TEST(DefaultConfig, PluginArgsHaveV1Defaults) {
  const ProfileConfig p = default_scheduler_config().profiles.at(0);
  EXPECT_EQ(p.fit_args.strategy, ScoringStrategyType::LeastAllocated);
  ASSERT_EQ(p.fit_args.resources.size(), 2u);
  EXPECT_EQ(p.fit_args.resources[0].name, "cpu");
  EXPECT_EQ(p.fit_args.resources[0].weight, 1);
  EXPECT_EQ(p.fit_args.resources[1].name, "memory");
  EXPECT_EQ(p.fit_args.resources[1].weight, 1);
  EXPECT_TRUE(p.fit_args.shape.empty());
  ASSERT_EQ(p.balanced_args.resources.size(), 2u);
  EXPECT_EQ(p.balanced_args.resources[0].name, "cpu");
  EXPECT_EQ(p.balanced_args.resources[1].name, "memory");
  EXPECT_EQ(p.inter_pod_affinity_args.hard_pod_affinity_weight, 1);
  EXPECT_FALSE(p.inter_pod_affinity_args.ignore_preferred_terms_of_existing_pods);
  EXPECT_EQ(p.pod_topology_spread_args.defaulting_type, "System");
  EXPECT_TRUE(p.pod_topology_spread_args.default_constraints.empty());
  EXPECT_FALSE(p.node_affinity_args.added_affinity.has_value());
}

TEST(DefaultConfig, HeaderOnlyYamlResolvesToTheDefaultProfile) {
  const SchedulerConfig c = parse("");
  const ProfileConfig d = default_scheduler_config().profiles.at(0);
  ASSERT_EQ(c.profiles.size(), 1u);
  EXPECT_EQ(c.profiles[0].scheduler_name, "default-scheduler");
  EXPECT_EQ(c.profiles[0].percentage_of_nodes_to_score, 100);
  EXPECT_EQ(c.profiles[0].pre_filter, d.pre_filter);
  EXPECT_EQ(c.profiles[0].filter, d.filter);
  EXPECT_EQ(c.profiles[0].pre_score, d.pre_score);
  EXPECT_EQ(score_weights(c.profiles[0]), score_weights(d));
}

// ---------------------------------------------------------------------------
// Document-level errors
// ---------------------------------------------------------------------------

TEST(ConfigDocument, RejectsOtherApiVersions) {
  const std::string e =
      error_of_text("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n");
  EXPECT_THAT(e, HasSubstr("sched.yaml: apiVersion:"));
  EXPECT_THAT(e, HasSubstr("v1beta3"));
}

TEST(ConfigDocument, RequiresApiVersionAndKind) {
  EXPECT_THAT(error_of_text("kind: KubeSchedulerConfiguration\n"), HasSubstr("sched.yaml: apiVersion: required"));
  EXPECT_THAT(error_of_text("apiVersion: kubescheduler.config.k8s.io/v1\n"), HasSubstr("sched.yaml: kind: required"));
  EXPECT_THAT(error_of_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n"),
              HasSubstr("sched.yaml: kind: unsupported \"Pod\""));
}

TEST(ConfigDocument, MalformedYamlNamesFileLineAndColumn) {
  const std::string e = error_of(
      "profiles:\n"
      "- schedulerName: [unterminated\n");
  EXPECT_THAT(e, HasSubstr("sched.yaml: malformed YAML at line "));
  EXPECT_THAT(e, HasSubstr(", column "));
}

TEST(ConfigDocument, MalformedYamlReportsTheOffendingLine) {
  // The bad indentation is on line 4 of the document.
  const std::string e = error_of_text(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "parallelism: 4\n"
      "  profiles: x\n");
  EXPECT_THAT(e, HasSubstr("malformed YAML at line 4"));
}

TEST(ConfigDocument, RejectsEmptyAndMultiDocumentInput) {
  EXPECT_THAT(error_of_text(""), HasSubstr("sched.yaml: empty document"));
  EXPECT_THAT(error_of_text(with_header("") + "---\n" + with_header("")),
              HasSubstr("expected one YAML document, found 2"));
}

TEST(ConfigDocument, RejectsUnknownFields) {
  EXPECT_THAT(error_of("percentOfNodes: 5\n"), HasSubstr("sched.yaml: percentOfNodes: unknown field"));
  EXPECT_THAT(error_of("profiles:\n- schedulerName: a\n  plugin: {}\n"),
              HasSubstr("profiles[0].plugin: unknown field"));
  EXPECT_THAT(error_of("profiles:\n- plugins:\n    filters: {}\n"),
              HasSubstr("profiles[0].plugins.filters: unknown field"));
}

TEST(ConfigDocument, RejectsRepeatedFields) {
  EXPECT_THAT(error_of("parallelism: 4\nparallelism: 5\n"), HasSubstr("parallelism: field given more than once"));
}

TEST(ConfigDocument, RejectsQuotedNumbersAndWrongTypes) {
  EXPECT_THAT(error_of("parallelism: \"4\"\n"), HasSubstr("parallelism: must be an integer"));
  EXPECT_THAT(error_of("parallelism: 1.5\n"), HasSubstr("parallelism: must be an integer"));
  EXPECT_THAT(error_of("parallelism: 4294967296\n"), HasSubstr("does not fit in int32"));
  EXPECT_THAT(error_of("profiles: {}\n"), HasSubstr("profiles: must be a list"));
}

// kube-scheduler converts YAML to JSON with goyaml.v2 (YAML 1.1 scalars)
// before decoding: yes/on are booleans, 0x10 and 8.0 are integers, and a
// number is no string.
TEST(ConfigDocument, ScalarsResolveAsKubeSchedulerResolvesThem) {
  EXPECT_EQ(parse("parallelism: 8.0\n").parallelism, 8);
  EXPECT_EQ(parse("parallelism: 0x10\n").parallelism, 16);
  EXPECT_EQ(parse("parallelism: 1_6\n").parallelism, 16);
  EXPECT_EQ(parse("parallelism: 010\n").parallelism, 8);  // octal in YAML 1.1
  const ProfileConfig p = parse_profile(
      "  pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
      "      ignorePreferredTermsOfExistingPods: yes\n");
  EXPECT_TRUE(p.inter_pod_affinity_args.ignore_preferred_terms_of_existing_pods);
  parse("enableProfiling: on\nenableContentionProfiling: No\n");
  EXPECT_THAT(error_of("enableProfiling: \"true\"\n"), HasSubstr("enableProfiling: must be a boolean"));
  EXPECT_THAT(error_of("enableProfiling: 1\n"), HasSubstr("enableProfiling: must be a boolean"));
  EXPECT_THAT(error_of("profiles:\n- schedulerName: 123\n"),
              HasSubstr("profiles[0].schedulerName: must be a string, got the integer 123"));
  EXPECT_THAT(error_of("profiles:\n- schedulerName: yes\n"), HasSubstr("must be a string, got the boolean true"));
  EXPECT_EQ(parse("profiles:\n- schedulerName: \"123\"\n").profiles.at(0).scheduler_name, "123");
  EXPECT_THAT(error_of("percentageOfNodesToScore: .nan\n"), HasSubstr("percentageOfNodesToScore: must be an integer"));
}

TEST(ConfigDocument, AcceptsUpstreamFieldsBulkscoreDoesNotUse) {
  const SchedulerConfig c = parse(
      "parallelism: 8\n"
      "leaderElection:\n  leaderElect: false\n"
      "clientConnection:\n  kubeconfig: /etc/kubernetes/scheduler.conf\n"
      "enableProfiling: true\n"
      "podInitialBackoffSeconds: 2\n"
      "podMaxBackoffSeconds: 20\n"
      "extenders: []\n");
  EXPECT_EQ(c.parallelism, 8);
}

TEST(ConfigDocument, ValidatesParallelismAndBackoff) {
  EXPECT_THAT(error_of("parallelism: 0\n"), HasSubstr("sched.yaml: parallelism: must be greater than zero"));
  EXPECT_THAT(error_of("podInitialBackoffSeconds: 0\n"), HasSubstr("podInitialBackoffSeconds"));
  EXPECT_THAT(error_of("podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n"), HasSubstr("podMaxBackoffSeconds"));
}

TEST(ConfigDocument, RejectsExtenders) {
  EXPECT_THAT(error_of("extenders:\n- urlPrefix: http://x\n"),
              HasSubstr("extenders: scheduler extenders are not supported by bulkscore"));
}

// ---------------------------------------------------------------------------
// Profiles and percentageOfNodesToScore
// ---------------------------------------------------------------------------

TEST(Percentage, DefaultsToScoringEveryNode) {
  EXPECT_EQ(parse("profiles:\n- schedulerName: a\n").profiles[0].percentage_of_nodes_to_score, 100);
}

TEST(Percentage, GlobalValueAppliesToProfilesWithoutTheirOwn) {
  const SchedulerConfig c = parse(
      "percentageOfNodesToScore: 40\n"
      "profiles:\n"
      "- schedulerName: a\n"
      "- schedulerName: b\n"
      "  percentageOfNodesToScore: 70\n");
  EXPECT_EQ(c.profiles[0].percentage_of_nodes_to_score, 40);
  EXPECT_EQ(c.profiles[1].percentage_of_nodes_to_score, 70);
}

TEST(Percentage, ProfileZeroMeansAdaptiveAndOverridesGlobal) {
  const SchedulerConfig c = parse(
      "percentageOfNodesToScore: 40\n"
      "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: 0\n");
  EXPECT_EQ(c.profiles[0].percentage_of_nodes_to_score, 0);
}

TEST(Percentage, OutOfRangeIsRejectedAtBothLevels) {
  EXPECT_THAT(error_of("percentageOfNodesToScore: 101\n"),
              HasSubstr("sched.yaml: percentageOfNodesToScore: must be in the range [0, 100], got 101"));
  EXPECT_THAT(error_of("profiles:\n- schedulerName: a\n  percentageOfNodesToScore: -1\n"),
              HasSubstr("profiles[0].percentageOfNodesToScore: must be in the range [0, 100], got -1"));
}

// tieBreak: bulkscore's extension field, per profile (docs/gpu-placement.md).
TEST(Profiles, TieBreakIsPerProfileAndValidated) {
  const SchedulerConfig c = parse(
      "profiles:\n- schedulerName: a\n- schedulerName: b\n  tieBreak: first\n- schedulerName: c\n"
      "  tieBreak: random\n");
  EXPECT_EQ(c.profiles[0].tie_break, ProfileTieBreak::kEngineDefault);
  EXPECT_EQ(c.profiles[1].tie_break, ProfileTieBreak::kFirst);
  EXPECT_EQ(c.profiles[2].tie_break, ProfileTieBreak::kRandom);
  EXPECT_EQ(default_scheduler_config().profiles[0].tie_break, ProfileTieBreak::kEngineDefault);
  EXPECT_THAT(error_of("profiles:\n- schedulerName: a\n  tieBreak: First\n"),
              HasSubstr("sched.yaml: profiles[0].tieBreak: expected random or first, got \"First\""));
  EXPECT_THAT(error_of("profiles:\n- schedulerName: a\n  tieBreak: 1\n"), HasSubstr("profiles[0].tieBreak"));
  EXPECT_THAT(error_of("profiles:\n- schedulerName: a\n  tieBreak: [first]\n"), HasSubstr("profiles[0].tieBreak"));
  // Not a top-level field.
  EXPECT_THAT(error_of("tieBreak: first\n"), HasSubstr("tieBreak"));
}

TEST(Profiles, LoneUnnamedProfileIsTheDefaultScheduler) {
  const SchedulerConfig c = parse("profiles:\n- percentageOfNodesToScore: 50\n");
  ASSERT_EQ(c.profiles.size(), 1u);
  EXPECT_EQ(c.profiles[0].scheduler_name, "default-scheduler");
}

TEST(Profiles, EmptyListGetsOneDefaultProfile) {
  const SchedulerConfig c = parse("profiles: []\n");
  ASSERT_EQ(c.profiles.size(), 1u);
  EXPECT_EQ(c.profiles[0].scheduler_name, "default-scheduler");
}

TEST(Profiles, KeepsOrderAndNames) {
  const SchedulerConfig c = parse("profiles:\n- schedulerName: a\n- schedulerName: b\n");
  ASSERT_EQ(c.profiles.size(), 2u);
  EXPECT_EQ(c.profiles[0].scheduler_name, "a");
  EXPECT_EQ(c.profiles[1].scheduler_name, "b");
}

TEST(Profiles, RejectsDuplicateNames) {
  EXPECT_THAT(error_of("profiles:\n- schedulerName: a\n- schedulerName: a\n"),
              HasSubstr("profiles[1].schedulerName: duplicate \"a\" (also used by profiles[0])"));
}

TEST(Profiles, NameIsRequiredWhenThereAreSeveral) {
  EXPECT_THAT(error_of("profiles:\n- schedulerName: a\n- percentageOfNodesToScore: 5\n"),
              HasSubstr("profiles[1].schedulerName: required"));
}

TEST(Profiles, ExplicitEmptyNameIsNotDefaulted) {
  // Upstream defaults only an absent name; "" reaches validation.
  EXPECT_THAT(error_of("profiles:\n- schedulerName: \"\"\n"), HasSubstr("profiles[0].schedulerName: required"));
}

TEST(Profiles, QueueSortMustMatchAcrossProfiles) {
  EXPECT_THAT(error_of("profiles:\n"
                       "- schedulerName: a\n"
                       "- schedulerName: b\n"
                       "  plugins:\n"
                       "    queueSort:\n"
                       "      enabled:\n"
                       "      - name: PrioritySort\n"),
              HasSubstr("profiles[1].plugins.queueSort: must be the same for all profiles"));
}

TEST(Profiles, EachProfileResolvesItsOwnPlugins) {
  const SchedulerConfig c = parse(
      "profiles:\n"
      "- schedulerName: a\n"
      "- schedulerName: b\n"
      "  plugins:\n"
      "    score:\n"
      "      disabled:\n"
      "      - name: ImageLocality\n");
  EXPECT_EQ(score_weights(c.profiles[0]), kDefaultScore);
  W expected = kDefaultScore;
  expected.pop_back();  // ImageLocality
  EXPECT_EQ(score_weights(c.profiles[1]), expected);
}

// ---------------------------------------------------------------------------
// Unknown plugins
// ---------------------------------------------------------------------------

TEST(UnknownPlugin, EnabledAtAPointIsRejectedWithFileAndProfile) {
  EXPECT_EQ(error_of("profiles:\n"
                     "- schedulerName: a\n"
                     "- schedulerName: b\n"
                     "  plugins:\n"
                     "    filter:\n"
                     "      enabled:\n"
                     "      - name: NodeName\n"
                     "      - name: Coscheduling\n"),
            "sched.yaml: profiles[1].plugins.filter.enabled[1]: unknown plugin \"Coscheduling\"");
}

TEST(UnknownPlugin, EnabledInMultiPointIsRejected) {
  EXPECT_THAT(error_of("profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: Foo\n"),
              HasSubstr("profiles[0].plugins.multiPoint.enabled[0]: unknown plugin \"Foo\""));
}

TEST(UnknownPlugin, RemovedInTreePluginsSaySo) {
  EXPECT_THAT(error_of("profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: EBSLimits\n"),
              HasSubstr("unknown plugin \"EBSLimits\" (removed"));
}

TEST(UnknownPlugin, DisablingAnUnknownNameIsHarmless) {
  // Upstream never looks disabled names up.
  const ProfileConfig p = parse_profile("  plugins:\n    filter:\n      disabled:\n      - name: NotAPlugin\n");
  EXPECT_EQ(p.filter, kDefaultFilter);
}

TEST(UnknownPlugin, InPluginConfigIsRejected) {
  EXPECT_THAT(error_of(plugin_args("Coscheduling", "      permitWaitingTimeSeconds: 10\n")),
              HasSubstr("profiles[0].pluginConfig[0].name: unknown plugin \"Coscheduling\""));
}

// ---------------------------------------------------------------------------
// Plugin-set merging (v1 mergePluginSet) and MultiPoint expansion
// ---------------------------------------------------------------------------

TEST(PluginMerge, DisablingAtOnePointKeepsThePluginElsewhere) {
  // framework_test "disable MultiPoint plugin at some extension points".
  const ProfileConfig p = parse_profile(
      "  plugins:\n"
      "    preScore:\n      disabled:\n      - name: TaintToleration\n"
      "    score:\n      disabled:\n      - name: TaintToleration\n");
  EXPECT_EQ(p.filter, kDefaultFilter);
  std::vector<std::string> pre_score = kDefaultPreScore;
  pre_score.erase(pre_score.begin());
  EXPECT_EQ(p.pre_score, pre_score);
  W score = kDefaultScore;
  score.erase(score.begin());
  EXPECT_EQ(score_weights(p), score);
}

TEST(PluginMerge, StarAtOnePointEmptiesOnlyThatPoint) {
  // framework_test "disable MultiPoint extension".
  const ProfileConfig p = parse_profile("  plugins:\n    preScore:\n      disabled:\n      - name: \"*\"\n");
  EXPECT_TRUE(p.pre_score.empty());
  EXPECT_EQ(p.pre_filter, kDefaultPreFilter);
  EXPECT_EQ(p.filter, kDefaultFilter);
  EXPECT_EQ(score_weights(p), kDefaultScore);
}

TEST(PluginMerge, StarAtAPointWithEnabledListGivesExactlyThatList) {
  // default_plugins_test "InsertBeforeAllPlugins" / "ReorderDefaultPlugins",
  // at a point where MultiPoint is then kept out.
  const ProfileConfig p = parse_profile(
      "  plugins:\n"
      "    filter:\n"
      "      disabled:\n      - name: \"*\"\n"
      "      enabled:\n      - name: NodeResourcesFit\n      - name: NodeName\n");
  EXPECT_THAT(p.filter, ElementsAre("NodeResourcesFit", "NodeName"));
  EXPECT_EQ(p.pre_filter, kDefaultPreFilter);
}

TEST(PluginMerge, PointEntriesForMultiPointPluginsComeFirstInPointOrder) {
  // framework_test "Reorder MultiPoint plugins (specified extension takes
  // precedence)": the overridden plugins lead, in the point's order, and
  // their weight is the point's (absent = 1), not the MultiPoint one.
  const ProfileConfig p = parse_profile(
      "  plugins:\n"
      "    score:\n"
      "      enabled:\n      - name: ImageLocality\n      - name: TaintToleration\n");
  EXPECT_EQ(score_weights(p), (W{{"ImageLocality", 1},
                                 {"TaintToleration", 1},
                                 {"NodeAffinity", 2},
                                 {"NodeResourcesFit", 1},
                                 {"VolumeBinding", 1},
                                 {"PodTopologySpread", 2},
                                 {"InterPodAffinity", 2},
                                 {"DynamicResources", 2},
                                 {"NodeResourcesBalancedAllocation", 1}}));
  // Other points keep the MultiPoint order.
  EXPECT_EQ(p.pre_score, kDefaultPreScore);
}

TEST(PluginMerge, PointOnlyPluginsFollowTheMultiPointOnes) {
  // framework_test "Reorder MultiPoint plugins (specified extension only
  // takes precedence when it exists in MultiPoint)" and "Override MultiPoint
  // plugins weights and avoid a plugin being loaded multiple times":
  // ImageLocality is taken out of MultiPoint, so at the score point it is
  // not an override and goes after the MultiPoint plugins.
  const ProfileConfig p = parse_profile(
      "  plugins:\n"
      "    multiPoint:\n      disabled:\n      - name: ImageLocality\n"
      "    score:\n"
      "      enabled:\n"
      "      - name: ImageLocality\n        weight: 5\n"
      "      - name: NodeAffinity\n        weight: 5\n"
      "      - name: TaintToleration\n        weight: 3\n");
  EXPECT_EQ(score_weights(p), (W{{"NodeAffinity", 5},
                                 {"TaintToleration", 3},
                                 {"NodeResourcesFit", 1},
                                 {"VolumeBinding", 1},
                                 {"PodTopologySpread", 2},
                                 {"InterPodAffinity", 2},
                                 {"DynamicResources", 2},
                                 {"NodeResourcesBalancedAllocation", 1},
                                 {"ImageLocality", 5}}));
}

TEST(PluginMerge, OverrideAtFilterMovesThePluginToTheFront) {
  const ProfileConfig p = parse_profile("  plugins:\n    filter:\n      enabled:\n      - name: NodeResourcesFit\n");
  std::vector<std::string> expected = {"NodeResourcesFit"};
  for (const std::string& n : kDefaultFilter) {
    if (n != "NodeResourcesFit") expected.push_back(n);
  }
  EXPECT_EQ(p.filter, expected);
  EXPECT_EQ(p.pre_filter, kDefaultPreFilter);
}

TEST(PluginMerge, DisabledAndReenabledAtAPointGoesLast) {
  // Disabled at the point keeps MultiPoint's copy out; the point's own entry
  // is then an ordinary point plugin, placed after the MultiPoint ones.
  const ProfileConfig p = parse_profile(
      "  plugins:\n"
      "    filter:\n"
      "      disabled:\n      - name: NodeUnschedulable\n"
      "      enabled:\n      - name: NodeUnschedulable\n");
  std::vector<std::string> expected(kDefaultFilter.begin() + 1, kDefaultFilter.end());
  expected.push_back("NodeUnschedulable");
  EXPECT_EQ(p.filter, expected);
}

TEST(PluginMerge, MultiPointDisableAndReenableAppendsAtTheEnd) {
  // framework_test "disable and enable MultiPoint plugin by name" and
  // default_plugins_test "InsertAfterDefaultPlugins2": a default that is
  // disabled and enabled again is no longer replaced in place but appended,
  // and loses its default weight.
  const ProfileConfig p = parse_profile(
      "  plugins:\n"
      "    multiPoint:\n"
      "      enabled:\n      - name: DefaultBinder\n      - name: PrioritySort\n"
      "      - name: NodeAffinity\n"
      "      disabled:\n      - name: NodeAffinity\n");
  std::vector<std::string> filter;
  for (const std::string& n : kDefaultFilter) {
    if (n != "NodeAffinity") filter.push_back(n);
  }
  filter.push_back("NodeAffinity");
  EXPECT_EQ(p.filter, filter);
  EXPECT_EQ(p.pre_filter.back(), "NodeAffinity");
  EXPECT_EQ(p.pre_score.back(), "NodeAffinity");
  EXPECT_EQ(p.score.back().name, "NodeAffinity");
  EXPECT_EQ(p.score.back().weight, 1);
}

TEST(PluginMerge, MultiPointStarDropsAllDefaultsIncludingTheirWeights) {
  // framework_test "disable and enable MultiPoint plugins with '*'".
  const ProfileConfig p = parse_profile(
      "  plugins:\n"
      "    multiPoint:\n"
      "      disabled:\n      - name: \"*\"\n"
      "      enabled:\n"
      "      - name: PrioritySort\n"
      "      - name: DefaultBinder\n"
      "      - name: ImageLocality\n"
      "      - name: TaintToleration\n");
  EXPECT_TRUE(p.pre_filter.empty());
  EXPECT_THAT(p.filter, ElementsAre("TaintToleration"));
  EXPECT_THAT(p.pre_score, ElementsAre("TaintToleration"));
  EXPECT_EQ(score_weights(p), (W{{"ImageLocality", 1}, {"TaintToleration", 1}}));
}

TEST(PluginMerge, MultiPointEntryReplacesTheDefaultInPlace) {
  // default_plugins_test "override default MultiPoint plugins with custom
  // value", "CustomPluginOverrideDefaultPlugin" and
  // "OrderPreserveAfterOverride": listed in reverse, kept in default order.
  const ProfileConfig p = parse_profile(
      "  plugins:\n"
      "    multiPoint:\n"
      "      enabled:\n"
      "      - name: NodeAffinity\n        weight: 7\n"
      "      - name: TaintToleration\n        weight: 9\n");
  W expected = kDefaultScore;
  expected[0].second = 9;
  expected[1].second = 7;
  EXPECT_EQ(score_weights(p), expected);
  EXPECT_EQ(p.filter, kDefaultFilter);
}

TEST(PluginMerge, MultiPointWeightZeroMeansOne) {
  const ProfileConfig p = parse_profile(
      "  plugins:\n    multiPoint:\n      enabled:\n      - name: TaintToleration\n        weight: "
      "0\n");
  EXPECT_EQ(p.score.at(0).name, "TaintToleration");
  EXPECT_EQ(p.score.at(0).weight, 1);
}

TEST(PluginMerge, ScorePointWeightOverridesMultiPointWeight) {
  // framework_test "Override MultiPoint plugins weights".
  const ProfileConfig p = parse_profile(
      "  plugins:\n"
      "    multiPoint:\n      enabled:\n      - name: InterPodAffinity\n        weight: 9\n"
      "    score:\n      enabled:\n      - name: InterPodAffinity\n        weight: 4\n");
  EXPECT_EQ(p.score.at(0).name, "InterPodAffinity");
  EXPECT_EQ(p.score.at(0).weight, 4);
}

TEST(PluginMerge, MultiPointOnlyDisabledRemovesThePluginEverywhere) {
  // default_plugins_test "multipoint with only disabled gets merged".
  const ProfileConfig p =
      parse_profile("  plugins:\n    multiPoint:\n      disabled:\n      - name: NodeResourcesFit\n");
  for (const auto* list : {&p.pre_filter, &p.filter, &p.pre_score}) {
    for (const std::string& n : *list) EXPECT_NE(n, "NodeResourcesFit");
  }
  for (const PluginEntry& e : p.score) EXPECT_NE(e.name, "NodeResourcesFit");
  EXPECT_EQ(p.filter.size(), kDefaultFilter.size() - 1);
}

TEST(PluginMerge, NonDefaultPluginsAtPointsWithoutMultiPointStillWork) {
  // DefaultPreemption and DynamicResources sit at points bulkscore drops;
  // disabling them must not disturb the kept points beyond themselves.
  const ProfileConfig p = parse_profile(
      "  plugins:\n    multiPoint:\n      disabled:\n      - name: DynamicResources\n"
      "      - name: DefaultPreemption\n");
  std::vector<std::string> filter(kDefaultFilter.begin(), kDefaultFilter.end() - 1);
  EXPECT_EQ(p.filter, filter);
}

TEST(PluginErrors, RepeatedMultiPointPluginIsRejected) {
  // framework_test "Expect 'already registered' error" and
  // default_plugins_test "RepeatedCustomPlugin" (the merge keeps both
  // copies; the framework refuses them).
  EXPECT_THAT(error_of("profiles:\n- plugins:\n    multiPoint:\n      enabled:\n"
                       "      - name: TaintToleration\n      - name: TaintToleration\n"),
              HasSubstr("plugin \"TaintToleration\" is enabled more than once in multiPoint"));
}

TEST(PluginErrors, RepeatedPluginAtAPointIsRejected) {
  EXPECT_THAT(error_of("profiles:\n- plugins:\n    filter:\n      enabled:\n"
                       "      - name: NodeName\n      - name: NodeName\n"),
              HasSubstr("profiles[0].plugins.filter.enabled[1]: plugin \"NodeName\" is enabled "
                        "more than once at filter"));
}

TEST(PluginErrors, PluginAtAPointItDoesNotImplementIsRejected) {
  EXPECT_THAT(error_of("profiles:\n- plugins:\n    filter:\n      enabled:\n"
                       "      - name: ImageLocality\n"),
              HasSubstr("profiles[0].plugins.filter.enabled[0]: plugin \"ImageLocality\" does not "
                        "implement the filter extension point"));
}

TEST(PluginErrors, ProfileWithoutQueueSortOrBinderIsRejected) {
  EXPECT_THAT(error_of("profiles:\n- plugins:\n    multiPoint:\n      disabled:\n"
                       "      - name: PrioritySort\n"),
              HasSubstr("profiles[0].plugins: exactly one queueSort plugin must be enabled, got 0"));
  EXPECT_THAT(error_of("profiles:\n- plugins:\n    multiPoint:\n      disabled:\n"
                       "      - name: \"*\"\n"),
              HasSubstr("exactly one queueSort plugin"));
  EXPECT_THAT(error_of("profiles:\n- plugins:\n    multiPoint:\n      disabled:\n"
                       "      - name: DefaultBinder\n"),
              HasSubstr("profiles[0].plugins: at least one bind plugin must be enabled"));
}

// ---------------------------------------------------------------------------
// Score weights and bulkscore's 32-bit totals
// ---------------------------------------------------------------------------

std::string image_locality_weight(int64_t w) {
  return "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n"
         "      - name: ImageLocality\n        weight: " +
         std::to_string(w) + "\n";
}

TEST(ScoreWeights, TotalUpToTheThirtyTwoBitLimitIsAccepted) {
  // The other default weights sum to 14; (14 + w) * 100 <= 2^31 - 1.
  const SchedulerConfig c = parse(image_locality_weight(21474836 - 14));
  EXPECT_EQ(c.profiles[0].score.back().weight, 21474836 - 14);
}

TEST(ScoreWeights, TotalPastTheThirtyTwoBitLimitIsRejected) {
  const std::string e = error_of(image_locality_weight(21474836 - 13));
  EXPECT_THAT(e, HasSubstr("sched.yaml: profiles[0].plugins.score: the Score weights sum to 21474837"));
  EXPECT_THAT(e, HasSubstr("32 bits"));
}

TEST(ScoreWeights, WeightOfDisabledScorePluginDoesNotCount) {
  const SchedulerConfig c = parse(
      "profiles:\n- plugins:\n"
      "    multiPoint:\n      enabled:\n      - name: ImageLocality\n        weight: 2000000000\n"
      "    score:\n      disabled:\n      - name: ImageLocality\n");
  EXPECT_EQ(c.profiles[0].score.size(), kDefaultScore.size() - 1);
}

TEST(ScoreWeights, NegativeWeightIsRejected) {
  EXPECT_THAT(error_of(image_locality_weight(-1)), HasSubstr("negative Score weight -1"));
}

TEST(ScoreWeights, WeightMustFitInt32) {
  EXPECT_THAT(error_of(image_locality_weight(2147483648LL)), HasSubstr("does not fit in int32"));
}

// ---------------------------------------------------------------------------
// pluginConfig: entries
// ---------------------------------------------------------------------------

TEST(PluginConfig, DuplicateEntriesAreRejected) {
  EXPECT_THAT(error_of("profiles:\n- pluginConfig:\n"
                       "  - name: InterPodAffinity\n"
                       "  - name: InterPodAffinity\n"),
              HasSubstr("profiles[0].pluginConfig[1]: duplicate pluginConfig for plugin "
                        "\"InterPodAffinity\" (also at profiles[0].pluginConfig[0])"));
}

TEST(PluginConfig, ArgsForPluginsWithoutArgsAreIgnored) {
  const ProfileConfig p = parse_profile("  pluginConfig:\n  - name: TaintToleration\n    args: {x: 1}\n");
  EXPECT_EQ(p.filter, kDefaultFilter);
}

TEST(PluginConfig, ArgsMayCarryTheirOwnTypeMeta) {
  const ProfileConfig p = parse_profile(
      "  pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
      "      apiVersion: kubescheduler.config.k8s.io/v1\n"
      "      kind: InterPodAffinityArgs\n"
      "      hardPodAffinityWeight: 7\n");
  EXPECT_EQ(p.inter_pod_affinity_args.hard_pod_affinity_weight, 7);
}

TEST(PluginConfig, ArgsOfTheWrongKindAreRejected) {
  EXPECT_THAT(error_of(plugin_args("InterPodAffinity", "      kind: NodeAffinityArgs\n")),
              HasSubstr("profiles[0].pluginConfig[0] (InterPodAffinity): kind: must be "
                        "InterPodAffinityArgs"));
}

TEST(PluginConfig, UnknownArgsFieldsAreRejected) {
  EXPECT_THAT(error_of(plugin_args("InterPodAffinity", "      hardPodAffinityWeigth: 3\n")),
              HasSubstr("profiles[0].pluginConfig[0] (InterPodAffinity): hardPodAffinityWeigth: "
                        "unknown field"));
}

// ---------------------------------------------------------------------------
// NodeResourcesFitArgs
// ---------------------------------------------------------------------------

TEST(FitArgs, MostAllocatedWithWeightsAndZeroDefaultedToOne) {
  const ProfileConfig p = parse_profile(
      "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
      "      ignoredResources: [example.com/foo]\n"
      "      ignoredResourceGroups: [example.com]\n"
      "      scoringStrategy:\n"
      "        type: MostAllocated\n"
      "        resources:\n"
      "        - {name: cpu, weight: 3}\n"
      "        - {name: memory}\n"
      "        - {name: nvidia.com/gpu, weight: 0}\n");
  EXPECT_EQ(p.fit_args.strategy, ScoringStrategyType::MostAllocated);
  ASSERT_EQ(p.fit_args.resources.size(), 3u);
  EXPECT_EQ(p.fit_args.resources[0].weight, 3);
  EXPECT_EQ(p.fit_args.resources[1].weight, 1);
  EXPECT_EQ(p.fit_args.resources[2].name, "nvidia.com/gpu");
  EXPECT_EQ(p.fit_args.resources[2].weight, 1);
  EXPECT_THAT(p.fit_args.ignored_resources, ElementsAre("example.com/foo"));
  EXPECT_THAT(p.fit_args.ignored_resource_groups, ElementsAre("example.com"));
}

TEST(FitArgs, EmptyResourceListMeansCpuAndMemory) {
  const ProfileConfig p = parse_profile(
      "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
      "      scoringStrategy: {type: MostAllocated, resources: []}\n");
  ASSERT_EQ(p.fit_args.resources.size(), 2u);
  EXPECT_EQ(p.fit_args.resources[0].name, "cpu");
  EXPECT_EQ(p.fit_args.resources[1].name, "memory");
}

TEST(FitArgs, RequestedToCapacityRatioKeepsItsShape) {
  const ProfileConfig p = parse_profile(
      "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
      "      scoringStrategy:\n"
      "        type: RequestedToCapacityRatio\n"
      "        requestedToCapacityRatio:\n"
      "          shape:\n"
      "          - {utilization: 0, score: 0}\n"
      "          - {utilization: 100, score: 10}\n");
  EXPECT_EQ(p.fit_args.strategy, ScoringStrategyType::RequestedToCapacityRatio);
  ASSERT_EQ(p.fit_args.shape.size(), 2u);
  EXPECT_EQ(p.fit_args.shape[1].utilization, 100);
  EXPECT_EQ(p.fit_args.shape[1].score, 10);
}

TEST(FitArgs, WeightOutOfRangeHasTheDocumentedMessage) {
  EXPECT_EQ(error_of(plugin_args("NodeResourcesFit",
                                 "      scoringStrategy:\n"
                                 "        type: LeastAllocated\n"
                                 "        resources:\n"
                                 "        - {name: cpu, weight: 101}\n")),
            "sched.yaml: profiles[0].pluginConfig[0] (NodeResourcesFit): "
            "scoringStrategy.resources[0].weight: must be in the range [1, 100], got 101");
  EXPECT_THAT(error_of(plugin_args("NodeResourcesFit",
                                   "      scoringStrategy:\n        type: LeastAllocated\n"
                                   "        resources:\n        - {name: cpu, weight: -1}\n")),
              HasSubstr("got -1"));
}

TEST(FitArgs, StrategyWithoutTypeIsRejected) {
  // Defaulting fills the type only when the whole strategy is absent.
  EXPECT_THAT(error_of(plugin_args("NodeResourcesFit",
                                   "      scoringStrategy:\n        resources:\n"
                                   "        - {name: cpu, weight: 1}\n")),
              HasSubstr("scoringStrategy.type: unsupported value \"\""));
  EXPECT_THAT(error_of(plugin_args("NodeResourcesFit", "      scoringStrategy: {type: Balanced}\n")),
              HasSubstr("scoringStrategy.type: unsupported value \"Balanced\""));
}

TEST(FitArgs, ShapeIsValidated) {
  const std::string head =
      "      scoringStrategy:\n"
      "        type: RequestedToCapacityRatio\n"
      "        requestedToCapacityRatio:\n";
  EXPECT_THAT(error_of(plugin_args("NodeResourcesFit", head + "          shape: []\n")),
              HasSubstr("scoringStrategy.requestedToCapacityRatio.shape: at least one point"));
  EXPECT_THAT(error_of(plugin_args("NodeResourcesFit", head + "          shape:\n"
                                                              "          - {utilization: 50, score: 1}\n"
                                                              "          - {utilization: 50, score: 2}\n")),
              HasSubstr("shape[1].utilization: values must be sorted in strictly increasing order"));
  EXPECT_THAT(error_of(plugin_args("NodeResourcesFit", head + "          shape:\n"
                                                              "          - {utilization: 101, score: 1}\n")),
              HasSubstr("shape[0].utilization: must be in the range [0, 100], got 101"));
  EXPECT_THAT(error_of(plugin_args("NodeResourcesFit", head + "          shape:\n"
                                                              "          - {utilization: 10, score: 11}\n")),
              HasSubstr("shape[0].score: must be in the range [0, 10], got 11"));
}

TEST(FitArgs, RequestedToCapacityRatioParametersWithAnotherTypeAreRejected) {
  EXPECT_THAT(error_of(plugin_args("NodeResourcesFit",
                                   "      scoringStrategy:\n"
                                   "        type: MostAllocated\n"
                                   "        requestedToCapacityRatio:\n"
                                   "          shape: [{utilization: 0, score: 0}]\n")),
              HasSubstr("(NodeResourcesFit): scoringStrategy.requestedToCapacityRatio: must not be set when "
                        "scoringStrategy.type is \"MostAllocated\""));
}

TEST(FitArgs, RequestedToCapacityRatioNeedsItsParameters) {
  EXPECT_THAT(error_of(plugin_args("NodeResourcesFit", "      scoringStrategy: {type: RequestedToCapacityRatio}\n")),
              HasSubstr("scoringStrategy.requestedToCapacityRatio: required"));
}

TEST(FitArgs, IgnoredResourceNamesAreValidated) {
  EXPECT_THAT(error_of(plugin_args("NodeResourcesFit", "      ignoredResources: [a/b/c]\n")),
              HasSubstr("ignoredResources[0]: \"a/b/c\""));
  EXPECT_THAT(error_of(plugin_args("NodeResourcesFit", "      ignoredResourceGroups: [example.com/gpu]\n")),
              HasSubstr("ignoredResourceGroups[0]: \"example.com/gpu\": a resource group name "
                        "can't contain '/'"));
  EXPECT_THAT(error_of(plugin_args("NodeResourcesFit", "      ignoredResources: [-bad]\n")),
              HasSubstr("ignoredResources[0]"));
}

TEST(FitArgs, InvalidArgsOfAPluginEnabledNowhereAreNotChecked) {
  // Upstream's config validation misses these args; only building the
  // plugin checks them, and a plugin enabled nowhere is never built.
  const SchedulerConfig c = parse(
      "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: NodeResourcesFit\n"
      "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
      "      scoringStrategy: {type: Bogus}\n");
  EXPECT_EQ(c.profiles.size(), 1u);
}

// ---------------------------------------------------------------------------
// NodeResourcesBalancedAllocationArgs
// ---------------------------------------------------------------------------

TEST(BalancedArgs, ResourcesWithWeightOneOrAbsent) {
  const ProfileConfig p = parse_profile(
      "  pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n"
      "      resources:\n      - {name: cpu, weight: 1}\n      - {name: memory}\n"
      "      - {name: nvidia.com/gpu}\n");
  ASSERT_EQ(p.balanced_args.resources.size(), 3u);
  EXPECT_EQ(p.balanced_args.resources[2].name, "nvidia.com/gpu");
  for (const ResourceSpec& r : p.balanced_args.resources) EXPECT_EQ(r.weight, 1);
}

TEST(BalancedArgs, WeightOtherThanOneIsRejected) {
  EXPECT_THAT(
      error_of(plugin_args("NodeResourcesBalancedAllocation", "      resources:\n      - {name: cpu, weight: 2}\n")),
      HasSubstr("(NodeResourcesBalancedAllocation): resources[0].weight: must be 1, got 2"));
}

TEST(BalancedArgs, DuplicateResourceIsRejected) {
  EXPECT_THAT(error_of(plugin_args("NodeResourcesBalancedAllocation",
                                   "      resources:\n      - {name: cpu}\n      - {name: cpu}\n")),
              HasSubstr("resources[1].name: duplicate resource \"cpu\""));
}

// ---------------------------------------------------------------------------
// NodeAffinityArgs
// ---------------------------------------------------------------------------

TEST(NodeAffinityArgsTest, AddedAffinityIsParsed) {
  const ProfileConfig p = parse_profile(
      "  pluginConfig:\n  - name: NodeAffinity\n    args:\n"
      "      addedAffinity:\n"
      "        requiredDuringSchedulingIgnoredDuringExecution:\n"
      "          nodeSelectorTerms:\n"
      "          - matchExpressions:\n"
      "            - {key: topology.kubernetes.io/zone, operator: In, values: [a, b]}\n"
      "            - {key: cores, operator: Gt, values: [\"8\"]}\n"
      "            matchFields:\n"
      "            - {key: metadata.name, operator: NotIn, values: [node-1]}\n"
      "        preferredDuringSchedulingIgnoredDuringExecution:\n"
      "        - weight: 20\n"
      "          preference:\n"
      "            matchExpressions:\n"
      "            - {key: disk, operator: Exists}\n");
  ASSERT_TRUE(p.node_affinity_args.added_affinity.has_value());
  const NodeAffinity& a = *p.node_affinity_args.added_affinity;
  ASSERT_TRUE(a.required.has_value());
  ASSERT_EQ(a.required->terms.size(), 1u);
  const NodeSelectorTerm& t = a.required->terms[0];
  ASSERT_EQ(t.match_expressions.size(), 2u);
  EXPECT_EQ(t.match_expressions[0].key, "topology.kubernetes.io/zone");
  EXPECT_EQ(t.match_expressions[0].op, "In");
  EXPECT_THAT(t.match_expressions[0].values, ElementsAre("a", "b"));
  EXPECT_EQ(t.match_expressions[1].op, "Gt");
  ASSERT_EQ(t.match_fields.size(), 1u);
  EXPECT_EQ(t.match_fields[0].op, "NotIn");
  EXPECT_TRUE(a.has_preferred);
  ASSERT_EQ(a.preferred.size(), 1u);
  EXPECT_EQ(a.preferred[0].weight, 20);
  EXPECT_EQ(a.preferred[0].preference.match_expressions.at(0).op, "Exists");
}

TEST(NodeAffinityArgsTest, RequirementsAreValidated) {
  const std::string head =
      "      addedAffinity:\n"
      "        requiredDuringSchedulingIgnoredDuringExecution:\n"
      "          nodeSelectorTerms:\n"
      "          - matchExpressions:\n";
  const std::string path =
      "(NodeAffinity): addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
      "nodeSelectorTerms[0].matchExpressions[0].";
  EXPECT_THAT(error_of(plugin_args("NodeAffinity", head + "            - {key: a, operator: In}\n")),
              HasSubstr(path + "values: must not be empty"));
  EXPECT_THAT(error_of(plugin_args("NodeAffinity", head + "            - {key: a, operator: Exists, values: [x]}\n")),
              HasSubstr(path + "values: must be empty"));
  EXPECT_THAT(error_of(plugin_args("NodeAffinity", head + "            - {key: a, operator: Gt, values: [x]}\n")),
              HasSubstr(path + "values[0]: \"x\": must be an integer"));
  EXPECT_THAT(error_of(plugin_args("NodeAffinity", head + "            - {key: a, operator: Equals, values: [x]}\n")),
              HasSubstr(path + "operator: unsupported value \"Equals\""));
  EXPECT_THAT(error_of(plugin_args("NodeAffinity", head + "            - {key: \"a b\", operator: Exists}\n")),
              HasSubstr(path + "key: \"a b\""));
  EXPECT_THAT(error_of(plugin_args("NodeAffinity", head + "            - {key: a, operator: In, values: [\"x y\"]}\n")),
              HasSubstr(path + "values[0]: \"x y\""));
}

TEST(NodeAffinityArgsTest, MatchFieldsAllowOnlyInAndNotInWithOneValue) {
  const std::string head =
      "      addedAffinity:\n"
      "        requiredDuringSchedulingIgnoredDuringExecution:\n"
      "          nodeSelectorTerms:\n"
      "          - matchFields:\n";
  EXPECT_THAT(error_of(plugin_args("NodeAffinity", head + "            - {key: metadata.name, operator: Exists}\n")),
              HasSubstr("matchFields[0].operator: unsupported value \"Exists\""));
  EXPECT_THAT(error_of(plugin_args("NodeAffinity", head + "            - {key: metadata.name, operator: In, "
                                                          "values: [a, b]}\n")),
              HasSubstr("matchFields[0].values: must have exactly one element"));
}

TEST(NodeAffinityArgsTest, PreferredWeightsOutsideOneToHundredAreRejected) {
  const auto args = [](const std::string& weight) {
    return plugin_args("NodeAffinity",
                       "      addedAffinity:\n"
                       "        preferredDuringSchedulingIgnoredDuringExecution:\n"
                       "        - weight: 5\n"
                       "          preference: {matchExpressions: [{key: a, operator: Exists}]}\n"
                       "        - weight: " +
                           weight +
                           "\n"
                           "          preference: {matchExpressions: [{key: b, operator: Exists}]}\n");
  };
  for (const std::string w : {"101", "-1"}) {
    EXPECT_EQ(error_of(args(w)),
              "sched.yaml: profiles[0].pluginConfig[0] (NodeAffinity): "
              "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[1].weight: must be in the range [1, "
              "100] (or 0, which turns the term off), got " +
                  w);
  }
  EXPECT_EQ(parse(args("100")).profiles.at(0).node_affinity_args.added_affinity->preferred.at(1).weight, 100);
}

TEST(NodeAffinityArgsTest, TermsThatNeverCountAreNotValidated) {
  // Upstream skips preferred terms of weight 0 before parsing them.
  const ProfileConfig p = parse_profile(
      "  pluginConfig:\n  - name: NodeAffinity\n    args:\n"
      "      addedAffinity:\n"
      "        preferredDuringSchedulingIgnoredDuringExecution:\n"
      "        - weight: 0\n"
      "          preference:\n"
      "            matchExpressions:\n"
      "            - {key: a, operator: Bogus}\n");
  EXPECT_EQ(p.node_affinity_args.added_affinity->preferred.size(), 1u);
}

// ---------------------------------------------------------------------------
// InterPodAffinityArgs
// ---------------------------------------------------------------------------

TEST(InterPodAffinityArgsTest, ValuesAreStored) {
  const ProfileConfig p = parse_profile(
      "  pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
      "      hardPodAffinityWeight: 0\n      ignorePreferredTermsOfExistingPods: true\n");
  EXPECT_EQ(p.inter_pod_affinity_args.hard_pod_affinity_weight, 0);
  EXPECT_TRUE(p.inter_pod_affinity_args.ignore_preferred_terms_of_existing_pods);
}

TEST(InterPodAffinityArgsTest, HardWeightOutOfRangeIsRejected) {
  EXPECT_EQ(error_of(plugin_args("InterPodAffinity", "      hardPodAffinityWeight: 101\n")),
            "sched.yaml: profiles[0].pluginConfig[0] (InterPodAffinity): hardPodAffinityWeight: "
            "must be in the range [0, 100], got 101");
}

// ---------------------------------------------------------------------------
// PodTopologySpreadArgs
// ---------------------------------------------------------------------------

TEST(PodTopologySpreadArgsTest, ListDefaultingKeepsConstraints) {
  const ProfileConfig p = parse_profile(
      "  pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
      "      defaultingType: List\n"
      "      defaultConstraints:\n"
      "      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, "
      "whenUnsatisfiable: DoNotSchedule}\n"
      "      - {maxSkew: 4, topologyKey: kubernetes.io/hostname, "
      "whenUnsatisfiable: ScheduleAnyway}\n");
  const PodTopologySpreadArgs& a = p.pod_topology_spread_args;
  EXPECT_EQ(a.defaulting_type, "List");
  ASSERT_EQ(a.default_constraints.size(), 2u);
  EXPECT_EQ(a.default_constraints[0].max_skew, 1);
  EXPECT_EQ(a.default_constraints[0].topology_key, "topology.kubernetes.io/zone");
  EXPECT_EQ(a.default_constraints[1].when_unsatisfiable, "ScheduleAnyway");
}

TEST(PodTopologySpreadArgsTest, ListWithoutConstraintsIsValid) {
  const ProfileConfig p =
      parse_profile("  pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultingType: List}\n");
  EXPECT_EQ(p.pod_topology_spread_args.defaulting_type, "List");
  EXPECT_TRUE(p.pod_topology_spread_args.default_constraints.empty());
}

TEST(PodTopologySpreadArgsTest, ConstraintsAreValidated) {
  const std::string list = "      defaultingType: List\n      defaultConstraints:\n";
  const std::string prefix = "(PodTopologySpread): defaultConstraints[0].";
  EXPECT_THAT(error_of(plugin_args("PodTopologySpread",
                                   "      defaultConstraints:\n      - {maxSkew: 1, topologyKey: "
                                   "k, whenUnsatisfiable: DoNotSchedule}\n")),
              HasSubstr("(PodTopologySpread): defaultingType: must be \"List\""));
  EXPECT_THAT(error_of(plugin_args("PodTopologySpread", "      defaultingType: Auto\n")),
              HasSubstr("defaultingType: unsupported value \"Auto\""));
  EXPECT_THAT(error_of(plugin_args("PodTopologySpread", list + "      - {maxSkew: 0, topologyKey: k, "
                                                               "whenUnsatisfiable: DoNotSchedule}\n")),
              HasSubstr(prefix + "maxSkew: must be greater than 0, got 0"));
  EXPECT_THAT(
      error_of(plugin_args("PodTopologySpread", list + "      - {maxSkew: 1, whenUnsatisfiable: DoNotSchedule}\n")),
      HasSubstr(prefix + "topologyKey: required"));
  EXPECT_THAT(error_of(plugin_args("PodTopologySpread", list + "      - {maxSkew: 1, topologyKey: k}\n")),
              HasSubstr(prefix + "whenUnsatisfiable: required"));
  EXPECT_THAT(error_of(plugin_args("PodTopologySpread", list + "      - {maxSkew: 1, topologyKey: k, "
                                                               "whenUnsatisfiable: Never}\n")),
              HasSubstr(prefix + "whenUnsatisfiable: unsupported value \"Never\""));
  EXPECT_THAT(
      error_of(plugin_args("PodTopologySpread", list + "      - {maxSkew: 1, topologyKey: k, "
                                                       "whenUnsatisfiable: DoNotSchedule, labelSelector: {}}\n")),
      HasSubstr(prefix + "labelSelector: must not be set"));
  EXPECT_THAT(error_of(plugin_args("PodTopologySpread", list + "      - {maxSkew: 1, topologyKey: k, "
                                                               "whenUnsatisfiable: DoNotSchedule}\n"
                                                               "      - {maxSkew: 2, topologyKey: k, "
                                                               "whenUnsatisfiable: DoNotSchedule}\n")),
              HasSubstr("defaultConstraints[1]: duplicate constraint {k, DoNotSchedule}"));
}

// ---------------------------------------------------------------------------
// WorkloadType (bulkscore's own plugin) and its WorkloadTypeArgs
// ---------------------------------------------------------------------------

bool lists(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

TEST(WorkloadTypeConfig, OffByDefault) {
  const ProfileConfig p = default_scheduler_config().profiles.at(0);
  EXPECT_FALSE(lists(p.pre_filter, "WorkloadType"));
  EXPECT_FALSE(lists(p.filter, "WorkloadType"));
  const WorkloadTypeArgs& a = p.workload_type_args;
  EXPECT_EQ(a.label_key, "workload-type");
  EXPECT_EQ(a.cpu_intensive_value, "CPU-intensive");
  EXPECT_EQ(a.gpu_intensive_value, "GPU-intensive");
  EXPECT_EQ(a.cpu_threshold_milli, 2000);
  EXPECT_THAT(a.gpu_resource_names, ElementsAre("nvidia.com/gpu"));
}

TEST(WorkloadTypeConfig, EnabledAtPreFilterAndFilter) {
  const ProfileConfig p = parse_profile(
      "  plugins:\n    preFilter:\n      enabled:\n      - name: WorkloadType\n"
      "    filter:\n      enabled:\n      - name: WorkloadType\n");
  std::vector<std::string> pre_filter = kDefaultPreFilter;
  pre_filter.push_back("WorkloadType");
  std::vector<std::string> filter = kDefaultFilter;
  filter.push_back("WorkloadType");
  EXPECT_EQ(p.pre_filter, pre_filter);
  EXPECT_EQ(p.filter, filter);
  EXPECT_EQ(p.pre_score, kDefaultPreScore);
  EXPECT_EQ(score_weights(p), kDefaultScore);
}

TEST(WorkloadTypeConfig, EnabledThroughMultiPointAtItsTwoPointsOnly) {
  const ProfileConfig p = parse_profile("  plugins:\n    multiPoint:\n      enabled:\n      - name: WorkloadType\n");
  ASSERT_FALSE(p.pre_filter.empty());
  ASSERT_FALSE(p.filter.empty());
  EXPECT_EQ(p.pre_filter.back(), "WorkloadType");
  EXPECT_EQ(p.filter.back(), "WorkloadType");
  EXPECT_EQ(p.pre_filter.size(), kDefaultPreFilter.size() + 1);
  EXPECT_EQ(p.filter.size(), kDefaultFilter.size() + 1);
  EXPECT_EQ(p.pre_score, kDefaultPreScore);
  EXPECT_EQ(score_weights(p), kDefaultScore);
}

TEST(WorkloadTypeConfig, AtAScorePointIsRejected) {
  EXPECT_THAT(error_of("profiles:\n- plugins:\n    score:\n      enabled:\n      - name: WorkloadType\n"),
              HasSubstr("WorkloadType"));
}

TEST(WorkloadTypeArgsTest, AbsentArgsAndFieldsKeepTheDefaults) {
  for (const char* args : {"", "      {}\n", "      labelKey: null\n      gpuResourceNames: ~\n"}) {
    SCOPED_TRACE(args);
    const ProfileConfig p = parse_profile(std::string("  pluginConfig:\n  - name: WorkloadType\n") +
                                          (*args ? std::string("    args:\n") + args : ""));
    const WorkloadTypeArgs& a = p.workload_type_args;
    EXPECT_EQ(a.label_key, "workload-type");
    EXPECT_EQ(a.cpu_intensive_value, "CPU-intensive");
    EXPECT_EQ(a.gpu_intensive_value, "GPU-intensive");
    EXPECT_EQ(a.cpu_threshold_milli, 2000);
    EXPECT_THAT(a.gpu_resource_names, ElementsAre("nvidia.com/gpu"));
  }
}

TEST(WorkloadTypeArgsTest, ValuesAreStored) {
  const ProfileConfig p = parse_profile(
      "  plugins:\n    multiPoint:\n      enabled:\n      - name: WorkloadType\n"
      "  pluginConfig:\n  - name: WorkloadType\n    args:\n"
      "      apiVersion: kubescheduler.config.k8s.io/v1\n      kind: WorkloadTypeArgs\n"
      "      labelKey: example.com/profile\n      cpuIntensiveValue: compute\n"
      "      gpuIntensiveValue: training\n      cpuThreshold: 1500m\n"
      "      gpuResourceNames: [amd.com/gpu, nvidia.com/gpu]\n");
  const WorkloadTypeArgs& a = p.workload_type_args;
  EXPECT_EQ(a.label_key, "example.com/profile");
  EXPECT_EQ(a.cpu_intensive_value, "compute");
  EXPECT_EQ(a.gpu_intensive_value, "training");
  EXPECT_EQ(a.cpu_threshold_milli, 1500);
  EXPECT_THAT(a.gpu_resource_names, ElementsAre("amd.com/gpu", "nvidia.com/gpu"));
}

TEST(WorkloadTypeArgsTest, CpuThresholdIsACpuQuantity) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"\"2\"", 2000}, {"2", 2000}, {"4000m", 4000}, {"\"0.5\"", 500}, {"0", 0}, {"0x10", 16000}, {"1u", 1}};
  for (const auto& [text, milli] : cases) {
    SCOPED_TRACE(text);
    const ProfileConfig p =
        parse_profile("  pluginConfig:\n  - name: WorkloadType\n    args:\n      cpuThreshold: " + text + "\n");
    EXPECT_EQ(p.workload_type_args.cpu_threshold_milli, milli);
  }
}

TEST(WorkloadTypeArgsTest, EachInvalidFieldIsNamed) {
  const std::string prefix = "sched.yaml: profiles[0].pluginConfig[0] (WorkloadType): ";
  const auto error = [](const std::string& args) { return error_of(plugin_args("WorkloadType", args)); };
  EXPECT_THAT(error("      labelKey: \"\"\n"), HasSubstr(prefix + "labelKey: must not be empty"));
  EXPECT_THAT(error("      labelKey: a/b/c\n"), HasSubstr(prefix + "labelKey: \"a/b/c\": must be a qualified name"));
  EXPECT_THAT(error("      labelKey: -bad\n"), HasSubstr(prefix + "labelKey: \"-bad\": the name part"));
  EXPECT_THAT(error("      labelKey: 7\n"), HasSubstr(prefix + "labelKey: must be a string"));
  EXPECT_THAT(error("      cpuIntensiveValue: \"\"\n"), HasSubstr(prefix + "cpuIntensiveValue: must not be empty"));
  EXPECT_THAT(error("      gpuIntensiveValue: \"\"\n"), HasSubstr(prefix + "gpuIntensiveValue: must not be empty"));
  EXPECT_THAT(error("      cpuIntensiveValue: \"has space\"\n"),
              HasSubstr(prefix + "cpuIntensiveValue: \"has space\": a non-empty label value"));
  EXPECT_THAT(error("      cpuIntensiveValue: heavy\n      gpuIntensiveValue: heavy\n"),
              HasSubstr(prefix + "gpuIntensiveValue: must differ from cpuIntensiveValue, both are \"heavy\""));
  EXPECT_THAT(error("      gpuIntensiveValue: CPU-intensive\n"),
              HasSubstr(prefix + "gpuIntensiveValue: must differ from cpuIntensiveValue"));
  EXPECT_THAT(error("      cpuThreshold: -1\n"), HasSubstr(prefix + "cpuThreshold: must not be negative, got -1000m"));
  EXPECT_THAT(error("      cpuThreshold: lots\n"), HasSubstr(prefix + "cpuThreshold: bad quantity \"lots\""));
  EXPECT_THAT(error("      cpuThreshold: 1.5\n"), HasSubstr(prefix + "cpuThreshold: must be a cpu quantity"));
  EXPECT_THAT(error("      cpuThreshold: [2]\n"), HasSubstr(prefix + "cpuThreshold: must be a cpu quantity"));
  EXPECT_THAT(error("      gpuResourceNames: []\n"),
              HasSubstr(prefix + "gpuResourceNames: at least one resource name is required"));
  EXPECT_THAT(error("      gpuResourceNames: [nvidia.com/gpu, nvidia.com/gpu]\n"),
              HasSubstr(prefix + "gpuResourceNames[1]: duplicate resource \"nvidia.com/gpu\""));
  EXPECT_THAT(error("      gpuResourceNames: [nvidia.com/gpu, cpu]\n"),
              HasSubstr(prefix + "gpuResourceNames[1]: \"cpu\": must be an extended resource name"));
  EXPECT_THAT(error("      gpuResourceNames: [kubernetes.io/gpu]\n"),
              HasSubstr(prefix + "gpuResourceNames[0]: \"kubernetes.io/gpu\": must be an extended resource name"));
  EXPECT_THAT(error("      gpuResourceNames: [a/b/c]\n"),
              HasSubstr(prefix + "gpuResourceNames[0]: \"a/b/c\": must be a qualified name"));
  EXPECT_THAT(error("      gpuResourceNames: nvidia.com/gpu\n"),
              HasSubstr(prefix + "gpuResourceNames: must be a list"));
  EXPECT_THAT(error("      gpuResources: [nvidia.com/gpu]\n"), HasSubstr(prefix + "gpuResources: unknown field"));
  EXPECT_THAT(error("      kind: NodeAffinityArgs\n"), HasSubstr("kind: must be WorkloadTypeArgs"));
}

// ---------------------------------------------------------------------------
// GpuShare and the GPU placement policies (bulkscore's own plugins)
// ---------------------------------------------------------------------------

SchedulerConfig parse_body(const std::string& body) {
  return parse_scheduler_config(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body, "sched.yaml");
}

TEST(GpuPolicyConfig, OffByDefaultAndEnabledByName) {
  const ProfileConfig d = default_scheduler_config().profiles.at(0);
  EXPECT_FALSE(lists(d.filter, "GpuShare"));
  for (const auto& e : d.score) EXPECT_EQ(e.name.rfind("Gpu", 0), std::string::npos) << e.name;
  const SchedulerConfig c = parse_body(
      "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: GpuShare}, {name: GpuFragmentation, weight: "
      "1000}]\n    score:\n      disabled: [{name: '*'}]\n      enabled: [{name: GpuFragmentation, weight: 1000}]\n");
  const ProfileConfig& p = c.profiles.at(0);
  EXPECT_EQ(p.filter.back(), "GpuShare");
  EXPECT_EQ(p.pre_filter.back(), "GpuShare");
  ASSERT_EQ(p.score.size(), 1u);
  EXPECT_EQ(p.score[0].name, "GpuFragmentation");
  EXPECT_EQ(p.score[0].weight, 1000);
  // GpuShare has no Score; the policies no Filter.
  EXPECT_THAT(error_of("profiles:\n- plugins:\n    score:\n      enabled: [{name: GpuShare}]\n"),
              HasSubstr("does not implement the score extension point"));
  EXPECT_THAT(error_of("profiles:\n- plugins:\n    filter:\n      enabled: [{name: GpuPacking}]\n"),
              HasSubstr("does not implement the filter extension point"));
}

TEST(GpuPolicyConfig, ArgsAreReadAndValidated) {
  const SchedulerConfig c = parse_body(
      "profiles:\n- pluginConfig:\n  - name: GpuShare\n    args:\n      countResource: nvidia.com/gpu\n"
      "      deviceSelection: Fragmentation\n  - name: GpuFragmentation\n    args:\n      typicalTasks:\n"
      "      - {cpuMilli: 4000, gpuMilli: 500, gpuCount: 1, weight: 3}\n"
      "      - {cpuMilli: 8000, gpuCount: 2, cardModels: [T4, A10, T4], weight: 1}\n"
      "  - name: GpuBestFit\n    args: {maxCpuMilli: 96000, maxGpuUnits: 4000, seed: 9}\n");
  const ProfileConfig& p = c.profiles.at(0);
  EXPECT_EQ(p.gpu_share_args.model.count_resource, "nvidia.com/gpu");
  EXPECT_EQ(p.gpu_share_args.model.milli_resource, "alibabacloud.com/gpu-milli");
  EXPECT_EQ(p.gpu_share_args.selection, DeviceSelection::Fragmentation);
  const auto& t = p.gpu_fragmentation_args.typical_tasks;
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].milli, 500);
  EXPECT_DOUBLE_EQ(t[0].weight, 0.75);
  EXPECT_EQ(t[1].milli, kWholeDevice);  // a count without units: whole devices
  EXPECT_EQ(t[1].models, (std::vector<std::string>{"A10", "T4"}));
  EXPECT_DOUBLE_EQ(t[1].weight, 0.25);
  EXPECT_EQ(p.gpu_score_args.max_cpu_milli, 96000);
  EXPECT_EQ(p.gpu_score_args.max_gpu_units, 4000);
  EXPECT_EQ(p.gpu_score_args.seed, 9u);

  const auto error = [](const std::string& plugin, const std::string& args) {
    return error_of(plugin_args(plugin, args));
  };
  const std::string gs = "sched.yaml: profiles[0].pluginConfig[0] (GpuShare): ";
  EXPECT_THAT(error("GpuShare", "      deviceSelection: Tightest\n"),
              HasSubstr(gs + "deviceSelection: must be Best, Worst, First, Fragmentation or Random, got \"Tightest\""));
  EXPECT_THAT(error("GpuShare", "      countResource: gpu\n"),
              HasSubstr(gs + "countResource: must be an extended resource name with a domain"));
  EXPECT_THAT(error("GpuShare", "      podIndexAnnotation: alibabacloud.com/gpu-count\n"),
              HasSubstr("podCountAnnotation, podMilliAnnotation, podCardModelAnnotation and podIndexAnnotation must "
                        "differ"));
  EXPECT_THAT(error("GpuShare", "      milliResource: alibabacloud.com/gpu-count\n"),
              HasSubstr(gs + "milliResource: must differ from countResource"));
  EXPECT_THAT(error("GpuShare", "      gpuCount: 1\n"), HasSubstr(gs + "gpuCount: unknown field"));
  const std::string fg = "sched.yaml: profiles[0].pluginConfig[0] (GpuFragmentation): ";
  EXPECT_THAT(error("GpuFragmentation", "      typicalTasks: [{gpuCount: 1}]\n"),
              HasSubstr(fg + "typicalTasks[0].weight: is required"));
  EXPECT_THAT(error("GpuFragmentation", "      typicalTasks: [{gpuCount: 1, weight: 0}]\n"),
              HasSubstr(fg + "typicalTasks[0].weight: must be a positive number"));
  EXPECT_THAT(error("GpuFragmentation", "      typicalTasks: [{gpuCount: 65, weight: 1}]\n"),
              HasSubstr(fg + "typicalTasks[0].gpuCount: must be in the range [0, 64], got 65"));
  EXPECT_THAT(error("GpuFragmentation", "      typicalTasks: [{gpus: 1, weight: 1}]\n"),
              HasSubstr(fg + "typicalTasks[0].gpus: unknown field"));
  EXPECT_THAT(error("GpuPacking", "      maxGpuUnits: 0\n"),
              HasSubstr("(GpuPacking): maxGpuUnits: must be positive, got 0"));
  EXPECT_THAT(error("GpuRandomFit", "      seed: -1\n"), HasSubstr("(GpuRandomFit): seed: must not be negative"));
}

// ---------------------------------------------------------------------------
// Args bulkscore validates but does not keep
// ---------------------------------------------------------------------------

TEST(DefaultPreemptionArgsTest, RangesAreValidated) {
  parse(plugin_args("DefaultPreemption", "      minCandidateNodesPercentage: 0\n      minCandidateNodesAbsolute: 5\n"));
  EXPECT_THAT(error_of(plugin_args("DefaultPreemption", "      minCandidateNodesPercentage: 101\n")),
              HasSubstr("minCandidateNodesPercentage: must be in the range [0, 100], got 101"));
  EXPECT_THAT(error_of(plugin_args("DefaultPreemption", "      minCandidateNodesAbsolute: -1\n")),
              HasSubstr("minCandidateNodesAbsolute: must be >= 0"));
  EXPECT_THAT(error_of(plugin_args("DefaultPreemption",
                                   "      minCandidateNodesPercentage: 0\n"
                                   "      minCandidateNodesAbsolute: 0\n")),
              HasSubstr("cannot be zero at the same time"));
}

TEST(VolumeBindingArgsTest, TimeoutAndShapeAreValidated) {
  parse(plugin_args("VolumeBinding", "      bindTimeoutSeconds: 0\n"));
  EXPECT_THAT(error_of(plugin_args("VolumeBinding", "      bindTimeoutSeconds: -1\n")),
              HasSubstr("(VolumeBinding): bindTimeoutSeconds: must not be negative"));
  EXPECT_THAT(error_of(plugin_args("VolumeBinding", "      shape:\n      - {utilization: 0, score: 10}\n")),
              HasSubstr("(VolumeBinding): shape: unexpected field"));
}

TEST(DynamicResourcesArgsTest, TimeoutsFollowTheDefaultFeatureGates) {
  parse(plugin_args("DynamicResources", "      filterTimeout: 10s\n"));
  parse(plugin_args("DynamicResources", "      filterTimeout: 1m30.5s\n"));
  EXPECT_THAT(error_of(plugin_args("DynamicResources", "      filterTimeout: -1s\n")),
              HasSubstr("filterTimeout: must be zero or positive"));
  EXPECT_THAT(error_of(plugin_args("DynamicResources", "      filterTimeout: soon\n")),
              HasSubstr("filterTimeout: \"soon\" is not a duration"));
  EXPECT_THAT(error_of(plugin_args("DynamicResources", "      bindingTimeout: 10s\n")),
              HasSubstr("bindingTimeout: forbidden"));
}

// ---------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------

TEST(LoadSchedulerConfig, ReadsABinPackingFixture) {
  const std::string path = std::string(BULKSCORE_SOURCE_DIR) + "/tests/data/config/bin_packing.yaml";
  const SchedulerConfig c = load_scheduler_config(path);
  ASSERT_EQ(c.profiles.size(), 2u);
  const ProfileConfig& packing = c.profiles[1];
  EXPECT_EQ(c.profiles[0].scheduler_name, "default-scheduler");
  EXPECT_EQ(c.profiles[0].percentage_of_nodes_to_score, 50);
  EXPECT_EQ(packing.scheduler_name, "bin-packing");
  EXPECT_EQ(packing.percentage_of_nodes_to_score, 100);
  EXPECT_EQ(packing.fit_args.strategy, ScoringStrategyType::MostAllocated);
  EXPECT_EQ(score_weights(packing), (W{{"NodeResourcesFit", 5},
                                       {"TaintToleration", 3},
                                       {"NodeAffinity", 2},
                                       {"VolumeBinding", 1},
                                       {"PodTopologySpread", 2},
                                       {"InterPodAffinity", 2},
                                       {"DynamicResources", 2}}));
}

TEST(LoadSchedulerConfig, MissingFileIsAnInputError) {
  EXPECT_THROW(load_scheduler_config("/nonexistent/bulkscore/sched.yaml"), InputError);
}

TEST(LoadSchedulerConfig, ErrorsNameTheFile) {
  const std::string path = std::string(BULKSCORE_SOURCE_DIR) + "/tests/data/config/bad_weight.yaml";
  try {
    load_scheduler_config(path);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path + ": profiles[0].pluginConfig[0] (NodeResourcesFit): "
                                           "scoringStrategy.resources[1].weight"));
  }
}

}  // namespace
}  // namespace bulkscore
