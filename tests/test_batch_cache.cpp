// The batch cache (host/engine/batch_cache.hpp) against plain scheduling:
// --batching exact must decide every pod exactly as --batching off does, on
// random clusters and pod sequences (runs of equal pods, runs broken by other
// pods, unschedulable pods, snapshot changes between pods), with both
// tie-breaks. A failure prints the first differing pod. Reproducible from the
// printed seed (BULKSCORE_PARITY_SEED=<n>).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench/generator/generator.hpp"
#include "host/engine/engine.hpp"
#include "host/engine/upstream_batch.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"
#include "tests/random_cluster.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;  // NOLINT(google-build-using-namespace): the random clusters

std::string describe(const ScheduleResult& r) {
  std::ostringstream os;
  os << "{node " << r.node << " \"" << r.node_name << "\", score " << r.score << ", feasible " << r.feasible_nodes
     << ", code " << code_name(r.code) << ", message \"" << r.message << "\"}";
  return os.str();
}

bool same(const ScheduleResult& a, const ScheduleResult& b) {
  return a.pod == b.pod && a.node == b.node && a.node_name == b.node_name && a.score == b.score &&
         a.feasible_nodes == b.feasible_nodes && a.code == b.code && a.message == b.message && a.warnings == b.warnings;
}

// Pending pods in runs: a template pod repeated under new names (the pods of
// one workload), runs of one template broken by others and resumed later.
std::vector<Pod> pod_runs(SplitMix64& rng, uint32_t count, uint32_t num_nodes,
                          const std::vector<std::string>& schedulers) {
  std::vector<Pod> templates;
  const uint32_t kinds = 1 + static_cast<uint32_t>(rng.below(5));
  templates.reserve(kinds);
  for (uint32_t k = 0; k < kinds; ++k)
    templates.push_back(
        random_pending_pod(rng, 1000 + k + static_cast<uint32_t>(rng.below(100000)), num_nodes, schedulers));
  std::vector<Pod> pods;
  pods.reserve(count);
  while (pods.size() < count) {
    const Pod& t = templates[rng.below(templates.size())];
    const uint32_t run = 1 + static_cast<uint32_t>(rng.below(rng.chance(0.3) ? 40 : 8));
    for (uint32_t r = 0; r < run && pods.size() < count; ++r) {
      Pod p = t;
      p.name = t.name + "-" + std::to_string(pods.size());
      p.uid = "uid-" + std::to_string(pods.size());
      pods.push_back(std::move(p));
    }
  }
  return pods;
}

// Some change between pods, as an embedding scheduler makes them: a running
// pod leaves (a node gains room), an outside pod arrives, a pod is updated in
// place (new labels, terminating), a node's capacity changes in place, or
// (rarely) a node is added: a structural change.
void mutate(SplitMix64& rng, Engine& engine, const std::vector<Node>& nodes) {
  const Snapshot& snap = engine.snapshot();
  const uint64_t what = rng.below(20);
  const auto some_pod = [&]() -> int64_t {
    for (int tries = 0; tries < 8 && snap.num_pods() > 0; ++tries) {
      const auto id = static_cast<uint32_t>(rng.below(snap.pod_id_bound()));
      if (snap.has_pod(id)) return id;
    }
    return -1;
  };
  const auto expect_ok = [](const EventStatus& s) { ASSERT_TRUE(s.ok()) << s.message; };
  if (what < 6) {
    if (const int64_t id = some_pod(); id >= 0)
      expect_ok(engine.remove_pod(snap.pod(static_cast<uint32_t>(id)).cache_key()));
  } else if (what < 12 && snap.num_nodes() > 0) {
    const auto n = static_cast<uint32_t>(rng.below(snap.num_nodes()));
    Pod p;
    p.namespace_name = "parity";
    p.name = "external-" + std::to_string(rng.below(1u << 30));
    p.phase = "Running";
    p.labels["app"] = rng.chance(0.5) ? "web" : "db";
    Container c;
    c.name = "main";
    c.requests["cpu"] = static_cast<int64_t>(rng.between(1, 20)) * 100;
    p.containers.push_back(c);
    p.node_name = snap.node_name(n);
    const EventStatus s = engine.add_pod(p);
    // A name drawn twice is refused, changing nothing.
    ASSERT_TRUE(s.ok() || s.code == EventCode::kAlreadyExists) << s.message;
  } else if (what < 16) {
    if (const int64_t id = some_pod(); id >= 0) {
      Pod p = snap.pod(static_cast<uint32_t>(id));
      // An assumed pod is confirmed (the informer's add) before its update.
      if (engine.is_assumed_pod(p.cache_key())) expect_ok(engine.add_pod(p));
      p.labels["app"] = rng.chance(0.5) ? "cache" : "web";
      p.deleting = rng.chance(0.3);
      expect_ok(engine.update_pod(p));
    }
  } else if (what < 19 && !nodes.empty()) {
    Node n = nodes[rng.below(nodes.size())];  // same labels, taints and images: an in-place update
    n.allocatable["cpu"] = static_cast<int64_t>(rng.between(1, 64)) * 1000;
    n.unschedulable = rng.chance(0.2);
    expect_ok(engine.update_node(n));
  } else {
    Node n = random_node(rng, 100000 + static_cast<uint32_t>(rng.below(1u << 20)), false);
    const EventStatus s = engine.add_node(n);
    ASSERT_TRUE(s.ok() || s.code == EventCode::kAlreadyExists) << s.message;
  }
}

struct Outcome {
  std::vector<ScheduleResult> results;
  BatchCounters counters;
};

// Windows of pods as a caller drives them: at every window-th pod, the
// next `window` pods looked ahead at (nothing when window is 1).
void look_ahead_at(Engine& engine, const std::vector<Pod>& pods, size_t i, uint32_t window) {
  if (window <= 1 || i % window != 0) return;
  std::vector<const Pod*> ahead;
  for (size_t j = i; j < std::min(pods.size(), i + window); ++j) ahead.push_back(&pods[j]);
  engine.look_ahead(ahead);
}

// Schedules `pods` on `cluster`, with the same mutations before the same
// pods whatever the batching.
Outcome run(const SchedulerConfig& config, const Cluster& cluster, const std::vector<Pod>& pods, TieBreak tie,
            Batching batching, uint64_t mutation_seed, double mutation_chance, uint32_t batch_states = 1,
            CompactionPolicy compaction = {}, uint32_t window = 1, const char* backend = "cpu",
            size_t sparse_term_rows = SIZE_MAX) {
  EngineOptions options{backend, tie, parity_seed()};
  options.sparse_term_rows = sparse_term_rows;
  options.batching = batching;
  options.batch_states = batch_states;
  options.compaction = compaction;
  options.window = window;
  Engine engine(config, options);
  engine.load(cluster);
  SplitMix64 mrng = SplitMix64::derive(mutation_seed, 7);
  Outcome out;
  out.results.reserve(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) {
    // Windows of pods: the next `window` pods looked ahead at, the events
    // (mutations) still coming between them.
    look_ahead_at(engine, pods, i, window);
    if (mrng.chance(mutation_chance)) mutate(mrng, engine, cluster.nodes);
    out.results.push_back(engine.schedule(pods[i]));
  }
  out.counters = engine.batch_counters();
  return out;
}

// The first pod whose result differs, or "" when none does.
std::string first_difference(const std::vector<Pod>& pods, const std::vector<ScheduleResult>& off,
                             const std::vector<ScheduleResult>& exact) {
  if (off.size() != exact.size()) return "result counts differ";
  for (size_t i = 0; i < off.size(); ++i)
    if (!same(off[i], exact[i]))
      return "pod " + std::to_string(i) + " (" + pods[i].key() + ", scheduler " + pods[i].scheduler_name + "): off " +
             describe(off[i]) + ", exact " + describe(exact[i]);
  return "";
}

SchedulerConfig whole_config() {
  // Every profile of the parity config, every node scored: the cache answers
  // on clusters of any size.
  SchedulerConfig c = parity_config();
  for (auto& p : c.profiles) p.percentage_of_nodes_to_score = 100;
  return c;
}

TEST(BatchCache, RandomRunsDecideExactlyAsUnbatched) {
  const SchedulerConfig configs[] = {parity_config(), whole_config()};
  uint64_t hits = 0, attempts = 0, rescored = 0, renormalized = 0, whole_plugin = 0, group_scores = 0,
           prescore_updates = 0, several_hits = 0, compacting_hits = 0, window_states = 0, window_hits = 0;
  std::map<std::string, uint64_t> flushes;
  // 48 random clusters; more (up to 96) while the rarer paths the floors
  // below ask for have not come up, as with some BULKSCORE_PARITY_SEEDs.
  for (uint32_t seed = 0; seed < 48 || (seed < 96 && (group_scores == 0 || prescore_updates == 0)); ++seed) {
    SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0xba7c4ull, seed);
    const uint32_t nodes = 2 + static_cast<uint32_t>(rng.below(seed % 4 == 3 ? 400 : 90));
    const SchedulerConfig& config = configs[seed % 2];
    std::vector<std::string> schedulers;
    for (const auto& p : config.profiles) schedulers.push_back(p.scheduler_name);
    Cluster cluster = random_cluster(rng, ClusterShape{nodes, 0, 0.05}, schedulers);
    const std::vector<Pod> pods = pod_runs(rng, 60 + static_cast<uint32_t>(rng.below(120)), nodes, schedulers);
    const double mutation_chance = seed % 3 == 0 ? 0.0 : 0.15;
    for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
      const Outcome off = run(config, cluster, pods, tie, Batching::Off, seed, mutation_chance);
      const Outcome exact = run(config, cluster, pods, tie, Batching::Exact, seed, mutation_chance);
      const std::string diff = first_difference(pods, off.results, exact.results);
      ASSERT_EQ(diff, "") << "seed " << seed << " (parity seed " << parity_seed() << "), " << nodes << " nodes, "
                          << (seed % 2 ? "every node scored" : "parity config") << ", tie "
                          << (tie == TieBreak::First ? "first" : "random") << ", mutations " << mutation_chance;
      EXPECT_EQ(off.counters.hint_used, 0u);
      // Several states kept, one per recent signature: pods of the runs'
      // shapes interleaved hit states other than the last one.
      const Outcome several = run(config, cluster, pods, tie, Batching::Exact, seed, mutation_chance, 3);
      const std::string diff_several = first_difference(pods, off.results, several.results);
      ASSERT_EQ(diff_several, "") << "three batch states: seed " << seed << " (parity seed " << parity_seed() << "), "
                                  << nodes << " nodes, " << (seed % 2 ? "every node scored" : "parity config")
                                  << ", tie " << (tie == TieBreak::First ? "first" : "random") << ", mutations "
                                  << mutation_chance;
      several_hits += several.counters.hint_used;
      // Windows of pods (2 to 9) looked ahead at, with one state or three.
      const uint32_t window = 2 + seed % 8;
      const Outcome windowed = run(config, cluster, pods, tie, Batching::Exact, seed, mutation_chance, 1 + 2 * (seed % 2),
                                   {}, window);
      ASSERT_EQ(first_difference(pods, off.results, windowed.results), "")
          << "window " << window << ": seed " << seed << " (parity seed " << parity_seed() << "), " << nodes
          << " nodes, " << (seed % 2 ? "every node scored" : "parity config") << ", tie "
          << (tie == TieBreak::First ? "first" : "random") << ", mutations " << mutation_chance;
      window_states += windowed.counters.window_states;
      window_hits += windowed.counters.window_hits;
      // The snapshot releasing the dead after every event (ids renumbered
      // under the states: each compaction is structural, so a state from
      // before it never answers).
      if (seed % 4 == 1 && mutation_chance > 0) {
        const Outcome compacting =
            run(config, cluster, pods, tie, Batching::Exact, seed, mutation_chance, 3, CompactionPolicy{0, 0});
        ASSERT_EQ(first_difference(pods, off.results, compacting.results), "")
            << "compacting after every event: seed " << seed << " (parity seed " << parity_seed() << ")";
        compacting_hits += compacting.counters.hint_used;
      }
      hits += exact.counters.hint_used;
      attempts += exact.counters.hint_used + exact.counters.no_hint;
      rescored += exact.counters.rescored_nodes;
      renormalized += exact.counters.renormalizations;
      whole_plugin += exact.counters.full_plugin_rescores;
      group_scores += exact.counters.group_scores;
      prescore_updates += exact.counters.prescore_updates;
      for (size_t r = 0; r < exact.counters.flushed.size(); ++r)
        flushes[flush_reason_name(static_cast<FlushReason>(r))] += exact.counters.flushed[r];
    }
  }
  std::printf(
      "[ batch ] %llu of %llu pods answered from the cache; %llu node scores recomputed, %llu renormalized, "
      "%llu plugins re-scored whole, %llu group scores, %llu PreScore tables updated\n",
      static_cast<unsigned long long>(hits), static_cast<unsigned long long>(attempts),
      static_cast<unsigned long long>(rescored), static_cast<unsigned long long>(renormalized),
      static_cast<unsigned long long>(whole_plugin), static_cast<unsigned long long>(group_scores),
      static_cast<unsigned long long>(prescore_updates));
  for (const auto& [reason, n] : flushes)
    std::printf("[ batch ]   flushed %s: %llu\n", reason.c_str(), (unsigned long long)n);
  std::printf(
      "[ batch ] with three states kept: %llu pods answered from the cache (%llu while compacting after "
      "every event, a quarter of the clusters)\n",
      static_cast<unsigned long long>(several_hits), static_cast<unsigned long long>(compacting_hits));
  // The test must exercise the cache, not only misses (a fifth to a third
  // of the pods hit over BULKSCORE_PARITY_SEED 1-40, 0.197 at seed 8 since
  // a shape's first miss lately is not kept; the parity config's many
  // profiles interleave).
  EXPECT_GT(hits, attempts / 8);
  EXPECT_GT(several_hits, hits);
  EXPECT_GT(compacting_hits, 0u);
  std::printf("[ batch ] windows: %llu pods evaluated ahead, %llu answered by their own state\n",
              static_cast<unsigned long long>(window_states), static_cast<unsigned long long>(window_hits));
  // Windows must be exercised, and not always exactly (a window state whose
  // pod then misses: events, earlier pods of the window making it a miss).
  EXPECT_GT(window_hits, window_states / 4);
  EXPECT_LT(window_hits, window_states);
  EXPECT_GT(renormalized, 0u);
  EXPECT_GT(whole_plugin, 0u);
  // Both ways of following PodTopologySpread's tables: per group of nodes
  // with updated tables, and per node with rebuilt ones.
  EXPECT_GT(group_scores, 0u);
  EXPECT_GT(prescore_updates, 0u);
  EXPECT_GT(flushes["node_became_feasible"] + flushes["filter_changed"], 0u);
}

// Tallies of the runs below, and what they print.
// BatchCache::gates for a scope.
struct GatesFor {
  BatchCache::Gates before = BatchCache::gates;
  explicit GatesFor(BatchCache::Gates g) { BatchCache::gates = g; }
  ~GatesFor() { BatchCache::gates = before; }
  GatesFor(const GatesFor&) = delete;
  GatesFor& operator=(const GatesFor&) = delete;
};

struct CountHitTally {
  uint64_t count_hits = 0, hits = 0, attempts = 0, revived = 0, placed = 0, gate_flips = 0;
  std::map<std::string, uint64_t> flushes;
  void print(const char* what) const {
    std::printf("[ batch ] %s: %llu of %llu pods from the cache (%llu placed), %llu with counts-only Filter changes, "
                "%llu nodes revived, %llu domains shut or opened as a flag\n",
                what, static_cast<unsigned long long>(hits), static_cast<unsigned long long>(attempts),
                static_cast<unsigned long long>(placed), static_cast<unsigned long long>(count_hits),
                static_cast<unsigned long long>(revived), static_cast<unsigned long long>(gate_flips));
    for (const auto& [reason, n] : flushes)
      if (n) std::printf("[ batch ]   flushed %s: %llu\n", reason.c_str(), static_cast<unsigned long long>(n));
  }
};

// 150 pods of a few ReplicaSets (copies of `templates`, in interleaved
// runs of 1 to 30), some snapshot changes between them, on `cluster`: the
// cache on (a state per ReplicaSet), and with windows of 2 to 7, must
// decide as the cache off, with both tie-breaks. `where` names the case.
void check_replica_set_runs(const SchedulerConfig& config, const Cluster& cluster, const std::vector<Pod>& templates,
                            SplitMix64& rng, uint32_t seed, const std::string& where, CountHitTally& tally,
                            size_t sparse_term_rows = SIZE_MAX) {
  std::vector<Pod> pods;
  while (pods.size() < 150) {
    const Pod& t = templates[rng.below(templates.size())];
    const uint32_t run = 1 + static_cast<uint32_t>(rng.below(30));
    for (uint32_t r = 0; r < run && pods.size() < 150; ++r) {
      Pod p = t;
      p.name = t.name + "-" + std::to_string(pods.size());
      p.uid = "uid-" + std::to_string(pods.size());
      pods.push_back(std::move(p));
    }
  }
  const double mutation_chance = seed % 3 == 0 ? 0.05 : 0.0;
  for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
    const std::string what = where + ", seed " + std::to_string(seed) + " (parity seed " +
                             std::to_string(parity_seed()) + "), tie " + (tie == TieBreak::First ? "first" : "random") +
                             ", mutations " + std::to_string(mutation_chance);
    const Outcome off = run(config, cluster, pods, tie, Batching::Off, seed, mutation_chance);
    // A state per ReplicaSet: their runs interleave.
    const Outcome exact =
        run(config, cluster, pods, tie, Batching::Exact, seed, mutation_chance, 3, {}, 1, "cpu", sparse_term_rows);
    ASSERT_EQ(first_difference(pods, off.results, exact.results), "") << what;
    const uint32_t window = 2 + seed % 6;
    const Outcome windowed = run(config, cluster, pods, tie, Batching::Exact, seed, mutation_chance, 3, {}, window,
                                 "cpu", sparse_term_rows);
    ASSERT_EQ(first_difference(pods, off.results, windowed.results), "") << "window " << window << ": " << what;
    for (const ScheduleResult& r : exact.results) tally.placed += r.node >= 0 ? 1 : 0;
    tally.count_hits += exact.counters.filter_count_hits;
    tally.revived += exact.counters.revived_nodes;
    tally.gate_flips += exact.counters.gate_flips;
    for (size_t r = 0; r < exact.counters.flushed.size(); ++r)
      tally.flushes[flush_reason_name(static_cast<FlushReason>(r))] += exact.counters.flushed[r];
    tally.hits += exact.counters.hint_used;
    tally.attempts += exact.counters.hint_used + exact.counters.no_hint;
  }
}

// Pods under hard spreading (issue 24, item 4): each placement changes the
// counts PodTopologySpread's Filter reads, yet a pod whose tables differ
// from the cached one's in their counts only (the domains' counts and the
// global minimum) is a hit, the nodes of the domains whose verdict flipped
// filtered again (filter_count_changes), and those Filter lets back in
// come back to their entries with the scores they kept (revived) unless
// their node changed meanwhile.
// ReplicaSets of alike pods under hard zone spreading (maxSkew 1 to 3,
// sometimes minDomains, sometimes hostname spreading too), runs broken by
// other pods, some snapshot changes: decisions equal --batching off's, with
// both tie-breaks; the counts-only path must be taken.
TEST(BatchCache, HardSpreadPodsHitWhenOnlyTheirCountsChanged) {
  const SchedulerConfig config = whole_config();
  // With gates wherever one is offered (a zone shut or opened as one
  // flag: Auto takes them on fewer of these random pods, whose normalized
  // scores differ) and node by node.
  for (const bool gates : {true, false}) {
    const GatesFor gates_for(gates ? BatchCache::Gates::Always : BatchCache::Gates::Off);
    CountHitTally tally;
    for (uint32_t seed = 0; seed < 24; ++seed) {
      SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0x5b7eadull, seed);
      const uint32_t nodes = 4 + static_cast<uint32_t>(rng.below(seed % 4 == 3 ? 300 : 80));
      Cluster cluster = random_cluster(rng, ClusterShape{nodes, 0, 0.05}, {"default-scheduler"});
      // Zones: a few, some nodes in none.
      const uint32_t zones = 3 + static_cast<uint32_t>(rng.below(8));
      // Regions of zones, on some seeds: a second table constraint beside
      // the gate, whose flips name their nodes.
      const bool regions = seed % 3 == 1;
      for (Node& n : cluster.nodes) {
        n.labels.erase("topology.kubernetes.io/zone");
        n.labels.erase("topology.kubernetes.io/region");
        if (rng.chance(0.05)) continue;
        const uint64_t z = rng.below(zones);
        n.labels["topology.kubernetes.io/zone"] = "z" + std::to_string(z);
        if (regions) n.labels["topology.kubernetes.io/region"] = "r" + std::to_string(z % 2);
      }
      std::vector<Pod> templates;
      for (uint32_t k = 0; k < 3; ++k) {
        Pod t = random_pending_pod(rng, 5000 + k, nodes, {"default-scheduler"});
        t.topology_spread_constraints.clear();
        t.affinity.reset();
        t.labels["app"] = "rs-" + std::to_string(k);
        const auto spread = [&](const char* key) {
          TopologySpreadConstraint c;
          c.max_skew = 1 + static_cast<int32_t>(rng.below(3));
          c.topology_key = key;
          c.when_unsatisfiable = "DoNotSchedule";
          c.label_selector = LabelSelector{};
          c.label_selector->match_labels["app"] = t.labels["app"];
          if (rng.chance(0.2)) c.min_domains = 1 + static_cast<int32_t>(rng.below(zones + 1));
          t.topology_spread_constraints.push_back(std::move(c));
        };
        // Hostname first, sometimes: the gate is the first constraint with
        // a domain table, wherever it stands.
        const bool hostname = rng.chance(0.3);
        const bool region_first = regions && rng.chance(0.5);
        if (hostname && rng.chance(0.5)) spread("kubernetes.io/hostname");
        if (region_first) spread("topology.kubernetes.io/region");
        spread("topology.kubernetes.io/zone");
        if (regions && !region_first) spread("topology.kubernetes.io/region");
        if (hostname && t.topology_spread_constraints.size() == 1 + (regions ? 1 : 0))
          spread("kubernetes.io/hostname");
        templates.push_back(std::move(t));
      }
      check_replica_set_runs(config, cluster, templates, rng, seed,
                             std::to_string(nodes) + " nodes, " + std::to_string(zones) + " zones" +
                                 (gates ? ", gates" : ", node by node"),
                             tally);
      if (HasFatalFailure()) return;
    }
    tally.print(gates ? "hard spreading, gates" : "hard spreading, node by node");
    // maxSkew 1 leaves few feasible nodes between two changes of the
    // minimum, and on a few nodes often fewer than two (a miss). Measured
    // against the pods placed: on some parity seeds the random templates fit
    // almost nowhere (GPU requests, taints, full nodes), and an unplaceable
    // pod keeps no state to hit (seed 16 places 80 of 7,200).
    EXPECT_GT(tally.count_hits, tally.placed / 10);
    EXPECT_GE(tally.count_hits, 20u);
    if (gates)
      EXPECT_GT(tally.gate_flips, 0u);
    else
      EXPECT_EQ(tally.gate_flips, 0u);
  }
}

// A ReplicaSet under hard zone spreading with maxSkew 1 (bench_floor's
// `spread`): each placement shuts its zone until every zone holds as many,
// then the minimum rises and every other zone's nodes come back. They come
// back to their entries with the raw scores they kept (revived), the
// placed nodes, changed, scored again: every pod after the first is a hit,
// and each decides as with the cache off.
TEST(BatchCache, ZonesLetBackInByARisenMinimumComeBackWithTheirScores) {
  Cluster cluster;
  for (int i = 0; i < 48; ++i) {
    const std::string name = "node-" + std::to_string(i);
    cluster.nodes.push_back(make_node(name, 4000 + 250 * (i % 5), int64_t(32) << 30, 110,
                                      {{"kubernetes.io/hostname", name},
                                       {"topology.kubernetes.io/zone", "zone-" + std::to_string(i % 6)}}));
  }
  std::vector<Pod> pods;
  for (int i = 0; i < 60; ++i) {
    Pod p = make_pod("rs-" + std::to_string(i), {container({{"cpu", 100}, {"memory", int64_t(500) << 20}})});
    p.labels["app"] = "rs";
    TopologySpreadConstraint c;
    c.max_skew = 1;
    c.topology_key = "topology.kubernetes.io/zone";
    c.when_unsatisfiable = "DoNotSchedule";
    c.label_selector = LabelSelector{};
    c.label_selector->match_labels["app"] = "rs";
    p.topology_spread_constraints.push_back(c);
    pods.push_back(std::move(p));
  }
  const SchedulerConfig config = whole_config();
  // Auto takes the gate here (equal normalized scores), and Off does not.
  for (const bool gates : {true, false}) {
    const GatesFor gates_for(gates ? BatchCache::Gates::Auto : BatchCache::Gates::Off);
    for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
      const Outcome off = run(config, cluster, pods, tie, Batching::Off, 0, 0.0);
      const Outcome exact = run(config, cluster, pods, tie, Batching::Exact, 0, 0.0);
      ASSERT_EQ(first_difference(pods, off.results, exact.results), "") << "gates " << gates;
      for (uint32_t window : {3u, 8u}) {
        const Outcome windowed = run(config, cluster, pods, tie, Batching::Exact, 0, 0.0, 3, {}, window);
        ASSERT_EQ(first_difference(pods, off.results, windowed.results), "")
            << "window " << window << ", gates " << gates;
      }
      EXPECT_EQ(exact.counters.hint_used, pods.size() - 1);
      if (gates) {
        // Each placement but those that raise the minimum shuts its zone,
        // and nine times five zones open: flags, no node revived.
        EXPECT_GE(exact.counters.gate_flips, 9u * 5 + 50);
        EXPECT_EQ(exact.counters.revived_nodes, 0u);
      } else {
        // Nine times the minimum rises, and five zones of eight nodes come
        // back, less the nodes placed on (scored again).
        EXPECT_GE(exact.counters.revived_nodes, 9u * 5 * 8 - 60);
        EXPECT_EQ(exact.counters.gate_flips, 0u);
      }
    }
  }
  // Changes between the pods (pods removed, added and relabeled, node
  // capacities): entries the log names while their zone is shut leave and
  // are filtered and scored again when it opens; both ways decide as off.
  uint64_t flips = 0;
  for (const bool gates : {true, false}) {
    const GatesFor gates_for(gates ? BatchCache::Gates::Always : BatchCache::Gates::Off);
    for (uint64_t mutations = 1; mutations <= 12; ++mutations)
      for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
        const Outcome off = run(config, cluster, pods, tie, Batching::Off, mutations, 0.3);
        const Outcome exact = run(config, cluster, pods, tie, Batching::Exact, mutations, 0.3);
        ASSERT_EQ(first_difference(pods, off.results, exact.results), "")
            << "mutation seed " << mutations << ", gates " << gates;
        const Outcome windowed = run(config, cluster, pods, tie, Batching::Exact, mutations, 0.3, 3, {}, 4);
        ASSERT_EQ(first_difference(pods, off.results, windowed.results), "")
            << "window 4, mutation seed " << mutations << ", gates " << gates;
        flips += exact.counters.gate_flips;
      }
  }
  EXPECT_GT(flips, 0u);
}

// InterPodAffinity's required terms (a ReplicaSet's pods kept apart per
// node or per zone, or together in a zone) move its Filter tables' counts
// with every placement of the set: such pods hit, the nodes of the domains
// whose counts changed filtered again (filter_count_changes), and decide as
// with the cache off.
TEST(BatchCache, PodAffinityPodsHitWhenOnlyTheirCountsChanged) {
  CountHitTally tally;
  const SchedulerConfig config = whole_config();
  for (uint32_t seed = 0; seed < 24; ++seed) {
    SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0xaff1ull, seed);
    const uint32_t nodes = 4 + static_cast<uint32_t>(rng.below(seed % 4 == 3 ? 300 : 80));
    Cluster cluster = random_cluster(rng, ClusterShape{nodes, 0, 0.05}, {"default-scheduler"});
    const uint32_t zones = 2 + static_cast<uint32_t>(rng.below(6));
    for (Node& n : cluster.nodes) {
      n.labels.erase("topology.kubernetes.io/zone");
      if (!rng.chance(0.05)) n.labels["topology.kubernetes.io/zone"] = "z" + std::to_string(rng.below(zones));
    }
    std::vector<Pod> templates;
    for (uint32_t k = 0; k < 3; ++k) {
      Pod t = random_pending_pod(rng, 6000 + k, nodes, {"default-scheduler"});
      t.topology_spread_constraints.clear();
      t.labels["app"] = "rs-" + std::to_string(k);
      const auto term = [&](const char* key) {
        PodAffinityTerm a;
        a.topology_key = key;
        a.label_selector = LabelSelector{};
        a.label_selector->match_labels["app"] = t.labels["app"];
        return a;
      };
      Affinity a = t.affinity ? *t.affinity : Affinity{};
      a.pod_affinity.reset();
      a.pod_anti_affinity.reset();
      const uint64_t kind = rng.below(4);
      if (kind != 2) {
        a.pod_anti_affinity = PodAffinity{};
        a.pod_anti_affinity->required.push_back(term(kind == 1 ? "topology.kubernetes.io/zone" : "kubernetes.io/hostname"));
      }
      if (kind >= 2) {
        a.pod_affinity = PodAffinity{};
        a.pod_affinity->required.push_back(term("topology.kubernetes.io/zone"));
      }
      t.affinity = a;
      templates.push_back(std::move(t));
    }
    // Odd seeds: every hostname group in its key's table (no per-node
    // counters below an eighth of the nodes), the counts-only path.
    check_replica_set_runs(config, cluster, templates, rng, seed,
                           std::to_string(nodes) + " nodes, " + std::to_string(zones) + " zones", tally,
                           seed % 2 ? 0 : SIZE_MAX);
    if (HasFatalFailure()) return;
  }
  tally.print("pod (anti-)affinity");
  // Apart per node, most placements hit (the hostname terms read from the
  // nodes' counters where every hostname value is one node's: plain hits;
  // else, or in their key's table, counts-only hits); apart per zone, a zone's nodes leave at once
  // (on these small clusters often more than half of the feasible ones: a
  // miss); together in a zone, the placed pods' own terms move the Score
  // tables too (hardPodAffinityWeight), a miss as before. Measured against
  // the pods placed (an unplaceable pod keeps no state to hit; how many
  // the random templates place varies with the parity seed).
  EXPECT_GT(tally.count_hits, tally.placed / 100);
  EXPECT_GT(tally.hits, tally.placed / 20);
}

// PodTopologySpread's two contracts with the cache, on random clusters and
// pods: tables derived from an earlier query's (prescore_feasible_since)
// equal rebuilt ones byte for byte after pods came and went and feasible
// nodes left, and nodes of one score class get one score.
TEST(BatchCache, SpreadTablesFromTheCacheEqualRebuiltOnesAndClassesShareScores) {
  using PTS = plugins::PodTopologySpread;
  const uint8_t id = plugin_id<PTS>();
  const SchedulerConfig& config = parity_config();
  std::vector<std::string> schedulers;
  for (const auto& p : config.profiles) schedulers.push_back(p.scheduler_name);
  const ProfilePlan plan = make_profile_plan(config.profiles[0]);
  uint64_t derived = 0, declined = 0, classed = 0;
  for (uint32_t seed = 0; seed < 60; ++seed) {
    SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0x7ab1e5ull, seed);
    const uint32_t nodes = 2 + static_cast<uint32_t>(rng.below(seed % 4 == 3 ? 300 : 60));
    const Cluster cluster = random_cluster(rng, ClusterShape{nodes, 0, 0.05}, schedulers);
    Snapshot snap = Snapshot::build(cluster.nodes, cluster.running_pods);
    for (uint32_t i = 0; i < 40; ++i) {
      Pod pod = random_pending_pod(rng, i, nodes, schedulers);
      pod.scheduler_name = config.profiles[0].scheduler_name;
      intern_pod_for_plan(snap, pod, plan, &cluster.objects);
      PodQuery first = prepare_pod_query(pod, snap, plan, TieBreak::First, 0, &cluster.objects);
      if (first.rejected || !first.header.prescore_feasible) continue;
      std::vector<uint32_t> feasible;
      for (uint32_t n = 0; n < snap.num_nodes(); ++n)
        if (filter_node(snap.view(), first.view(), n).feasible()) feasible.push_back(n);
      if (feasible.size() < 2) continue;
      run_feasible_prescore(snap, first, feasible.data(), static_cast<uint32_t>(feasible.size()));
      // Pods of the same kind placed, one removed; some feasible nodes leave.
      for (uint64_t k = rng.below(4); k-- > 0;) {
        Pod copy = pod;
        copy.name += "-placed-" + std::to_string(k);
        snap.add_pod(copy, feasible[rng.below(feasible.size())]);
      }
      if (snap.num_pods() > 0 && rng.chance(0.5))
        for (int tries = 0; tries < 8; ++tries) {
          const auto pid = static_cast<uint32_t>(rng.below(snap.pod_id_bound()));
          if (!snap.has_pod(pid)) continue;
          snap.remove_pod(pid);
          break;
        }
      std::vector<uint32_t> left, remaining;
      for (uint32_t n : feasible) (rng.chance(0.2) ? left : remaining).push_back(n);
      if (remaining.size() < 2) continue;

      const PodQuery second = prepare_pod_query(pod, snap, plan, TieBreak::First, 0, &cluster.objects);
      PodQuery rebuilt = second, updated = second;
      run_feasible_prescore(snap, rebuilt, remaining.data(), static_cast<uint32_t>(remaining.size()));
      if (!run_feasible_prescore_since(snap, updated, first, left.data(), static_cast<uint32_t>(left.size()),
                                       static_cast<uint32_t>(remaining.size()), [](uint8_t) { return true; })) {
        ++declined;
      } else {
        ++derived;
        const auto& a = state_of<PTS>(rebuilt.header.states);
        const auto& b = state_of<PTS>(updated.header.states);
        ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0) << "seed " << seed << " pod " << i;
        const ArenaRange ra = rebuilt.feasible_ranges[id], rb = updated.feasible_ranges[id];
        ASSERT_EQ(ra.end - ra.begin, rb.end - rb.begin) << "seed " << seed << " pod " << i;
        ASSERT_EQ(std::memcmp(rebuilt.arena.data() + ra.begin, updated.arena.data() + rb.begin, ra.end - ra.begin), 0)
            << "seed " << seed << " pod " << i << ": the tables differ";
      }
      // Score classes: one score per class.
      const PodQueryView v = rebuilt.view();
      std::map<uint64_t, int64_t> by_class;
      for (uint32_t n : remaining) {
        uint64_t cls = 0;
        if (!PTS::score_class(snap.view(), state_of<PTS>(v.states), v.arena, n, cls)) break;
        const int64_t score = run_score(id, snap.view(), v, n);
        const auto [it, fresh] = by_class.emplace(cls, score);
        ASSERT_EQ(it->second, score) << "seed " << seed << " pod " << i << " node " << n << ": class " << cls;
        classed += fresh ? 0 : 1;
      }
    }
  }
  std::printf("[ batch ] spread tables: %llu derived and equal, %llu declined; %llu nodes shared a class\n",
              static_cast<unsigned long long>(derived), static_cast<unsigned long long>(declined),
              static_cast<unsigned long long>(classed));
  EXPECT_GT(derived, 15u);
  EXPECT_GT(declined, 0u);
  EXPECT_GT(classed, 100u);
}

// Generated clusters (the quick start's kind: ReplicaSets, StatefulSets and
// Services, system-default spreading, pod affinity) give the same decisions
// batched or not.
TEST(BatchCache, GeneratedWorkloadsDecideExactlyAsUnbatched) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    GeneratorOptions g;
    g.nodes = 60 + static_cast<uint32_t>(seed) * 40;
    g.running_pods = g.nodes * 2;
    g.pending_pods = 400;
    g.seed = seed;
    g.with_inter_pod_constraints = seed % 2 == 0;
    const GeneratedCluster gen = generate_cluster(g);
    Cluster cluster =
        assemble_cluster(parse_nodes_json(gen.nodes_json, "nodes.json"), parse_pods_json(gen.pods_json, "pods.json"),
                         {"default-scheduler"}, "nodes.json", "pods.json");
    cluster.objects = parse_objects_json(gen.objects_json, "objects.json");
    const std::vector<Pod> pending = std::move(cluster.pending_pods);
    SchedulerConfig config = default_scheduler_config();
    config.profiles[0].percentage_of_nodes_to_score = 100;
    for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
      const Outcome off = run(config, cluster, pending, tie, Batching::Off, seed, 0.0);
      const Outcome exact = run(config, cluster, pending, tie, Batching::Exact, seed, 0.0);
      ASSERT_EQ(first_difference(pending, off.results, exact.results), "")
          << "generator seed " << seed << ", " << g.nodes << " nodes";
      const Outcome windowed = run(config, cluster, pending, tie, Batching::Exact, seed, 0.0, 4, {}, 16);
      ASSERT_EQ(first_difference(pending, off.results, windowed.results), "")
          << "window 16: generator seed " << seed << ", " << g.nodes << " nodes";
      EXPECT_GT(exact.counters.hint_used, 0u) << "generator seed " << seed;
    }
  }
}

// Pending pod p-<i> of the default scheduler, one container asking for
// `cpu` milli-cpu and `memory` bytes.
Pod pending_pod(uint32_t i, int64_t cpu, int64_t memory) {
  Pod p;
  p.namespace_name = "default";
  p.name = "p-" + std::to_string(i);
  p.phase = "Pending";
  p.scheduler_name = "default-scheduler";
  Container c;
  c.name = "main";
  c.requests["cpu"] = cpu;
  c.requests["memory"] = memory;
  p.containers.push_back(c);
  return p;
}

// `count` alike nodes <prefix>0.. with these allocatable cpu (milli),
// memory (bytes) and pods, labelled with their hostname.
Cluster identical_nodes(uint32_t count, const std::string& prefix, int64_t cpu, int64_t memory, int64_t pods) {
  Cluster cluster;
  for (uint32_t i = 0; i < count; ++i) {
    Node n;
    n.name = prefix + std::to_string(i);
    n.labels["kubernetes.io/hostname"] = n.name;
    n.allocatable = {{"cpu", cpu}, {"memory", memory}, {"pods", pods}};
    cluster.nodes.push_back(n);
  }
  return cluster;
}

// A random node that every pod may use: no taints, schedulable.
Node fitting_node(SplitMix64& rng, uint32_t i) {
  Node n = random_node(rng, i, false);
  n.taints.clear();
  n.unschedulable = false;
  return n;
}

// Identical pods on identical nodes: every pod is a hit after the first, and
// the random tie-break spreads them as uniformly as a fresh draw would.
TEST(BatchCache, IdenticalPodsAreHitsAfterTheFirst) {
  Cluster cluster;
  SplitMix64 rng = SplitMix64::derive(5, 0);
  for (uint32_t i = 0; i < 50; ++i) cluster.nodes.push_back(fitting_node(rng, i));
  std::vector<Pod> pods;
  for (uint32_t i = 0; i < 200; ++i) pods.push_back(pending_pod(i, 100, 64 * kMi));
  const Outcome off = run(default_scheduler_config(), cluster, pods, TieBreak::Random, Batching::Off, 1, 0.0);
  const Outcome exact = run(default_scheduler_config(), cluster, pods, TieBreak::Random, Batching::Exact, 1, 0.0);
  ASSERT_EQ(first_difference(pods, off.results, exact.results), "");
  EXPECT_EQ(exact.counters.no_hint, 1u);
  EXPECT_EQ(exact.counters.hint_used, pods.size() - 1);
}

// A miss of a shape not seen lately is not kept when every state slot is
// taken (docs/batching.md, "Which misses become a state"): a run of one
// shape, five pods of shapes seen once, and the first shape again, which
// still finds its state. Decisions equal the cache off, with one state and
// with two.
TEST(BatchCache, ShapesSeenOnceDoNotDisplaceAState) {
  Cluster cluster;
  SplitMix64 rng = SplitMix64::derive(11, 0);
  for (uint32_t i = 0; i < 40; ++i) cluster.nodes.push_back(fitting_node(rng, i));
  std::vector<Pod> pods;
  uint32_t i = 0;
  for (; i < 20; ++i) pods.push_back(pending_pod(i, 100, 64 * kMi));
  for (uint32_t k = 0; k < 5; ++k, ++i) pods.push_back(pending_pod(i, 200 + 50 * k, 64 * kMi));
  for (uint32_t k = 0; k < 5; ++k, ++i) pods.push_back(pending_pod(i, 100, 64 * kMi));
  // Then two shapes alternating. One state: neither can hit (each would
  // displace the other), and the ring of remembered shapes, as long as the
  // states, never holds the one that comes next, so neither is kept. Two
  // states: each is remembered once, then kept, then hits.
  for (uint32_t k = 0; k < 10; ++k, ++i) pods.push_back(pending_pod(i, k % 2 ? 700 : 900, 128 * kMi));
  const Outcome off = run(default_scheduler_config(), cluster, pods, TieBreak::Random, Batching::Off, 3, 0.0);
  const Outcome one = run(default_scheduler_config(), cluster, pods, TieBreak::Random, Batching::Exact, 3, 0.0);
  ASSERT_EQ(first_difference(pods, off.results, one.results), "");
  // 1 + 5 misses in the first 30 pods, 19 + 5 hits; the alternating ten are
  // misses, none kept.
  EXPECT_EQ(one.counters.first_of_shape, 5u + 10u);
  EXPECT_EQ(one.counters.hint_used, 19u + 5u);
  EXPECT_EQ(one.counters.no_hint, 6u + 10u);
  const Outcome two = run(default_scheduler_config(), cluster, pods, TieBreak::Random, Batching::Exact, 3, 0.0, 2);
  ASSERT_EQ(first_difference(pods, off.results, two.results), "");
  // Two states: the first unseen shape takes the empty slot; of the
  // alternating ten, two are remembered, two kept, six hit.
  EXPECT_EQ(two.counters.first_of_shape, 4u + 2u);
  EXPECT_EQ(two.counters.hint_used, 19u + 5u + 6u);
}

// Windows of pods that each differ from the one before (random pods of
// every feature: SeamProbe's spread, min-max and raw normalizations,
// preferred node affinity, PreferNoSchedule tolerations, devices, spread
// constraints, pod affinity), random events between them: the light form
// of a window state (window_answer.hpp) answers most, a batch-cache state
// the rest (feasible-set PreScore, large ties at the top); every decision
// equals --batching off's, both tie-breaks, every profile of the parity
// config (sampling ones included, where no window state is used).
TEST(BatchCache, WindowsOfRandomDistinctPodsDecideExactlyAsUnbatched) {
  const SchedulerConfig configs[] = {parity_config(), whole_config()};
  uint64_t states = 0, hits = 0, light = 0;
  for (uint32_t seed = 0; seed < 40; ++seed) {
    SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0x3a7d0ull, seed);
    const uint32_t nodes = 3 + static_cast<uint32_t>(rng.below(seed % 4 == 3 ? 300 : 60));
    const SchedulerConfig& config = configs[seed % 2];
    std::vector<std::string> schedulers;
    for (const auto& p : config.profiles) schedulers.push_back(p.scheduler_name);
    Cluster cluster = random_cluster(rng, ClusterShape{nodes, 0, 0.05}, schedulers);
    std::vector<Pod> pods;
    for (uint32_t i = 0; i < 100; ++i) pods.push_back(random_pending_pod(rng, i, nodes, schedulers));
    const double mutation_chance = seed % 3 == 0 ? 0.0 : 0.1;
    const uint32_t window = 2 + seed % 15;
    for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
      const Outcome off = run(config, cluster, pods, tie, Batching::Off, seed, mutation_chance);
      const Outcome windowed = run(config, cluster, pods, tie, Batching::Exact, seed, mutation_chance, 1, {}, window);
      ASSERT_EQ(first_difference(pods, off.results, windowed.results), "")
          << "window " << window << ": seed " << seed << " (parity seed " << parity_seed() << "), " << nodes
          << " nodes, " << (seed % 2 ? "every node scored" : "parity config") << ", tie "
          << (tie == TieBreak::First ? "first" : "random") << ", mutations " << mutation_chance;
      states += windowed.counters.window_states;
      hits += windowed.counters.window_hits;
      light += windowed.counters.window_light_hits;
    }
  }
  std::printf("[ batch ] distinct pods in windows: %llu evaluated ahead, %llu answered by their own state, %llu in "
              "the light form\n",
              static_cast<unsigned long long>(states), static_cast<unsigned long long>(hits),
              static_cast<unsigned long long>(light));
  // Both forms answer, and the light form also declines (bounds moved,
  // every kept entry changed, events).
  EXPECT_GT(light, states / 4);
  EXPECT_GT(hits, light);
  EXPECT_GT(states, hits);
}

// Auto windows: two pods per lane, from 8 to 64; none below
// kAutoWindowMinLanes threads or without exact batching; an explicit window
// as given.
TEST(BatchCache, AutoWindowsTakeTwoPodsPerLane) {
  const auto window_on = [](int threads, uint32_t window, Batching batching) {
    EngineOptions options{"cpu", TieBreak::First, 1};
    options.batching = batching;
    options.threads = threads;
    options.window = window;
    return Engine(default_scheduler_config(), options).effective_window();
  };
  static_assert(Engine::kAutoWindowMinLanes == 4, "the lines below assume windows from four threads on");
  EXPECT_EQ(window_on(1, 0, Batching::Exact), 1u);
  EXPECT_EQ(window_on(2, 0, Batching::Exact), 1u);
  EXPECT_EQ(window_on(3, 0, Batching::Exact), 1u);
  EXPECT_EQ(window_on(2, 8, Batching::Exact), 8u);
  EXPECT_EQ(window_on(4, 0, Batching::Exact), 8u);
  EXPECT_EQ(window_on(6, 0, Batching::Exact), 12u);
  EXPECT_EQ(window_on(16, 0, Batching::Exact), 32u);
  EXPECT_EQ(window_on(48, 0, Batching::Exact), 64u);
  EXPECT_EQ(window_on(16, 5, Batching::Exact), 5u);
  EXPECT_EQ(window_on(16, 1, Batching::Exact), 1u);
  EXPECT_EQ(window_on(16, 0, Batching::Off), 1u);
  EXPECT_EQ(window_on(16, 8, Batching::Off), 1u);
  // Not where a pod's pass keeps every thread busy: past
  // kAutoWindowNodesPerLane nodes per lane.
  const auto window_at = [](uint32_t nodes, uint32_t window) {
    Cluster c;
    for (uint32_t i = 0; i < nodes; ++i) {
      Node n;
      n.name = "n" + std::to_string(i);
      n.allocatable = {{"cpu", 4000}, {"pods", 110}};
      c.nodes.push_back(std::move(n));
    }
    EngineOptions options{"cpu", TieBreak::First, 1};
    options.threads = 4;
    options.window = window;
    Engine e(default_scheduler_config(), options);
    e.load(c);
    return e.effective_window();
  };
  EXPECT_EQ(window_at(4 * Engine::kAutoWindowNodesPerLane, 0), 8u);
  EXPECT_EQ(window_at(4 * Engine::kAutoWindowNodesPerLane + 1, 0), 1u);
  EXPECT_EQ(window_at(4 * Engine::kAutoWindowNodesPerLane + 1, 8), 8u);
}

// Engine::schedule_all over `cluster` with the default profile, windows
// of `window` pods and a pool of `threads`; the batch counters into
// `counters` where given.
std::vector<ScheduleResult> schedule_all_windowed(const Cluster& cluster, const std::vector<Pod>& pods,
                                                  Batching batching, TieBreak tie, uint64_t seed, uint32_t window,
                                                  int threads, BatchCounters* counters) {
  EngineOptions options{"cpu", tie, seed};
  options.batching = batching;
  options.window = window;
  options.threads = threads;
  Engine engine(default_scheduler_config(), options);
  engine.load(cluster);
  std::vector<ScheduleResult> out = engine.schedule_all(pods);
  if (counters) *counters = engine.batch_counters();
  return out;
}

// Windows of pods through schedule_all (issue 24, item 1): pods that each
// differ from the one before (their requests vary with their index), runs
// of alike pods between them, a gang's entry breaking a window, a pod
// preferring one node so that an earlier pod of its window takes it. On a
// pool of three threads (the CPU backend's lanes, each pod on one thread):
// decisions equal the cache off, with both tie-breaks; the distinct pods
// are answered by their own window states; a run of alike pods is
// evaluated ahead once, not once per pod.
TEST(BatchCache, WindowsOfDistinctPodsDecideExactlyAsUnbatched) {
  Cluster cluster;
  SplitMix64 rng = SplitMix64::derive(17, 0);
  for (uint32_t i = 0; i < 120; ++i) cluster.nodes.push_back(fitting_node(rng, i));
  std::vector<Pod> pods;
  uint32_t i = 0;
  for (; i < 150; ++i) pods.push_back(pending_pod(i, 100 + 7 * (i % 41), (64 + (i * 13) % 97) * kMi));
  for (uint32_t k = 0; k < 40; ++k, ++i) pods.push_back(pending_pod(i, 250, 96 * kMi));
  for (uint32_t k = 0; k < 60; ++k, ++i) pods.push_back(pending_pod(i, 3000 + 500 * (k % 9), (1024 + k) * kMi));
  const auto decide = [&](Batching batching, TieBreak tie, uint32_t window, BatchCounters* counters) {
    return schedule_all_windowed(cluster, pods, batching, tie, parity_seed(), window, 3, counters);
  };
  for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
    const std::vector<ScheduleResult> off = decide(Batching::Off, tie, 1, nullptr);
    for (const uint32_t window : {2u, 8u, 32u}) {
      BatchCounters c;
      const std::vector<ScheduleResult> windowed = decide(Batching::Exact, tie, window, &c);
      ASSERT_EQ(first_difference(pods, off, windowed), "")
          << "window " << window << ", tie " << (tie == TieBreak::First ? "first" : "random");
      // Every distinct pod but the last of a window of one is evaluated
      // ahead; the alike run's first two pods only (then the kept state
      // answers), so far fewer states than pods.
      EXPECT_GT(c.window_hits, 150u) << "window " << window;
      EXPECT_LE(c.window_states, 150u + 60u + 2u * ((40 + window - 1) / window)) << "window " << window;
      EXPECT_EQ(c.hint_used + c.no_hint, pods.size());
    }
  }
}

// A light form's best group of hundreds to thousands of tied nodes,
// counted in place block by block (window_answer.hpp, 256 positions a
// block): alike nodes, pods that each differ from the one before, so that
// every earlier pod of a window changes one node of the tie and the random
// draw's rank lands in any block. Decisions equal the cache off.
TEST(BatchCache, WindowTiesOfThousandsAcrossBlocksDecideExactlyAsUnbatched) {
  uint64_t light = 0;
  for (const uint32_t N : {257u, 700u, 1100u, 2100u}) {
    const Cluster cluster = identical_nodes(N, "n-", 64000, 256 * kGi, 500);
    std::vector<Pod> pods;
    for (uint32_t i = 0; i < 60; ++i) pods.push_back(pending_pod(i, 100 + 37 * (i % 11), (64 + 53 * (i % 7)) * kMi));
    for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
      const auto decide = [&](Batching batching, uint32_t window, BatchCounters* counters) {
        return schedule_all_windowed(cluster, pods, batching, tie, parity_seed() + N, window, 2, counters);
      };
      const std::vector<ScheduleResult> off = decide(Batching::Off, 1, nullptr);
      for (const uint32_t window : {2u, 5u, 16u}) {
        BatchCounters c;
        const std::vector<ScheduleResult> windowed = decide(Batching::Exact, window, &c);
        ASSERT_EQ(first_difference(pods, off, windowed), "")
            << N << " nodes, window " << window << ", tie " << (tie == TieBreak::First ? "first" : "random")
            << ", parity seed " << parity_seed();
        light += c.window_light_hits;
      }
    }
  }
  std::printf("[ batch ] window ties of thousands: %llu light answers\n", static_cast<unsigned long long>(light));
  EXPECT_GT(light, 1000u);
}

// The in-place group's block edge: the scored nodes a multiple of 256
// (one node filtered out by NodeData when the window is evaluated), and
// that node let in before the window's pods take their turns, empty, so
// tied at the top past every scored node. Decisions equal the cache off,
// with the same events at the same points.
TEST(BatchCache, WindowTieWithANodeLetInPastTheLastBlockDecidesAsUnbatched) {
  SchedulerConfig config = default_scheduler_config();
  for (auto& p : config.profiles) {
    p.filter.push_back("NodeData");
    p.node_data_args.filter_column = "example.com/ok";
  }
  uint64_t light = 0;
  for (const uint32_t N : {257u, 513u, 769u}) {
    const Cluster cluster = identical_nodes(N, "n-", 64000, 256 * kGi, 500);
    const std::string last = "n-" + std::to_string(N - 1);
    std::vector<Pod> pods;
    for (uint32_t i = 0; i < 48; ++i) pods.push_back(pending_pod(i, 100 + 37 * (i % 11), (64 + 53 * (i % 7)) * kMi));
    for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
      for (const uint32_t window : {2u, 6u}) {
        const auto decide = [&](Batching b) {
          EngineOptions options{"cpu", tie, parity_seed() + N};
          options.batching = b;
          options.window = window;
          Engine engine(config, options);
          engine.load(cluster);
          std::vector<ScheduleResult> out;
          for (size_t i = 0; i < pods.size(); ++i) {
            if (i % window == 0) {
              EXPECT_TRUE(engine.set_node_filter("example.com/ok", last, false, "held back").ok());
              look_ahead_at(engine, pods, i, window);
              EXPECT_TRUE(engine.set_node_filter("example.com/ok", last, true).ok());
            }
            out.push_back(engine.schedule(pods[i]));
          }
          if (b == Batching::Exact) light += engine.batch_counters().window_light_hits;
          return out;
        };
        const std::vector<ScheduleResult> off = decide(Batching::Off);
        ASSERT_EQ(first_difference(pods, off, decide(Batching::Exact)), "")
            << N << " nodes, window " << window << ", tie " << (tie == TieBreak::First ? "first" : "random")
            << ", parity seed " << parity_seed();
      }
    }
  }
  std::printf("[ batch ] a node let in past the last block: %llu light answers\n",
              static_cast<unsigned long long>(light));
  EXPECT_GT(light, 100u);
}

// Node data set between a look-ahead and the pods' turns (the embedder's
// filter verdicts and scores, columns cleared), on top of the random
// events: windows of 2 to 11 decide as --batching off (NodeData's
// normalizations move the bounds the light form keeps).
void set_random_node_data(SplitMix64& rng, Engine& e) {
  const Snapshot& snap = e.snapshot();
  if (snap.num_nodes() == 0) return;
  const RandomNodeData d = random_node_data(rng, snap.num_nodes(), rng.chance(0.1) ? snap.num_nodes() : 3);
  if (d.clear_column) {
    (void)e.clear_node_data(d.column);
    return;
  }
  using Op = Snapshot::NodeDataUpdate::Op;
  std::vector<NodeFilterValue> filters;
  std::vector<NodeScoreValue> scores;
  for (const auto& u : d.updates) {
    const std::string name = snap.node_name(u.node);
    if (u.op == Op::kClear)
      (void)e.clear_node_data(d.column, name);
    else if (d.kind == Snapshot::NodeDataKind::kFilter)
      filters.push_back(NodeFilterValue{name, u.op == Op::kPass, u.reason});
    else
      scores.push_back(NodeScoreValue{name, u.score});
  }
  if (!filters.empty()) {
    ASSERT_TRUE(e.set_node_filters(d.column, filters).ok());
  }
  if (!scores.empty()) {
    ASSERT_TRUE(e.set_node_scores(d.column, scores).ok());
  }
}

TEST(BatchCache, WindowsFollowNodeDataSetBeforeTheirTurn) {
  const SchedulerConfig& config = node_data_parity_config();
  std::vector<std::string> schedulers;
  for (const auto& p : config.profiles) schedulers.push_back(p.scheduler_name);
  uint64_t light = 0;
  for (uint32_t seed = 0; seed < 40; ++seed) {
    SplitMix64 rng = SplitMix64::derive(0x5eed ^ parity_seed(), seed);
    const uint32_t nodes = 2 + static_cast<uint32_t>(rng.below(seed % 3 == 0 ? 40 : 12));
    Cluster cluster = random_cluster(rng, ClusterShape{nodes, 0, 0.05}, schedulers);
    std::vector<Pod> pods;
    for (uint32_t i = 0; i < 60; ++i) pods.push_back(random_pending_pod(rng, i, nodes, schedulers));
    const uint32_t window = 2 + seed % 10;
    const double data_chance = (seed % 4) * 0.25;
    const double mutation_chance = seed % 5 == 0 ? 0.0 : 0.15;
    for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
      const auto decide = [&](Batching batching, uint32_t w) {
        EngineOptions options{"cpu", tie, parity_seed()};
        options.batching = batching;
        options.window = w;
        Engine engine(config, options);
        engine.load(cluster);
        SplitMix64 mrng = SplitMix64::derive(seed, 11);
        for (int k = 0; k < 4; ++k) set_random_node_data(mrng, engine);
        std::vector<ScheduleResult> out;
        for (size_t i = 0; i < pods.size(); ++i) {
          look_ahead_at(engine, pods, i, w);
          if (mrng.chance(data_chance)) set_random_node_data(mrng, engine);
          if (mrng.chance(mutation_chance)) mutate(mrng, engine, cluster.nodes);
          out.push_back(engine.schedule(pods[i]));
        }
        light += engine.batch_counters().window_light_hits;
        return out;
      };
      const std::vector<ScheduleResult> off = decide(Batching::Off, 1);
      ASSERT_EQ(first_difference(pods, off, decide(Batching::Exact, window)), "")
          << "seed " << seed << " (parity seed " << parity_seed() << "), window " << window << ", " << nodes
          << " nodes, tie " << (tie == TieBreak::First ? "first" : "random") << ", node data " << data_chance;
    }
  }
  EXPECT_GT(light, 0u);
}

// Identical nodes (large ties at the best total) with NodeData's scores
// holding the bounds at a few nodes (none, default and reverse
// normalization), filter verdicts and scores changed between a look-ahead
// and each turn: the tied node the light form picks spans the kept group
// and the changed nodes, and the bounds it keeps move; both tie-breaks
// decide as --batching off.
TEST(BatchCache, WindowTiesSpanKeptAndChangedNodes) {
  uint64_t light = 0;
  for (uint32_t seed = 0; seed < 30; ++seed) {
    SplitMix64 rng = SplitMix64::derive(0x7135 ^ parity_seed(), seed);
    SchedulerConfig config = default_scheduler_config();
    for (auto& p : config.profiles) {
      p.filter.push_back("NodeData");
      p.score.push_back(PluginEntry{"NodeData", static_cast<int32_t>(1 + seed % 3)});
      p.node_data_args.filter_column = "example.com/ok";
      p.node_data_args.score_column = "example.com/score";
      p.node_data_args.score_normalization = seed % 3 == 0   ? NodeDataNormalization::None
                                             : seed % 3 == 1 ? NodeDataNormalization::Default
                                                             : NodeDataNormalization::Reverse;
      p.node_data_args.score_default = 50;
    }
    // Every third cluster past several 256-entry blocks: a light form's
    // best group counted in place, block by block (window_answer.hpp).
    const uint32_t N = 4 + static_cast<uint32_t>(rng.below(seed % 3 == 2 ? 1100 : 60));
    const Cluster cluster = identical_nodes(N, "n-", 64000, 256 * kGi, 500);
    std::vector<Pod> pods;
    for (uint32_t i = 0; i < 80; ++i) pods.push_back(pending_pod(i, rng.chance(0.5) ? 0 : 10 * (1 + i % 5), 0));
    const uint32_t window = 2 + static_cast<uint32_t>(rng.below(12));
    for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
      const auto decide = [&](Batching b, uint32_t w) {
        EngineOptions options{"cpu", tie, parity_seed()};
        options.batching = b;
        options.window = w;
        Engine engine(config, options);
        engine.load(cluster);
        SplitMix64 m = SplitMix64::derive(seed, 99);
        // The bounds held by a few nodes, at 0 and 100.
        EXPECT_TRUE(engine.set_node_score("example.com/score", "n-0", 0).ok());
        EXPECT_TRUE(engine.set_node_score("example.com/score", "n-1", 100).ok());
        EXPECT_TRUE(engine.set_node_score("example.com/score", "n-2", 100).ok());
        std::vector<ScheduleResult> out;
        for (size_t i = 0; i < pods.size(); ++i) {
          look_ahead_at(engine, pods, i, w);
          for (uint64_t k = m.below(4); k > 0; --k) {
            const std::string node = "n-" + std::to_string(3 + m.below(N - 3));
            switch (m.below(5)) {
              case 0: (void)engine.set_node_filter("example.com/ok", node, false, "no"); break;
              case 1: (void)engine.set_node_filter("example.com/ok", node, true); break;
              case 2: (void)engine.set_node_score("example.com/score", node, 50); break;
              case 3: (void)engine.set_node_score("example.com/score", node, static_cast<int64_t>(m.below(101))); break;
              default: (void)engine.clear_node_data("example.com/score", node); break;
            }
          }
          out.push_back(engine.schedule(pods[i]));
        }
        light += engine.batch_counters().window_light_hits;
        return out;
      };
      const std::vector<ScheduleResult> off = decide(Batching::Off, 1);
      ASSERT_EQ(first_difference(pods, off, decide(Batching::Exact, window)), "")
          << "seed " << seed << " (parity seed " << parity_seed() << "), " << N << " nodes, window " << window
          << ", tie " << (tie == TieBreak::First ? "first" : "random");
    }
  }
  std::printf("[ batch ] window ties: %llu light answers\n", static_cast<unsigned long long>(light));
  EXPECT_GT(light, 500u);
}

// A state from before a structural change can never answer again: its
// slot is free, so the next shape's first miss is kept and its second pod
// hits, as on an empty cache.
TEST(BatchCache, AStateBeforeAStructuralChangeLeavesItsSlotFree) {
  Cluster cluster;
  SplitMix64 rng = SplitMix64::derive(13, 0);
  for (uint32_t i = 0; i < 20; ++i) cluster.nodes.push_back(fitting_node(rng, i));
  EngineOptions options{"cpu", TieBreak::First, parity_seed()};
  options.batching = Batching::Exact;
  Engine engine(default_scheduler_config(), options);
  engine.load(cluster);
  Engine plain(default_scheduler_config(), EngineOptions{"cpu", TieBreak::First, parity_seed()});
  plain.load(cluster);
  uint32_t i = 0;
  const auto both = [&](const Pod& p) {
    const ScheduleResult a = engine.schedule(p), b = plain.schedule(p);
    ASSERT_EQ(a.node, b.node) << p.name;
    ASSERT_EQ(a.score, b.score) << p.name;
  };
  for (; i < 5; ++i) both(pending_pod(i, 100, 64 * kMi));
  const Node extra = fitting_node(rng, 100);
  ASSERT_TRUE(engine.add_node(extra).ok());  // structural: the state is dead
  ASSERT_TRUE(plain.add_node(extra).ok());
  const BatchCounters before = engine.batch_counters();
  for (; i < 10; ++i) both(pending_pod(i, 300, 128 * kMi));
  const BatchCounters after = engine.batch_counters().since(before);
  EXPECT_EQ(after.first_of_shape, 0u);
  EXPECT_EQ(after.no_hint, 1u);
  EXPECT_EQ(after.hint_used, 4u);
}

// Chi-square over `counts` against a uniform distribution.
double chi_square(const std::map<std::string, uint64_t>& counts, uint64_t cells, uint64_t total) {
  const double expected = static_cast<double>(total) / static_cast<double>(cells);
  double chi = 0;
  uint64_t seen = 0;
  for (const auto& [k, n] : counts) {
    chi += (static_cast<double>(n) - expected) * (static_cast<double>(n) - expected) / expected;
    seen += 1;
  }
  chi += static_cast<double>(cells - seen) * expected;  // empty cells
  return chi;
}

// The random tie-break is a fresh draw for every pod: with K nodes tied at
// the top, each pod's choice is uniform over them whatever the pods before
// it chose. Two shapes, over 6,000 seeds, batched and not:
//  * ties that persist (only TaintToleration scores, no taints: every node
//    totals 100 forever): the choices of three pods, 64 ordered triples,
//    equally often (a node that just got a pod is no likelier to get the
//    next one);
//  * ties that shrink (LeastAllocated: the chosen node drops out): the
//    first pod's choice and the ordered pair of the first two.
TEST(BatchCache, RandomTieBreakIsUniformOverTiedNodes) {
  constexpr uint32_t K = 4;
  const Cluster cluster = identical_nodes(K, "node-", 4000, 8 * kGi, 110);
  std::vector<Pod> pods;
  for (uint32_t i = 0; i < 3; ++i) pods.push_back(pending_pod(i, 1000, kGi));
  const SchedulerConfig taints_only = parse_scheduler_config(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: '*'
      enabled:
      - name: TaintToleration
)",
                                                             "taints-only");
  constexpr uint64_t kSeeds = 6000;
  for (const Batching batching : {Batching::Off, Batching::Exact}) {
    std::map<std::string, uint64_t> first, pairs, triples;
    uint64_t hits = 0;
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      for (const bool persistent : {true, false}) {
        EngineOptions options{"cpu", TieBreak::Random, seed * 0x9E3779B97F4A7C15ull, 1};
        options.batching = batching;
        Engine engine(persistent ? taints_only : default_scheduler_config(), options);
        engine.load(cluster);
        const std::vector<ScheduleResult> r = engine.schedule_all(pods);
        hits += engine.batch_counters().hint_used;
        if (persistent) {
          ++triples[r[0].node_name + ">" + r[1].node_name + ">" + r[2].node_name];
        } else {
          ASSERT_NE(r[0].node, r[1].node);  // the first node is less free now
          ++first[r[0].node_name];
          ++pairs[r[0].node_name + ">" + r[1].node_name];
        }
      }
    }
    if (batching == Batching::Exact) {
      EXPECT_EQ(hits, kSeeds * 2 * (pods.size() - 1));
    }
    // p = 0.001 critical values: 3, 11 and 63 degrees of freedom.
    EXPECT_LT(chi_square(first, K, kSeeds), 16.27) << batching_name(batching);
    EXPECT_LT(chi_square(pairs, K * (K - 1), kSeeds), 31.26) << batching_name(batching);
    EXPECT_LT(chi_square(triples, K * K * K, kSeeds), 103.4) << batching_name(batching);
  }
}

// ---- --batching upstream ---------------------------------------------------------

Pod plain_pod(const std::string& name, int64_t milli_cpu) {
  Pod p;
  p.namespace_name = "default";
  p.name = name;
  p.phase = "Pending";
  p.scheduler_name = "default-scheduler";
  Container c;
  c.name = "main";
  c.image = "registry.local/app:1";
  c.requests["cpu"] = milli_cpu;
  c.requests["memory"] = 256 * kMi;
  p.containers.push_back(c);
  return p;
}

Cluster plain_nodes(uint32_t n) {
  Cluster cluster;
  for (uint32_t i = 0; i < n; ++i) {
    Node node;
    node.name = "node-" + std::to_string(i);
    node.labels["kubernetes.io/hostname"] = node.name;
    node.allocatable = {{"cpu", 4000}, {"memory", 16 * kGi}, {"pods", 110}};
    cluster.nodes.push_back(node);
  }
  return cluster;
}

// v1.35.4's SignPod: what refuses, what is in a signature and what is not.
TEST(UpstreamBatching, SignaturesAsV1354SignsPods) {
  const ProfilePlan defaults = make_profile_plan(default_scheduler_config().profiles[0]);
  const ProfilePlan no_topology =
      make_profile_plan(parse_scheduler_config(kNoTopologyConfig, "no-topology").profiles[0]);
  Pod a = plain_pod("a", 100);
  // System-default spreading: every pod is refused.
  EXPECT_FALSE(upstream_pod_signature(a, defaults));
  const auto sig_a = upstream_pod_signature(a, no_topology);
  ASSERT_TRUE(sig_a);
  // The name, the namespace and the priority are not in it; requests,
  // labels (InterPodAffinity) and tolerations are, tolerations in sorted order.
  Pod b = a;
  b.name = "b";
  b.namespace_name = "other";
  b.priority = 7;
  EXPECT_EQ(upstream_pod_signature(b, no_topology), sig_a);
  b.containers[0].requests["cpu"] = 200;
  EXPECT_NE(upstream_pod_signature(b, no_topology), sig_a);
  Pod c = a;
  c.labels["app"] = "web";
  EXPECT_NE(upstream_pod_signature(c, no_topology), sig_a);
  Pod t1 = a, t2 = a;
  t1.tolerations = {{"x", "Exists", "", ""}, {"a", "Equal", "1", "NoSchedule"}};
  t2.tolerations = {{"a", "Equal", "1", "NoSchedule"}, {"x", "Exists", "", ""}};
  EXPECT_EQ(upstream_pod_signature(t1, no_topology), upstream_pod_signature(t2, no_topology));
  EXPECT_NE(upstream_pod_signature(t1, no_topology), sig_a);
  // Pod (anti-)affinity and own spread constraints refuse.
  Pod aff = a;
  aff.affinity = Affinity{};
  aff.affinity->pod_anti_affinity = PodAffinity{};
  EXPECT_FALSE(upstream_pod_signature(aff, no_topology));
  Pod spread = a;
  spread.topology_spread_constraints.push_back(TopologySpreadConstraint{});
  EXPECT_FALSE(upstream_pod_signature(spread, no_topology));
}

// The default profile never batches upstream: every scheduled pod is a
// no_hint attempt and a pod_not_batchable flush, as semantics doc §4.3 says.
TEST(UpstreamBatching, NeverHintsInTheDefaultProfile) {
  const Cluster cluster = plain_nodes(20);
  std::vector<Pod> pods;
  for (int i = 0; i < 30; ++i) pods.push_back(plain_pod("p-" + std::to_string(i), 500));
  const Outcome up = run(default_scheduler_config(), cluster, pods, TieBreak::First, Batching::Upstream, 1, 0.0);
  EXPECT_EQ(up.counters.hint_used, 0u);
  EXPECT_EQ(up.counters.no_hint, pods.size());
  EXPECT_EQ(up.counters.flushed[static_cast<size_t>(FlushReason::kPodNotBatchable)], pods.size());
}

// One pod per node (3 of 4 cpus): every pod after the first takes the
// previous pod's next node as its hint; the last chosen node is full, so
// nothing is rescored. With --tie-break first that is where full scoring
// puts it too; with random the hint follows the first pod's draw among the
// tied nodes, where full scoring draws afresh (upstream's hint is not a
// fresh draw either), so only the counts are checked.
TEST(UpstreamBatching, OnePodPerNodeTakesHints) {
  const SchedulerConfig config = parse_scheduler_config(kNoTopologyConfig, "no-topology");
  const Cluster cluster = plain_nodes(40);
  std::vector<Pod> pods;
  for (int i = 0; i < 40; ++i) pods.push_back(plain_pod("p-" + std::to_string(i), 3000));
  for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
    const Outcome off = run(config, cluster, pods, tie, Batching::Off, 1, 0.0);
    const Outcome up = run(config, cluster, pods, tie, Batching::Upstream, 1, 0.0);
    if (tie == TieBreak::First) {
      for (size_t i = 0; i < pods.size(); ++i) EXPECT_EQ(off.results[i].node, up.results[i].node) << "pod " << i;
    }
    std::vector<int32_t> nodes;
    for (const auto& r : up.results) nodes.push_back(r.node);
    std::sort(nodes.begin(), nodes.end());
    EXPECT_EQ(std::unique(nodes.begin(), nodes.end()), nodes.end()) << "two pods on one node";
    EXPECT_EQ(up.counters.hint_used, pods.size() - 1);  // all but the first, which found no state
    EXPECT_EQ(up.counters.rescore_attempts, 0u);
  }
}

// Many pods per node: the last chosen node still fits and is rescored into
// the list (the KEP update); a failed pod in between flushes pod_skipped.
TEST(UpstreamBatching, RescoresTheLastNodeAndFlushesAfterAFailedPod) {
  const SchedulerConfig config = parse_scheduler_config(kNoTopologyConfig, "no-topology");
  const Cluster cluster = plain_nodes(10);
  std::vector<Pod> pods;
  for (int i = 0; i < 30; ++i) pods.push_back(plain_pod("p-" + std::to_string(i), 100));
  pods.insert(pods.begin() + 15, plain_pod("too-big", 64000));
  const Outcome up = run(config, cluster, pods, TieBreak::First, Batching::Upstream, 1, 0.0);
  EXPECT_GT(up.counters.hint_used, 20u);
  EXPECT_GT(up.counters.rescore_attempts, 20u);
  EXPECT_EQ(up.counters.flushed[static_cast<size_t>(FlushReason::kPodSkipped)], 1u);
  EXPECT_LT(up.results[15].node, 0);
  for (size_t i = 0; i < up.results.size(); ++i)
    if (i != 15) {
      EXPECT_GE(up.results[i].node, 0) << "pod " << i;
    }
}

// --batching upstream expires its state on the wall clock, as v1.35.4 does
// (maxBatchAge, 500 ms): the same pods, after the same first pod, take the
// hint or are evaluated in full by the time between them alone. So that
// mode's decisions depend on the run's speed (machine, backend, threads),
// where exact and off never do (README, docs/batching.md, --help).
TEST(UpstreamBatching, StatesExpireOnTheWallClock) {
  const ProfilePlan plan =
      make_profile_plan(parse_scheduler_config(kNoTopologyConfig, "no-topology").profiles[0]);
  const Cluster cluster = plain_nodes(8);
  Snapshot snap = Snapshot::build(cluster.nodes, std::vector<Pod>{});
  const auto backend = make_cpu_backend(1);
  const Pod first = plain_pod("first", 3000);
  intern_pod_for_plan(snap, first, plan);
  PodQuery q = prepare_pod_query(first, snap, plan, TieBreak::First, 1);
  EvalRequest req;
  req.want_scores = true;
  EvalResult r;
  backend->evaluate(snap, q, req, r);
  ASSERT_GE(r.chosen, 0);
  ASSERT_TRUE(r.scored);
  const auto signature = upstream_pod_signature(first, plan);
  ASSERT_TRUE(signature);
  BatchCounters counters;
  UpstreamBatch stored;
  const UpstreamBatch::Clock::time_point t0{std::chrono::seconds(100)};
  stored.store(snap, 1, signature, -1, r.chosen, &q, &r, t0, counters);
  Pod placed = first;
  placed.node_name = snap.node_name(static_cast<uint32_t>(r.chosen));
  snap.add_pod(placed, static_cast<uint32_t>(r.chosen));

  const Pod second = plain_pod("second", 3000);
  ASSERT_EQ(upstream_pod_signature(second, plan), signature);
  const auto hint_after = [&](std::chrono::milliseconds gap, FlushReason& why) {
    UpstreamBatch state = stored;  // the same state, another clock
    PodQuery q2 = prepare_pod_query(second, snap, plan, TieBreak::First, 1);
    why = FlushReason::kNoState;
    return state.hint(snap, 2, signature, q2, t0 + gap, why, counters);
  };
  FlushReason why = FlushReason::kNoState;
  const int32_t fast = hint_after(std::chrono::milliseconds(499), why);
  EXPECT_GE(fast, 0) << flush_reason_name(why);
  EXPECT_NE(fast, r.chosen);  // the first pod's node is full (3 of 4 cpus)
  const int32_t slow = hint_after(std::chrono::milliseconds(501), why);
  EXPECT_EQ(slow, -1);
  EXPECT_EQ(why, FlushReason::kExpired);
}

}  // namespace
}  // namespace bulkscore
