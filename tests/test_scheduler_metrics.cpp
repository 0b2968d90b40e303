// The engine's kube-scheduler metrics (host/engine/scheduler_metrics.hpp):
// Engine::metrics_text() read back by a strict Prometheus text-format
// parser, after scheduling a small cluster with two profiles (pods
// scheduled, unschedulable at PreFilter and at Filter, and one failing with
// an error); the pending and unschedulable counts through re-attempts,
// removal, assume and a new node; decisions unchanged by the metrics;
// counts equal on every backend; Go's float format for the bucket bounds.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench/generator/generator.hpp"
#include "bulkscore/version.h"
#include "host/engine/engine.hpp"
#include "host/input/k8s_json.hpp"
#include "tests/cli_run.hpp"
#include "tests/test_util.hpp"

using namespace bulkscore;
using namespace bulkscore::testutil;

namespace {

// ---- a strict reader of the Prometheus text exposition format (0.0.4) ----------

using Labels = std::map<std::string, std::string>;

struct Sample {
  std::string name;
  Labels labels;
  double value = 0;
};

struct Exposition {
  std::map<std::string, std::string> type;  // family -> counter | gauge | histogram | ...
  std::map<std::string, std::string> help;
  std::vector<Sample> samples;

  // The value of the one sample with this name and exactly these labels;
  // NaN when there is none.
  double value(const std::string& name, const Labels& labels) const {
    for (const Sample& s : samples)
      if (s.name == name && s.labels == labels) return s.value;
    return std::nan("");
  }
  bool has(const std::string& name, const Labels& labels) const { return !std::isnan(value(name, labels)); }
  // The samples of `name` whose labels include `subset`.
  std::vector<Sample> matching(const std::string& name, const Labels& subset) const {
    std::vector<Sample> out;
    for (const Sample& s : samples) {
      if (s.name != name) continue;
      bool all = true;
      for (const auto& [k, v] : subset) {
        auto it = s.labels.find(k);
        all = all && it != s.labels.end() && it->second == v;
      }
      if (all) out.push_back(s);
    }
    return out;
  }
};

bool metric_name_ok(const std::string& n) {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool label_name_ok(const std::string& n) {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return n.rfind("__", 0) != 0;  // reserved
}

// A sample value as Go's ParseFloat reads it (what Prometheus accepts).
bool parse_value(const std::string& t, double& out) {
  if (t == "+Inf" || t == "Inf") {
    out = std::numeric_limits<double>::infinity();
    return true;
  }
  if (t == "-Inf") {
    out = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (t == "NaN") {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (t.empty()) return false;
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && t.find_first_of("xXpP") == std::string::npos;
}

// The family a sample belongs to (its name less a histogram's suffix).
std::string family_of(const std::string& name, const std::map<std::string, std::string>& types) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      std::string base = name.substr(0, name.size() - s.size());
      auto it = types.find(base);
      if (it != types.end() && (it->second == "histogram" || it->second == "summary")) return base;
    }
  }
  return name;
}

// Parses `text`, adding a test failure for every way it breaks the format:
// names, label syntax and escapes, HELP and TYPE once per family before its
// samples, a family's samples together, no duplicate series, and per
// histogram series: le ascending, cumulative counts not decreasing, +Inf
// present and equal to _count, _sum present.
Exposition parse_exposition(const std::string& text) {
  Exposition e;
  EXPECT_TRUE(!text.empty() && text.back() == '\n') << "the text must end with a newline";
  std::istringstream in(text);
  std::string line;
  std::set<std::string> finished;  // families whose samples ended
  std::string current;             // the family of the last line
  std::set<std::pair<std::string, Labels>> seen;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::string where = "line " + std::to_string(n) + ": " + line;
    EXPECT_FALSE(line.empty()) << where;
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::istringstream ls(line);
      std::string hash, kind, name;
      ls >> hash >> kind >> name;
      if (kind != "HELP" && kind != "TYPE") continue;  // a comment
      EXPECT_TRUE(metric_name_ok(name)) << where;
      EXPECT_EQ(finished.count(name), 0u) << "family seen before: " << where;
      if (name != current && !current.empty()) finished.insert(current);
      current = name;
      std::string rest;
      std::getline(ls, rest);
      if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
      if (kind == "HELP") {
        EXPECT_EQ(e.help.count(name), 0u) << "second HELP: " << where;
        EXPECT_FALSE(rest.empty()) << where;
        for (size_t i = 0; i < rest.size(); ++i)
          if (rest[i] == '\\') {
            EXPECT_TRUE(i + 1 < rest.size() && (rest[i + 1] == '\\' || rest[i + 1] == 'n')) << where;
            ++i;
          }
        e.help[name] = rest;
      } else {
        EXPECT_EQ(e.type.count(name), 0u) << "second TYPE: " << where;
        EXPECT_TRUE(rest == "counter" || rest == "gauge" || rest == "histogram" || rest == "summary" ||
                    rest == "untyped")
            << where;
        e.type[name] = rest;
      }
      continue;
    }
    // name{label="value",...} value
    Sample s;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') s.name += line[i++];
    EXPECT_TRUE(metric_name_ok(s.name)) << where;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        std::string lname;
        while (i < line.size() && line[i] != '=') lname += line[i++];
        EXPECT_TRUE(label_name_ok(lname)) << "label name " << lname << " in " << where;
        EXPECT_TRUE(i + 1 < line.size() && line[i] == '=' && line[i + 1] == '"') << where;
        i += 2;
        std::string value;
        bool closed = false;
        while (i < line.size()) {
          const char c = line[i++];
          if (c == '"') {
            closed = true;
            break;
          }
          if (c == '\\') {
            EXPECT_LT(i, line.size()) << where;
            if (i >= line.size()) break;
            const char x = line[i++];
            EXPECT_TRUE(x == '\\' || x == '"' || x == 'n') << "escape \\" << x << " in " << where;
            value += x == 'n' ? '\n' : x;
          } else {
            value += c;
          }
        }
        EXPECT_TRUE(closed) << where;
        EXPECT_EQ(s.labels.count(lname), 0u) << "label twice: " << where;
        s.labels[lname] = value;
        if (i < line.size() && line[i] == ',') {
          ++i;
        } else {
          EXPECT_TRUE(i < line.size() && line[i] == '}') << where;
        }
      }
      EXPECT_LT(i, line.size()) << where;
      ++i;
    }
    EXPECT_TRUE(i < line.size() && line[i] == ' ') << where;
    const std::string rest = i < line.size() ? line.substr(i + 1) : "";
    const std::string value = rest.substr(0, rest.find(' '));  // an optional timestamp follows
    EXPECT_TRUE(parse_value(value, s.value)) << "value " << value << " in " << where;
    const std::string fam = family_of(s.name, e.type);
    EXPECT_EQ(e.type.count(fam), 1u) << "no TYPE before " << where;
    EXPECT_EQ(e.help.count(fam), 1u) << "no HELP before " << where;
    EXPECT_EQ(fam, current) << "a family's samples must be together: " << where;
    EXPECT_TRUE(seen.insert({s.name, s.labels}).second) << "duplicate series: " << where;
    if (e.type[fam] == "histogram" && s.name == fam) ADD_FAILURE() << "a histogram's sample needs a suffix: " << where;
    if (e.type[fam] == "counter" || e.type[fam] == "gauge") {
      EXPECT_EQ(s.name, fam) << where;
    }
    if (e.type[fam] == "counter") {
      EXPECT_GE(s.value, 0) << where;
    }
    e.samples.push_back(std::move(s));
  }
  // Histograms, series by series.
  for (const auto& [fam, type] : e.type) {
    if (type != "histogram") continue;
    std::map<Labels, std::vector<std::pair<double, double>>> buckets;  // series -> (le, count) in order
    std::map<Labels, double> sums, counts;
    for (const Sample& s : e.samples) {
      Labels base = s.labels;
      if (s.name == fam + "_bucket") {
        auto le = base.find("le");
        EXPECT_NE(le, base.end()) << fam << "_bucket without le";
        if (le == base.end()) continue;
        double bound = 0;
        EXPECT_TRUE(parse_value(le->second, bound)) << "le=" << le->second;
        base.erase(le);
        buckets[base].emplace_back(bound, s.value);
      } else if (s.name == fam + "_sum") {
        sums[base] = s.value;
      } else if (s.name == fam + "_count") {
        counts[base] = s.value;
      }
    }
    for (const auto& [series, bs] : buckets) {
      EXPECT_FALSE(bs.empty());
      for (size_t k = 1; k < bs.size(); ++k) {
        EXPECT_LT(bs[k - 1].first, bs[k].first) << fam << ": le not ascending";
        EXPECT_LE(bs[k - 1].second, bs[k].second) << fam << ": cumulative counts decrease";
      }
      EXPECT_TRUE(std::isinf(bs.back().first)) << fam << ": no +Inf bucket";
      EXPECT_EQ(counts.count(series), 1u) << fam << ": no _count";
      EXPECT_EQ(sums.count(series), 1u) << fam << ": no _sum";
      if (counts.count(series)) {
        EXPECT_EQ(bs.back().second, counts[series]) << fam << ": +Inf != _count";
      }
      if (sums.count(series)) {
        EXPECT_GE(sums[series], 0) << fam;
      }
    }
    for (const auto& [series, c] : counts) EXPECT_EQ(buckets.count(series), 1u) << fam << ": _count without buckets";
  }
  return e;
}

// ---- the cluster ------------------------------------------------------------

SchedulerConfig two_profiles() {
  SchedulerConfig config = default_scheduler_config();
  ProfileConfig second = config.profiles.front();
  second.scheduler_name = "second";
  // SeamProbe's unknown mode fails a scored pod with a PreScore error.
  second.score.push_back({"SeamProbe", 1});
  config.profiles.push_back(second);
  return config;
}

Pod pod_of(const std::string& name, const std::string& profile, int64_t cpu) {
  Pod p = make_pod(name, {container({{"cpu", cpu}, {"memory", 64 * kMiB}})});
  p.scheduler_name = profile;
  return p;
}

struct Pods {
  Pod a1 = pod_of("a1", "default-scheduler", 1000);
  Pod a2 = pod_of("a2", "default-scheduler", 1000);
  Pod big = pod_of("big", "default-scheduler", 100000);         // NodeResourcesFit at Filter
  Pod nowhere = pod_of("nowhere", "default-scheduler", 100);    // NodeAffinity at Filter
  Pod conflict = pod_of("conflict", "default-scheduler", 100);  // NodeAffinity at PreFilter
  Pod b1 = pod_of("b1", "second", 1000);
  Pod b_error = pod_of("b-error", "second", 1000);  // a PreScore error
  Pod b_big = pod_of("b-big", "second", 100000);
  Pods() {
    set_node_selector(nowhere, {{"pool", "none"}});
    require_node_affinity(
        conflict,
        {fields_term({requirement("metadata.name", "In", {"n0"}), requirement("metadata.name", "In", {"n1"})})});
    b1.annotations["bulkscore.io/seam-probe"] = "spread";
    b_error.annotations["bulkscore.io/seam-probe"] = "bogus";
  }
  std::vector<Pod> all() const { return {a1, a2, big, nowhere, conflict, b1, b_error, b_big}; }
};

Cluster small_cluster() {
  Cluster c;
  for (int i = 0; i < 3; ++i)
    c.nodes.push_back(make_node("n" + std::to_string(i), 4000, 8192 * kMiB, 32,
                                {{"topology.kubernetes.io/zone", "z" + std::to_string(i % 2)}}));
  return c;
}

double count_of(const Exposition& e, const std::string& family, const Labels& labels) {
  return e.value(family + "_count", labels);
}

double total(const std::vector<Sample>& samples) {
  double t = 0;
  for (const Sample& s : samples) t += s.value;
  return t;
}

}  // namespace

// Go's strconv.FormatFloat(v, 'g', -1, 64), as `go run` printed it for
// these values and for upstream's three bucket layouts.
TEST(SchedulerMetrics, FloatsAreWrittenAsGoWritesThem) {
  const std::vector<std::pair<double, const char*>> cases = {{1e6, "1e+06"},
                                                             {123456, "123456"},
                                                             {1234567, "1.234567e+06"},
                                                             {0.5, "0.5"},
                                                             {2.5e-07, "2.5e-07"},
                                                             {1e-05, "1e-05"},
                                                             {0.0001, "0.0001"},
                                                             {1e21, "1e+21"},
                                                             {100, "100"},
                                                             {-3.25, "-3.25"},
                                                             {9.999e-5, "9.999e-05"},
                                                             {0.00021851200000000002, "0.00021851200000000002"},
                                                             {0, "0"},
                                                             {1, "1"},
                                                             {std::numeric_limits<double>::infinity(), "+Inf"},
                                                             {-std::numeric_limits<double>::infinity(), "-Inf"}};
  for (const auto& [v, want] : cases) EXPECT_EQ(format_go_float(v), want) << v;
  const auto strings = [](double start, double factor, int count) {
    std::vector<std::string> out;
    for (double b : exponential_buckets(start, factor, count)) out.push_back(format_go_float(b));
    return out;
  };
  EXPECT_EQ(strings(0.001, 2, 15),
            (std::vector<std::string>{"0.001", "0.002", "0.004", "0.008", "0.016", "0.032", "0.064", "0.128", "0.256",
                                      "0.512", "1.024", "2.048", "4.096", "8.192", "16.384"}));
  EXPECT_EQ(strings(0.0001, 2, 12),
            (std::vector<std::string>{"0.0001", "0.0002", "0.0004", "0.0008", "0.0016", "0.0032", "0.0064", "0.0128",
                                      "0.0256", "0.0512", "0.1024", "0.2048"}));
  EXPECT_EQ(strings(0.00001, 1.5, 20), (std::vector<std::string>{"1e-05",
                                                                 "1.5000000000000002e-05",
                                                                 "2.2500000000000005e-05",
                                                                 "3.375000000000001e-05",
                                                                 "5.062500000000001e-05",
                                                                 "7.593750000000002e-05",
                                                                 "0.00011390625000000003",
                                                                 "0.00017085937500000006",
                                                                 "0.0002562890625000001",
                                                                 "0.00038443359375000017",
                                                                 "0.0005766503906250003",
                                                                 "0.0008649755859375004",
                                                                 "0.0012974633789062506",
                                                                 "0.0019461950683593758",
                                                                 "0.0029192926025390638",
                                                                 "0.004378938903808595",
                                                                 "0.006568408355712893",
                                                                 "0.009852612533569338",
                                                                 "0.014778918800354007",
                                                                 "0.02216837820053101"}));
}

// The parser itself refuses what Prometheus refuses.
TEST(SchedulerMetrics, TheParserIsStrict) {
  const auto failures = [](const std::string& text) {
    ::testing::TestPartResultArray results;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
      parse_exposition(text);
    }
    return results.size();
  };
  const std::string ok =
      "# HELP h x\n# TYPE h histogram\nh_bucket{a=\"1\",le=\"0.1\"} 1\nh_bucket{a=\"1\",le=\"+Inf\"} 2\n"
      "h_sum{a=\"1\"} 0.3\nh_count{a=\"1\"} 2\n# HELP c y\n# TYPE c counter\nc{b=\"q\\\"\\\\\\n\"} 3\n";
  EXPECT_EQ(failures(ok), 0);
  EXPECT_GT(failures("# HELP c y\n# TYPE c counter\n1c 3\n"), 0);            // name
  EXPECT_GT(failures("# HELP c y\n# TYPE c counter\nc{1b=\"x\"} 3\n"), 0);   // label name
  EXPECT_GT(failures("# HELP c y\n# TYPE c counter\nc{b=\"\\t\"} 3\n"), 0);  // escape
  EXPECT_GT(failures("# HELP c y\n# TYPE c counter\nc{b=\"x} 3\n"), 0);      // unclosed
  EXPECT_GT(failures("c 3\n"), 0);                                           // no TYPE
  EXPECT_GT(failures("# HELP c y\n# TYPE c counter\nc 3\nc 4\n"), 0);        // duplicate
  EXPECT_GT(failures("# HELP h x\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n"), 0);
  EXPECT_GT(failures("# HELP h x\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_sum 1\nh_count 2\n"), 0);  // no +Inf
  EXPECT_GT(failures("# HELP h x\n# TYPE h histogram\nh_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\n"
                     "h_count 2\n"),
            0);                                                                                    // decreasing
  EXPECT_GT(failures("# HELP h x\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 2\n"), 0);  // no _sum
  EXPECT_GT(failures("# HELP c y\n# TYPE c counter\nc 3"), 0);                                     // no final newline
}

// The text after a small cluster with two profiles: names, labels and values.
TEST(SchedulerMetrics, PrometheusTextAfterSchedulingTwoProfiles) {
  EngineOptions options;
  options.backend = "cpu";
  options.tie_break = TieBreak::First;
  options.plugin_metrics_sample_percent = 100;  // every cycle's plugins timed
  Engine engine(two_profiles(), options);
  engine.load(small_cluster());
  const Pods pods;
  std::map<std::string, ScheduleResult> results;
  for (const Pod& p : pods.all()) results[p.name] = engine.schedule(p);
  for (const char* placed : {"a1", "a2", "b1"}) EXPECT_GE(results[placed].node, 0) << placed;
  for (const char* failed : {"big", "nowhere", "conflict", "b-big"})
    EXPECT_TRUE(results[failed].code == Code::Unschedulable ||
                results[failed].code == Code::UnschedulableAndUnresolvable)
        << failed << " " << code_name(results[failed].code);
  EXPECT_EQ(results["b-error"].code, Code::Error) << results["b-error"].message;

  const std::string text = engine.metrics_text();
  const Exposition e = parse_exposition(text);
  SCOPED_TRACE(text);
  EXPECT_EQ(e.type.at("scheduler_schedule_attempts_total"), "counter");
  EXPECT_EQ(e.type.at("scheduler_scheduling_attempt_duration_seconds"), "histogram");
  EXPECT_EQ(e.type.at("scheduler_framework_extension_point_duration_seconds"), "histogram");
  EXPECT_EQ(e.type.at("scheduler_plugin_execution_duration_seconds"), "histogram");
  EXPECT_EQ(e.type.at("scheduler_unschedulable_pods"), "gauge");
  EXPECT_EQ(e.type.at("scheduler_pending_pods"), "gauge");
  EXPECT_EQ(e.type.at("bulkscore_build_info"), "gauge");
  EXPECT_EQ(e.type.at("scheduler_batch_attempts_total"), "counter");  // kept, unchanged
  EXPECT_EQ(e.type.at("bulkscore_batch_refiltered_nodes_total"), "counter");

  // Attempts by result and profile; the duration histogram counts each.
  const std::string attempts = "scheduler_schedule_attempts_total";
  const std::map<std::pair<std::string, std::string>, double> want = {
      {{"default-scheduler", "scheduled"}, 2}, {{"default-scheduler", "unschedulable"}, 3},
      {{"default-scheduler", "error"}, 0},     {{"second", "scheduled"}, 1},
      {{"second", "unschedulable"}, 1},        {{"second", "error"}, 1}};
  for (const auto& [key, n] : want) {
    const Labels l = {{"profile", key.first}, {"result", key.second}};
    EXPECT_EQ(e.value(attempts, l), n) << key.first << " " << key.second;
    if (n > 0) {
      EXPECT_EQ(count_of(e, "scheduler_scheduling_attempt_duration_seconds", l), n);
    } else {
      EXPECT_FALSE(e.has("scheduler_scheduling_attempt_duration_seconds_count", l));
    }
  }
  // Upstream's buckets for the attempt duration: 1 ms to 16.384 s.
  const auto attempt_buckets =
      e.matching("scheduler_scheduling_attempt_duration_seconds_bucket", {{"profile", "second"}, {"result", "error"}});
  ASSERT_EQ(attempt_buckets.size(), 16u);
  EXPECT_EQ(attempt_buckets.front().labels.at("le"), "0.001");
  EXPECT_EQ(attempt_buckets[14].labels.at("le"), "16.384");

  // Extension points: PreFilter for every attempt (NodeAffinity's conflict
  // rejects one), Filter for those PreFilter let through, PreScore where
  // SeamProbe's feasible-set PreScore ran (b1; b-error's fails the pod).
  const std::string ep = "scheduler_framework_extension_point_duration_seconds";
  const auto ep_count = [&](const char* point, const char* profile, const char* status) {
    return count_of(e, ep, {{"extension_point", point}, {"profile", profile}, {"status", status}});
  };
  EXPECT_EQ(ep_count("PreFilter", "default-scheduler", "Success"), 4);
  EXPECT_EQ(ep_count("PreFilter", "default-scheduler", "UnschedulableAndUnresolvable"), 1);
  EXPECT_EQ(ep_count("Filter", "default-scheduler", "Success"), 4);
  EXPECT_EQ(ep_count("PreFilter", "second", "Success"), 3);
  EXPECT_EQ(ep_count("Filter", "second", "Success"), 3);
  EXPECT_EQ(ep_count("PreScore", "second", "Success"), 1);
  EXPECT_EQ(ep_count("PreScore", "second", "Error"), 1);
  EXPECT_TRUE(e.matching(ep + "_count", {{"extension_point", "PreScore"}, {"profile", "default-scheduler"}}).empty());
  EXPECT_TRUE(e.matching(ep + "_count", {{"extension_point", "Score"}}).empty());  // fused into Filter
  // DefaultPreemption after each FitError (no victims here: no node nominated).
  EXPECT_EQ(ep_count("PostFilter", "default-scheduler", "Unschedulable"), 3);
  EXPECT_EQ(ep_count("PostFilter", "second", "Unschedulable"), 1);
  EXPECT_EQ(e.matching(ep + "_bucket", {{"extension_point", "Filter"}, {"profile", "second"}}).front().labels.at("le"),
            "0.0001");

  // Plugins, every cycle sampled: each PreFilter plugin once per attempt
  // that reached PreFilter (8), NodeAffinity's rejection with its status;
  // Score-only plugins under PreScore; SeamProbe's statuses per pod.
  const std::string pe = "scheduler_plugin_execution_duration_seconds_count";
  EXPECT_EQ(total(e.matching(pe, {{"plugin", "NodeResourcesFit"}, {"extension_point", "PreFilter"}})), 8);
  EXPECT_EQ(total(e.matching(pe, {{"plugin", "NodeAffinity"}, {"extension_point", "PreFilter"}})), 8);
  EXPECT_EQ(e.value(pe, {{"plugin", "NodeAffinity"},
                         {"extension_point", "PreFilter"},
                         {"status", "UnschedulableAndUnresolvable"}}),
            1);
  EXPECT_EQ(total(e.matching(pe, {{"plugin", "ImageLocality"}, {"extension_point", "PreScore"}})), 8);
  EXPECT_EQ(e.value(pe, {{"plugin", "SeamProbe"}, {"extension_point", "PreScore"}, {"status", "Success"}}), 1);
  EXPECT_EQ(e.value(pe, {{"plugin", "SeamProbe"}, {"extension_point", "PreScore"}, {"status", "Error"}}), 1);
  EXPECT_EQ(e.value(pe, {{"plugin", "SeamProbe"}, {"extension_point", "PreScore"}, {"status", "Skip"}}), 1);
  EXPECT_EQ(e.matching("scheduler_plugin_execution_duration_seconds_bucket",
                       {{"plugin", "NodeResourcesFit"}, {"extension_point", "PreFilter"}, {"status", "Success"}})[1]
                .labels.at("le"),
            "1.5000000000000002e-05");
  EXPECT_NE(e.help.at("scheduler_plugin_execution_duration_seconds").find("100%"), std::string::npos);

  // Unschedulable pods by the plugins that rejected them; pending pods.
  const std::string up = "scheduler_unschedulable_pods";
  EXPECT_EQ(e.value(up, {{"plugin", "NodeResourcesFit"}, {"profile", "default-scheduler"}}), 1);  // big
  EXPECT_EQ(e.value(up, {{"plugin", "NodeAffinity"}, {"profile", "default-scheduler"}}), 2);      // nowhere, conflict
  EXPECT_EQ(e.value(up, {{"plugin", "NodeResourcesFit"}, {"profile", "second"}}), 1);             // b-big
  EXPECT_EQ(e.matching(up, {}).size(), 3u);
  EXPECT_EQ(e.value("scheduler_pending_pods", {{"queue", "unschedulable"}}), 4);
  EXPECT_EQ(e.value("scheduler_pending_pods", {{"queue", "backoff"}}), 1);  // b-error

  const auto info = e.matching("bulkscore_build_info", {});
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0].value, 1);
  EXPECT_EQ(info[0].labels.at("version"), BULKSCORE_VERSION);
  EXPECT_EQ(info[0].labels.at("backends").rfind("cpu", 0), 0u);

  // The struct says the same.
  const SchedulerMetrics m = engine.metrics();
  ASSERT_EQ(m.profiles.size(), 2u);
  EXPECT_EQ(m.profiles[1].name, "second");
  EXPECT_EQ(m.profiles[1].attempts[static_cast<size_t>(AttemptResult::kError)], 1u);
  EXPECT_EQ(m.profiles[0].attempt_duration[0].cumulative(15), 2u);
  EXPECT_EQ(m.pending_unschedulable, 4u);
  EXPECT_EQ(m.pending_backoff, 1u);
  EXPECT_EQ(m.batch.size(), 2u);
}

// Pending and unschedulable pods follow upstream's queue: a pod leaves when
// attempted again (and comes back if it fails again), removed, assumed, or
// scheduled once a node fits it.
TEST(SchedulerMetrics, PendingPodsLeaveWhenAttemptedRemovedOrPlaced) {
  EngineOptions options;
  options.backend = "cpu";
  options.tie_break = TieBreak::First;
  Engine engine(two_profiles(), options);
  engine.load(small_cluster());
  const Pods pods;
  for (const Pod& p : pods.all()) engine.schedule(p);
  const auto gauge = [&](const char* plugin, const char* profile) {
    for (const auto& u : engine.metrics().unschedulable_pods)
      if (u.plugin == plugin && u.profile == profile) return static_cast<int64_t>(u.pods);
    return int64_t{-1};  // no series
  };
  ASSERT_EQ(engine.metrics().pending_unschedulable, 4u);
  ASSERT_EQ(gauge("NodeResourcesFit", "default-scheduler"), 1);

  // Attempted again and still unschedulable: counted once.
  EXPECT_LT(engine.schedule(pods.big).node, 0);
  EXPECT_EQ(engine.metrics().pending_unschedulable, 4u);
  EXPECT_EQ(gauge("NodeResourcesFit", "default-scheduler"), 1);
  EXPECT_EQ(engine.metrics().profiles[0].attempts[static_cast<size_t>(AttemptResult::kUnschedulable)], 4u);

  // The informer's delete of the pending pod.
  EXPECT_TRUE(engine.remove_pending_pod(pods.big.cache_key()).ok());
  EXPECT_EQ(engine.remove_pending_pod(pods.big.cache_key()).code, EventCode::kNotFound);
  EXPECT_EQ(engine.remove_pending_pod("never-seen").code, EventCode::kNotFound);
  EXPECT_EQ(engine.metrics().pending_unschedulable, 3u);
  EXPECT_EQ(gauge("NodeResourcesFit", "default-scheduler"), 0);  // the series stays, at 0

  // A node that fits b-big: scheduled now, no longer pending.
  ASSERT_TRUE(engine.add_node(make_node("huge", 200000, 8192 * kMiB)).ok());
  EXPECT_GE(engine.schedule(pods.b_big).node, 0);
  EXPECT_EQ(engine.metrics().pending_unschedulable, 2u);
  EXPECT_EQ(gauge("NodeResourcesFit", "second"), 0);

  // Placed elsewhere (assume_pod), and bound by someone (add_pod).
  EXPECT_TRUE(engine.assume_pod(on_node(pods.nowhere, "n0")).ok());
  EXPECT_EQ(engine.metrics().pending_unschedulable, 1u);
  EXPECT_EQ(gauge("NodeAffinity", "default-scheduler"), 1);
  EXPECT_TRUE(engine.add_pod(on_node(pods.b_error, "n1")).ok());
  EXPECT_EQ(engine.metrics().pending_backoff, 0u);
  // A load whose running pods include a pending one: it is bound now.
  {
    Engine reloaded(two_profiles(), options);
    reloaded.load(small_cluster());
    EXPECT_LT(reloaded.schedule(pods.big).node, 0);
    ASSERT_EQ(reloaded.metrics().pending_unschedulable, 1u);
    Cluster with_big = small_cluster();
    with_big.nodes.push_back(make_node("huge", 200000, 8192 * kMiB));
    with_big.running_pods.push_back(on_node(pods.big, "huge"));
    reloaded.load(with_big);
    EXPECT_EQ(reloaded.metrics().pending_unschedulable, 0u);
    EXPECT_EQ(reloaded.metrics().profiles[0].attempts[static_cast<size_t>(AttemptResult::kUnschedulable)], 1u);
  }
  // A pod already in the cache is not an attempt (upstream skips it).
  const uint64_t before = engine.metrics().profiles[1].attempts[static_cast<size_t>(AttemptResult::kError)];
  EXPECT_EQ(engine.schedule(pods.b_error).code, Code::Error);
  EXPECT_EQ(engine.metrics().profiles[1].attempts[static_cast<size_t>(AttemptResult::kError)], before);
  // An engine without nodes: unschedulable with no plugin to blame, backoff.
  Engine empty(two_profiles(), options);
  EXPECT_LT(empty.schedule(pods.a1).node, 0);
  const SchedulerMetrics m = empty.metrics();
  EXPECT_EQ(m.profiles[0].attempts[static_cast<size_t>(AttemptResult::kUnschedulable)], 1u);
  EXPECT_EQ(m.pending_backoff, 1u);
  EXPECT_TRUE(m.extension_points.empty());  // no PreFilter: upstream stops before it too
}

namespace {

// What the metrics count, durations left out: by series, the number of
// observations (and the counters and gauges as they are).
std::map<std::string, uint64_t> counts_of(const SchedulerMetrics& m, bool with_plugins) {
  std::map<std::string, uint64_t> out;
  for (const auto& p : m.profiles)
    for (size_t r = 0; r < kNumAttemptResults; ++r) {
      out["attempts/" + p.name + "/" + std::to_string(r)] = p.attempts[r];
      out["attempt_duration/" + p.name + "/" + std::to_string(r)] = p.attempt_duration[r].count;
    }
  for (const auto& s : m.extension_points)
    out[std::string("ep/") + s.profile + "/" + extension_point_name(s.extension_point) + "/" + code_name(s.status)] =
        s.duration.count;
  if (with_plugins)
    for (const auto& s : m.plugins)
      out[std::string("plugin/") + s.plugin + "/" + extension_point_name(s.extension_point) + "/" +
          code_name(s.status)] = s.duration.count;
  for (const auto& u : m.unschedulable_pods) out["unschedulable/" + u.plugin + "/" + u.profile] = u.pods;
  out["pending/unschedulable"] = m.pending_unschedulable;
  out["pending/backoff"] = m.pending_backoff;
  return out;
}

struct GeneratedRun {
  std::vector<std::string> lines;  // node and score per pod
  SchedulerMetrics metrics;
};

GeneratedRun run_generated(const std::string& backend, uint32_t sample_percent, int threads) {
  GeneratorOptions g;
  g.nodes = 150;
  g.running_pods = 200;
  g.pending_pods = 400;
  g.seed = 11;
  const std::string dir = ::testing::TempDir();
  const std::string nodes_path = dir + "/metrics-nodes.json", pods_path = dir + "/metrics-pods.json";
  write_generated_cluster(g, nodes_path, pods_path);
  Cluster cluster = assemble_cluster(load_nodes_json(nodes_path), load_pods_json(pods_path), {"default-scheduler"},
                                     nodes_path, pods_path);
  EngineOptions options;
  options.backend = backend;
  options.seed = 5;
  options.threads = threads;
  options.plugin_metrics_sample_percent = sample_percent;
  Engine engine(default_scheduler_config(), options);
  engine.load(cluster);
  GeneratedRun run;
  for (const Pod& pod : cluster.pending_pods) {
    const ScheduleResult r = engine.schedule(pod);
    run.lines.push_back(r.node_name + " " + std::to_string(r.score) + " " + r.message);
  }
  run.metrics = engine.metrics();
  return run;
}

}  // namespace

// Timing plugins (every cycle, or none) changes no decision and no count
// but the plugin series'; the counts do not depend on the thread count.
TEST(SchedulerMetrics, DecisionsAndCountsDoNotDependOnTiming) {
  const GeneratedRun none = run_generated("cpu", 0, 1);
  const GeneratedRun all = run_generated("cpu", 100, 2);
  EXPECT_EQ(none.lines, all.lines);
  EXPECT_EQ(counts_of(none.metrics, false), counts_of(all.metrics, false));
  EXPECT_TRUE(none.metrics.plugins.empty());
  EXPECT_FALSE(all.metrics.plugins.empty());
  // Upstream's 10%: a seeded draw per cycle, about a tenth of 400.
  const GeneratedRun sampled = run_generated("cpu", 10, 1);
  uint64_t prefilter = 0;
  for (const auto& s : sampled.metrics.plugins)
    if (s.plugin == "NodeResourcesFit" && s.extension_point == ExtensionPoint::kPreFilter)
      prefilter += s.duration.count;
  EXPECT_GT(prefilter, 20u);
  EXPECT_LT(prefilter, 70u);
  EXPECT_EQ(counts_of(sampled.metrics, true), counts_of(run_generated("cpu", 10, 2).metrics, true));
}

// The CUDA backend counts what the CPU backend counts (only durations
// differ). Skipped without a device.
TEST(SchedulerMetrics, CountsAreTheSameOnCuda) {
  const std::string why = backend_unavailable_reason("cuda");
  if (!why.empty()) GTEST_SKIP() << why;
  const GeneratedRun cpu = run_generated("cpu", 10, 0);
  const GeneratedRun cuda = run_generated("cuda", 10, 0);
  EXPECT_EQ(cpu.lines, cuda.lines);
  EXPECT_EQ(counts_of(cpu.metrics, true), counts_of(cuda.metrics, true));
}

// `schedule --metrics F` writes the scheduler's metrics and the batch
// counters, and the file parses.
TEST(SchedulerMetrics, CliWritesThem) {
  const std::string d = ::testing::TempDir() + "/metrics-cli";
  CliRun r = run_shell("mkdir -p " + d);
  r = run_cli("generate --nodes 100 --running 100 --pending 120 --seed 4 --nodes-out " + d + "/n.json --pods-out " + d +
              "/p.json --objects-out " + d + "/o.json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = run_cli("schedule --backend cpu --nodes " + d + "/n.json --pods " + d + "/p.json --objects " + d + "/o.json -o " +
              d + "/out.jsonl --metrics " + d + "/m.prom");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream f(d + "/m.prom");
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const Exposition e = parse_exposition(text);
  double attempts = 0;
  for (const Sample& s : e.matching("scheduler_schedule_attempts_total", {{"profile", "default-scheduler"}}))
    attempts += s.value;
  EXPECT_EQ(attempts, 120);
  EXPECT_EQ(
      e.value("scheduler_pending_pods", {{"queue", "unschedulable"}}),
      e.value("scheduler_schedule_attempts_total", {{"profile", "default-scheduler"}, {"result", "unschedulable"}}));
  EXPECT_TRUE(e.has("scheduler_batch_attempts_total", {{"profile", "default-scheduler"}, {"result", "hint_used"}}));
}
