#include "sim/search/planner_request.h"

#include <algorithm>

#include "plans/plan_builder.h"

namespace splitbrain::sim {

int64_t PlannerRequest::effective_memory_limit() const {
  return std::min(memory_limit_bytes, cluster.device.memory_capacity_bytes);
}

plans::Plan skeleton_plan(const PlannerRequest& request, const plans::Mesh& mesh) {
  plans::Plan plan = plans::build_plan(request.model, request.model_spec, mesh, request.global_batch,
                                       [](const model::Layer&) { return plans::LayerSharding{}; });
  plan.dtype = request.dtype;
  if (request.gradient_dtype != request.dtype) plan.gradient_dtype = request.gradient_dtype;
  plan.optimizer = request.optimizer;
  return plan;
}

}  // namespace splitbrain::sim
