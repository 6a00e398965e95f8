// HostDevice's memory, element ranges, layer passes and parameter update; its communication is
// in host_device_communication.cc.

#include "exec/runtime/host_device.h"

#include "exec/kernels/array_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace splitbrain::exec {
HostArray::HostArray(std::vector<int64_t> shape, bool zeroed) : DeviceArray(shape) {
  array.shape = std::move(shape);
  if (zeroed) array.values.assign(static_cast<size_t>(elements()), 0.0f);
}

comm::LocalArray& HostDevice::storage(DeviceArray& array) {
  auto* host = dynamic_cast<HostArray*>(&array);
  if (host == nullptr) throw std::logic_error("HostDevice: an array of another device, or a released tensor, is used");
  if (host->array.values.empty() && host->elements() > 0) {
    host->array.values.assign(static_cast<size_t>(host->elements()), std::numeric_limits<float>::quiet_NaN());
  }
  return host->array;
}

const comm::LocalArray& HostDevice::storage(const DeviceArray& array) {
  const auto* host = dynamic_cast<const HostArray*>(&array);
  if (host == nullptr) throw std::logic_error("HostDevice: an array of another device, or a released tensor, is read");
  if (host->array.values.empty() && host->elements() > 0) {
    throw std::logic_error("HostDevice: an array allocated without zeroing is read before anything wrote it");
  }
  return host->array;
}

std::unique_ptr<DeviceArray> HostDevice::allocate(std::vector<int64_t> shape, bool zeroed) {
  return std::make_unique<HostArray>(std::move(shape), zeroed);
}

void HostDevice::upload_values(std::span<const float> host, DeviceArray& into) {
  comm::LocalArray& array = storage(into);
  std::copy(host.begin(), host.end(), array.values.begin());
}

void HostDevice::download_values(const DeviceArray& from, std::span<float> host) {
  const comm::LocalArray& array = storage(from);
  std::copy(array.values.begin(), array.values.end(), host.begin());
}

void HostDevice::fill(DeviceArray& array, int64_t first, int64_t count, float value) {
  check_element_range(array, first, count, "fill");
  std::fill_n(storage(array).values.begin() + first, count, value);
}

void HostDevice::copy(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                      int64_t count) {
  check_element_range(from, from_first, count, "copy");
  check_element_range(into, into_first, count, "copy");
  std::copy_n(storage(from).values.begin() + from_first, count, storage(into).values.begin() + into_first);
}

void HostDevice::add(const DeviceArray& from, DeviceArray& into) {
  if (from.elements() != into.elements()) throw std::logic_error("HostDevice::add: arrays of different sizes");
  const std::vector<float>& source = storage(from).values;
  std::vector<float>& target = storage(into).values;
  for (size_t i = 0; i < source.size(); ++i) target[i] += source[i];
}

namespace {

// Calls visit(row of `block`, row of `whole`) for each row of a 2-d block at `offset` of `whole`.
template <typename Visit>
void for_block_rows(const DeviceArray& block, const DeviceArray& whole, std::span<const int64_t> offset,
                    Visit&& visit) {
  check_block_inside(block, whole, offset, "copy_block/add_block");
  const auto& b = block.shape();
  const auto& w = whole.shape();
  for (int64_t r = 0; r < b[0]; ++r) visit(r * b[1], (offset[0] + r) * w[1] + offset[1], b[1]);
}

}  // namespace

void HostDevice::copy_block(const DeviceArray& from, std::span<const int64_t> offset, DeviceArray& block) {
  const std::vector<float>& source = storage(from).values;
  std::vector<float>& target = storage(block).values;
  for_block_rows(block, from, offset, [&](int64_t in_block, int64_t in_whole, int64_t columns) {
    std::copy_n(source.begin() + in_whole, columns, target.begin() + in_block);
  });
}

void HostDevice::add_block(const DeviceArray& block, DeviceArray& into, std::span<const int64_t> offset) {
  const std::vector<float>& source = storage(block).values;
  std::vector<float>& target = storage(into).values;
  for_block_rows(block, into, offset, [&](int64_t in_block, int64_t in_whole, int64_t columns) {
    for (int64_t c = 0; c < columns; ++c)
      target[static_cast<size_t>(in_whole + c)] += source[static_cast<size_t>(in_block + c)];
  });
}

void HostDevice::copy_rows(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                           const kernels::RowCopy& rows) {
  check_rows_inside(from, from_first, into, into_first, rows);
  // The ops' host kernel does it (it keeps no state).
  static const std::unique_ptr<kernels::ArrayKernel> host_kernel = kernels::make_host_array_kernel();
  host_kernel->copy_rows(storage(from).values.data() + from_first, storage(into).values.data() + into_first, rows);
}

void HostDevice::pack(std::span<const DeviceArray* const> parts, DeviceArray& flat) {
  auto& host = dynamic_cast<HostArray&>(flat).array.values;
  const auto size = static_cast<size_t>(flat.elements());
  // Appended part by part, so the storage is written once (no zero-fill first: a bucket can be
  // the model's size).
  host.clear();
  host.reserve(size);
  for (const DeviceArray* part : parts) {
    const std::vector<float>& values = storage(*part).values;
    if (size - host.size() < values.size()) {
      throw std::logic_error(fmt::format("pack: {} elements do not fit the flat buffer", values.size()));
    }
    host.insert(host.end(), values.begin(), values.end());
  }
  host.resize(size, 0.0f);
}

namespace {

// What an op sees of an array: its elements, or nothing for a tensor already let go of (an op
// that reads one fails on null data).
ConstTensorSpan op_view(const DeviceArray& array) {
  if (dynamic_cast<const ReleasedArray*>(&array) != nullptr) return {};
  const std::vector<float>& values = HostDevice::storage(array).values;
  return {values.data(), values.size()};
}

TensorSpan op_view(DeviceArray& array) {
  std::vector<float>& values = HostDevice::storage(array).values;
  return {values.data(), values.size()};
}

}  // namespace

void HostDevice::forward(LayerOp& op, int micro, int64_t step, std::span<const DeviceArray* const> inputs,
                         std::span<const DeviceArray* const> params, DeviceArray& output) {
  std::vector<ConstTensorSpan> xs;
  for (const DeviceArray* input : inputs) xs.push_back(op_view(*input));
  std::vector<ConstTensorSpan> ws;
  for (const DeviceArray* param : params) ws.push_back(op_view(*param));
  op.forward(micro, step, xs, ws, op_view(output));
}

void HostDevice::backward(LayerOp& op, int micro, std::span<const DeviceArray* const> inputs, const DeviceArray& output,
                          const DeviceArray& output_grad, std::span<const DeviceArray* const> params,
                          std::span<DeviceArray* const> input_grads, std::span<DeviceArray* const> param_grads) {
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

void HostDevice::update(const plans::OptimizerConfig& config, int64_t step, DeviceArray& parameter,
                        const DeviceArray& gradient, DeviceArray& first_moment, DeviceArray* second_moment) {
  std::vector<float>& p = storage(parameter).values;
  const std::vector<float>& g = storage(gradient).values;
  std::vector<float>& m = storage(first_moment).values;
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
  std::vector<float>& v = storage(*second_moment).values;
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
