// Activation recompute in the Trainer, as sim::stage_memory counts it: between a micro-batch's
// forward and its backward a stage keeps only its inputs (the outputs of its input layers and
// what it received from earlier stages); right before the backward the forward runs again from
// those and keeps everything, so one micro-batch's full set exists at a time. The second forward
// repeats the redistributions and collectives inside the layers (and ZeRO 3's gathers), which the
// simulator counts as recompute; it sends nothing down the pipeline again. Dropout masks and
// batch statistics are functions of the step and the samples, so it reproduces the first exactly.

#include "exec/runtime/micro_batch_state.h"
#include "exec/runtime/trainer.h"

namespace splitbrain::exec {

void Trainer::drop_recomputable(int micro, MicroBatchState& state) {
  const model::Model& net = *plan_.model;
  for (int v = 0; v < net.size(); ++v) {
    if (!on_my_stage(v)) continue;
    const auto i = static_cast<size_t>(v);
    state.inputs[i].clear();
    if (net.layer(v).kind == model::OpKind::input) continue;  // a stage input: kept
    state.outputs[i].reset();
    const int64_t kept = ops_[i]->kept_bytes();
    ops_[i]->release(micro);  // what the op kept for backward (masks, indices)
    count_kept_by_op(v, kept);
  }
}

void Trainer::recompute_forward(int micro, MicroBatchState& state, StepSeconds& seconds) {
  // The recomputed forward is part of the backward pass: timed there.
  StepSeconds recompute;
  state.recomputing = true;
  forward(micro, state, recompute);
  state.recomputing = false;
  seconds.compute_backward += recompute.compute_forward;
  seconds.communication += recompute.communication;
}

}  // namespace splitbrain::exec
