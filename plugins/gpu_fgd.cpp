#include "plugins/gpu_fgd.hpp"

#include "plugins/prepare.hpp"

namespace bulkscore::plugins {

PrepareResult GpuFragmentation::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  PrepareResult r;
  st = State{};
  st.pod = gpu_pod_of(ctx);
  const auto& tasks = ctx.profile.gpu_fragmentation_args.typical_tasks;
  if (tasks.empty()) {
    r.score_error =
        "GpuFragmentation: no typical tasks to measure fragmentation against (set typicalTasks in its "
        "args; the CLI derives them from the pending pods)";
    return r;
  }
  std::vector<TaskShape> shapes;
  std::vector<int32_t> models;
  flatten_tasks(tasks, ctx.snapshot, shapes, models);
  st.shapes = arena.push(shapes);
  st.models = arena.push(models);
  return r;
}

}  // namespace bulkscore::plugins
