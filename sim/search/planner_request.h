#pragma once
// What the user asks the planner: a model, a batch, a cluster, a number of devices.

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "model/dtype.h"
#include "model/model.h"
#include "plans/plan.h"
#include "sim/cluster.h"

namespace splitbrain::sim {

struct PlannerRequest {
  std::shared_ptr<const model::Model> model;
  std::string model_spec;  // as the user named it; written into emitted plans
  int devices = 1;
  int64_t global_batch = 1;
  model::DType dtype = model::DType::fp32;
  // The element type every plan accumulates and reduces gradients in, when not `dtype` (fp32
  // main gradients under bf16, as Megatron-LM keeps them for accuracy): a constraint of the job,
  // not a choice the search weighs, since it only adds bytes and memory.
  std::optional<model::DType> gradient_dtype;
  Cluster cluster;
  int64_t memory_limit_bytes = std::numeric_limits<int64_t>::max();  // also capped by the device
  plans::OptimizerConfig optimizer;
  int max_pipeline_stages = 64;
  int max_model_axis = 64;
  int max_space_axis = 8;
  // Time every candidate and every ZeRO/recompute variant in full, as the search did before it
  // learnt to skip what provably cannot change its answer: the reference the default search must
  // equal (tests, tools/bench/planner-speed.sh), many times slower on large models.
  bool exhaustive = false;
  // Threads the overall search spreads the meshes over (sim/search/mesh_search.h); 0: one per
  // core. The answer is the same for any count.
  int search_threads = 0;

  // The memory a rank may use: the smaller of the device's capacity and the user's limit.
  int64_t effective_memory_limit() const;
};

// A plan skeleton for a mesh: model, batch, dtype and optimizer filled in, every layer
// replicated, one stage; the families and the search fill in the rest.
plans::Plan skeleton_plan(const PlannerRequest& request, const plans::Mesh& mesh);

}  // namespace splitbrain::sim
