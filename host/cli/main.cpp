// bulkscore: the command-line tool, a thin layer over the library.
//
//   bulkscore schedule --nodes F --pods F [--objects F]... [--config F] [-o F] ...
//   bulkscore explain  --nodes F --pods F [--objects F]... --pod ns/name [--config F]
//   bulkscore generate --nodes-out F --pods-out F [--objects-out F] [--nodes N] ...
//   bulkscore perf     --config performance-config.yaml ...
//   bulkscore replay   [--trace default] [--policies fgd,bestfit] [--seeds 42-51] ...
//
// Exit codes: 0 success, 2 bad input or usage, 1 any other failure.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>

#include <unistd.h>

#include "bench/generator/generator.hpp"
#include "bulkscore/version.h"
#include "bench/perf/perf.hpp"
#include "bench/replay/replay.hpp"
#include "host/engine/backend.hpp"
#include "host/engine/engine.hpp"
#include "host/cli/cli_text.hpp"
#include "host/cli/explain_table.hpp"
#include "host/engine/result_json.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"
#include "host/input/quote.hpp"
#include "host/io/io.hpp"
#include "host/io/json_writer.hpp"

namespace bs = bulkscore;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

// klog-like verbosity: -v 0 warnings and errors, 1-2 info, 3-4 debug, 5+ trace.
void setup_logging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("bulkscore");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%^%L%$ %H:%M:%S.%f] %v");
  if (verbosity >= 5)
    spdlog::set_level(spdlog::level::trace);
  else if (verbosity >= 3)
    spdlog::set_level(spdlog::level::debug);
  else if (verbosity >= 1)
    spdlog::set_level(spdlog::level::info);
  else
    spdlog::set_level(spdlog::level::warn);
}

bs::SchedulerConfig load_config(const std::string& path) {
  if (path.empty()) return bs::default_scheduler_config();
  return bs::load_scheduler_config(path);
}

// Standard input can be read only once.
void check_inputs(const std::vector<bs::FlagPath>& inputs) {
  size_t stdin_uses = 0;
  for (const auto& in : inputs) stdin_uses += in.path == "-" ? 1 : 0;
  if (stdin_uses > 1) throw bs::InputError("-: standard input can feed only one of the inputs");
}

struct LoadedInput {
  bs::SchedulerConfig config;
  bs::Cluster cluster;
};

LoadedInput load_input(const std::string& nodes_path, const std::string& pods_path, const std::string& config_path,
                       const std::vector<std::string>& objects_paths) {
  LoadedInput in;
  in.config = load_config(config_path);
  std::vector<std::string> names;
  for (const auto& p : in.config.profiles) names.push_back(p.scheduler_name);
  auto t0 = std::chrono::steady_clock::now();
  auto nodes = bs::load_nodes_json(nodes_path);
  auto pods = bs::load_pods_json(pods_path);
  in.cluster = bs::assemble_cluster(std::move(nodes), std::move(pods), names, nodes_path, pods_path);
  for (const auto& path : objects_paths) bs::load_objects_json(path, in.cluster.objects);
  for (const auto& w : in.cluster.warnings) spdlog::warn("{}", bs::escape_for_terminal(w));
  for (const auto& n : in.cluster.notes) spdlog::debug("{}", bs::escape_for_terminal(n));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  spdlog::info("loaded {} nodes, {} running pods, {} pending pods in {:.2f} s", in.cluster.nodes.size(),
               in.cluster.running_pods.size(), in.cluster.pending_pods.size(), secs);
  return in;
}

bs::TieBreak parse_tie_break(const std::string& s) {
  if (s == "random") return bs::TieBreak::Random;
  if (s == "first") return bs::TieBreak::First;
  throw bs::InputError("--tie-break: expected random or first, got " + bs::quote_for_message(s));
}

// The library returns its warnings; the CLI logs them (what they quote of
// the input is escaped already; escape_for_terminal is the last guard).
void log_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) spdlog::warn("{}", bs::escape_for_terminal(w));
}

// Logs each distinct warning once, with how many pods carried it.
void report_warnings(const std::map<std::string, size_t>& warnings) {
  for (const auto& [w, n] : warnings) spdlog::warn("{} ({} pod(s))", bs::escape_for_terminal(w), n);
}

// The inputs an output must not replace.
std::vector<bs::FlagPath> input_paths(const std::string& nodes, const std::string& pods, const std::string& config,
                                      const std::vector<std::string>& objects) {
  std::vector<bs::FlagPath> in{{"--nodes", nodes}, {"--pods", pods}, {"--config", config}};
  for (const auto& o : objects) in.push_back({"--objects", o});
  return in;
}

// FGD measures fragmentation against typical tasks. A profile that uses it
// without naming them gets those of its own pending pods: the CLI sees the
// whole pending set, which a one-pod-at-a-time scheduler cannot.
void fill_typical_tasks(bs::SchedulerConfig& config, const std::vector<bs::Pod>& pending) {
  for (auto& profile : config.profiles) {
    const bool scores = std::any_of(profile.score.begin(), profile.score.end(),
                                    [](const bs::PluginEntry& e) { return e.name == "GpuFragmentation"; });
    const bool chooses = profile.gpu_share_args.selection == bs::DeviceSelection::Fragmentation;
    if ((!scores && !chooses) || !profile.gpu_fragmentation_args.typical_tasks.empty()) continue;
    std::vector<bs::Pod> mine;
    for (const auto& pod : pending)
      if (pod.scheduler_name == profile.scheduler_name) mine.push_back(pod);
    profile.gpu_fragmentation_args.typical_tasks = bs::typical_tasks(mine, profile.gpu_share_args.model);
    spdlog::info("profile {}: GpuFragmentation measures against {} typical tasks of its {} pending pods",
                 bs::name_for_message(profile.scheduler_name), profile.gpu_fragmentation_args.typical_tasks.size(),
                 mine.size());
  }
}

// Without --objects no pod has system-default spreading constraints: their
// selector comes from the Services and controllers that select the pod.
// Says so when some pending pod would have them upstream: one of a profile
// that runs PodTopologySpread with default constraints (System, or a List
// with any), without constraints of its own, owned by a controller or
// labelled (a Service may select it).
void warn_without_objects(const bs::SchedulerConfig& config, const std::vector<bs::Pod>& pending) {
  std::vector<std::string> spreading;
  for (const auto& p : config.profiles) {
    const bool runs = std::find(p.filter.begin(), p.filter.end(), "PodTopologySpread") != p.filter.end() ||
                      std::any_of(p.score.begin(), p.score.end(),
                                  [](const bs::PluginEntry& e) { return e.name == "PodTopologySpread"; });
    const auto& a = p.pod_topology_spread_args;
    if (runs && (a.defaulting_type == "System" || !a.default_constraints.empty()))
      spreading.push_back(p.scheduler_name);
  }
  if (spreading.empty()) return;
  size_t owned = 0, labelled = 0;
  for (const bs::Pod& pod : pending) {
    if (!pod.topology_spread_constraints.empty() ||
        std::find(spreading.begin(), spreading.end(), pod.scheduler_name) == spreading.end())
      continue;
    const bool controller = std::any_of(pod.owner_references.begin(), pod.owner_references.end(),
                                        [](const bs::OwnerReference& o) { return o.controller; });
    owned += controller ? 1 : 0;
    labelled += !controller && !pod.labels.empty() ? 1 : 0;
  }
  if (owned + labelled == 0) return;
  spdlog::warn(
      "--objects not given, but {} pending pod(s) have a controlling owner or labels a Service could select ({} "
      "owned, {} labelled only): upstream's system-default topology spreading would spread them by the Services "
      "and controllers that select them, and without those objects they get no default constraints, so "
      "placements may differ (give --objects: kubectl get svc,rc,rs,sts,ns -A -o json)",
      owned + labelled, owned, labelled);
}

// GpuFragmentation under the random tie-break packs worse and runs slower
// (docs/gpu-placement.md, "Ties"): said once per profile that did not
// choose its tie-break (no tieBreak of its own, no --tie-break given).
void warn_gpu_tie_break(const bs::SchedulerConfig& config, bool tie_break_given, const std::string& tie_break) {
  if (tie_break_given || tie_break != "random") return;
  for (const auto& p : config.profiles) {
    const bool fgd = std::any_of(p.score.begin(), p.score.end(),
                                 [](const bs::PluginEntry& e) { return e.name == "GpuFragmentation"; });
    if (!fgd || p.tie_break != bs::ProfileTieBreak::kEngineDefault) continue;
    spdlog::warn(
        "profile {} scores with GpuFragmentation under the random tie-break: on the Alibaba GPU trace that left "
        "about twice the GPUs unallocated (10.35% against 5.07% at 95% arrival) and ran 4.4x slower than "
        "tieBreak: first; give the profile tieBreak: first (or tieBreak: random to keep it), or GpuBestFit at "
        "weight 1 beside it (docs/gpu-placement.md)",
        bs::name_for_message(p.scheduler_name));
  }
}

struct ScheduleFlags {
  std::string backend = "auto";
  std::string tie_break = "random";
  uint64_t seed = 0;
  int threads = 0;
  std::string batching = "exact";
  uint32_t batch_states = 1;  // --batching exact: cached evaluations kept
  uint32_t window = 0;        // --batching exact: pods looked ahead at (Engine::look_ahead; 0 auto)
  std::string metrics;  // Prometheus text file of the scheduler's metrics
  bool metrics_given = false;
  bool tie_break_given = false;  // --tie-break on the command line
};

// schedule's progress line: only when stderr is a terminal (and no debug
// log lines would land on it), from one second into the run, at most five
// times a second. BULKSCORE_PROGRESS_AFTER_MS moves the first line (tests set
// 0, so that what they check does not depend on the machine's speed).
class Progress {
 public:
  explicit Progress(size_t total)
      : total_(total),
        on_(bs::cli::is_terminal(STDERR_FILENO) && !spdlog::should_log(spdlog::level::debug)),
        start_(std::chrono::steady_clock::now()),
        next_(start_ + first_after()) {}
  void update(size_t done) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_) return;
    next_ = now + std::chrono::milliseconds(200);
    const double secs = std::chrono::duration<double>(now - start_).count();
    const auto tenths = static_cast<int64_t>(secs * 10);
    std::string line = "scheduling: " + std::to_string(done) + " of " + std::to_string(total_) + " pods (" +
                       std::to_string(total_ ? done * 100 / total_ : 100) + "%), " + std::to_string(tenths / 10) +
                       "." + std::to_string(tenths % 10) + " s";
    const size_t width = bs::cli::terminal_width(STDERR_FILENO);
    if (width > 1) line = bs::cli::fit_text(line, width - 1);
    std::fprintf(stderr, "\r%s\033[K", line.c_str());
    std::fflush(stderr);  // NOLINT(cert-err33-c): a lost progress line is no error
    shown_ = true;
  }
  // Takes the line away before the summary.
  void clear() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  static std::chrono::milliseconds first_after() {
    const char* env = std::getenv("BULKSCORE_PROGRESS_AFTER_MS");  // NOLINT(concurrency-mt-unsafe): read once, early
    if (env == nullptr || *env == '\0') return std::chrono::seconds(1);
    char* end = nullptr;
    const long ms = std::strtol(env, &end, 10);
    if (*end != '\0' || ms < 0) return std::chrono::seconds(1);
    return std::chrono::milliseconds(ms);
  }
  size_t total_;
  bool on_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, next_;
};

int cmd_schedule(const std::string& nodes, const std::string& pods, const std::string& config,
                 const std::vector<std::string>& objects, const ScheduleFlags& flags, const std::string& out) {
  const auto inputs = input_paths(nodes, pods, config, objects);
  check_inputs(inputs);
  // Every output checked before anything is computed, and written as one
  // unit at the end.
  std::vector<bs::FlagPath> outputs{{"-o", out.empty() ? "-" : out}};
  if (flags.metrics_given) {
    if (flags.metrics == "-") throw bs::InputError("--metrics: a file name is needed (standard output is the result)");
    outputs.push_back({"--metrics", flags.metrics});
  }
  bs::check_output_paths(outputs, inputs);
  bs::EngineOptions opts;
  opts.backend = flags.backend;
  opts.tie_break = parse_tie_break(flags.tie_break);
  opts.seed = flags.seed;
  opts.threads = flags.threads;
  opts.batching = bs::parse_batching(flags.batching);
  opts.batch_states = flags.batch_states;
  opts.window = flags.window;
  LoadedInput in = load_input(nodes, pods, config, objects);
  if (objects.empty()) warn_without_objects(in.config, in.cluster.pending_pods);
  warn_gpu_tie_break(in.config, flags.tie_break_given, flags.tie_break);
  fill_typical_tasks(in.config, in.cluster.pending_pods);
  bs::Engine engine(std::move(in.config), opts);
  spdlog::info("backend: {}", engine.backend_note());
  // The engine takes the nodes and running pods over: no second copy.
  std::vector<bs::Pod> pending = std::move(in.cluster.pending_pods);
  log_warnings(engine.load(std::move(in.cluster)));

  std::string text;
  text.reserve(pending.size() * 96);
  size_t scheduled = 0, unschedulable = 0;
  size_t preemptors = 0, victims = 0;
  int64_t pdb_violations = 0;
  std::map<std::string, size_t> warnings;
  std::map<std::string, size_t> reasons;  // unschedulable pods by their main FitError reason
  // Progress on a terminal, for runs over a second: a line on stderr,
  // rewritten in place, cleared at the end.
  Progress progress(pending.size());
  const auto t0 = std::chrono::steady_clock::now();
  // Queue order: ordinary pods as listed, each gang's pending members
  // together at its first member's place (Engine::queue_order); lines come
  // in the order of the decisions.
  size_t groups_admitted = 0, groups_rejected = 0;
  size_t done = 0;
  const auto record = [&](const bs::ScheduleResult& r) {
    if (r.node >= 0) {
      ++scheduled;
    } else {
      ++unschedulable;
      // A rejected gang's members count under one reason: their messages
      // name their group.
      ++reasons[r.group_outcome == bs::GroupOutcome::kRejected ? std::string("pod group rejected (all or nothing)")
                                                              : bs::cli::main_unschedulable_reason(r.message)];
      spdlog::debug("{}: {}", bs::quote_for_message(r.pod), bs::escape_for_terminal(r.message));
    }
    if (!r.nominated_node.empty()) {
      ++preemptors;
      victims += r.victims.size();
      pdb_violations += r.pdb_violations;
    }
    for (const auto& s : r.warnings) ++warnings[s];
    bs::append_schedule_result_json(r, text);
    text += '\n';
    progress.update(++done);
  };
  const std::vector<bs::QueueEntry> order = engine.queue_order(pending);
  size_t next_window = 0;  // --window: where the next look-ahead starts
  for (size_t e = 0; e < order.size(); ++e) {
    const bs::QueueEntry& entry = order[e];
    if (entry.pod_group.empty()) {
      if (e >= next_window) next_window = engine.look_ahead_in_queue(pending, order, e);
      // Handed over: a look-ahead reads only the pods from here on.
      record(engine.schedule(std::move(pending[entry.pods.front()])));
      continue;
    }
    std::vector<bs::Pod> members;
    members.reserve(entry.pods.size());
    for (const uint32_t i : entry.pods) members.push_back(std::move(pending[i]));
    const std::vector<bs::ScheduleResult> results = engine.schedule_group(members);
    if (!results.empty() && results.front().group_outcome == bs::GroupOutcome::kAdmitted) ++groups_admitted;
    if (!results.empty() && results.front().group_outcome == bs::GroupOutcome::kRejected) ++groups_rejected;
    for (const bs::ScheduleResult& r : results) record(r);
  }
  progress.clear();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log_warnings(engine.take_warnings());
  report_warnings(warnings);
  const std::string metrics = flags.metrics_given ? engine.metrics_text() : "";
  std::vector<std::pair<std::string, std::string_view>> files{{outputs[0].path, text}};
  if (flags.metrics_given) files.emplace_back(flags.metrics, metrics);
  bs::write_files_atomically(files);
  const size_t total = pending.size();
  std::fprintf(stderr,
               "pods: %zu  scheduled: %zu  unschedulable: %zu  nodes: %u  time: %.3f s  pods/s: %.0f  "
               "backend: %s\n",
               total, scheduled, unschedulable, engine.snapshot().num_nodes(), secs,
               secs > 0 ? static_cast<double>(total) / secs : 0.0, engine.backend_name());
  std::fprintf(stderr, "%s\n", bs::batch_summary(engine.batching(), engine.batch_counters()).c_str());
  if (groups_admitted + groups_rejected > 0)
    std::fprintf(stderr, "pod groups: %zu  admitted: %zu  rejected: %zu  groups/s: %.0f\n",
                 groups_admitted + groups_rejected, groups_admitted, groups_rejected,
                 secs > 0 ? static_cast<double>(groups_admitted + groups_rejected) / secs : 0.0);
  if (unschedulable > 0)
    std::fprintf(stderr, "%s\n",
                 bs::cli::unschedulable_summary({reasons.begin(), reasons.end()}, unschedulable).c_str());
  if (preemptors > 0)
    std::fprintf(stderr, "%s\n", bs::cli::preemption_summary(victims, preemptors, pdb_violations).c_str());
  return kExitOk;
}

// The JSON document of `explain --format json`; `running_on`: the node the
// pod runs on, when it was explained as if pending.
void write_explanation(const bs::Explanation& ex, const std::string& running_on, const bs::PodGroupStatus* group,
                       const bs::GangDomainRanking* domains, std::string& text) {
  bs::JsonWriter w(text);
  w.begin_object().field("pod", ex.pod);
  if (!running_on.empty()) w.field("runningOn", running_on);
  if (group && !group->pod_group.empty()) {
    w.key("podGroup");
    bs::write_pod_group_status(w, *group, domains);
  }
  w.key("prefilter").begin_array();
  for (const auto& p : ex.prefilter) {
    w.begin_object().field("plugin", p.plugin).field("code", bs::code_name(p.code));
    w.key("reasons").begin_array();
    if (!p.message.empty()) w.value(p.message);
    w.end_array().end_object();
  }
  w.end_array();
  w.field("feasibleNodes", ex.feasible_nodes);
  w.field("batch", ex.batch);
  if (ex.chosen.empty())
    w.field_null("chosen");
  else
    w.field("chosen", ex.chosen);
  w.field("tiedAtBest", ex.tied_at_best).field("tieBreak", ex.tie_break == bs::TieBreak::First ? "first" : "random");
  w.field("seed", ex.seed);
  if (!ex.devices.empty()) {
    w.key("devices").begin_array();
    for (int32_t d : ex.devices) w.value(static_cast<int64_t>(d));
    w.end_array();
  }
  if (!ex.chosen.empty()) bs::write_shared_devices(w, ex.device_group, ex.group_devices);
  w.key("nodes").begin_array();
  for (const auto& n : ex.nodes) {
    w.begin_object().field("name", n.name).field("evaluated", n.evaluated).field("feasible", n.feasible);
    if (n.evaluated && !n.feasible) {
      w.key("filter").begin_object().field("plugin", n.filter_plugin).field("code", bs::code_name(n.filter_code));
      w.key("reasons").begin_array();
      for (const auto& r : n.filter_reasons) w.value(r);
      w.end_array().end_object();
    }
    if (n.feasible) {
      w.key("scores").begin_object();
      for (const auto& s : n.scores) {
        w.key(s.plugin).begin_object().field("raw", s.raw).field("normalized", s.normalized);
        w.field("weighted", s.weighted).end_object();
      }
      w.end_object().field("total", n.total);
    }
    w.end_object();
  }
  w.end_array();
  if (ex.message.empty())
    w.field_null("message");
  else
    w.field("message", ex.message);
  if (ex.preemption) bs::write_preemption(w, *ex.preemption);
  if (!ex.warnings.empty()) {
    w.key("warnings").begin_array();
    for (const auto& s : ex.warnings) w.value(s);
    w.end_array();
  }
  w.end_object();
  text += '\n';
}

struct ExplainFlags {
  std::string pod;
  bool schedule_before = false;
  std::string format = "table";
  uint32_t top = 10;
  std::vector<std::string> nodes;  // --node: their verdicts in the table
  size_t width = 0;                // 0: the terminal's, else kDefaultTableWidth
};

// The table's width when standard output is not a terminal (a file, a pipe).
constexpr size_t kDefaultTableWidth = 100;

int cmd_explain(const std::string& nodes, const std::string& pods, const std::string& config,
                const std::vector<std::string>& objects, const ScheduleFlags& flags, const ExplainFlags& ex_flags,
                const std::string& out) {
  const auto inputs = input_paths(nodes, pods, config, objects);
  check_inputs(inputs);
  bs::check_output_paths({{"-o", out.empty() ? "-" : out}}, inputs);
  const std::string& pod_key = ex_flags.pod;
  LoadedInput in = load_input(nodes, pods, config, objects);
  if (objects.empty()) warn_without_objects(in.config, in.cluster.pending_pods);
  warn_gpu_tie_break(in.config, flags.tie_break_given, flags.tie_break);
  std::optional<bs::Pod> target;
  int64_t pending_index = -1;
  for (size_t i = 0; i < in.cluster.pending_pods.size(); ++i)
    if (in.cluster.pending_pods[i].key() == pod_key) {
      target = in.cluster.pending_pods[i];
      pending_index = static_cast<int64_t>(i);
    }
  // A running pod is explained as if it were pending again: taken out of
  // the cluster, so that its own requests do not count on its node, and
  // said so (stderr, and a line in the table or a field in the JSON).
  std::string running_on;
  if (!target) {
    auto& running = in.cluster.running_pods;
    for (auto it = running.begin(); it != running.end(); ++it)
      if (it->key() == pod_key) {
        target = *it;
        running_on = it->node_name;
        target->node_name.clear();
        running.erase(it);
        break;
      }
    if (target)
      spdlog::warn("{} is running on node {}: explained as if it were pending, without its own requests there",
                   bs::quote_for_message(pod_key), bs::quote_for_message(running_on));
  }
  if (!target) throw bs::InputError(pods + ": no pod " + bs::quote_for_message(pod_key) + " (expected namespace/name)");
  bs::EngineOptions opts;
  opts.backend = flags.backend;
  opts.tie_break = parse_tie_break(flags.tie_break);
  opts.seed = flags.seed;
  opts.batching = bs::parse_batching(flags.batching);
  const bs::Pod pod = std::move(*target);
  // From every pending pod, as schedule does (before any is moved below).
  fill_typical_tasks(in.config, in.cluster.pending_pods);
  // --schedule-before: the pending pods listed before it are scheduled
  // first, so the pod is explained where schedule would evaluate it.
  std::vector<bs::Pod> before;
  // The pending pods not scheduled before it: a gang member's group is
  // counted among them (its state in the output).
  std::vector<bs::Pod> rest;
  bool reached = !ex_flags.schedule_before;
  for (auto& p : in.cluster.pending_pods) {
    reached = reached || p.key() == pod_key;
    if (reached)
      rest.push_back(p);
    else
      before.push_back(std::move(p));
  }
  bs::Engine engine(std::move(in.config), opts);
  log_warnings(engine.load(std::move(in.cluster)));
  // In queue order, gangs all or nothing, as schedule takes them.
  (void)engine.schedule_all(before);
  const bs::PodGroupStatus group = engine.pod_group_status(pod, rest);
  // A topology-aware gang: its domains in the order schedule would try them.
  bs::GangDomainRanking domains;
  if (!group.topology_key.empty()) {
    std::vector<bs::Pod> members;
    for (const bs::Pod& p : rest)
      if (bs::same_pod_group(p, pod)) members.push_back(p);
    if (members.empty()) members.push_back(pod);
    domains = engine.rank_gang_domains(members);
  }
  std::string text;
  if (ex_flags.format == "json") {
    bs::Explanation ex = engine.explain(pod);
    if (!running_on.empty())
      ex.warnings.push_back("the pod is running on node " + bs::quote_for_message(running_on) +
                            "; explained as if it were pending, without its own requests on that node");
    write_explanation(ex, running_on, &group, &domains, text);
  } else {
    const bs::Ranking r = engine.rank(pod, ex_flags.top, ex_flags.nodes);
    bs::cli::ExplainTableContext ctx;
    const bool to_terminal = (out.empty() || out == "-") && bs::cli::is_terminal(STDOUT_FILENO);
    ctx.width = ex_flags.width;
    if (ctx.width == 0) ctx.width = to_terminal ? bs::cli::terminal_width(STDOUT_FILENO) : 0;
    if (ctx.width == 0) ctx.width = to_terminal ? 80 : kDefaultTableWidth;
    ctx.num_nodes = engine.snapshot().num_nodes();
    ctx.running_on = running_on;
    ctx.pending_index = pending_index;
    ctx.scheduled_before = ex_flags.schedule_before;
    ctx.top = ex_flags.top;
    if (!group.pod_group.empty()) {
      std::string line = group.pod_group;
      if (!group.api.empty())
        line += " (" + group.api + ", " + group.min_field + " " + std::to_string(group.min_count) + "): " +
                std::to_string(group.placed) + " placed, " + std::to_string(group.pending) +
                " pending; all or nothing";
      if (!group.topology_key.empty()) {
        line += std::string(group.topology_required ? ", required" : ", preferred") + " in one " + group.topology_key +
                " domain";
        if (!domains.problem.empty()) line += " (" + domains.problem + ")";
        for (size_t i = 0; i < domains.domains.size() && i < bs::kExplainedGangDomains; ++i)
          line += (i ? ", " : " (tried first: ") + domains.domains[i].value +
                  (i + 1 == std::min(domains.domains.size(), bs::kExplainedGangDomains) ? ")" : "");
      }
      line += group.rejection.empty() ? "" : "; " + group.rejection;
      ctx.pod_group = line;
    }
    text = bs::cli::render_explain_table(r, ctx);
  }
  log_warnings(engine.take_warnings());
  bs::write_file_atomically(out.empty() ? "-" : out, text);
  return kExitOk;
}

int cmd_generate(const bs::GeneratorOptions& g, const std::string& nodes_out, const std::string& pods_out,
                 const std::string& objects_out) {
  std::vector<bs::FlagPath> outputs{{"--nodes-out", nodes_out}, {"--pods-out", pods_out}};
  if (!objects_out.empty()) outputs.push_back({"--objects-out", objects_out});
  bs::check_output_paths(outputs, {});
  const auto t0 = std::chrono::steady_clock::now();
  bs::write_generated_cluster(g, nodes_out, pods_out, objects_out);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "generated %u nodes, %u running pods, %u pending pods (seed %llu) in %.2f s: %s %s\n", g.nodes,
               g.running_pods, g.pending_pods, static_cast<unsigned long long>(g.seed), secs, nodes_out.c_str(),
               pods_out.c_str());
  return kExitOk;
}

// Every integer flag of every command takes a plain decimal number that
// fits its type. CLI11 2.1 reads integers with strtoull/strtoll in base 0:
// for an unsigned flag "-1" and 2^64 both became 2^64-1 (silently), "0x10"
// was 16 and "010" 8. This check runs before the flag's own ones and before
// CLI11's conversion: digits only, '-' only on a signed flag, within 64 bits;
// leading zeros are dropped (010 is ten). A narrower flag then has its
// CLI::Range, and CLI11's conversion refuses what does not fit its type.
CLI::Validator decimal_integer(bool is_signed) {
  return CLI::Validator(
      [is_signed](std::string& text) -> std::string {
        const std::string shown = bs::quote_for_message(text, 40);
        std::string_view digits = text;
        const bool negative = !digits.empty() && digits.front() == '-';
        if (negative) digits.remove_prefix(1);
        const bool all_digits =
            !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
        const std::string range = is_signed ? std::to_string(INT64_MIN) + ".." + std::to_string(INT64_MAX)
                                            : "0.." + std::to_string(UINT64_MAX);
        if (!all_digits) return shown + " is not a decimal integer (" + range + ")";
        if (negative && !is_signed) return shown + " is negative; expected " + range;
        std::string canonical(negative ? "-" : "");
        const size_t first = std::min(digits.find_first_not_of('0'), digits.size() - 1);
        canonical.append(digits.substr(first));
        std::errc ec{};
        if (is_signed) {
          int64_t v = 0;
          ec = std::from_chars(canonical.data(), canonical.data() + canonical.size(), v).ec;
        } else {
          uint64_t v = 0;
          ec = std::from_chars(canonical.data(), canonical.data() + canonical.size(), v).ec;
        }
        if (ec != std::errc()) return shown + " is out of range " + range;
        text = canonical == "-0" ? "0" : canonical;
        return "";
      },
      "", "decimal-integer");
}

// Puts decimal_integer first on every integer option of `app` and of its
// subcommands: no integer flag can be added without it.
void require_decimal_integers(CLI::App& app) {
  std::vector<CLI::App*> apps{&app};
  for (CLI::App* sub : app.get_subcommands({})) apps.push_back(sub);
  for (CLI::App* a : apps)
    for (CLI::Option* opt : a->get_options()) {
      const std::string type = opt->get_type_name().substr(0, opt->get_type_name().find(':'));
      if (type == "INT" || type == "UINT") opt->transform(decimal_integer(type == "INT"));
    }
}

// The flags of `app` as typed: --long and -s.
std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::string joined(const std::vector<std::string>& words, const char* sep = ", ") {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : sep) + w;
  return s;
}

// After a usage error: what the user may have meant. A word in the
// command's place that is no command is answered here alone (returns
// true: CLI11's message would only say that a command is required); a flag
// no command has gets a line after CLI11's message.
bool suggest_command(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
  int i = 1;
  for (; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-v" || a == "--v") {
      ++i;  // its value
      continue;
    }
    if (a.size() > 1 && a[0] == '-') continue;
    break;
  }
  if (i >= argc) return false;
  const std::string word = argv[i];
  if (std::find(commands.begin(), commands.end(), word) != commands.end()) return false;
  const std::vector<std::string> near = bs::cli::closest_words(word, commands);
  std::string msg = "bulkscore: error: no command " + bs::quote_for_message(word, 40);
  if (!near.empty()) msg += "; did you mean " + joined(near, " or ") + "?";
  std::fprintf(stderr, "%s\ncommands: %s (bulkscore --help)\n", msg.c_str(), joined(commands).c_str());
  return true;
}

void suggest_flags(CLI::App& app, int argc, char** argv) {
  const CLI::App* context = &app;
  std::vector<std::string> names = flag_names(app);
  const std::vector<std::string> app_names = names;
  std::string where = "bulkscore";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") break;
    if (context == &app && (a == "-v" || a == "--v")) {
      ++i;
      continue;
    }
    if (a.empty() || a[0] != '-') {
      if (context != &app) continue;
      for (const CLI::App* sub : app.get_subcommands({}))
        if (sub->get_name() == a) {
          context = sub;
          where = "bulkscore " + a;
          names = flag_names(*sub);
          names.insert(names.end(), app_names.begin(), app_names.end());
        }
      continue;
    }
    // "-" is standard input, "-1" a (refused) number: values, not flags.
    if (a.size() < 2 || (a[1] >= '0' && a[1] <= '9')) continue;
    a = a.substr(0, a.find('='));
    if (std::find(names.begin(), names.end(), a) != names.end()) continue;
    const std::vector<std::string> near = bs::cli::closest_words(a, names);
    std::string msg = where + ": unknown flag " + bs::quote_for_message(a, 40);
    msg += near.empty() ? " (" + where + " --help lists them)" : "; did you mean " + joined(near, " or ") + "?";
    std::fprintf(stderr, "%s\n", msg.c_str());
  }
  if (context == &app) {
    // No command at all: CLI11 said one is required; these are they.
    std::vector<std::string> commands;
    for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
    std::fprintf(stderr, "commands: %s (bulkscore --help)\n", joined(commands).c_str());
  }
}

std::string version_text() {
  std::string backends;
  for (const auto& b : bs::compiled_backends()) backends += (backends.empty() ? "" : ", ") + b;
  return std::string("bulkscore ") + BULKSCORE_VERSION + " (kube-scheduler v1.35.4 semantics; backends: " + backends +
         ")";
}

}  // namespace

// NOLINTNEXTLINE(bugprone-exception-escape): only setup outside the try can throw (bad_alloc, CLI11 option errors)
int main(int argc, char** argv) {
  // A closed pipe on standard output is a write error to report (exit 1),
  // not a silent death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);  // NOLINT(cert-err33-c): cannot fail for SIGPIPE
  CLI::App app{"bulkscore: kube-scheduler's Filter/Score cycle in bulk, on the CPU or the GPU"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text());
  int verbosity = 0;
  app.add_option("-v,--v", verbosity, "log verbosity, klog-like (0-5)")->check(CLI::Range(0, 10));

  std::string nodes, pods, config, out;
  ScheduleFlags flags;
  ExplainFlags ex_flags;
  std::vector<std::string> objects;
  const char* objects_help =
      "Services, controllers and Namespaces (kubectl get svc,rc,rs,sts,ns -A -o json); repeatable";
  const char* batching_help =
      "exact (reuse the previous pod's evaluation where that changes nothing; docs/batching.md), upstream "
      "(kube-scheduler v1.35.4's own batching; its state expires after 500 ms of wall clock, so its decisions "
      "depend on the machine's and the backend's speed) or off; exact and off decide identically on every "
      "backend and machine";

  auto* schedule = app.add_subcommand("schedule", "schedule every pending pod in file order (a gang's members together, all or nothing); JSON lines out");
  schedule->add_option("--nodes", nodes, "NodeList JSON (kubectl get nodes -o json)")->required();
  schedule->add_option("--pods", pods, "PodList JSON (kubectl get pods -A -o json)")->required();
  schedule->add_option("--config", config, "KubeSchedulerConfiguration YAML (default: upstream's defaults)");
  schedule->add_option("--objects", objects, objects_help);
  schedule->add_option("--backend", flags.backend, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  auto* schedule_tie_opt = schedule
      ->add_option("--tie-break", flags.tie_break,
                   "random (seeded, uniform; upstream's) or first (lowest node index), for the profiles that set no "
                   "tieBreak of their own. GPU placement: with random, GpuFragmentation (FGD) left about twice the "
                   "GPUs unallocated on the Alibaba trace (10.1-10.4% against 5.0% with first at 95% arrival) and ran "
                   "3.5-6x slower; give such a profile tieBreak: first (docs/gpu-placement.md)")
      ->check(CLI::IsMember({"random", "first"}));
  schedule->add_option("--seed", flags.seed, "seed of the random tie-break");
  schedule->add_option("--threads", flags.threads, "CPU backend threads (0 = one per core)")
      ->check(CLI::Range(0, 1024));
  schedule->add_option("--batching", flags.batching, batching_help)->check(CLI::IsMember({"exact", "upstream", "off"}));
  auto* batch_states_opt = schedule->add_option("--batch-states", flags.batch_states,
                       "--batching exact: evaluations kept, one per recent pod shape (1 = the previous pod's only); "
                       "pods of a few shapes in any order then hit; decisions do not depend on it")
      ->check(CLI::Range(1, 1024));
  auto* window_opt = schedule->add_option("--window", flags.window,
                       "--batching exact: pods looked ahead at; those no kept evaluation answers are evaluated "
                       "together (on the CPU, each on one thread) and kept for their own turn (0 = auto: two per "
                       "thread, 8 to 64, on four threads or more while it pays, 1 = none); decisions do not depend on it")
      ->check(CLI::Range(0, 1024));
  auto* metrics_opt = schedule->add_option(
      "--metrics", flags.metrics,
      "write the scheduler's metrics here (kube-scheduler's names, and the batch counters), Prometheus text "
      "format (written with -o as a unit: both or neither)");
  auto* schedule_out = schedule->add_option(
      "-o,--output", out, "output file (JSON lines; written whole or not at all); default stdout");

  auto* explain = app.add_subcommand(
      "explain", "why one pod would go where it goes (nothing is assumed): a table, or --format json");
  explain->add_option("--nodes", nodes, "NodeList JSON")->required();
  explain->add_option("--pods", pods, "PodList JSON")->required();
  explain->add_option("--pod", ex_flags.pod, "the pod, as namespace/name (a running pod is explained as if pending)")
      ->required();
  explain->add_option("--format", ex_flags.format,
                      "table (for people: the chosen node and why, the rejections, the best nodes' scores) or json "
                      "(every node with its verdict and scores)")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  auto* top_opt = explain->add_option("--top", ex_flags.top, "table: the best K nodes")
                      ->check(CLI::Range(0U, 100000U))
                      ->capture_default_str();
  auto* node_opt = explain->add_option(
      "--node", ex_flags.nodes, "table: add this node's verdict (its scores and place, or what rejected it); repeatable");
  auto* width_opt =
      explain->add_option("--width", ex_flags.width,
                          "table: at most N columns (default: the terminal's width, else " +
                              std::to_string(kDefaultTableWidth) + ")")
          ->check(CLI::Range(size_t{20}, size_t{10000}));
  explain->add_option("--config", config, "KubeSchedulerConfiguration YAML");
  explain->add_option("--objects", objects, objects_help);
  explain->add_option("--backend", flags.backend, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  auto* explain_tie_opt = explain->add_option("--tie-break", flags.tie_break, "random or first (as schedule's)")
      ->check(CLI::IsMember({"random", "first"}));
  explain->add_option("--seed", flags.seed, "seed of the random tie-break");
  explain->add_option("--batching", flags.batching, batching_help)->check(CLI::IsMember({"exact", "upstream", "off"}));
  explain->add_flag("--schedule-before", ex_flags.schedule_before,
                    "schedule the pending pods listed before the pod first (\"batch\" then says whether schedule "
                    "would answer it from the cache)");
  auto* explain_out = explain->add_option("-o,--output", out, "output file; default stdout");

  bs::GeneratorOptions gen;
  std::string nodes_out, pods_out;
  auto* generate = app.add_subcommand("generate", "write a deterministic synthetic cluster as kubectl JSON");
  generate->add_option("--nodes-out", nodes_out, "NodeList JSON to write")->required();
  generate->add_option("--pods-out", pods_out, "PodList JSON to write")->required();
  std::string objects_out;
  generate->add_option("--objects-out", objects_out,
                       "List JSON of the Services, ReplicaSets, StatefulSets and Namespaces to write (for --objects)");
  generate->add_flag("--inter-pod-constraints", gen.with_inter_pod_constraints,
                     "give some pending groups pod (anti-)affinity or topology spread constraints");
  // The limits (bench/generator/generator.hpp, README) refused here, before
  // anything is generated.
  generate->add_option("--nodes", gen.nodes, "number of nodes (at most " + std::to_string(bs::kGeneratorMaxNodes) + ")")
      ->check(CLI::Range(0U, bs::kGeneratorMaxNodes))
      ->capture_default_str();
  generate
      ->add_option("--running", gen.running_pods,
                   "number of running pods (at most " + std::to_string(bs::kGeneratorMaxRunningPods) +
                       ", and what the nodes' pod slots hold)")
      ->check(CLI::Range(0U, bs::kGeneratorMaxRunningPods))
      ->capture_default_str();
  generate
      ->add_option("--pending", gen.pending_pods,
                   "number of pending pods (at most " + std::to_string(bs::kGeneratorMaxPendingPods) + ")")
      ->check(CLI::Range(0U, bs::kGeneratorMaxPendingPods))
      ->capture_default_str();
  generate->add_option("--seed", gen.seed, "generator seed")->capture_default_str();

  bs::PerfCliOptions perf;
  auto* perf_cmd = app.add_subcommand("perf", "run scheduler_perf workload files, report SchedulingThroughput");
  perf_cmd->add_option("--config", perf.config_path, "scheduler_perf performance-config.yaml");
  perf_cmd->add_option("--workload", perf.workload_filter, "TestCase/Workload to run (default: all)");
  perf_cmd->add_option("--label", perf.label_filter, "run only workloads carrying this label (e.g. performance)");
  perf_cmd->add_option("--backend", perf.backend, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  perf_cmd
      ->add_option("--percentage-of-nodes-to-score", perf.percentage_of_nodes_to_score,
                   "override the profile's percentageOfNodesToScore (0-100)")
      ->check(CLI::Range(0, 100));
  perf_cmd->add_option("--batching", perf.batching, batching_help)->check(CLI::IsMember({"exact", "upstream", "off"}));
  auto* perf_out = perf_cmd->add_option("-o,--output", perf.output_path, "results JSON (BenchmarkPerfScheduling shape)");
  perf_cmd->add_option("--compare", perf.compare_files, "print a table comparing results JSON files")->expected(1, -1);
  perf_cmd->add_flag("--list", perf.list_only, "list the selected workloads and exit");

  bs::ReplayCliOptions replay;
  auto* replay_cmd = app.add_subcommand(
      "replay", "the ATC '23 workload-inflation experiment on the Alibaba GPU trace (docs/gpu-placement.md)");
  replay_cmd->add_option("--trace-dir", replay.trace_dir,
                         "folder of the trace's CSVs (default: $BULKSCORE_TRACE_DIR, else "
                         "../shared/data/alibaba-gpu-v2023 from the working directory or the repository)");
  replay_cmd->add_option("--trace", replay.trace, "pod list variant: openb_pod_list_<TRACE>.csv")
      ->capture_default_str();
  replay_cmd->add_option("--pods-csv", replay.pods_csv, "pod list CSV (instead of --trace)");
  replay_cmd->add_option("--nodes-csv", replay.nodes_csv, "node list CSV (default: openb_node_list_gpu_node.csv)");
  replay_cmd
      ->add_option("--policies", replay.policies,
                   "comma-separated: random, dotprod, clustering, packing, bestfit, fgd, firstfit; or all")
      ->capture_default_str();
  replay_cmd->add_option("--seeds", replay.seeds, "seeds: a range 42-51 and/or a list 42,45")->capture_default_str();
  replay_cmd->add_option("--inflation", replay.inflation, "target GPU demand as a multiple of the capacity")
      ->capture_default_str();
  replay_cmd->add_flag("--no-quirk", replay.no_quirk,
                       "tuning tests units x count per clone (the simulator tests the per-GPU units)");
  replay_cmd
      ->add_option("--tie-break", replay.tie_break,
                   "among nodes tied at the best total: first (the lowest node index; the simulator's, whose ties "
                   "go to the smallest name) or random (upstream's; FGD leaves about twice the GPUs unallocated)")
      ->check(CLI::IsMember({"first", "random"}))
      ->capture_default_str();
  replay_cmd->add_option("--backend", replay.backend, "auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  replay_cmd->add_option("--batching", replay.batching, batching_help)
      ->check(CLI::IsMember({"exact", "upstream", "off"}));
  auto* replay_batch_states = replay_cmd->add_option("--batch-states", replay.batch_states,
                         "--batching exact: evaluations kept, one per recent pod shape; decisions do not depend on it")
      ->check(CLI::Range(1, 1024));
  replay_cmd->add_option("--threads", replay.threads, "CPU backend threads (0 = one per core)")
      ->check(CLI::Range(0, 1024));
  replay_cmd->add_option("--max-pods", replay.max_pods, "schedule only the first N pods of each tuned workload");
  auto* lookahead_opt = replay_cmd->add_option("--lookahead", replay.lookahead,
                         "not the paper's: within each window of N arriving pods, choose which to place next by "
                         "--lookahead-order (0 or 1: off)");
  replay_cmd
      ->add_option("--lookahead-order", replay.lookahead_order,
                   "with --lookahead: score, growth, growth-per-gpu, fill or constrained (each peeks at the window's "
                   "pods before every placement); decreasing, decreasing-cpu, decreasing-gpu-pods or "
                   "big-shares-first (each sorts the window once by demand; a window wider than the workload sorts "
                   "the whole arrival set)")
      ->capture_default_str()
      ->needs(lookahead_opt);  // alone it would change nothing, silently
  auto* retarget_opt =
      replay_cmd->add_option("--retarget-every", replay.retarget_every,
                             "not the paper's: every N pods, FGD's typical tasks from the pending pods (0: off)");
  replay_cmd
      ->add_option("--retarget-horizon", replay.retarget_horizon,
                   "with --retarget-every: how many pending pods, in arrival order (0: all)")
      ->needs(retarget_opt);
  replay_cmd->add_option("--arrivals", replay.arrivals, "arrival % points of the table")->capture_default_str();
  auto* replay_out = replay_cmd->add_option(
      "-o,--output", replay.output, "the table; default stdout (-o, --csv and --plot are written as a unit: all or none)");
  auto* replay_csv = replay_cmd->add_option("--csv", replay.csv, "every arrival % bucket of every policy, as CSV");
  auto* replay_plot = replay_cmd->add_option(
      "--plot", replay.plot, "PNG of unallocated GPU % vs arrival % (gnuplot, required when given; like Fig. 9a)");

  // -v is accepted before or after the subcommand.
  for (auto* sub : app.get_subcommands({})) sub->fallthrough();
  require_decimal_integers(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (suggest_command(app, argc, argv)) return kExitBadInput;
    app.exit(e);
    suggest_flags(app, argc, argv);
    return kExitBadInput;
  }
  setup_logging(verbosity);
  // A kill signal or a write past the file size limit leaves no temporary
  // output behind (host/io/io.hpp).
  bs::install_output_signal_cleanup();

  try {
    // A flag given with an empty value is refused, never taken as "none".
    for (auto* opt : {schedule_out, metrics_opt, explain_out, perf_out, replay_out, replay_csv, replay_plot})
      if (opt->count() > 0) bs::check_output_name(opt->get_name().c_str(), opt->as<std::string>());
    flags.metrics_given = metrics_opt->count() > 0;
    flags.tie_break_given = schedule_tie_opt->count() + explain_tie_opt->count() > 0;
    // The number of kept states means something only to the exact cache.
    if (batch_states_opt->count() > 0 && flags.batching != "exact")
      throw bs::InputError("--batch-states: only --batching exact keeps states (here --batching " + flags.batching +
                           ")");
    if (window_opt->count() > 0 && flags.batching != "exact")
      throw bs::InputError("--window: only --batching exact looks ahead (here --batching " + flags.batching + ")");
    if (replay_batch_states->count() > 0 && !replay.batching.empty() && replay.batching != "exact")
      throw bs::InputError("--batch-states: only --batching exact keeps states (here --batching " + replay.batching +
                           ")");
    if (*schedule) return cmd_schedule(nodes, pods, config, objects, flags, out);
    if (*explain) {
      // The table's flags mean nothing to the JSON, which lists every node.
      if (ex_flags.format == "json")
        for (const CLI::Option* opt : {top_opt, node_opt, width_opt})
          if (opt->count() > 0)
            throw bs::InputError(opt->get_name() + ": only the table takes it (--format json lists every node)");
      return cmd_explain(nodes, pods, config, objects, flags, ex_flags, out);
    }
    if (*generate) return cmd_generate(gen, nodes_out, pods_out, objects_out);
    if (*perf_cmd) {
      perf.verbosity = std::max(1, verbosity);  // progress is shown unless asked otherwise
      return bs::perf_main(perf);
    }
    if (*replay_cmd) {
      replay.verbosity = verbosity;
      return bs::replay_main(replay);
    }
  } catch (const bs::InputError& e) {
    std::fprintf(stderr, "bulkscore: error: %s\n", bs::escape_for_terminal(e.what()).c_str());
    return kExitBadInput;
  } catch (const bs::BackendUnavailable& e) {
    std::fprintf(stderr, "bulkscore: error: %s\n", bs::escape_for_terminal(e.what()).c_str());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bulkscore: failed: %s\n", bs::escape_for_terminal(e.what()).c_str());
    return kExitFailure;
  }
  return kExitFailure;
}
