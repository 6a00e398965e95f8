#include "tests/exec/equivalence/scrambled_kernels.h"

#include "tests/exec/equivalence/scrambled_array.h"

namespace splitbrain::equivalence {

using exec::DeviceArray;

void ScrambledKernels::forward(exec::LayerOp& op, int micro, int64_t step, std::span<const DeviceArray* const> inputs,
                               std::span<const DeviceArray* const> params, DeviceArray& output) {
  InUse use{&output};
  use.add_all(inputs).add_all(params);
  HostKernels::forward(op, micro, step, inputs, params, output);
}

void ScrambledKernels::backward(exec::LayerOp& op, int micro, std::span<const DeviceArray* const> inputs,
                                const DeviceArray& output, const DeviceArray& output_grad,
                                std::span<const DeviceArray* const> params, std::span<DeviceArray* const> input_grads,
                                std::span<DeviceArray* const> param_grads) {
  InUse use{&output, &output_grad};
  use.add_all(inputs).add_all(params).add_all(input_grads).add_all(param_grads);
  HostKernels::backward(op, micro, inputs, output, output_grad, params, input_grads, param_grads);
}

void ScrambledKernels::update(const plans::OptimizerConfig& config, int64_t step, DeviceArray& parameter,
                              const DeviceArray& gradient, DeviceArray& first_moment, DeviceArray* second_moment) {
  InUse use{&parameter, &gradient, &first_moment, second_moment};
  HostKernels::update(config, step, parameter, gradient, first_moment, second_moment);
}

}  // namespace splitbrain::equivalence
