// CudaArrayDevice's memory, element ranges, layer passes and parameter update; its staged
// communication is in cuda_array_device_communication.cc.

#include "exec/cuda/cuda_array_device.h"

#include <stdexcept>
#include <utility>
#include <vector>

#include "exec/cuda/array_kernel.h"
#include "exec/cuda/cuda_check.h"
#include "exec/cuda/cuda_event_clock.h"
#include "exec/cuda/elementwise_kernels.h"
#include "exec/cuda/optimizer_kernels.h"
#include "exec/cuda/tensor_batches.h"

namespace splitbrain::exec::cuda {
namespace {

std::size_t float_bytes(int64_t elements) { return static_cast<std::size_t>(elements) * sizeof(float); }

}  // namespace

CudaArray::CudaArray(std::vector<int64_t> shape, const std::shared_ptr<DeviceMemoryPool>& pool)
    : DeviceArray(std::move(shape)), block_(pool, float_bytes(elements())) {}

namespace {

// Bytes in use on the current device, all processes and libraries together, as the driver counts.
int64_t driver_used_bytes() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  SB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return static_cast<int64_t>(total_bytes - free_bytes);
}

std::shared_ptr<CudaContext> checked(std::shared_ptr<CudaContext> context) {
  if (context == nullptr) throw std::invalid_argument("CudaArrayDevice: no CudaContext");
  return context;
}

}  // namespace

CudaArrayDevice::CudaArrayDevice(std::shared_ptr<CudaContext> context)
    : context_(checked(std::move(context))), driver_used_at_start_bytes_(driver_used_bytes()) {}

std::optional<DeviceMemoryUse> CudaArrayDevice::memory_use() const {
  const DeviceMemoryPool& pool = memory_pool();
  return DeviceMemoryUse{pool.peak_in_use_bytes(), pool.reserved_bytes(),
                         driver_used_bytes() - driver_used_at_start_bytes_};
}

std::optional<RecordedCalls> CudaArrayDevice::recorded_calls() const {
  if (context_->kernel_graphs() == KernelGraphs::off) return std::nullopt;
  const KernelGraphCounts& counts = context_->kernel_graph_counts();
  return RecordedCalls{counts.recorded, counts.replayed, counts.first_calls + counts.unrecordable};
}

std::unique_ptr<StepClock> CudaArrayDevice::make_step_clock() const {
  return std::make_unique<CudaEventClock>(context_);
}

float* CudaArrayDevice::memory(DeviceArray& array) {
  auto* cuda = dynamic_cast<CudaArray*>(&array);
  if (cuda == nullptr)
    throw std::logic_error("CudaArrayDevice: an array of another device, or a released tensor, is used");
  return cuda->data();
}

const float* CudaArrayDevice::memory(const DeviceArray& array) {
  const auto* cuda = dynamic_cast<const CudaArray*>(&array);
  if (cuda == nullptr)
    throw std::logic_error("CudaArrayDevice: an array of another device, or a released tensor, is read");
  return cuda->data();
}

std::unique_ptr<DeviceArray> CudaArrayDevice::allocate(std::vector<int64_t> shape, bool zeroed) {
  auto array = std::make_unique<CudaArray>(std::move(shape), context_->memory());
  if (zeroed && array->elements() > 0)
    SB_CUDA_CHECK(cudaMemsetAsync(array->data(), 0, float_bytes(array->elements()), context_->stream()));
  return array;
}

void CudaArrayDevice::upload_values(std::span<const float> host, DeviceArray& into) {
  if (host.empty()) return;
  SB_CUDA_CHECK(cudaMemcpyAsync(memory(into), host.data(), float_bytes(static_cast<int64_t>(host.size())),
                                cudaMemcpyHostToDevice, context_->stream()));
  // The host buffer may go as soon as this returns.
  context_->synchronize();
}

void CudaArrayDevice::upload_values_queued(std::span<const float> host, DeviceArray& into) {
  if (host.empty()) return;
  if (is_page_locked(host.data())) {
    SB_CUDA_CHECK(
        cudaMemcpyAsync(memory(into), host.data(), host.size_bytes(), cudaMemcpyHostToDevice, context_->stream()));
    return;
  }
  slots_.upload(host.data(), host.size_bytes(), memory(into), context_->stream());
}

void CudaArrayDevice::download_values(const DeviceArray& from, std::span<float> host) {
  if (host.empty()) return;
  SB_CUDA_CHECK(cudaMemcpyAsync(host.data(), memory(from), float_bytes(static_cast<int64_t>(host.size())),
                                cudaMemcpyDeviceToHost, context_->stream()));
  context_->synchronize();
}

void CudaArrayDevice::fill(DeviceArray& array, int64_t first, int64_t count, float value) {
  check_element_range(array, first, count, "fill");
  if (count == 0) return;
  float* start = memory(array) + first;
  if (value == 0.0f) {
    SB_CUDA_CHECK(cudaMemsetAsync(start, 0, float_bytes(count), context_->stream()));
  } else {
    fill_on_device(context_->stream(), count, value, start);
  }
}

void CudaArrayDevice::copy(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                           int64_t count) {
  check_element_range(from, from_first, count, "copy");
  check_element_range(into, into_first, count, "copy");
  if (count == 0) return;
  SB_CUDA_CHECK(cudaMemcpyAsync(memory(into) + into_first, memory(from) + from_first, float_bytes(count),
                                cudaMemcpyDeviceToDevice, context_->stream()));
}

void CudaArrayDevice::add(const DeviceArray& from, DeviceArray& into) {
  if (from.elements() != into.elements()) throw std::logic_error("CudaArrayDevice::add: arrays of different sizes");
  const float one = 1.0f;
  SB_CUBLAS_CHECK(cublasSaxpy_64(context_->cublas(), from.elements(), &one, memory(from), 1, memory(into), 1));
}

void CudaArrayDevice::copy_block(const DeviceArray& from, std::span<const int64_t> offset, DeviceArray& block) {
  check_block_inside(block, from, offset, "copy_block");
  const int64_t rows = block.shape()[0], columns = block.shape()[1], whole_columns = from.shape()[1];
  if (rows == 0 || columns == 0) return;
  SB_CUDA_CHECK(cudaMemcpy2DAsync(memory(block), float_bytes(columns),
                                  memory(from) + offset[0] * whole_columns + offset[1], float_bytes(whole_columns),
                                  float_bytes(columns), static_cast<std::size_t>(rows), cudaMemcpyDeviceToDevice,
                                  context_->stream()));
}

void CudaArrayDevice::copy_rows(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                                const kernels::RowCopy& rows) {
  check_rows_inside(from, from_first, into, into_first, rows);
  queue_row_copy(context_->stream(), memory(from) + from_first, memory(into) + into_first, rows);
}

void CudaArrayDevice::add_block(const DeviceArray& block, DeviceArray& into, std::span<const int64_t> offset) {
  check_block_inside(block, into, offset, "add_block");
  const int64_t rows = block.shape()[0], columns = block.shape()[1], whole_columns = into.shape()[1];
  if (rows == 0 || columns == 0) return;
  // Row-major [rows, columns] with leading dimension ld is column-major [columns, rows]: C = A + C
  // with C the block's window of `into` (cublasSgeam allows C to be B, same leading dimension).
  float* window = memory(into) + offset[0] * whole_columns + offset[1];
  const float one = 1.0f;
  SB_CUBLAS_CHECK(cublasSgeam(context_->cublas(), CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(columns),
                              static_cast<int>(rows), &one, memory(block), static_cast<int>(columns), &one, window,
                              static_cast<int>(whole_columns), window, static_cast<int>(whole_columns)));
}

namespace {

// What an op sees of an array: its device memory, or nothing for a tensor already let go of.
ConstTensorSpan op_view(const DeviceArray& array) {
  if (dynamic_cast<const ReleasedArray*>(&array) != nullptr) return {};
  return {CudaArrayDevice::memory(array), static_cast<size_t>(array.elements())};
}

TensorSpan op_view(DeviceArray& array) {
  return {CudaArrayDevice::memory(array), static_cast<size_t>(array.elements())};
}

template <typename Array, typename View>
std::vector<View> op_views(std::span<Array* const> arrays) {
  std::vector<View> views;
  views.reserve(arrays.size());
  for (Array* array : arrays) views.push_back(op_view(*array));
  return views;
}

}  // namespace

void CudaArrayDevice::forward(LayerOp& op, int micro, int64_t step, std::span<const DeviceArray* const> inputs,
                              std::span<const DeviceArray* const> params, DeviceArray& output) {
  op.forward(micro, step, op_views<const DeviceArray, ConstTensorSpan>(inputs),
             op_views<const DeviceArray, ConstTensorSpan>(params), op_view(output));
}

void CudaArrayDevice::backward(LayerOp& op, int micro, std::span<const DeviceArray* const> inputs,
                               const DeviceArray& output, const DeviceArray& output_grad,
                               std::span<const DeviceArray* const> params, std::span<DeviceArray* const> input_grads,
                               std::span<DeviceArray* const> param_grads) {
  op.backward(micro, op_views<const DeviceArray, ConstTensorSpan>(inputs), op_view(output), op_view(output_grad),
              op_views<const DeviceArray, ConstTensorSpan>(params), op_views<DeviceArray, TensorSpan>(input_grads),
              op_views<DeviceArray, TensorSpan>(param_grads));
}

void CudaArrayDevice::update(const plans::OptimizerConfig& config, int64_t step, DeviceArray& parameter,
                             const DeviceArray& gradient, DeviceArray& first_moment, DeviceArray* second_moment) {
  if (gradient.elements() != parameter.elements() || first_moment.elements() != parameter.elements())
    throw std::logic_error("CudaArrayDevice::update: arrays of different sizes");
  if (config.kind == plans::OptimizerKind::sgd_momentum) {
    sgd_momentum_update(context_->stream(), parameter.elements(), config.learning_rate, config.momentum,
                        config.weight_decay, step, memory(parameter), memory(gradient), memory(first_moment));
    return;
  }
  if (second_moment == nullptr) throw std::logic_error("CudaArrayDevice::update: Adam without its second moment");
  adam_update(context_->stream(), parameter.elements(), config.learning_rate, config.beta1, config.beta2,
              config.epsilon, config.weight_decay, step, memory(parameter), memory(gradient), memory(first_moment),
              memory(*second_moment));
}

void CudaArrayDevice::update_all(const plans::OptimizerConfig& config, int64_t step,
                                 std::span<DeviceArray* const> parameters,
                                 std::span<const DeviceArray* const> gradients,
                                 std::span<DeviceArray* const> first_moments,
                                 std::span<DeviceArray* const> second_moments) {
  check_update_lists(parameters, gradients, first_moments, second_moments);
  const bool adam = config.kind != plans::OptimizerKind::sgd_momentum;
  if (adam && second_moments.size() != parameters.size())
    throw std::logic_error("CudaArrayDevice::update_all: Adam without its second moments");
  std::vector<ChunkedTensor> tensors;
  for (size_t i = 0; i < parameters.size(); ++i) {
    tensors.push_back({parameters[i]->elements(), 0, memory(*parameters[i]), memory(*gradients[i]),
                       memory(*first_moments[i]), adam ? memory(*second_moments[i]) : nullptr});
  }
  for (const TensorBatch& batch : tensor_batches(tensors)) {
    if (adam) {
      adam_update_all(context_->stream(), batch, config.learning_rate, config.beta1, config.beta2, config.epsilon,
                      config.weight_decay, step);
    } else {
      sgd_momentum_update_all(context_->stream(), batch, config.learning_rate, config.momentum, config.weight_decay,
                              step);
    }
  }
}

void CudaArrayDevice::zero_all(std::span<DeviceArray* const> arrays) {
  std::vector<ChunkedTensor> tensors;
  for (DeviceArray* array : arrays)
    tensors.push_back({array->elements(), 0, memory(*array), nullptr, nullptr, nullptr});
  for (const TensorBatch& batch : tensor_batches(tensors)) cuda::zero_all(context_->stream(), batch);
}

}  // namespace splitbrain::exec::cuda
