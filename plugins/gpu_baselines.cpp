#include "plugins/gpu_baselines.hpp"

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

PrepareResult GpuBestFit::prepare(const PrepareContext& ctx, State& st, Arena&) {
  return prepare_gpu_baseline(ctx, st);
}
PrepareResult GpuDotProduct::prepare(const PrepareContext& ctx, State& st, Arena&) {
  return prepare_gpu_baseline(ctx, st);
}
PrepareResult GpuPacking::prepare(const PrepareContext& ctx, State& st, Arena&) {
  return prepare_gpu_baseline(ctx, st);
}
PrepareResult GpuClustering::prepare(const PrepareContext& ctx, State& st, Arena&) {
  return prepare_gpu_baseline(ctx, st);
}

PrepareResult GpuRandomFit::prepare(const PrepareContext& ctx, State& st, Arena&) {
  st = State{};
  st.draw = mix_hash(ctx.profile.gpu_score_args.seed, ctx.pod.key());
  st.chosen = UINT32_MAX;
  return PrepareResult{};
}

}  // namespace bulkscore::plugins
