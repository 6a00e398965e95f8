#include "plans/plan.h"

#include <algorithm>

namespace splitbrain::plans {

std::string_view optimizer_kind_name(OptimizerKind kind) {
  return kind == OptimizerKind::adam ? "adam" : "sgd_momentum";
}

std::string_view schedule_name(PipelineSchedule schedule) {
  switch (schedule) {
    case PipelineSchedule::gpipe:
      return "gpipe";
    case PipelineSchedule::one_f_one_b:
      return "1f1b";
    case PipelineSchedule::interleaved_one_f_one_b:
      return "interleaved_1f1b";
  }
  return "?";
}

int64_t optimizer_state_bytes_per_parameter(OptimizerKind kind) {
  // Optimizer state stays fp32 whatever the model dtype: mixed-precision training keeps its
  // moments in full precision, so the count does not depend on Plan::dtype.
  switch (kind) {
    case OptimizerKind::sgd_momentum:
      return 4;  // one momentum buffer
    case OptimizerKind::adam:
      return 8;  // first and second moments
  }
  return 0;
}

int Plan::stage_count() const { return pipe_axis < 0 ? 1 : mesh.axis(pipe_axis).size; }

bool Plan::regathers_input(const model::Layer& layer, size_t position, std::span<const Collective> collectives) const {
  if (!regather_saved_inputs || recompute_activations || collectives.empty()) return false;
  const std::vector<int>& saved = layer.cost.saved.inputs;
  if (std::find(saved.begin(), saved.end(), static_cast<int>(position)) == saved.end()) return false;
  return std::all_of(collectives.begin(), collectives.end(),
                     [](const Collective& c) { return c.kind == CollectiveKind::all_gather; });
}

}  // namespace splitbrain::plans
