#include "exec/cuda/cuda_kernels.h"

#include <stdexcept>
#include <vector>

#include "exec/cuda/cuda_array.h"
#include "exec/cuda/optimizer_kernels.h"
#include "exec/cuda/tensor_batches.h"

namespace splitbrain::exec::cuda {
namespace {

float* memory(DeviceArray& array) { return CudaArray::data_of(array); }
const float* memory(const DeviceArray& array) { return CudaArray::data_of(array); }

// What an op sees of an array: its device memory, or nothing for a tensor already let go of.
ConstTensorSpan op_view(const DeviceArray& array) {
  if (dynamic_cast<const ReleasedArray*>(&array) != nullptr) return {};
  return {memory(array), static_cast<size_t>(array.elements())};
}

TensorSpan op_view(DeviceArray& array) { return {memory(array), static_cast<size_t>(array.elements())}; }

template <typename Array, typename View>
std::vector<View> op_views(std::span<Array* const> arrays) {
  std::vector<View> views;
  views.reserve(arrays.size());
  for (Array* array : arrays) views.push_back(op_view(*array));
  return views;
}

}  // namespace

std::optional<RecordedCalls> CudaKernels::recorded_calls() const {
  if (context_.kernel_graphs() == KernelGraphs::off) return std::nullopt;
  const KernelGraphCounts& counts = context_.kernel_graph_counts();
  return RecordedCalls{counts.recorded, counts.replayed, counts.first_calls + counts.unrecordable};
}

void CudaKernels::forward(LayerOp& op, int micro, int64_t step, std::span<const DeviceArray* const> inputs,
                          std::span<const DeviceArray* const> params, DeviceArray& output) {
  op.forward(micro, step, op_views<const DeviceArray, ConstTensorSpan>(inputs),
             op_views<const DeviceArray, ConstTensorSpan>(params), op_view(output));
}

void CudaKernels::backward(LayerOp& op, int micro, std::span<const DeviceArray* const> inputs,
                           const DeviceArray& output, const DeviceArray& output_grad,
                           std::span<const DeviceArray* const> params, std::span<DeviceArray* const> input_grads,
                           std::span<DeviceArray* const> param_grads) {
  op.backward(micro, op_views<const DeviceArray, ConstTensorSpan>(inputs), op_view(output), op_view(output_grad),
              op_views<const DeviceArray, ConstTensorSpan>(params), op_views<DeviceArray, TensorSpan>(input_grads),
              op_views<DeviceArray, TensorSpan>(param_grads));
}

void CudaKernels::update(const plans::OptimizerConfig& config, int64_t step, DeviceArray& parameter,
                         const DeviceArray& gradient, DeviceArray& first_moment, DeviceArray* second_moment) {
  if (gradient.elements() != parameter.elements() || first_moment.elements() != parameter.elements())
    throw std::logic_error("CudaKernels::update: arrays of different sizes");
  if (config.kind == plans::OptimizerKind::sgd_momentum) {
    sgd_momentum_update(context_.stream(), parameter.elements(), config.learning_rate, config.momentum,
                        config.weight_decay, step, memory(parameter), memory(gradient), memory(first_moment));
    return;
  }
  if (second_moment == nullptr) throw std::logic_error("CudaKernels::update: Adam without its second moment");
  adam_update(context_.stream(), parameter.elements(), config.learning_rate, config.beta1, config.beta2, config.epsilon,
              config.weight_decay, step, memory(parameter), memory(gradient), memory(first_moment),
              memory(*second_moment));
}

void CudaKernels::update_all(const plans::OptimizerConfig& config, int64_t step,
                             std::span<DeviceArray* const> parameters, std::span<const DeviceArray* const> gradients,
                             std::span<DeviceArray* const> first_moments,
                             std::span<DeviceArray* const> second_moments) {
  check_update_lists(parameters, gradients, first_moments, second_moments);
  const bool adam = config.kind != plans::OptimizerKind::sgd_momentum;
  if (adam && second_moments.size() != parameters.size())
    throw std::logic_error("CudaKernels::update_all: Adam without its second moments");
  std::vector<ChunkedTensor> tensors;
  for (size_t i = 0; i < parameters.size(); ++i) {
    tensors.push_back({parameters[i]->elements(), 0, memory(*parameters[i]), memory(*gradients[i]),
                       memory(*first_moments[i]), adam ? memory(*second_moments[i]) : nullptr});
  }
  for (const TensorBatch& batch : tensor_batches(tensors)) {
    if (adam) {
      adam_update_all(context_.stream(), batch, config.learning_rate, config.beta1, config.beta2, config.epsilon,
                      config.weight_decay, step);
    } else {
      sgd_momentum_update_all(context_.stream(), batch, config.learning_rate, config.momentum, config.weight_decay,
                              step);
    }
  }
}

}  // namespace splitbrain::exec::cuda
