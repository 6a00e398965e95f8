#pragma once
// The one interface between the backend-neutral runtime and a backend's compute: a layer's
// forward and backward on LOCAL tensors that are already in the layouts the plan gives them.
// The runtime owns every tensor, moves them between layouts (plans/ redistribution over MPI),
// schedules passes, synchronises gradients and updates parameters; the ops (exec/ops) compute
// with a backend's kernels (exec/kernels: oneDNN in exec/cpu, CUDA in exec/cuda). So no
// orchestration is written twice.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "exec/comm/communicator.h"
#include "exec/comm/local_array.h"
#include "model/model.h"
#include "plans/op_sharding.h"

namespace splitbrain::exec {

// An array in the backend's memory as an op sees it: where its elements start and how many.
// Ops hand these to their kernels and never read or write elements themselves (on a GPU they
// are device memory); a tensor the runtime has already let go of comes empty.
using ConstTensorSpan = std::span<const float>;
using TensorSpan = std::span<float>;

// Everything an op needs to know about its piece of the layer, fixed for the whole run.
struct OpContext {
  const model::Model* model = nullptr;
  int layer = 0;
  const plans::LayerLayouts* layouts = nullptr;
  const plans::Mesh* mesh = nullptr;
  int rank = 0;
  std::vector<std::vector<int64_t>> input_shapes;      // local, per input
  std::vector<int64_t> output_shape;                   // local
  std::vector<int64_t> output_global_shape;            // batch dimension = the micro-batch
  std::vector<int64_t> output_offset;                  // where this rank's block starts (global)
  std::vector<std::vector<int64_t>> parameter_shapes;  // local, per parameter tensor
  // Splitting the contraction leaves partial sums: only the first rank of that group adds the
  // bias, so the sum over the group has it once.
  bool adds_bias = true;
  uint64_t seed = 0;
  int64_t global_batch = 1;                    // samples per optimizer step (the loss is their mean)
  comm::Communicator* communicator = nullptr;  // for collectives inside the op (batchnorm)
  // Labels of the micro-batch's samples [first, first + count) (the loss reads them).
  std::function<std::vector<int32_t>(int micro, int64_t first, int64_t count)> labels;
  // The model's input values of the same samples, as the data source gives them before their
  // upload: a token embedding checks its ids there, on the host, where they cost no wait.
  std::function<std::vector<float>(int micro, int64_t first, int64_t count)> input_values;
};

class LayerOp {
 public:
  virtual ~LayerOp() = default;
  // Computes `output` (OpContext's shapes) from the inputs; keeps what backward needs for
  // `micro`.
  virtual void forward(int micro, int64_t step, std::span<const ConstTensorSpan> inputs,
                       std::span<const ConstTensorSpan> params, TensorSpan output) = 0;
  // Writes the gradient of each input that needs one into input_grads (in the layer's
  // input-gradient layouts) and ADDS the parameter gradients into param_grads, so micro-batches
  // accumulate.
  virtual void backward(int micro, std::span<const ConstTensorSpan> inputs, ConstTensorSpan output,
                        ConstTensorSpan output_grad, std::span<const ConstTensorSpan> params,
                        std::span<const TensorSpan> input_grads, std::span<const TensorSpan> param_grads) = 0;
  // Drops what forward kept for `micro` (after its backward).
  virtual void release(int /*micro*/) {}
  // Training (dropout active, the default) or evaluation (dropout is the identity).
  virtual void set_training(bool /*training*/) {}
  // Bytes kept for backward beyond the tensors the runtime holds (masks, pooling indices).
  virtual int64_t kept_bytes() const { return 0; }
  // How many of those are fp32 elements of values the model counts in its own element type (the
  // loss's probabilities, attention's): a bf16 run counts them at 2 bytes (mixed_precision.h).
  virtual int64_t kept_model_type_elements() const { return 0; }
  // The loss op's share of the step's mean loss from `micro` on this rank: the sum of its rows'
  // losses divided by the number of rows in the whole step (0 for every other op). Its copy to the
  // host is queued when this is called (the step program's loss_out); the function returned gives
  // the value, waiting for the copy, so read at the step's end it waits for nothing.
  virtual std::function<double()> download_loss(int /*micro*/) {
    return [] { return 0.0; };
  }
};

using OpFactory = std::function<std::unique_ptr<LayerOp>(const OpContext&)>;

}  // namespace splitbrain::exec
