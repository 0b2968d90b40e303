// Issue 21, item 2: a week of informer events through the event API, to show
// that an engine kept for weeks stays bounded in memory and flat in cost.
//
//   bench_soak [--events N] [--nodes N] [--deployments N] [--seed N]
//              [--samples N] [--warmup-share F] [--threads N] [--backend B]
//              [--batch-states N] [--max-rss-mb N] [--max-seconds N]
//              [--no-compaction] [--csv F] [--plot F.png]
//
// The stream (all through Engine's event calls, as an embedding scheduler
// fed by informers makes them): 5,000 nodes in three zones; Deployments in
// ten namespaces, each with a Service selecting `app` and a ReplicaSet per
// revision selecting `app` and `pod-template-hash`, so that every pod is
// spread by the default profile's system-default constraints; some with a
// preferred pod anti-affinity term or topology spread constraints of their
// own keyed on `pod-template-hash` (as matchLabelKeys writes them). Rolling
// updates (a few at once, interleaved) bring a new pod-template-hash: the
// new ReplicaSet is added, each new pod is scheduled with schedule() and
// confirmed with add_pod(), an old pod is removed with remove_pod(), and the
// old ReplicaSet goes at the end. Deployments are deleted (pods, ReplicaSets,
// Service) and new ones created under new names; pods are updated; nodes
// are cordoned and uncordoned, relabelled (with a newly pulled image), and
// replaced (cordoned, drained with replacement pods, removed, and a node of
// a new name added). Every engine call counts as one event; about 10 million
// make a week at 16 a second.
//
// Every --events / --samples events it samples the resident set
// (/proc/self/statm), the mean CPU time (the process's: this shared machine's
// load does not count) and wall time of schedule() over the window, the CPU
// time per event of every kind, and the snapshot's dictionary, matcher,
// term-group and image counts; writes
// them as CSV (--csv) and draws RSS and per-pod cost against events as a PNG
// (--plot; gnuplot reads the script, which names no file, on its standard
// input and writes the PNG on its standard output). The summary compares
// the samples after the warm-up (the first --warmup-share of the events).
// Not a unit test: run it at `nice` (docs/performance.md has the figures).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <ctime>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "bench/replay/gnuplot.hpp"
#include "host/engine/engine.hpp"
#include "host/io/io.hpp"
#include "host/input/config.hpp"

namespace bulkscore {
namespace {

struct Options {
  uint64_t events = 10'000'000;
  uint32_t nodes = 5000;
  uint32_t deployments = 0;  // 0: nodes / 25
  uint64_t seed = 1;
  uint32_t samples = 200;
  double warmup_share = 0.1;
  int threads = 1;
  std::string backend = "cpu";
  uint32_t batch_states = 8;
  uint64_t max_rss_mb = 6144;
  uint64_t max_seconds = 0;  // 0: no limit
  bool compaction = true;    // --no-compaction: the baseline that never releases
  std::string csv, plot;
};

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }
};

// The process's CPU time, in nanoseconds.
uint64_t cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ULL + static_cast<uint64_t>(t.tv_nsec);
}

double rss_mb() {
  std::ifstream f("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  f >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

const char* const kZones[] = {"zone-a", "zone-b", "zone-c"};
const char* const kTypes[] = {"m5.2xlarge", "m5.4xlarge", "r5.2xlarge", "c5.4xlarge"};
const char* const kTiers[] = {"web", "api", "worker", "cache"};

struct PodInfo {
  uint32_t deployment;
  std::string hash;
};

struct Deployment {
  std::string ns, name, hash, old_hash;
  uint32_t replicas = 0;
  int64_t cpu = 0, memory = 0;
  std::string tier;
  bool anti_affinity = false;  // preferred, hostname, selector with pod-template-hash
  bool own_spread = false;     // own constraints with matchLabelKeys [pod-template-hash]
  bool rolling = false;
  uint32_t created = 0;           // new-revision pods created in the rollout so far
  std::vector<std::string> pods;  // cache keys, any revision
  bool live = true;
};

class Soak {
 public:
  explicit Soak(const Options& o) : o_(o), rng_{o.seed * 0x2545f4914f6cdd1dULL + 1} {
    EngineOptions eo;
    eo.backend = o.backend;
    eo.tie_break = TieBreak::Random;
    eo.seed = o.seed;
    eo.threads = o.threads;
    eo.batch_states = o.batch_states;
    // The baseline: a bound no stream reaches, so nothing is ever released.
    if (!o.compaction) eo.compaction = CompactionPolicy{0.0, UINT32_MAX};
    engine_ = std::make_unique<Engine>(default_scheduler_config(), eo);
  }

  int run() {
    Cluster c;
    for (uint32_t i = 0; i < o_.nodes; ++i) {
      c.nodes.push_back(make_node());
      nodes_[c.nodes.back().name] = c.nodes.back();
    }
    engine_->load(std::move(c));
    const uint32_t deployments = o_.deployments ? o_.deployments : std::max<uint32_t>(4, o_.nodes / 25);
    for (uint32_t d = 0; d < deployments; ++d) create_deployment();
    const uint64_t every = std::max<uint64_t>(1, o_.events / std::max<uint32_t>(1, o_.samples));
    next_sample_ = every;
    start_ = std::chrono::steady_clock::now();
    window_cpu_start_ = cpu_ns();
    window_events_ = events_;
    sample();
    while (events_ < o_.events) {
      step();
      if (events_ >= next_sample_) {
        next_sample_ += every;
        sample();
        if (rows_.back().rss > static_cast<double>(o_.max_rss_mb)) {
          std::fprintf(stderr,
                       "bench_soak: resident set %.0f MB over --max-rss-mb %" PRIu64 ": stopped at event %" PRIu64 "\n",
                       rows_.back().rss, o_.max_rss_mb, events_);
          stopped_ = true;
          break;
        }
        if (o_.max_seconds && rows_.back().seconds > static_cast<double>(o_.max_seconds)) {
          std::fprintf(stderr, "bench_soak: past --max-seconds %" PRIu64 ": stopped at event %" PRIu64 "\n",
                       o_.max_seconds, events_);
          stopped_ = true;
          break;
        }
      }
    }
    if (rows_.back().events != events_) sample();
    report();
    return failures_ ? 1 : 0;
  }

 private:
  struct Row {
    uint64_t events;
    double seconds, rss, us_per_pod, cpu_us_per_pod, cpu_us_per_event;
    uint64_t scheduled, hits, strings, matchers, term_groups, images, pods, nodes;
  };

  // ---- the cluster's objects ----------------------------------------------------

  Node make_node() {
    Node n;
    n.name = "node-" + std::to_string(node_seq_++);
    const char* zone = kZones[node_seq_ % 3];
    n.labels = {{"kubernetes.io/hostname", n.name},
                {"kubernetes.io/os", "linux"},
                {"kubernetes.io/arch", "amd64"},
                {"topology.kubernetes.io/zone", zone},
                {"topology.kubernetes.io/region", "region-1"},
                {"node.kubernetes.io/instance-type", kTypes[rng_.below(4)]}};
    n.allocatable = {
        {"cpu", 32000}, {"memory", int64_t(128) << 30}, {"ephemeral-storage", int64_t(200) << 30}, {"pods", 110}};
    n.images = {{{"registry.example/base:1.0", "registry.example/base@sha256:0001"}, 200 << 20},
                {{"registry.example/sidecar:2.3"}, 50 << 20}};
    return n;
  }

  std::string fresh_hash() {
    static const char kHex[] = "0123456789abcdef";
    std::string h(10, '0');
    uint64_t v = rng_.next();
    for (char& ch : h) {
      ch = kHex[v & 15];
      v >>= 4;
    }
    return h;
  }

  SelectingObject replica_set(const Deployment& d, const std::string& hash) const {
    SelectingObject rs;
    rs.kind = SelectingObject::Kind::ReplicaSet;
    rs.namespace_name = d.ns;
    rs.name = d.name + "-" + hash;
    rs.has_selector = true;
    rs.label_selector = LabelSelector{};
    rs.label_selector->match_labels = {{"app", d.name}, {"pod-template-hash", hash}};
    return rs;
  }

  Pod make_pod(const Deployment& d) {
    Pod p;
    p.namespace_name = d.ns;
    p.name = d.name + "-" + d.hash + "-" + std::to_string(pod_seq_++);
    p.uid = "uid-" + std::to_string(pod_seq_);
    p.phase = "Pending";
    p.scheduler_name = "default-scheduler";
    p.labels = {{"app", d.name}, {"pod-template-hash", d.hash}, {"tier", d.tier}};
    p.owner_references.push_back({"apps/v1", "ReplicaSet", d.name + "-" + d.hash, "rs-uid", true});
    Container ct;
    ct.name = "main";
    ct.image = "registry.example/" + d.name + ":" + d.hash;
    ct.requests = {{"cpu", d.cpu}, {"memory", d.memory}};
    p.containers.push_back(std::move(ct));
    LabelSelector own;
    own.match_labels = {{"app", d.name}, {"pod-template-hash", d.hash}};  // matchLabelKeys merged
    if (d.anti_affinity) {
      p.affinity = Affinity{};
      p.affinity->pod_anti_affinity = PodAffinity{};
      WeightedPodAffinityTerm w;
      w.weight = 100;
      w.term.label_selector = own;
      w.term.topology_key = "kubernetes.io/hostname";
      p.affinity->pod_anti_affinity->preferred.push_back(std::move(w));
    }
    if (d.own_spread) {
      TopologySpreadConstraint zone;
      zone.max_skew = 2;
      zone.topology_key = "topology.kubernetes.io/zone";
      zone.when_unsatisfiable = "ScheduleAnyway";
      zone.label_selector = LabelSelector{};
      zone.label_selector->match_labels = {{"app", d.name}};
      zone.match_label_keys = {"pod-template-hash"};
      TopologySpreadConstraint host = zone;
      host.max_skew = 1;
      host.topology_key = "kubernetes.io/hostname";
      host.when_unsatisfiable = "DoNotSchedule";
      p.topology_spread_constraints = {zone, host};
    }
    return p;
  }

  void check(const EventStatus& s, const char* what) {
    ++events_;
    if (s.ok()) return;
    if (++failures_ <= 10)
      std::fprintf(stderr, "bench_soak: %s: %s %s\n", what, event_code_name(s.code), s.message.c_str());
  }

  // Schedules a pod of d's current revision and confirms it; false when unschedulable.
  bool schedule_one(uint32_t di) {
    Deployment& d = deps_[di];
    Pod p = make_pod(d);
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t c0 = cpu_ns();
    const ScheduleResult r = engine_->schedule(p);
    window_cpu_ns_ += cpu_ns() - c0;
    window_ns_ += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
    ++window_scheduled_;
    ++events_;
    if (r.node < 0) {
      ++unschedulable_;
      return false;
    }
    p.node_name = r.node_name;
    p.phase = "Running";
    check(engine_->add_pod(p), "add_pod (confirm)");
    pods_.emplace(p.cache_key(), PodInfo{di, d.hash});
    d.pods.push_back(p.cache_key());
    return true;
  }

  void remove_one(uint32_t di, const std::string& key) {
    Deployment& d = deps_[di];
    check(engine_->remove_pod(key), "remove_pod");
    pods_.erase(key);
    d.pods.erase(std::find(d.pods.begin(), d.pods.end(), key));
  }

  void create_deployment() {
    Deployment d;
    d.ns = "team-" + std::to_string(rng_.below(10));
    d.name = "app-" + std::to_string(app_seq_++);
    d.hash = fresh_hash();
    d.replicas = 10 + static_cast<uint32_t>(rng_.below(71));
    d.cpu = 100 * static_cast<int64_t>(1 + rng_.below(10));
    d.memory = (int64_t(128) << 20) * static_cast<int64_t>(1 + rng_.below(16));
    d.tier = kTiers[rng_.below(4)];
    d.anti_affinity = rng_.chance(0.2);
    d.own_spread = !d.anti_affinity && rng_.chance(0.125);
    SelectingObject svc;
    svc.kind = SelectingObject::Kind::Service;
    svc.namespace_name = d.ns;
    svc.name = d.name;
    svc.has_selector = true;
    svc.selector_map = {{"app", d.name}};
    check(engine_->add_object(svc), "add Service");
    const auto di = static_cast<uint32_t>(deps_.size());
    deps_.push_back(std::move(d));
    check(engine_->add_object(replica_set(deps_[di], deps_[di].hash)), "add ReplicaSet");
    for (uint32_t i = 0; i < deps_[di].replicas; ++i) schedule_one(di);
    live_.push_back(di);
  }

  void delete_deployment(size_t at) {
    const uint32_t di = live_[at];
    Deployment& d = deps_[di];
    while (!d.pods.empty()) remove_one(di, d.pods.back());
    if (d.rolling)
      check(engine_->remove_object(ObjectKind::kReplicaSet, d.ns, d.name + "-" + d.old_hash), "remove ReplicaSet");
    check(engine_->remove_object(ObjectKind::kReplicaSet, d.ns, d.name + "-" + d.hash), "remove ReplicaSet");
    check(engine_->remove_object(ObjectKind::kService, d.ns, d.name), "remove Service");
    d.live = false;
    d.pods.shrink_to_fit();
    live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(at));
    rolling_.erase(std::remove(rolling_.begin(), rolling_.end(), di), rolling_.end());
  }

  void start_rollout() {
    for (int tries = 0; tries < 8; ++tries) {
      const uint32_t di = live_[rng_.below(live_.size())];
      Deployment& d = deps_[di];
      if (d.rolling) continue;
      d.old_hash = d.hash;
      d.hash = fresh_hash();
      d.rolling = true;
      d.created = 0;
      check(engine_->add_object(replica_set(d, d.hash)), "add ReplicaSet");
      rolling_.push_back(di);
      return;
    }
  }

  // One step of a rolling update: a new pod in, an old one out.
  void advance_rollout(size_t at) {
    const uint32_t di = rolling_[at];
    Deployment& d = deps_[di];
    if (d.created < d.replicas) {
      ++d.created;
      schedule_one(di);
    }
    const auto old = std::find_if(d.pods.begin(), d.pods.end(),
                                  [&](const std::string& k) { return pods_.at(k).hash == d.old_hash; });
    if (old != d.pods.end()) {
      remove_one(di, *old);
      return;
    }
    if (d.created < d.replicas) return;
    check(engine_->remove_object(ObjectKind::kReplicaSet, d.ns, d.name + "-" + d.old_hash), "remove ReplicaSet");
    d.rolling = false;
    rolling_.erase(rolling_.begin() + static_cast<std::ptrdiff_t>(at));
  }

  void update_some_pod() {
    if (pods_.empty()) return;
    const uint32_t di = live_[rng_.below(live_.size())];
    Deployment& d = deps_[di];
    if (d.pods.empty()) return;
    const std::string& key = d.pods[rng_.below(d.pods.size())];
    const PodCacheEntry e = engine_->pod_entry(key);
    if (e.state != PodCacheState::kBound) return;
    const Snapshot& s = engine_->snapshot();
    const int32_t node = s.node_index(e.node);
    if (node < 0) return;
    for (const uint32_t id : s.pods_on_node(static_cast<uint32_t>(node))) {
      if (s.pod(id).cache_key() != key) continue;
      Pod p = s.pod(id);
      p.annotations["example.com/restarts"] = std::to_string(rng_.below(1000));
      check(engine_->update_pod(p), "update_pod");
      return;
    }
  }

  void node_event() {
    const Snapshot& s = engine_->snapshot();
    const uint32_t n = static_cast<uint32_t>(rng_.below(s.num_nodes()));
    Node node = node_of(n);
    const uint64_t what = rng_.below(10);
    if (what < 4) {  // cordon or uncordon: in place
      node.unschedulable = !node.unschedulable;
      check(engine_->update_node(node), "update_node (cordon)");
      nodes_[node.name] = node;
    } else if (what < 7) {  // relabelled, and a freshly pulled image: structural
      node.labels["node.kubernetes.io/instance-type"] = kTypes[rng_.below(4)];
      node.images.resize(2);
      node.images.push_back({{"registry.example/app:" + fresh_hash()}, 100 << 20});
      check(engine_->update_node(node), "update_node (labels)");
      nodes_[node.name] = node;
    } else {  // replaced: cordoned, drained (replacements scheduled), removed, a new one added
      node.unschedulable = true;
      check(engine_->update_node(node), "update_node (cordon)");
      std::vector<std::string> keys;
      for (const uint32_t id : s.pods_on_node(n)) keys.push_back(s.pod(id).cache_key());
      for (const std::string& k : keys) {
        const uint32_t di = pods_.at(k).deployment;
        remove_one(di, k);
        schedule_one(di);
      }
      check(engine_->remove_node(node.name), "remove_node");
      nodes_.erase(node.name);
      const Node fresh = make_node();
      check(engine_->add_node(fresh), "add_node");
      nodes_[fresh.name] = fresh;
    }
  }

  // The node as the stream last gave it.
  Node node_of(uint32_t n) const { return nodes_.at(engine_->snapshot().node_name(n)); }

  void step() {
    const uint64_t what = rng_.below(1000);
    if (what < 2) {
      node_event();
    } else if (what < 4) {
      delete_deployment(rng_.below(live_.size()));
      create_deployment();
    } else if (what < 60) {
      update_some_pod();
    } else if (rolling_.size() < 4 || what < 70) {
      if (rolling_.size() < 8) start_rollout();
    } else {
      advance_rollout(rng_.below(rolling_.size()));
    }
  }

  // ---- samples and the report -------------------------------------------------

  void sample() {
    const Snapshot& s = engine_->snapshot();
    Row r{};
    r.events = events_;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    r.rss = rss_mb();
    r.us_per_pod =
        window_scheduled_ ? static_cast<double>(window_ns_) / 1000.0 / static_cast<double>(window_scheduled_) : 0;
    r.cpu_us_per_pod =
        window_scheduled_ ? static_cast<double>(window_cpu_ns_) / 1000.0 / static_cast<double>(window_scheduled_) : 0;
    const uint64_t cpu = cpu_ns();
    r.cpu_us_per_event = events_ > window_events_ ? static_cast<double>(cpu - window_cpu_start_) / 1000.0 /
                                                        static_cast<double>(events_ - window_events_)
                                                  : 0;
    window_cpu_start_ = cpu;
    window_events_ = events_;
    r.scheduled = window_scheduled_;
    const uint64_t hits = engine_->batch_counters().hint_used;
    r.hits = hits - hits_before_;
    hits_before_ = hits;
    r.strings = s.strings().size();
    r.matchers = s.num_topology_matchers();
    r.term_groups = s.existing_affinity_terms().size();
    r.images = s.num_images();
    r.pods = s.num_pods();
    r.nodes = s.num_nodes();
    rows_.push_back(r);
    window_ns_ = 0;
    window_cpu_ns_ = 0;
    window_scheduled_ = 0;
    engine_->take_warnings();
    std::fprintf(stderr,
                 "events %10" PRIu64
                 "  %7.1f s  rss %7.1f MB  cpu %8.2f us/pod, %7.2f us/event (wall %8.2f us/pod; "
                 "%5" PRIu64 " pods, %5" PRIu64 " hits)  strings %6" PRIu64 "  matchers %6" PRIu64
                 "  term groups %5" PRIu64 "  images %5" PRIu64 "\n",
                 r.events, r.seconds, r.rss, r.cpu_us_per_pod, r.cpu_us_per_event, r.us_per_pod, r.scheduled, r.hits,
                 r.strings, r.matchers, r.term_groups, r.images);
  }

  std::string csv_text() const {
    std::string out =
        "events,seconds,rss_mb,us_per_pod,scheduled,hits,strings,matchers,term_groups,images,pods,nodes,"
        "cpu_us_per_pod,cpu_us_per_event\n";
    char line[512];
    for (const Row& r : rows_) {
      (void)std::snprintf(line, sizeof line,
                          "%" PRIu64 ",%.3f,%.2f,%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                          ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%.3f\n",
                          r.events, r.seconds, r.rss, r.us_per_pod, r.scheduled, r.hits, r.strings, r.matchers,
                          r.term_groups, r.images, r.pods, r.nodes, r.cpu_us_per_pod, r.cpu_us_per_event);
      out += line;
    }
    return out;
  }

  static double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  }

  void report() {
    const double secs = rows_.back().seconds;
    std::printf("bench_soak: %" PRIu64 " events in %.1f s (%u nodes, seed %" PRIu64 ")%s; %" PRIu64
                " unschedulable, %" PRIu64 " failed events\n",
                events_, secs, o_.nodes, o_.seed, stopped_ ? ", STOPPED early (a limit)" : "", unschedulable_,
                failures_);
    // After the warm-up: the samples past warmup_share of the planned
    // events, split in a first and a last quarter.
    const auto warm = static_cast<uint64_t>(static_cast<double>(o_.events) * o_.warmup_share);
    std::vector<const Row*> after;
    for (const Row& r : rows_)
      if (r.events >= warm && r.scheduled > 0) after.push_back(&r);
    if (after.size() >= 4) {
      const size_t q = after.size() / 4;
      std::vector<double> first, last;
      double rss_min = after.front()->rss, rss_max = after.front()->rss;
      for (size_t i = 0; i < after.size(); ++i) {
        rss_min = std::min(rss_min, after[i]->rss);
        rss_max = std::max(rss_max, after[i]->rss);
        if (i < q) first.push_back(after[i]->cpu_us_per_pod);
        if (i >= after.size() - q) last.push_back(after[i]->cpu_us_per_pod);
      }
      std::printf("after the warm-up (%zu samples from event %" PRIu64
                  "): RSS %.1f .. %.1f MB (max/min %.3f); "
                  "CPU us/pod median of the first quarter %.2f, of the last quarter %.2f (ratio %.3f)\n",
                  after.size(), warm, rss_min, rss_max, rss_max / rss_min, median(first), median(last),
                  median(first) > 0 ? median(last) / median(first) : 0.0);
      std::printf("first sample after the warm-up: strings %" PRIu64 ", matchers %" PRIu64 ", term groups %" PRIu64
                  ", images %" PRIu64 "; last: %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "\n",
                  after.front()->strings, after.front()->matchers, after.front()->term_groups, after.front()->images,
                  after.back()->strings, after.back()->matchers, after.back()->term_groups, after.back()->images);
    }
    // The CSV and the plot through the project's one writer, as a unit:
    // whole or not at all, never through a planted path.
    const std::string csv = csv_text();
    std::string png;
    if (!o_.plot.empty()) {
      try {
        png = run_gnuplot(plot_script(csv));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_soak: %s\n", e.what());
        ++failures_;
        return;
      }
    }
    std::vector<std::pair<std::string, std::string_view>> files;
    if (!o_.csv.empty()) files.emplace_back(o_.csv, csv);
    if (!o_.plot.empty()) files.emplace_back(o_.plot, png);
    try {
      write_files_atomically(files);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_soak: %s\n", e.what());
      ++failures_;
    }
  }

  // The script names no file: the data inline, the PNG on standard output.
  std::string plot_script(const std::string& csv) const {
    std::string s = "set terminal png size 900,700 noenhanced\nset output\nset datafile separator ','\n";
    s += "$soak << EOD\n" + csv + "EOD\n";
    s += "set multiplot layout 2,1 title 'bench_soak: " + std::to_string(o_.nodes) + " nodes, " +
         std::to_string(events_) + " events'\n";
    s += "set grid\nset key top left\nset xlabel 'events (millions)'\n";
    s += "set ylabel 'resident set (MB)'\nset y2label 'matchers, term groups'\nset ytics nomirror\n"
         "set y2tics\nset yrange [0:*]\nset y2range [0:*]\n";
    s += "plot $soak using ($1/1e6):3 every ::1 with lines lw 2 title 'RSS (MB)', "
         "'' using ($1/1e6):8 every ::1 axes x1y2 with lines title 'matchers', "
         "'' using ($1/1e6):9 every ::1 axes x1y2 with lines title 'term groups'\n";
    s += "unset y2label\nunset y2tics\nset ytics mirror\nset ylabel 'CPU time (us)'\n";
    s += "plot $soak using ($1/1e6):($5 > 0 ? $13 : NaN) every ::1 with linespoints pt 7 ps 0.4 "
         "title 'schedule(), per pod', '' using ($1/1e6):($5 > 0 ? $14 : NaN) every ::1 with lines "
         "title 'all calls, per event'\n";
    s += "unset multiplot\n";
    return s;
  }


  Options o_;
  Rng rng_;
  std::unique_ptr<Engine> engine_;
  std::vector<Deployment> deps_;
  std::vector<uint32_t> live_, rolling_;
  std::unordered_map<std::string, PodInfo> pods_;
  std::unordered_map<std::string, Node> nodes_;  // every node, as the stream last gave it
  uint64_t events_ = 0, next_sample_ = 0, failures_ = 0, unschedulable_ = 0;
  uint64_t node_seq_ = 0, app_seq_ = 0, pod_seq_ = 0;
  uint64_t window_ns_ = 0, window_cpu_ns_ = 0, window_scheduled_ = 0, hits_before_ = 0;
  uint64_t window_cpu_start_ = 0, window_events_ = 0;
  bool stopped_ = false;
  std::chrono::steady_clock::time_point start_;
  std::vector<Row> rows_;
};

bool parse_u64(const char* s, uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (errno || !end || *end || s[0] == '-' || s[0] == '\0') return false;
  out = v;
  return true;
}

}  // namespace
}  // namespace bulkscore

int main(int argc, char** argv) {
  using namespace bulkscore;
  (void)std::signal(SIGPIPE, SIG_IGN);  // a gnuplot that exits early makes write fail instead
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    uint64_t n = 0;
    const auto number = [&](auto& field) {
      if (!v || !parse_u64(v, n)) {
        std::fprintf(stderr, "bench_soak: %s needs a number\n", a.c_str());
        std::exit(2);
      }
      field = static_cast<std::remove_reference_t<decltype(field)>>(n);
      ++i;
    };
    if (a == "--events") {
      number(o.events);
    } else if (a == "--nodes") {
      number(o.nodes);
    } else if (a == "--deployments") {
      number(o.deployments);
    } else if (a == "--seed") {
      number(o.seed);
    } else if (a == "--samples") {
      number(o.samples);
    } else if (a == "--threads") {
      number(o.threads);
    } else if (a == "--batch-states") {
      number(o.batch_states);
    } else if (a == "--max-rss-mb") {
      number(o.max_rss_mb);
    } else if (a == "--max-seconds") {
      number(o.max_seconds);
    } else if (a == "--warmup-share" && v) {
      char* end = nullptr;
      o.warmup_share = std::strtod(v, &end);
      if (end == v || *end != '\0' || !(o.warmup_share >= 0 && o.warmup_share < 1)) {
        std::fprintf(stderr, "bench_soak: --warmup-share needs a number in [0, 1)\n");
        return 2;
      }
      ++i;
    } else if (a == "--no-compaction") {
      o.compaction = false;
    } else if (a == "--backend" && v) {
      o.backend = v;
      ++i;
    } else if (a == "--csv" && v) {
      o.csv = v;
      ++i;
    } else if (a == "--plot" && v) {
      o.plot = v;
      ++i;
    } else {
      std::fprintf(stderr,
                   "usage: bench_soak [--events N] [--nodes N] [--deployments N] [--seed N] [--samples N]\n"
                   "                  [--warmup-share F] [--threads N] [--backend B] [--batch-states N]\n"
                   "                  [--max-rss-mb N] [--max-seconds N] [--no-compaction] [--csv F]\n"
                   "                  [--plot F.png]\n");
      return 2;
    }
  }
  if (o.nodes < 3) {
    std::fprintf(stderr, "bench_soak: --nodes must be at least 3\n");
    return 2;
  }
  try {
    Soak soak(o);
    return soak.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_soak: %s\n", e.what());
    return 1;
  }
}
