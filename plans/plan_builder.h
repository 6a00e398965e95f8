#pragma once
// Building a Plan in code: a model, a mesh, a batch and a rule that picks each layer's sharding.
// The planner builds its candidates this way; tests and benchmarks build their fixtures this way.
// The other fields keep Plan's defaults (one stage, one micro-batch, SGD with momentum...).

#include <functional>
#include <memory>
#include <string>

#include "plans/plan.h"

namespace splitbrain::plans {

using ShardingRule = std::function<LayerSharding(const model::Layer&)>;

Plan build_plan(std::shared_ptr<const model::Model> model, std::string model_spec, Mesh mesh, int64_t global_batch,
                const ShardingRule& rule);
// The same for a zoo spec or model file (model::resolve_model).
Plan build_plan(const std::string& model_spec, Mesh mesh, int64_t global_batch, const ShardingRule& rule);

}  // namespace splitbrain::plans
