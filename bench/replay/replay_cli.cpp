// `bulkscore replay` front end: finds the trace, logs progress, writes the
// table, the CSV and the plot. The experiment itself is in the other files
// of bench/replay/ (docs/gpu-placement.md, "Replay: the paper's experiment").
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "bench/replay/gnuplot.hpp"
#include "bench/replay/replay.hpp"
#include "host/input/quote.hpp"
#include "host/io/io.hpp"

namespace bulkscore {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTraceDirEnv = "BULKSCORE_TRACE_DIR";
constexpr const char* kRelativeTraceDir = "../shared/data/alibaba-gpu-v2023";
constexpr const char* kNodeList = "openb_node_list_gpu_node.csv";

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string dirs = path;
  size_t start = 0;
  for (;;) {
    const size_t colon = dirs.find(':', start);
    const std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return true;
    if (colon == std::string::npos) return false;
    start = colon + 1;
  }
}

}  // namespace

// The shared data folder beside the repository is seen from the working
// directory (the repository root), then from the binary (build folder
// inside the repository).
std::string find_trace_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv(kTraceDirEnv); env && *env) return env;
  std::vector<fs::path> tried{fs::path(kRelativeTraceDir)};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) tried.push_back(exe.parent_path().parent_path() / kRelativeTraceDir);
  std::string names;
  for (const fs::path& p : tried) {
    if (is_dir(p)) return p.lexically_normal().string();
    names += (names.empty() ? "" : ", ") + p.string();
  }
  throw InputError("no trace folder: give --trace-dir or set " + std::string(kTraceDirEnv) + " (tried " + names + ")");
}

int replay_main(const ReplayCliOptions& o) {
  const std::vector<uint64_t> seeds = parse_seed_list(o.seeds);
  const std::vector<int> arrivals = parse_arrival_points(o.arrivals);
  if (!(o.inflation > 0 && o.inflation <= 10)) throw InputError("--inflation: expected a ratio in (0, 10]");
  std::vector<const ReplayPolicy*> policies;
  if (o.policies == "all") {
    for (const ReplayPolicy& p : replay_policies()) policies.push_back(&p);
  } else {
    size_t start = 0;
    for (;;) {
      const size_t comma = o.policies.find(',', start);
      const ReplayPolicy* policy =
          &replay_policy(o.policies.substr(start, comma == std::string::npos ? comma : comma - start));
      if (std::find(policies.begin(), policies.end(), policy) != policies.end())
        throw InputError("--policies: " + policy->name + " is given twice");
      policies.push_back(policy);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }

  std::string trace_dir;
  if (o.nodes_csv.empty() || o.pods_csv.empty()) trace_dir = find_trace_dir(o.trace_dir);
  const std::string nodes_path = o.nodes_csv.empty() ? trace_dir + "/" + kNodeList : o.nodes_csv;
  const std::string pods_path = o.pods_csv.empty() ? trace_dir + "/openb_pod_list_" + o.trace + ".csv" : o.pods_csv;
  std::vector<FlagPath> outputs{{"-o", o.output.empty() ? "-" : o.output}};
  if (!o.csv.empty()) outputs.push_back({"--csv", o.csv});
  if (!o.plot.empty()) outputs.push_back({"--plot", o.plot});
  check_output_paths(outputs, {{"--nodes-csv", nodes_path}, {"--pods-csv", pods_path}});
  // Found before the experiment runs, not after.
  if (!o.plot.empty() && !on_path("gnuplot"))
    throw Error("--plot: gnuplot not found on PATH (apt-get install gnuplot-nox); nothing was run");

  const auto t0 = std::chrono::steady_clock::now();
  const ReplayTrace trace = read_trace(nodes_path, pods_path);
  const std::vector<TypicalTask> typical = replay_typical_tasks(trace);
  spdlog::info("read {} nodes ({} GPUs) and {} pods in {:.2f} s; {} typical tasks", trace.nodes.size(), trace.gpus,
               trace.pods.size(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
               typical.size());

  ReplayOptions ro;
  ro.backend = o.backend;
  if (o.tie_break != "first" && o.tie_break != "random")
    throw InputError("--tie-break: expected first or random, got " + quote_for_message(o.tie_break));
  ro.tie_break = o.tie_break == "random" ? TieBreak::Random : TieBreak::First;
  ro.batching = parse_batching(o.batching);
  ro.batch_states = o.batch_states;
  ro.threads = o.threads;
  ro.tune.inflation = o.inflation;
  ro.tune.per_gpu_milli_quirk = !o.no_quirk;
  ro.max_pods = o.max_pods;
  ro.lookahead = o.lookahead;
  ro.lookahead_order = parse_lookahead_order(o.lookahead_order);
  ro.retarget_every = o.retarget_every;
  ro.retarget_horizon = o.retarget_horizon;
  ro.on_progress = [](const ReplayProgress& p) {
    spdlog::debug("{} seed {}: {}/{} pods", p.policy, p.seed, p.done, p.total);
  };

  std::vector<PolicySummary> summaries;
  size_t ran = 0;
  std::string first_error;
  for (const ReplayPolicy* policy : policies) {
    try {
      check_replay_policy(*policy, typical);
    } catch (const InputError& e) {
      PolicySummary s;
      s.policy = policy->name;
      s.error = e.what();
      spdlog::warn("{}: not run: {}", policy->name, s.error);
      if (first_error.empty()) first_error = policy->name + ": " + s.error;
      summaries.push_back(std::move(s));
      continue;
    }
    std::vector<SeedRun> runs;
    for (uint64_t seed : seeds) {
      runs.push_back(run_replay_seed(trace, typical, *policy, seed, ro));
      const SeedRun& r = runs.back();
      const ReplayEvent last = r.events.empty() ? ReplayEvent{} : r.events.back();
      spdlog::info(
          "{} seed {}: {} pods ({} clones added, {} removed), {} placed, {} failed; allocated {:.2f}% at "
          "arrival {:.2f}%; scheduling {:.2f} s ({:.0f} pods/s), wall {:.2f} s",
          policy->name, seed, r.events.size(), r.workload.added, r.workload.removed, last.placed, last.failed,
          100.0 * static_cast<double>(last.allocated_units) / static_cast<double>(trace.gpu_capacity_units),
          100.0 * static_cast<double>(last.arrived_units) / static_cast<double>(trace.gpu_capacity_units),
          r.schedule_seconds, r.schedule_seconds > 0 ? static_cast<double>(r.events.size()) / r.schedule_seconds : 0.0,
          r.wall_seconds);
      for (const auto& [message, pods] : r.failures) spdlog::debug("  {} pod(s): {}", pods, message);
    }
    summaries.push_back(summarize_policy(policy->name, runs, trace.gpu_capacity_units));
    for (const std::string& w : summaries.back().warnings) spdlog::warn("{}: {}", policy->name, w);
    ++ran;
  }

  ReplayReportHeader h;
  h.nodes_path = nodes_path;
  h.pods_path = pods_path;
  h.nodes = trace.nodes.size();
  h.pods = trace.pods.size();
  h.gpus = trace.gpus;
  h.inflation = o.inflation;
  h.seeds = seeds;
  h.typical_tasks = typical.size();
  h.backend = o.backend;
  h.tie_break = o.tie_break;
  if (ran == 0) throw InputError("no policy could run; " + first_error);
  // The table, the CSV and the plot are one unit: all written, or none.
  const std::string table = format_replay_table(h, summaries, arrivals);
  const std::string csv_text = format_replay_csv(summaries);
  const std::string png = o.plot.empty() ? std::string() : run_gnuplot(replay_gnuplot_script(summaries, csv_text));
  std::vector<std::pair<std::string, std::string_view>> files{{o.output.empty() ? "-" : o.output, table}};
  if (!o.csv.empty()) files.emplace_back(o.csv, csv_text);
  if (!o.plot.empty()) files.emplace_back(o.plot, png);
  write_files_atomically(files);
  if (!o.plot.empty()) spdlog::info("plot written to {}", quote_for_message(o.plot));
  return 0;
}

}  // namespace bulkscore
