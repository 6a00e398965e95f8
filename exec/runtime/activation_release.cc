// What a micro-batch keeps between its forward and backward, as sim::stage_memory counts it:
// after each layer's forward the runtime lets go of every tensor no backward reads — an input
// the layer does not save (model::SavedForBackward::inputs), a producer's output once its last
// consumer on this stage has run and neither the producer nor a consumer saves it — keeping only
// its shape, so the backward still knows the sizes. What the ops keep themselves (dropout masks,
// pooling indices: LayerOp::kept_bytes) is counted with the activations too.

#include <algorithm>

#include "exec/runtime/micro_batch_state.h"
#include "exec/runtime/trainer.h"

namespace splitbrain::exec {
namespace {

// The shape of a released tensor, without its values: reading them would be a bug, and an
// empty array fails loudly (null data) rather than silently.
TrackedArray shape_only(const std::vector<int64_t>& shape) { return std::make_shared<comm::LocalArray>(comm::LocalArray{shape, {}}); }

bool saves_input(const model::Layer& layer, size_t position) {
  const std::vector<int>& saved = layer.cost.saved.inputs;
  return std::find(saved.begin(), saved.end(), static_cast<int>(position)) != saved.end();
}

}  // namespace

void Trainer::release_after_forward(int v, MicroBatchState& state) {
  if (state.keeps_everything) return;
  const model::Model& net = *plan_.model;
  const model::Layer& layer = net.layer(v);
  auto& inputs = state.inputs[static_cast<size_t>(v)];
  for (size_t p = 0; p < inputs.size(); ++p) {
    if (!saves_input(layer, p)) inputs[p] = shape_only(inputs[p]->shape);
  }
  // A producer's output goes after its last consumer here; an output no layer of this stage
  // reads (it only went down the pipeline) goes right away.
  auto last_local_consumer = [&](int u) {
    int last = -1;
    for (int c : net.layer(u).consumers) {
      if (on_my_stage(c)) last = std::max(last, c);
    }
    return last;
  };
  auto release_output = [&](int u) {
    // Recompute runs the forward again from the stage's inputs: those stay.
    if (plan_.recompute_activations && net.layer(u).kind == model::OpKind::input) return;
    TrackedArray& output = state.outputs[static_cast<size_t>(u)];
    if (output && !net.layer(u).cost.saved.output) output = shape_only(output->shape);
  };
  for (int u : layer.inputs) {
    if (on_my_stage(u) && last_local_consumer(u) == v) release_output(u);
  }
  if (last_local_consumer(v) < 0) release_output(v);
}

void Trainer::count_kept_by_op(int v, int64_t kept_before) {
  const int64_t kept_after = ops_[static_cast<size_t>(v)]->kept_bytes();
  if (kept_after > kept_before) memory_.allocate(MemoryCategory::activations, kept_after - kept_before);
  if (kept_after < kept_before) memory_.release(MemoryCategory::activations, kept_before - kept_after);
}

}  // namespace splitbrain::exec
