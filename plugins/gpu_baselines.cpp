#include "plugins/gpu_baselines.hpp"

#include <algorithm>
#include <limits>

#include "host/input/devices.hpp"
#include "plugins/prepare.hpp"

namespace bulkscore::plugins {

PrepareResult prepare_gpu_baseline(const PrepareContext& ctx, GpuBaselineState& st) {
  st = GpuBaselineState{};
  st.pod = gpu_pod_of(ctx);
  st.max_cpu_milli = ctx.profile.gpu_score_args.max_cpu_milli;
  st.max_gpu_units = ctx.profile.gpu_score_args.max_gpu_units;
  PrepareResult r;
  if (st.max_cpu_milli <= 0 || st.max_gpu_units <= 0) {
    // The YAML args refuse these; a library caller may still set them.
    st.max_cpu_milli = st.max_gpu_units = 1;
    r.score_error = "GPU baselines: maxCpuMilli and maxGpuUnits must be positive";
  }
  return r;
}

namespace {

// Whether the node's free GPU units (G, summed over its devices) may lie
// outside [0, maxGpuUnits]: a node with more units than the normalizer,
// or a device whose pods hold more than it has.
bool free_units_may_leave(const Snapshot::AmountBounds& b, int64_t max_gpu_units) {
  return b.overdrawn || b.node_units > max_gpu_units;
}

// GpuDotProduct's score is 100 x (1 - (C/Mc x p/Mc + G/Mg x g/Mg) / 2)
// (C the node's free cpu, p the pod's, G and g the units): within
// [0, 100] when each product lies in [0, 1], as it does when both its
// factors do (correctly rounded divisions and products keep a value at
// most 1 at most 1). A product with a zero factor (p = 0, g = 0) is 0.
// Otherwise: p and g at most the normalizers; C at most the largest
// allocatable cpu (requests are not negative while the quantities are
// tame) and at least p on a node that NodeResourcesFit found feasible; G
// as free_units_may_leave says.
bool dot_product_may_leave_range(const PrepareContext& ctx, const GpuBaselineState& st) {
  const Snapshot::AmountBounds& b = ctx.snapshot.amount_bounds();
  const GpuPod& p = st.pod;
  if (p.cpu_milli != 0) {
    const bool fit_filters =
        std::find(ctx.profile.filter.begin(), ctx.profile.filter.end(), "NodeResourcesFit") != ctx.profile.filter.end();
    if (p.cpu_milli < 0 || p.cpu_milli > st.max_cpu_milli || b.cpu_allocatable > st.max_cpu_milli ||
        !ctx.snapshot.quantities_tame() || !fit_filters)
      return true;
  }
  if (p.count != 0) {
    // The units the pod takes on any node: a whole device is at most the
    // largest device (or the default a node without devices counts).
    const int64_t device = std::max<int64_t>(b.device_units, kDefaultDeviceUnits);
    const int64_t per_device = p.milli == kWholeDevice ? device : p.milli;
    if (p.count < 0 || per_device < 0 || int64_t(p.count) * per_device > st.max_gpu_units ||
        free_units_may_leave(b, st.max_gpu_units))
      return true;
  }
  return false;
}

}  // namespace

PrepareResult GpuBestFit::prepare(const PrepareContext& ctx, State& st, Arena&) {
  return prepare_gpu_baseline(ctx, st);
}
PrepareResult GpuDotProduct::prepare(const PrepareContext& ctx, State& st, Arena&) {
  PrepareResult r = prepare_gpu_baseline(ctx, st);
  r.check_score_range = r.score_error.empty() && dot_product_may_leave_range(ctx, st);
  return r;
}
PrepareResult GpuPacking::prepare(const PrepareContext& ctx, State& st, Arena&) {
  return prepare_gpu_baseline(ctx, st);
}
PrepareResult GpuClustering::prepare(const PrepareContext& ctx, State& st, Arena&) {
  PrepareResult r = prepare_gpu_baseline(ctx, st);
  // 25 x (Mg - G) / Mg plus 0 to 75: within [0, 100] while G lies in
  // [0, Mg] and 25 x Mg does not wrap.
  constexpr int64_t kLargestUnwrapped = std::numeric_limits<int64_t>::max() / 25;
  r.check_score_range =
      r.score_error.empty() && st.pod.count != 0 &&
      (st.max_gpu_units > kLargestUnwrapped || free_units_may_leave(ctx.snapshot.amount_bounds(), st.max_gpu_units));
  return r;
}

PrepareResult GpuRandomFit::prepare(const PrepareContext& ctx, State& st, Arena&) {
  st = State{};
  st.draw = mix_hash(ctx.profile.gpu_score_args.seed, ctx.pod.key());
  st.chosen = UINT32_MAX;
  return PrepareResult{};
}

}  // namespace bulkscore::plugins
