// Reserve and Unreserve (plugins/reserve.hpp): a pod placed and then undone
// (Unreserve, forget) leaves the engine as if it had never been scheduled.
// Two engines load one random cluster (GpuShare devices, shared device
// groups, topology spreading and inter-pod affinity); engine A places and
// undoes extra pods between the pending ones, engine B never sees them. At
// every undo A's snapshot decodes as before the placement and a host mirror
// driven by MirrorSync (as the CUDA backend's) stays exact; then both place
// the next pending pod, and their decisions (node, score, devices, group
// devices), which read the topology tables and the batch cache, must agree,
// as must their snapshots. On every backend the build has (cuda where a
// device answers). The seed is printed; BULKSCORE_PARITY_SEED reruns one.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "host/engine/engine.hpp"
#include "host/input/device_groups.hpp"
#include "tests/random_cluster.hpp"
#include "tests/snapshot_check.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;         // NOLINT(google-build-using-namespace)
using namespace snapshot_check;   // NOLINT(google-build-using-namespace)

std::string decision(const ScheduleResult& r) {
  std::string devices;
  for (int32_t d : r.devices) devices += std::to_string(d) + ",";
  return r.pod + " " + code_name(r.code) + " -> " + r.node_name + " score " + std::to_string(r.score) + " devices [" +
         devices + "] group " + r.device_group + " " + format_group_devices(r.group_devices) + " " + r.message;
}

// The topology matchers a placement registered (its PreFilter's intern())
// stay registered after it is undone, as after any pod removal: the matcher
// rows are a cache of registrations, released by compaction when they count
// nothing (docs/snapshot.md), so two engines that met different pods hold
// different rows. Without compaction rows only append; `rows`: keep each
// node's first counters (the rows an earlier snapshot had), or, with
// kNoRows, none (the decisions then show that the tables agree; the
// counters themselves equal a recount in test_snapshot).
constexpr size_t kNoRows = 0;
Decoded matcher_rows(Decoded d, size_t rows) {
  for (std::string& entry : d["topology_counts"]) {
    size_t cut = 1;  // after '['
    for (size_t k = 0; k < rows && cut < entry.size(); ++k) {
      const size_t comma = entry.find(',', cut);
      cut = comma == std::string::npos ? entry.size() - 1 : comma + 1;
    }
    if (rows == kNoRows) cut = 1;
    entry = entry.substr(0, cut == 1 ? 1 : (entry[cut - 1] == ',' ? cut - 1 : cut)) + "]";
  }
  return d;
}

std::vector<std::string> backends() {
  std::vector<std::string> out{"cpu"};
  if (backend_unavailable_reason("cuda").empty()) out.emplace_back("cuda");
  return out;
}

std::unique_ptr<Engine> engine_for(const Cluster& cluster, const std::string& backend) {
  EngineOptions opts;
  opts.backend = backend;
  opts.tie_break = TieBreak::First;
  opts.batching = Batching::Exact;
  // Never compacted in the test: matcher rows only append (matcher_rows).
  opts.compaction.dead_share = 1e9;
  opts.compaction.min_dead = UINT32_MAX;
  auto e = std::make_unique<Engine>(parity_config(), opts);
  Cluster copy = cluster;
  static_cast<void>(e->load(copy));
  return e;
}

// A pod to place and undo: a copy of a pending pod under another name
// (its devices, group, spreading and affinity), sometimes in a namespace
// or with labels no other pod has (strings and matchers of its own).
Pod extra_pod(SplitMix64& g, const Pod& like, uint32_t i) {
  Pod p = like;
  p.name = "extra-" + std::to_string(i);
  p.uid = "uid-extra-" + std::to_string(i);
  if (g.chance(0.2)) p.namespace_name = "extra-ns";
  if (g.chance(0.3)) p.labels["extra-label-" + std::to_string(i)] = "x";
  if (g.chance(0.2)) p.labels["app"] = "web";
  return p;
}

// Adds the placements it undid to `undone`.
void run_undo_equivalence(uint64_t stream, const std::string& backend, uint32_t& undone) {
  SplitMix64 rng = SplitMix64::derive(parity_seed(), stream);
  ClusterShape shape;
  shape.nodes = static_cast<uint32_t>(rng.between(1, 90));  // below 100: every node evaluated, no sampling start
  shape.pending = static_cast<uint32_t>(rng.between(5, 60));
  Cluster cluster = random_cluster(rng, shape, scheduler_names());
  add_device_groups(cluster, stream);
  // The round-robin start of the node visit (upstream's nextStartNodeIndex)
  // moves on every cycle, an undone one too, as upstream's does; only a
  // profile that stops at the first feasible nodes reads it when every node
  // is evaluated (filter-only: no Score plugins, one node to find). Its pods
  // go to the default profile here so that the decisions compare.
  for (Pod& p : cluster.pending_pods)
    if (p.scheduler_name == "filter-only") p.scheduler_name = "default-scheduler";
  auto a = engine_for(cluster, backend);
  auto b = engine_for(cluster, backend);
  HostMirror mirror;
  mirror.update(a->snapshot());
  SplitMix64 g = SplitMix64::derive(parity_seed() ^ 0x0dd0ull, stream);
  const std::string where = "stream " + std::to_string(stream) + " on " + backend;
  for (size_t i = 0; i < cluster.pending_pods.size(); ++i) {
    const uint32_t extras = static_cast<uint32_t>(g.below(3));
    for (uint32_t k = 0; k < extras; ++k) {
      const Pod& like = cluster.pending_pods[g.below(cluster.pending_pods.size())];
      const Pod p = extra_pod(g, like, static_cast<uint32_t>(i * 4 + k));
      const Decoded before = decode(a->snapshot());
      const size_t rows = a->snapshot().num_topology_matchers();
      const ScheduleResult r = a->schedule(p);
      mirror.update(a->snapshot());
      ASSERT_EQ(mirror.first_difference(a->snapshot()), "") << where << ": after placing " << decision(r);
      if (r.node < 0) continue;
      ASSERT_TRUE(a->forget_pod(p.cache_key()).ok()) << where << ": " << decision(r);
      ++undone;
      ASSERT_EQ(first_difference(matcher_rows(before, rows), matcher_rows(decode(a->snapshot()), rows)), "")
          << where << ": undoing " << decision(r) << " left the snapshot changed";
      mirror.update(a->snapshot());
      ASSERT_EQ(mirror.first_difference(a->snapshot()), "") << where << ": after undoing " << decision(r);
    }
    const Pod& pod = cluster.pending_pods[i];
    const std::string da = decision(a->schedule(pod)), db = decision(b->schedule(pod));
    ASSERT_EQ(da, db) << where << ": pod " << i << " (profile " << pod.scheduler_name << ", " << shape.nodes
                      << " nodes) decided otherwise after the undone placements";
    mirror.update(a->snapshot());
    ASSERT_EQ(first_difference(matcher_rows(decode(b->snapshot()), kNoRows), matcher_rows(decode(a->snapshot()), kNoRows)),
              "")
        << where << " after pod " << i;
  }
}

TEST(ReserveUndo, ScheduleThenUndoEqualsNeverScheduled) {
  for (const std::string& backend : backends()) {
    uint32_t undone = 0;
    for (uint64_t stream = 0; stream < 12; ++stream) {
      run_undo_equivalence(stream, backend, undone);
      if (HasFatalFailure()) return;
    }
    EXPECT_GT(undone, 20u) << "too few placements undone on " << backend;
  }
}

// Permit: a rejection after Reserve undoes the placement (Unreserve, forget)
// with upstream's message; Wait and Allow leave the pod assumed. The
// SeamProbe plugin answers as its annotation says.
TEST(ReserveUndo, PermitRejectUndoesAndAllowOrWaitKeep) {
  ProfileConfig profile = default_scheduler_config().profiles.at(0);
  profile.score.push_back(PluginEntry{"SeamProbe", 1});
  SchedulerConfig config;
  config.profiles.push_back(profile);
  EngineOptions opts;
  opts.backend = "cpu";
  Engine e(config, opts);
  Cluster cluster;
  cluster.nodes = {make_node("n1", 4000, 8 * kGi), make_node("n2", 4000, 8 * kGi)};
  static_cast<void>(e.load(cluster));
  const Decoded before = decode(e.snapshot());

  Pod rejected = make_pod("rejected", {container({{"cpu", 1000}})});
  rejected.annotations[plugins::SeamProbe::kPermitAnnotation] = "reject";
  const ScheduleResult r = e.schedule(rejected);
  EXPECT_EQ(r.code, Code::Unschedulable);
  EXPECT_EQ(r.node, -1);
  EXPECT_EQ(r.message.rfind("rejected pod \"default/rejected\" by permit plugin \"SeamProbe\": probe rejects node n", 0),
            0u)
      << r.message;
  EXPECT_EQ(first_difference(before, decode(e.snapshot())), "");
  EXPECT_FALSE(e.forget_pod(rejected.cache_key()).ok()) << "a rejected pod is not in the cache";

  for (const char* answer : {"wait", "allow"}) {
    Pod p = make_pod(std::string("kept-") + answer, {container({{"cpu", 1000}})});
    p.annotations[plugins::SeamProbe::kPermitAnnotation] = answer;
    const ScheduleResult k = e.schedule(p);
    EXPECT_EQ(k.code, Code::Success) << answer;
    EXPECT_GE(k.node, 0) << answer;
    EXPECT_TRUE(e.forget_pod(p.cache_key()).ok()) << answer;
  }
  EXPECT_EQ(first_difference(before, decode(e.snapshot())), "");
}

// Engine::schedule(Pod&&) and schedule_all(std::vector<Pod>&&) take the pod
// over: where Reserve writes nothing into it (no device model and no device
// groups) the snapshot keeps it without a copy. Decisions, messages and the
// snapshot (its pods included) must be those of schedule(const Pod&), a
// permit rejection after the pod was taken included; with device profiles
// (the copy is kept there) too.
// The pods a snapshot keeps, each as what preemption, explain and the
// events read of it.
std::vector<std::string> kept_pods(const Snapshot& s) {
  std::vector<std::string> out;
  for (uint32_t n = 0; n < s.num_nodes(); ++n)
    for (const uint32_t id : s.pods_on_node(n)) {
      const Pod& p = s.pod(id);
      std::string line = p.key() + " uid " + p.uid + " on " + p.node_name + " priority " + std::to_string(p.priority) +
                         (p.has_priority ? "" : "?") + " class " + p.priority_class_name + " policy " +
                         p.preemption_policy + " start " + (p.start_time_ns ? std::to_string(*p.start_time_ns) : "-") +
                         " scheduler " + p.scheduler_name + " from " + p.origin + " containers " +
                         std::to_string(p.containers.size()) + "+" + std::to_string(p.init_containers.size()) +
                         " spread " + std::to_string(p.topology_spread_constraints.size()) + " tolerations " +
                         std::to_string(p.tolerations.size()) + (p.affinity ? " affinity" : "") + " labels";
      for (const auto& [k, v] : p.labels) line += " " + k + "=" + v;
      line += " annotations";
      for (const auto& [k, v] : p.annotations) line += " " + k + "=" + v;
      out.push_back(line);
    }
  return out;
}

void run_handed_over(uint64_t stream, bool devices) {
  SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0x6a4dull, stream);
  ClusterShape shape;
  shape.nodes = static_cast<uint32_t>(rng.between(1, 90));
  shape.pending = static_cast<uint32_t>(rng.between(5, 60));
  Cluster cluster = random_cluster(rng, shape, scheduler_names());
  SchedulerConfig config = parity_config();
  if (devices) {
    add_device_groups(cluster, stream);
  } else {
    // Only the profiles without GpuShare and SharedDeviceGroup: the pods
    // of the others go to the default one.
    std::vector<ProfileConfig> kept;
    for (const ProfileConfig& p : config.profiles)
      if (!profile_needs(p).devices && !profile_needs(p).device_groups) kept.push_back(p);
    config.profiles = kept;
    for (Pod& p : cluster.pending_pods) {
      const bool known = std::any_of(kept.begin(), kept.end(),
                                     [&](const ProfileConfig& k) { return k.scheduler_name == p.scheduler_name; });
      if (!known) p.scheduler_name = "default-scheduler";
    }
  }
  SplitMix64 g = SplitMix64::derive(parity_seed() ^ 0x9e47ull, stream);
  for (Pod& p : cluster.pending_pods)
    if (g.chance(0.15)) p.annotations[plugins::SeamProbe::kPermitAnnotation] = g.chance(0.5) ? "reject" : "wait";
  EngineOptions opts;
  opts.backend = "cpu";
  opts.batching = Batching::Exact;
  Engine copied(config, opts), taken(config, opts), copied_all(config, opts), taken_all(config, opts);
  for (Engine* e : {&copied, &taken, &copied_all, &taken_all}) static_cast<void>(e->load(cluster));
  const std::string where = "stream " + std::to_string(stream) + (devices ? " with devices" : " without devices");
  for (size_t i = 0; i < cluster.pending_pods.size(); ++i) {
    const Pod& pod = cluster.pending_pods[i];
    Pod given = pod;
    const std::string dc = decision(copied.schedule(pod)), dt = decision(taken.schedule(std::move(given)));
    ASSERT_EQ(dc, dt) << where << ": pod " << i << " (profile " << pod.scheduler_name << ")";
    ASSERT_EQ(first_difference(decode(copied.snapshot()), decode(taken.snapshot())), "") << where << " after pod " << i;
    ASSERT_EQ(kept_pods(copied.snapshot()), kept_pods(taken.snapshot())) << where << " after pod " << i;
  }
  std::vector<Pod> given = cluster.pending_pods;
  const std::vector<ScheduleResult> rc = copied_all.schedule_all(cluster.pending_pods);
  const std::vector<ScheduleResult> rt = taken_all.schedule_all(std::move(given));
  ASSERT_EQ(rc.size(), rt.size());
  for (size_t i = 0; i < rc.size(); ++i) ASSERT_EQ(decision(rc[i]), decision(rt[i])) << where << ": schedule_all pod " << i;
  ASSERT_EQ(first_difference(decode(copied_all.snapshot()), decode(taken_all.snapshot())), "") << where;
  ASSERT_EQ(kept_pods(copied_all.snapshot()), kept_pods(taken_all.snapshot())) << where;
}

TEST(ReserveUndo, HandedOverPodsDecideAndStoreAsCopiedOnes) {
  for (uint64_t stream = 0; stream < 10; ++stream)
    for (const bool devices : {false, true}) {
      run_handed_over(stream, devices);
      if (HasFatalFailure()) return;
    }
}

}  // namespace
}  // namespace bulkscore
