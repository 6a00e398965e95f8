#pragma once
// HostKernels: HostDevice's compute (DeviceKernels, device_kernels.h): a layer's LayerOp run on
// the HostArrays' values, and the optimizer's update computed by the host with torch.optim's
// rules.

#include <span>

#include "exec/runtime/device_kernels.h"
#include "exec/runtime/host_array.h"

namespace splitbrain::exec {

class HostKernels : public DeviceKernels {
 public:
  void forward(LayerOp& op, int micro, int64_t step, std::span<const DeviceArray* const> inputs,
               std::span<const DeviceArray* const> params, DeviceArray& output) override;
  void backward(LayerOp& op, int micro, std::span<const DeviceArray* const> inputs, const DeviceArray& output,
                const DeviceArray& output_grad, std::span<const DeviceArray* const> params,
                std::span<DeviceArray* const> input_grads, std::span<DeviceArray* const> param_grads) override;
  void update(const plans::OptimizerConfig& config, int64_t step, DeviceArray& parameter, const DeviceArray& gradient,
              DeviceArray& first_moment, DeviceArray* second_moment) override;
};

}  // namespace splitbrain::exec
