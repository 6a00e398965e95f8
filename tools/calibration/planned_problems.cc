#include "tools/calibration/planned_problems.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "model/model_json.h"
#include "plans/plan_error.h"
#include "sim/search/planner.h"

namespace splitbrain::tools {

// Which micro-batch count wins depends on the calibration itself, so a calibration that measured
// only the first pick's kernels would leave a later plan on the fitted curves
// (seen: fashion-vgg's 2-stage pipeline planned at 8 micro-batches on one calibration and 4 on
// the next, its step then predicted 44% over).
std::vector<int64_t> micro_batches_to_measure(const plans::Plan& plan, const plans::CompiledPlan& compiled) {
  std::vector<int64_t> micro_batches{compiled.micro_batch};
  if (plan.stage_count() == 1) return micro_batches;
  for (const int count : sim::micro_batch_options(plan.global_batch, plan.stage_count())) {
    const int64_t micro_batch = plan.global_batch / count;
    if (std::find(micro_batches.begin(), micro_batches.end(), micro_batch) != micro_batches.end()) continue;
    // A micro-batch the plan's layouts cannot split (one sample over two data-parallel ranks) is
    // one the planner cannot pick either: the same compile refuses it there.
    plans::Plan variant = plan;
    variant.micro_batches = count;
    try {
      plans::compile_plan(variant);
    } catch (const plans::PlanError&) {
      continue;
    }
    micro_batches.push_back(micro_batch);
  }
  return micro_batches;
}

std::vector<PlannedProblem> planned_kernel_problems(const std::vector<PlanningTarget>& targets,
                                                    const sim::Cluster& cluster) {
  std::vector<PlannedProblem> problems;
  for (const PlanningTarget& target : targets) {
    sim::PlannerRequest request;
    request.model = std::make_shared<model::Model>(model::resolve_model(target.model_spec));
    request.model_spec = target.model_spec;
    request.cluster = cluster;
    request.devices = target.devices;
    request.global_batch = target.global_batch;
    sim::validate_request(request);
    for (const sim::PricedPlan& priced : sim::plan_training(request).plans) {
      const plans::CompiledPlan compiled = plans::compile_plan(priced.plan);
      for (const int64_t micro_batch : micro_batches_to_measure(priced.plan, compiled)) {
        for (size_t i = 0; i < compiled.layers.size(); ++i) {
          const std::optional<sim::KernelProblem> problem = sim::kernel_problem(
              *request.model, static_cast<int>(i), compiled.layers[i].layouts, priced.plan.mesh, micro_batch);
          if (!problem) continue;
          // Alone as well: a rank of a plan that often waits leaves its neighbour the whole core
          // (the simulator interpolates between the two, sim/compute_cost.h).
          for (int busy : {sim::busy_ranks_per_node(cluster, priced.plan.mesh), 1}) {
            const PlannedProblem planned{*problem, busy};
            if (std::find(problems.begin(), problems.end(), planned) == problems.end()) problems.push_back(planned);
          }
        }
      }
    }
  }
  return problems;
}

std::vector<PlannedProblem> unmeasured(const std::vector<PlannedProblem>& problems, const sim::Device& device) {
  std::vector<PlannedProblem> left;
  for (const PlannedProblem& planned : problems) {
    if (!device.measured_kernels.contains(sim::kernel_key(planned.problem, planned.busy_ranks)))
      left.push_back(planned);
  }
  return left;
}

}  // namespace splitbrain::tools
