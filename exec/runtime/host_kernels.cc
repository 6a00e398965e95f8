#include "exec/runtime/host_kernels.h"

#include <cmath>
#include <stdexcept>
#include <vector>

namespace splitbrain::exec {
namespace {

// What an op sees of an array: its elements, or nothing for a tensor already let go of (an op
// that reads one fails on null data).
ConstTensorSpan op_view(const DeviceArray& array) {
  if (dynamic_cast<const ReleasedArray*>(&array) != nullptr) return {};
  const std::vector<float>& values = HostArray::storage(array).values;
  return {values.data(), values.size()};
}

TensorSpan op_view(DeviceArray& array) {
  std::vector<float>& values = HostArray::storage(array).values;
  return {values.data(), values.size()};
}

}  // namespace

void HostKernels::forward(LayerOp& op, int micro, int64_t step, std::span<const DeviceArray* const> inputs,
                          std::span<const DeviceArray* const> params, DeviceArray& output) {
  std::vector<ConstTensorSpan> xs;
  for (const DeviceArray* input : inputs) xs.push_back(op_view(*input));
  std::vector<ConstTensorSpan> ws;
  for (const DeviceArray* param : params) ws.push_back(op_view(*param));
  op.forward(micro, step, xs, ws, op_view(output));
}

void HostKernels::backward(LayerOp& op, int micro, std::span<const DeviceArray* const> inputs,
                           const DeviceArray& output, const DeviceArray& output_grad,
                           std::span<const DeviceArray* const> params, std::span<DeviceArray* const> input_grads,
                           std::span<DeviceArray* const> param_grads) {
  std::vector<ConstTensorSpan> xs;
  for (const DeviceArray* input : inputs) xs.push_back(op_view(*input));
  std::vector<ConstTensorSpan> ws;
  for (const DeviceArray* param : params) ws.push_back(op_view(*param));
  std::vector<TensorSpan> dxs;
  for (DeviceArray* grad : input_grads) dxs.push_back(op_view(*grad));
  std::vector<TensorSpan> dws;
  for (DeviceArray* grad : param_grads) dws.push_back(op_view(*grad));
  op.backward(micro, xs, op_view(output), op_view(output_grad), ws, dxs, dws);
}

void HostKernels::update(const plans::OptimizerConfig& config, int64_t step, DeviceArray& parameter,
                         const DeviceArray& gradient, DeviceArray& first_moment, DeviceArray* second_moment) {
  std::vector<float>& p = HostArray::storage(parameter).values;
  const std::vector<float>& g = HostArray::storage(gradient).values;
  std::vector<float>& m = HostArray::storage(first_moment).values;
  if (g.size() != p.size() || m.size() != p.size())
    throw std::logic_error("HostDevice::update: arrays of different sizes");
  const auto lr = static_cast<float>(config.learning_rate);
  const auto decay = static_cast<float>(config.weight_decay);
  if (config.kind == plans::OptimizerKind::sgd_momentum) {
    const auto momentum = static_cast<float>(config.momentum);
    for (size_t k = 0; k < p.size(); ++k) {
      const float grad = g[k] + decay * p[k];
      m[k] = step == 1 ? grad : momentum * m[k] + grad;  // torch: the buffer starts at g
      p[k] -= lr * m[k];
    }
    return;
  }
  if (second_moment == nullptr) throw std::logic_error("HostDevice::update: Adam without its second moment");
  std::vector<float>& v = HostArray::storage(*second_moment).values;
  const double b1 = config.beta1;
  const double b2 = config.beta2;
  const double correction1 = 1.0 - std::pow(b1, static_cast<double>(step));
  const double correction2 = 1.0 - std::pow(b2, static_cast<double>(step));
  const double step_size = config.learning_rate / correction1;
  for (size_t k = 0; k < p.size(); ++k) {
    const float grad = g[k] + decay * p[k];
    m[k] = static_cast<float>(b1 * m[k] + (1 - b1) * grad);
    v[k] = static_cast<float>(b2 * v[k] + (1 - b2) * grad * grad);
    const double denominator = std::sqrt(v[k] / correction2) + config.epsilon;
    p[k] -= static_cast<float>(step_size * m[k] / denominator);
  }
}

}  // namespace splitbrain::exec
