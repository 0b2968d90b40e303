#include "host/engine/scheduler_metrics.hpp"

#include <charconv>
#include <cmath>

#include "bulkscore/version.h"
#include "host/common.hpp"

namespace bulkscore {

uint64_t Histogram::cumulative(size_t i) const {
  uint64_t c = 0;
  for (size_t b = 0; b <= i && b < buckets.size(); ++b) c += buckets[b];
  return c;
}

std::vector<double> exponential_buckets(double start, double factor, int count) {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(std::max(count, 0)));
  for (int i = 0; i < count; ++i) {
    out.push_back(start);
    start *= factor;
  }
  return out;
}

const char* attempt_result_name(AttemptResult r) {
  switch (r) {
    case AttemptResult::kScheduled:
      return "scheduled";
    case AttemptResult::kUnschedulable:
      return "unschedulable";
    case AttemptResult::kError:
      break;
  }
  return "error";
}

const char* extension_point_name(ExtensionPoint p) {
  switch (p) {
    case ExtensionPoint::kPreFilter:
      return "PreFilter";
    case ExtensionPoint::kFilter:
      return "Filter";
    case ExtensionPoint::kPreScore:
      return "PreScore";
    case ExtensionPoint::kPostFilter:
      break;
  }
  return "PostFilter";
}

std::string format_go_float(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  // The shortest digits that read back as v (what Go's -1 precision asks
  // for), then Go's choice between %e and %f: %e when the decimal exponent
  // is below -4 or at least 6 (the shortest form's eprec).
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));  // [-]d[.ddd]e(+|-)dd
  const size_t e = sci.find('e');
  std::string digits;
  std::string out = sci[0] == '-' ? "-" : "";
  for (size_t i = out.size(); i < e; ++i)
    if (sci[i] != '.') digits += sci[i];
  int exp = 0;
  const std::string_view exponent = sci.substr(e + 1 + (sci[e + 1] == '+' ? 1 : 0));
  std::from_chars(exponent.data(), exponent.data() + exponent.size(), exp);
  if (exp < -4 || exp >= 6) {
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += exp < 0 ? "e-" : "e+";
    const int a = std::abs(exp);
    if (a < 10) out += '0';
    out += std::to_string(a);
    return out;
  }
  const int point = exp + 1;  // digits before the decimal point
  if (point <= 0) return out + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  if (static_cast<size_t>(point) >= digits.size())
    return out + digits + std::string(static_cast<size_t>(point) - digits.size(), '0');
  return out + digits.substr(0, static_cast<size_t>(point)) + "." + digits.substr(static_cast<size_t>(point));
}

namespace {

// A Prometheus label value: backslash, double quote and newline escaped.
std::string escape_label(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string label(const char* name, std::string_view value) {
  return std::string(name) + "=\"" + escape_label(value) + "\"";
}

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const char* name, const std::string& labels, const std::string& value) {
  out += name;
  if (!labels.empty()) out += "{" + labels + "}";
  out += " " + value + "\n";
}

// One histogram series: _bucket per bound and +Inf (cumulative), _sum, _count.
void histogram(std::string& out, const char* name, const std::string& labels, const Histogram& h) {
  const std::string bucket = std::string(name) + "_bucket";
  const std::string sep = labels.empty() ? "" : ",";
  uint64_t running = 0;
  for (size_t i = 0; i < h.upper_bounds.size(); ++i) {
    running += i < h.buckets.size() ? h.buckets[i] : 0;
    sample(out, bucket.c_str(), labels + sep + "le=\"" + format_go_float(h.upper_bounds[i]) + "\"",
           std::to_string(running));
  }
  sample(out, bucket.c_str(), labels + sep + "le=\"+Inf\"", std::to_string(h.count));
  sample(out, (std::string(name) + "_sum").c_str(), labels, format_go_float(h.sum));
  sample(out, (std::string(name) + "_count").c_str(), labels, std::to_string(h.count));
}

}  // namespace

std::string scheduler_metrics_text(const SchedulerMetrics& m) {
  std::string out;
  family(out, "scheduler_schedule_attempts_total", "counter",
         "Pods given to schedule(), by result: scheduled (a node chosen and the pod assumed; binding is the "
         "embedder's), unschedulable (no node fits, or no nodes), error (the cycle failed).");
  for (const auto& p : m.profiles)
    for (size_t r = 0; r < kNumAttemptResults; ++r)
      sample(out, "scheduler_schedule_attempts_total",
             label("profile", p.name) + "," + label("result", attempt_result_name(static_cast<AttemptResult>(r))),
             std::to_string(p.attempts[r]));

  family(out, "scheduler_scheduling_attempt_duration_seconds", "histogram",
         "Seconds from the start of a schedule() call to its return (PreFilter, the evaluation, assume), by "
         "result; binding is the embedder's and not included. Upstream's buckets.");
  for (const auto& p : m.profiles)
    for (size_t r = 0; r < kNumAttemptResults; ++r)
      if (p.attempt_duration[r].count)
        histogram(out, "scheduler_scheduling_attempt_duration_seconds",
                  label("profile", p.name) + "," + label("result", attempt_result_name(static_cast<AttemptResult>(r))),
                  p.attempt_duration[r]);

  family(out, "scheduler_framework_extension_point_duration_seconds", "histogram",
         "Seconds per attempt spent at an extension point. PreFilter: the pod's host-side setup, every plugin's "
         "PreFilter and the PreScore work that needs no feasible nodes. Filter: Filter, Score, NormalizeScore and "
         "selection, fused in the backend (or the batch cache's answer); no separate Score or NormalizeScore "
         "series exist. PreScore: the PreScore work over the feasible nodes, when a plugin has some (not in "
         "Filter's time). PostFilter: after a FitError, the profile's PostFilter plugins (DefaultPreemption's dry run, "
         "eviction and placement); status Success when a node was nominated.");
  for (const auto& s : m.extension_points)
    histogram(out, "scheduler_framework_extension_point_duration_seconds",
              label("extension_point", extension_point_name(s.extension_point)) + "," + label("profile", s.profile) +
                  "," + label("status", code_name(s.status)),
              s.duration);

  const std::string sampled = std::to_string(m.plugin_sample_percent);
  const std::string plugin_help =
      "Seconds of one plugin's host-side work in a scheduling cycle, on " + sampled +
      "% of the cycles (sampled as upstream samples). PreFilter: the plugin's prepare (its PreFilter, and its "
      "PreScore when it has both). PreScore: a Score plugin's prepare when it has no PreFilter, plus its "
      "PreScore over the feasible nodes. Filter and Score run per node in the backend and are not timed per "
      "plugin.";
  family(out, "scheduler_plugin_execution_duration_seconds", "histogram", plugin_help.c_str());
  for (const auto& s : m.plugins)
    histogram(out, "scheduler_plugin_execution_duration_seconds",
              label("extension_point", extension_point_name(s.extension_point)) + "," + label("plugin", s.plugin) +
                  "," + label("status", code_name(s.status)),
              s.duration);

  family(out, "scheduler_unschedulable_pods", "gauge",
         "Pending pods whose last attempt this plugin rejected (at PreFilter, by its PreFilterResult, or at Filter "
         "on some node); a pod counts under each such plugin. A pod leaves when given to schedule() again, assumed, "
         "added or removed (remove_pending_pod).");
  for (const auto& u : m.unschedulable_pods)
    sample(out, "scheduler_unschedulable_pods", label("plugin", u.plugin) + "," + label("profile", u.profile),
           std::to_string(u.pods));

  family(out, "scheduler_pending_pods", "gauge",
         "Pods whose last attempt failed and that are still pending, by where upstream's queue would keep them: "
         "unschedulable (plugins rejected them) or backoff (an error, or no nodes). The engine has no queue: "
         "active and gated pods are the embedder's.");
  sample(out, "scheduler_pending_pods", label("queue", "backoff"), std::to_string(m.pending_backoff));
  sample(out, "scheduler_pending_pods", label("queue", "unschedulable"), std::to_string(m.pending_unschedulable));

  family(out, "bulkscore_build_info", "gauge", "1, labelled with bulkscore's version and its compiled backends.");
  std::string backends;
  for (const std::string& b : m.backends) backends += (backends.empty() ? "" : ",") + b;
  sample(out, "bulkscore_build_info", label("backends", backends) + "," + label("version", m.version), "1");

  out += batch_metrics_text(m.batch);
  return out;
}

// ---- the recorder ---------------------------------------------------------------

template <size_t N>
void MetricsRecorder::Counts<N>::observe(const std::array<double, N>& bounds, double v) {
  size_t i = 0;
  while (i < N && v > bounds[i]) ++i;  // the first bucket whose bound holds v, as Prometheus's
  ++buckets[i];
  ++count;
  sum += v;
}

template <size_t N>
Histogram MetricsRecorder::Counts<N>::histogram(const std::array<double, N>& bounds) const {
  Histogram h;
  h.upper_bounds.assign(bounds.begin(), bounds.end());
  h.buckets.assign(buckets.begin(), buckets.end());
  h.count = count;
  h.sum = sum;
  return h;
}

namespace {
template <size_t N>
std::array<double, N> bounds_of(double start, double factor) {
  const std::vector<double> v = exponential_buckets(start, factor, static_cast<int>(N));
  std::array<double, N> out{};
  std::copy(v.begin(), v.end(), out.begin());
  return out;
}
double seconds(MetricsRecorder::Clock::duration d) {
  return std::chrono::duration<double>(
             d < MetricsRecorder::Clock::duration::zero() ? MetricsRecorder::Clock::duration::zero() : d)
      .count();
}
}  // namespace

MetricsRecorder::MetricsRecorder(std::vector<std::string> profiles, uint32_t plugin_sample_percent, uint64_t seed)
    : names_(std::move(profiles)),
      sample_percent_(std::min<uint32_t>(plugin_sample_percent, 100)),
      seed_(seed),
      attempt_bounds_(bounds_of<kAttemptBuckets>(0.001, 2)),
      extension_bounds_(bounds_of<kExtensionBuckets>(0.0001, 2)),
      plugin_bounds_(bounds_of<kPluginBuckets>(0.00001, 1.5)),
      profiles_(names_.size()),
      plugins_(static_cast<size_t>(kNumPlugins) * kNumExtensionPoints * kNumCodes),
      unschedulable_(names_.size() * kNumPlugins),
      touched_(names_.size() * kNumPlugins) {}

bool MetricsRecorder::sampled(uint64_t cycle) const {
  if (sample_percent_ == 0) return false;
  return mix64(seed_ ^ mix64(cycle + 0x5851F42D4C957F2DULL)) % 100 < sample_percent_;
}

void MetricsRecorder::attempt(size_t profile, AttemptResult r, Clock::duration d) {
  ProfileCounts& p = profiles_[profile];
  ++p.attempts[static_cast<size_t>(r)];
  p.attempt_duration[static_cast<size_t>(r)].observe(attempt_bounds_, seconds(d));
}

void MetricsRecorder::unschedule_attempt(size_t profile) {
  ProfileCounts& p = profiles_[profile];
  uint64_t& scheduled = p.attempts[static_cast<size_t>(AttemptResult::kScheduled)];
  if (scheduled == 0) return;
  --scheduled;
  ++p.attempts[static_cast<size_t>(AttemptResult::kUnschedulable)];
}

void MetricsRecorder::extension_point(size_t profile, ExtensionPoint p, Code status, Clock::duration d) {
  profiles_[profile].extension_points[static_cast<size_t>(p) * kNumCodes + static_cast<size_t>(status)].observe(
      extension_bounds_, seconds(d));
}

void MetricsRecorder::plugin(uint8_t plugin, ExtensionPoint p, Code status, Clock::duration d) {
  plugins_[(static_cast<size_t>(plugin) * kNumExtensionPoints + static_cast<size_t>(p)) * kNumCodes +
           static_cast<size_t>(status)]
      .observe(plugin_bounds_, seconds(d));
}

bool MetricsRecorder::leave(std::string_view key) {
  if (pending_.empty()) return false;
  auto it = pending_.find(std::string(key));
  if (it == pending_.end()) return false;
  const Pending& p = it->second;
  if (p.plugins.none()) {
    --pending_backoff_;
  } else {
    --pending_unschedulable_;
    for (size_t id = 0; id < kNumPlugins; ++id)
      if (p.plugins.test(id)) --unschedulable_[static_cast<size_t>(p.profile) * kNumPlugins + id];
  }
  pending_.erase(it);
  return true;
}

void MetricsRecorder::failed(const std::string& key, size_t profile, const PluginSet& rejectors) {
  leave(key);
  Pending p;
  p.profile = static_cast<uint32_t>(profile);
  p.plugins = rejectors;
  if (rejectors.none()) {
    ++pending_backoff_;
  } else {
    ++pending_unschedulable_;
    for (size_t id = 0; id < kNumPlugins; ++id)
      if (rejectors.test(id)) {
        ++unschedulable_[profile * kNumPlugins + id];
        touched_[profile * kNumPlugins + id] = 1;
      }
  }
  pending_.insert_or_assign(key, p);
}

SchedulerMetrics MetricsRecorder::snapshot() const {
  SchedulerMetrics m;
  m.plugin_sample_percent = sample_percent_;
  m.version = BULKSCORE_VERSION;
  for (size_t i = 0; i < names_.size(); ++i) {
    SchedulerMetrics::Profile p;
    p.name = names_[i];
    p.attempts = profiles_[i].attempts;
    for (size_t r = 0; r < kNumAttemptResults; ++r)
      p.attempt_duration[r] = profiles_[i].attempt_duration[r].histogram(attempt_bounds_);
    m.profiles.push_back(std::move(p));
    for (size_t point = 0; point < kNumExtensionPoints; ++point)
      for (size_t code = 0; code < kNumCodes; ++code) {
        const auto& c = profiles_[i].extension_points[point * kNumCodes + code];
        if (!c.count) continue;
        SchedulerMetrics::ExtensionPointSeries s;
        s.profile = names_[i];
        s.extension_point = static_cast<ExtensionPoint>(point);
        s.status = static_cast<Code>(code);
        s.duration = c.histogram(extension_bounds_);
        m.extension_points.push_back(std::move(s));
      }
  }
  for (size_t id = 0; id < kNumPlugins; ++id)
    for (size_t point = 0; point < kNumExtensionPoints; ++point)
      for (size_t code = 0; code < kNumCodes; ++code) {
        const auto& c = plugins_[(id * kNumExtensionPoints + point) * kNumCodes + code];
        if (!c.count) continue;
        SchedulerMetrics::PluginSeries s;
        s.plugin = plugin_name(static_cast<uint8_t>(id));
        s.extension_point = static_cast<ExtensionPoint>(point);
        s.status = static_cast<Code>(code);
        s.duration = c.histogram(plugin_bounds_);
        m.plugins.push_back(std::move(s));
      }
  for (size_t i = 0; i < names_.size(); ++i)
    for (size_t id = 0; id < kNumPlugins; ++id)
      if (touched_[i * kNumPlugins + id])
        m.unschedulable_pods.push_back(
            {plugin_name(static_cast<uint8_t>(id)), names_[i], unschedulable_[i * kNumPlugins + id]});
  m.pending_unschedulable = pending_unschedulable_;
  m.pending_backoff = pending_backoff_;
  return m;
}

}  // namespace bulkscore
