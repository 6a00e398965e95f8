#include "sim/search/context_parallel_search.h"

#include <algorithm>

#include "plans/op_sharding.h"
#include "plans/plan_error.h"
#include "plans/sequence_parallel.h"
#include "sim/search/searched_plans.h"

namespace splitbrain::sim {

int64_t attention_sequence_length(const model::Model& net) {
  for (const model::Layer& layer : net.layers()) {
    // Attention's output is [T, D] per sample.
    if (layer.kind == model::OpKind::self_attention && !layer.output_shape.empty()) return layer.output_shape.front();
  }
  return 0;
}

bool searches_context_parallelism(const model::Model& net) {
  const bool convolutional = std::any_of(net.layers().begin(), net.layers().end(),
                                         [](const model::Layer& l) { return l.kind == model::OpKind::conv2d; });
  return !convolutional && attention_sequence_length(net) > 0;
}

std::vector<int> context_parallel_sizes(const PlannerRequest& request) {
  std::vector<int> sizes;
  if (!searches_context_parallelism(*request.model)) return sizes;
  const int64_t sequence = attention_sequence_length(*request.model);
  if (sequence < kMinContextParallelSequence) return sizes;
  for (int size : divisors(request.devices)) {
    if (size < 2 || size > request.max_space_axis) continue;
    if (sequence % (2 * static_cast<int64_t>(size)) == 0) sizes.push_back(size);
  }
  return sizes;
}

std::vector<int> context_parallel_micro_batch_counts(int64_t batch, int stages, int data, int context) {
  std::vector<int> counts;
  if (data < 1 || context < 2 || batch % data != 0) return counts;
  const int64_t replica_batch = batch / data;
  for (int count : micro_batch_counts(batch, stages, data)) {
    if (stages > 1 && count > kMaxContextParallelMicroBatchesPerStage * stages) continue;
    if ((replica_batch / count) % context != 0) counts.push_back(count);
  }
  return counts;
}

std::vector<SearchMesh> context_parallel_meshes(const PlannerRequest& request, int max_model) {
  std::vector<SearchMesh> meshes;
  const std::vector<int> sizes = context_parallel_sizes(request);
  if (sizes.empty()) return meshes;
  for (int pipe : divisors(request.devices)) {
    if (pipe > request.max_pipeline_stages) break;
    const int rest = request.devices / pipe;
    for (int space : sizes) {
      if (rest % space != 0) continue;
      for (int model : divisors(rest / space)) {
        if (model > max_model) break;
        const int data = rest / space / model;
        if (context_parallel_micro_batch_counts(request.global_batch, pipe, data, space).empty()) continue;
        meshes.push_back(make_search_mesh(pipe, data, space, model));
      }
    }
  }
  return meshes;
}

std::optional<plans::Plan> sequence_parallel_twin(const plans::Plan& plan) {
  std::optional<plans::Plan> twin = plans::with_sequence_parallelism(plan);
  if (!twin) return twin;
  for (int v = 0; v < plan.model->size(); ++v) {
    const plans::LayerSharding& before = plan.layers[static_cast<size_t>(v)];
    plans::LayerSharding& after = twin->layers[static_cast<size_t>(v)];
    if (before.spatial.empty() || after.spatial == before.spatial) continue;
    // The axes the layer split its sequence over before, outermost, then the tensor-parallel ones.
    std::vector<int> spatial;
    for (int axis : before.spatial) {
      if (std::find(after.spatial.begin(), after.spatial.end(), axis) == after.spatial.end()) spatial.push_back(axis);
    }
    if (spatial.empty()) continue;
    spatial.insert(spatial.end(), after.spatial.begin(), after.spatial.end());
    after.spatial = std::move(spatial);
    std::erase_if(after.batch, [&](int axis) {
      return std::find(after.spatial.begin(), after.spatial.end(), axis) != after.spatial.end();
    });
    try {
      plans::layer_layouts(*plan.model, v, after, plan.mesh, plan.micro_batch_size(), plan.dtype);
    } catch (const plans::PlanError&) {
      return std::nullopt;  // the sequence does not divide over both groups
    }
  }
  return twin;
}

}  // namespace splitbrain::sim
