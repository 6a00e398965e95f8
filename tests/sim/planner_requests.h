#pragma once
// Planner requests the sim suites share: a zoo model on a preset cluster, and an LLM job as such
// jobs are run (bf16, Adam, on as many dgx-a100-80g nodes as the devices need; the planner tests
// that compare searches or bound their times share it).

#include <memory>
#include <string>

#include "model/zoo.h"
#include "sim/cluster_presets.h"
#include "sim/search/planner_request.h"

namespace splitbrain::sim::testing {

// `model_spec` (a zoo name) on `devices` devices of the preset `cluster`, `batch` samples a step;
// fp32 and the planner's default optimizer.
inline PlannerRequest zoo_request(const std::string& model_spec, int devices, int64_t batch,
                                  const std::string& cluster) {
  PlannerRequest request;
  request.model = std::make_shared<model::Model>(model::build_zoo_model(model_spec));
  request.model_spec = model_spec;
  request.devices = devices;
  request.global_batch = batch;
  request.cluster = cluster_preset(cluster);
  return request;
}

inline PlannerRequest large_model_request(const std::string& model_spec, int devices, int64_t batch) {
  PlannerRequest request =
      zoo_request(model_spec, devices, batch, "dgx-a100-80g:nodes=" + std::to_string((devices + 7) / 8));
  request.dtype = model::DType::bf16;
  request.optimizer.kind = plans::OptimizerKind::adam;
  return request;
}

}  // namespace splitbrain::sim::testing
