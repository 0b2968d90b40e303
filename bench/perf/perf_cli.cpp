// `bulkscore perf` front end: progress on stderr, Ctrl-C handling, the results
// file and the summary table. The work itself is in the other files of
// bench/perf/ (see docs/perf.md).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>

#include "bench/perf/perf.hpp"
#include "host/common.hpp"
#include "host/input/quote.hpp"
#include "host/io/io.hpp"

namespace bulkscore {
namespace {

std::atomic<bool> g_perf_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the SIGINT handler needs a lock-free flag");

extern "C" void perf_on_sigint(int) { g_perf_stop.store(true); }

// Installs the SIGINT handler for the lifetime of the object. SA_RESETHAND:
// a second Ctrl-C kills the process the usual way.
class SigintGuard {
 public:
  SigintGuard() {
    g_perf_stop.store(false);
    struct sigaction sa = {};
    sa.sa_handler = perf_on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    installed_ = sigaction(SIGINT, &sa, &old_) == 0;
  }
  ~SigintGuard() {
    if (installed_) sigaction(SIGINT, &old_, nullptr);
  }
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;

 private:
  struct sigaction old_ = {};
  bool installed_ = false;
};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A single redrawn line on a terminal; plain lines every ~5 s otherwise.
class ProgressPrinter {
 public:
  ProgressPrinter(int verbosity, bool tty) : verbosity_(verbosity), tty_(tty) {}

  void operator()(const PerfProgress& p) {
    if (verbosity_ <= 0) return;
    const std::string key = p.workload + "|" + p.phase;
    const bool changed = key != key_;
    const bool complete = p.total > 0 && p.done == p.total;
    const int64_t t = now_ns();
    if (p.phase == "done") {
      end_line();
      key_.clear();
      return;
    }
    if (tty_) {
      if (!changed && !complete && t - last_ns_ < 100'000'000) return;
      last_ns_ = t;
      key_ = key;
      std::fprintf(stderr, "\r\033[K%s", render(p, true).c_str());
      static_cast<void>(std::fflush(stderr));  // progress on stderr: a failure has nowhere to go
      drawn_ = true;
    } else {
      if (changed) key_ = key;
      if (!(changed && verbosity_ >= 2) && t - last_ns_ < 5'000'000'000LL) return;
      last_ns_ = t;
      std::fprintf(stderr, "%s\n", render(p, false).c_str());
    }
  }

  void end_line() {
    if (tty_ && drawn_) std::fputc('\n', stderr);
    drawn_ = false;
  }

 private:
  static std::string render(const PerfProgress& p, bool bar) {
    char buf[512];
    std::string s = p.workload + " " + p.phase;
    if (p.total > 0) {
      if (bar) {
        const int width = 24;
        const int fill = static_cast<int>(width * static_cast<double>(p.done) / static_cast<double>(p.total));
        std::string b(static_cast<size_t>(width), ' ');
        for (int i = 0; i < fill && i < width; ++i) b[static_cast<size_t>(i)] = '=';
        if (fill < width) b[static_cast<size_t>(fill)] = '>';
        s += " [" + b + "]";
      }
      s += " " + std::to_string(p.done) + "/" + std::to_string(p.total);
      if (p.pods_per_second > 0) {
        // Never cut short: any double in %.1f is at most 311 characters.
        static_cast<void>(std::snprintf(buf, sizeof buf, " %.1f pods/s", p.pods_per_second));
        s += buf;
      }
    }
    return s;
  }

  int verbosity_;
  bool tty_;
  std::string key_;
  int64_t last_ns_ = 0;
  bool drawn_ = false;
};

std::string default_output_path(const std::string& backend) {
  char stamp[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  // strftime returns 0, and leaves the buffer undefined, if it does not fit.
  const size_t n = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return "BenchmarkPerfScheduling_bulkscore_" + backend + "_" + std::string(stamp, n) + ".json";
}

void print_workload_summary(const PerfWorkloadResult& w, int verbosity) {
  if (verbosity <= 0) return;
  for (const auto& m : w.measurements) {
    std::fprintf(stderr,
                 "%s: %llu/%llu pods scheduled on %u nodes in %.3f s; SchedulingThroughput avg %.1f pods/s "
                 "(p50 %.1f, p90 %.1f, p99 %.1f; %zu windows), overall %.1f pods/s, %.3f ns/node/pod [%s]%s\n",
                 name_for_message(m.name).c_str(), static_cast<unsigned long long>(m.scheduled),
                 static_cast<unsigned long long>(m.attempted), m.nodes, m.elapsed_seconds, m.throughput.average,
                 m.throughput.perc50, m.throughput.perc90, m.throughput.perc99, m.throughput.samples.size(),
                 m.overall_pods_per_second, m.ns_per_node_per_pod, w.backend.c_str(),
                 m.interrupted ? " (interrupted)" : "");
    if (w.batching != "off") std::fprintf(stderr, "  %s\n", batch_summary(parse_batching(w.batching), m.batch).c_str());
    if (m.threshold > 0 && !m.interrupted)
      std::fprintf(stderr, "  threshold %.1f pods/s: %s\n", m.threshold,
                   m.throughput.average > m.threshold ? "above" : "BELOW");
  }
  for (const auto& n : w.notes) std::fprintf(stderr, "  note: %s\n", escape_for_terminal(n).c_str());
  if (verbosity >= 2) std::fprintf(stderr, "  backend: %s; device: %s\n", w.backend_note.c_str(), w.device.c_str());
}

// Every file a run of `config` reads: the workload file, and each test
// case's scheduler configuration and node and pod templates.
std::vector<FlagPath> perf_input_paths(const PerfConfig& config) {
  std::vector<FlagPath> in{{"--config", config.path}};
  const auto add_op = [&in](const PerfOp& op, const auto& self) -> void {
    if (op.node_template_path) in.push_back({"nodeTemplatePath", *op.node_template_path});
    if (op.pod_template_path) in.push_back({"podTemplatePath", *op.pod_template_path});
    for (const PerfOp& nested : op.pods_op) self(nested, self);
  };
  for (const PerfTestCase& tc : config.test_cases) {
    if (!tc.scheduler_config_path.empty()) in.push_back({"schedulerConfigPath", tc.scheduler_config_path});
    if (tc.default_pod_template_path) in.push_back({"defaultPodTemplatePath", *tc.default_pod_template_path});
    for (const PerfOp& op : tc.ops) add_op(op, add_op);
  }
  return in;
}

}  // namespace

int perf_main(const PerfCliOptions& o) {
  try {
    if (!o.compare_files.empty()) {
      std::cout << perf_compare(o.compare_files);
      return 0;
    }
    if (o.config_path.empty())
      throw InputError("perf: no workload file given (a scheduler_perf performance-config.yaml)");
    const PerfConfig config = load_perf_config(o.config_path);
    const std::vector<PerfSelected> selected = select_perf_workloads(config, o.workload_filter, o.label_filter);
    if (selected.empty())
      throw InputError(o.config_path + ": no workload selected (label filter " + quote_for_message(o.label_filter) +
                       ")");
    if (o.list_only) {
      for (const auto& s : selected) {
        std::string labels;
        for (const auto& l : s.test_case->labels) labels += (labels.empty() ? "" : ",") + l;
        for (const auto& l : s.workload->labels) labels += (labels.empty() ? "" : ",") + l;
        std::cout << s.full_name() << (labels.empty() ? "" : "  [" + labels + "]") << "\n";
      }
      return 0;
    }

    // The results file may replace nothing the run reads: checked before
    // the run, against every file of every test case.
    const std::string output_path =
        o.output_path.empty() ? default_output_path(o.backend == "auto" ? "auto" : o.backend) : o.output_path;
    check_output_paths({{"-o", output_path}}, perf_input_paths(config));

    ProgressPrinter printer(o.verbosity, isatty(STDERR_FILENO) != 0);
    PerfRunOptions ro;
    ro.backend = o.backend;
    ro.batching = o.batching;
    ro.percentage_of_nodes_to_score = o.percentage_of_nodes_to_score;
    ro.stop = &g_perf_stop;
    ro.on_progress = [&printer](const PerfProgress& p) { printer(p); };

    PerfRunResult result;
    result.config_path = config.path;
    std::string error;
    int error_rc = 0;
    {
      SigintGuard guard;
      for (const auto& s : selected) {
        try {
          result.workloads.push_back(run_perf_workload(config, *s.test_case, *s.workload, ro));
        } catch (const InputError& e) {
          error = e.what();
          error_rc = 2;
        } catch (const BackendUnavailable& e) {  // the backend asked for: a usage error, as in the other commands
          error = e.what();
          error_rc = 2;
        } catch (const std::exception& e) {
          error = e.what();
          error_rc = 1;
        }
        printer.end_line();
        if (error_rc) break;
        print_workload_summary(result.workloads.back(), o.verbosity);
        if (result.workloads.back().interrupted || g_perf_stop.load()) {
          result.interrupted = true;
          break;
        }
      }
    }

    if (!result.workloads.empty()) {
      const std::string path =
          o.output_path.empty() ? default_output_path(result.workloads.front().backend) : o.output_path;
      if (path != output_path) check_output_paths({{"-o", path}}, perf_input_paths(config));
      write_file_atomically(path, perf_results_json(result));
      std::cout << format_perf_table(perf_rows(result));
      std::fprintf(stderr, "results written to %s%s\n", path.c_str(),
                   result.interrupted ? " (partial: interrupted)" : "");
    }
    if (error_rc) {
      std::fprintf(stderr, "bulkscore perf: %s\n", escape_for_terminal(error).c_str());
      return error_rc;
    }
    if (result.interrupted) {
      std::fprintf(stderr, "bulkscore perf: interrupted\n");
      return 130;
    }
    return 0;
  } catch (const InputError& e) {
    std::fprintf(stderr, "bulkscore perf: %s\n", escape_for_terminal(e.what()).c_str());
    return 2;
  } catch (const BackendUnavailable& e) {
    std::fprintf(stderr, "bulkscore perf: %s\n", escape_for_terminal(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bulkscore perf: %s\n", escape_for_terminal(e.what()).c_str());
    return 1;
  }
}

}  // namespace bulkscore
