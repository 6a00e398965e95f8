#pragma once
// Building a Plan in code: a model, a mesh, a batch and a rule that picks each layer's sharding.
// The planner builds its candidates this way; tests and benchmarks build their fixtures this way.
// The other fields keep Plan's defaults (one stage, one micro-batch, SGD with momentum...).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plans/plan.h"

namespace splitbrain::plans {

using ShardingRule = std::function<LayerSharding(const model::Layer&)>;

Plan build_plan(std::shared_ptr<const model::Model> model, std::string model_spec, Mesh mesh, int64_t global_batch,
                const ShardingRule& rule);
// The same for a zoo spec or model file (model::resolve_model).
Plan build_plan(const std::string& model_spec, Mesh mesh, int64_t global_batch, const ShardingRule& rule);

// The model chunk of each layer for an interleaved pipeline of `chunks` chunks (Plan::
// stage_of_layer): contiguous runs of layers, as equal in count as the model allows, cut where no
// tensor skips a chunk (a layer reads only its own chunk and the one before, which the
// interleaved schedule needs: chunk_hand_over_problem) and each has a layer that computes (not
// only input layers); nullopt when no such cut exists.
std::optional<std::vector<int>> even_chunks(const model::Model& model, int chunks);

}  // namespace splitbrain::plans
