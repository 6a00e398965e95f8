#pragma once
// The scrambled test device's compute (scrambled_device.h): HostKernels' passes and update, with
// every array they are handed plain for their duration.

#include <span>

#include "exec/runtime/host_kernels.h"

namespace splitbrain::equivalence {

class ScrambledKernels final : public exec::HostKernels {
 public:
  void forward(exec::LayerOp& op, int micro, int64_t step, std::span<const exec::DeviceArray* const> inputs,
               std::span<const exec::DeviceArray* const> params, exec::DeviceArray& output) override;
  void backward(exec::LayerOp& op, int micro, std::span<const exec::DeviceArray* const> inputs,
                const exec::DeviceArray& output, const exec::DeviceArray& output_grad,
                std::span<const exec::DeviceArray* const> params, std::span<exec::DeviceArray* const> input_grads,
                std::span<exec::DeviceArray* const> param_grads) override;
  void update(const plans::OptimizerConfig& config, int64_t step, exec::DeviceArray& parameter,
              const exec::DeviceArray& gradient, exec::DeviceArray& first_moment,
              exec::DeviceArray* second_moment) override;
};

}  // namespace splitbrain::equivalence
