#pragma once
// CudaKernels: CudaArrayDevice's compute (DeviceKernels, exec/runtime/device_kernels.h): a
// layer's LayerOp on the arrays' device memory, and the optimizer's update in the optimizer
// kernels, all queued on the context's compute stream.

#include <optional>
#include <span>

#include "exec/cuda/cuda_context.h"
#include "exec/runtime/device_kernels.h"
#include "plans/optimizer_launches.h"

namespace splitbrain::exec::cuda {

class CudaKernels final : public DeviceKernels {
 public:
  explicit CudaKernels(CudaContext& context) : context_(context) {}

  void forward(LayerOp& op, int micro, int64_t step, std::span<const DeviceArray* const> inputs,
               std::span<const DeviceArray* const> params, DeviceArray& output) override;
  void backward(LayerOp& op, int micro, std::span<const DeviceArray* const> inputs, const DeviceArray& output,
                const DeviceArray& output_grad, std::span<const DeviceArray* const> params,
                std::span<DeviceArray* const> input_grads, std::span<DeviceArray* const> param_grads) override;
  void update(const plans::OptimizerConfig& config, int64_t step, DeviceArray& parameter, const DeviceArray& gradient,
              DeviceArray& first_moment, DeviceArray* second_moment) override;
  // One kernel each (optimizer_kernels.h's many-tensor kernels), bit for bit update()'s.
  void update_all(const plans::OptimizerConfig& config, int64_t step, std::span<DeviceArray* const> parameters,
                  std::span<const DeviceArray* const> gradients, std::span<DeviceArray* const> first_moments,
                  std::span<DeviceArray* const> second_moments) override;
  int arrays_per_update_pass() const override { return plans::kTensorsPerOptimizerLaunch; }
  // The context's CUDA graph counts; none with its kernel graphs off.
  std::optional<RecordedCalls> recorded_calls() const override;

 private:
  CudaContext& context_;
};

}  // namespace splitbrain::exec::cuda
