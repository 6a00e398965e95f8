#include "exec/runtime/device_kernels.h"

#include <fmt/format.h>

#include <stdexcept>

namespace splitbrain::exec {

void DeviceKernels::update_all(const plans::OptimizerConfig& config, int64_t step,
                               std::span<DeviceArray* const> parameters, std::span<const DeviceArray* const> gradients,
                               std::span<DeviceArray* const> first_moments,
                               std::span<DeviceArray* const> second_moments) {
  check_update_lists(parameters, gradients, first_moments, second_moments);
  for (size_t i = 0; i < parameters.size(); ++i) {
    update(config, step, *parameters[i], *gradients[i], *first_moments[i],
           second_moments.empty() ? nullptr : second_moments[i]);
  }
}

void check_update_lists(std::span<DeviceArray* const> parameters, std::span<const DeviceArray* const> gradients,
                        std::span<DeviceArray* const> first_moments, std::span<DeviceArray* const> second_moments) {
  const size_t n = parameters.size();
  if (gradients.size() != n || first_moments.size() != n || (!second_moments.empty() && second_moments.size() != n)) {
    throw std::logic_error(
        fmt::format("Device::update_all: {} parameters, {} gradients, {} first and {} second moments", n,
                    gradients.size(), first_moments.size(), second_moments.size()));
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t elements = parameters[i]->elements();
    if (gradients[i]->elements() != elements || first_moments[i]->elements() != elements ||
        (!second_moments.empty() && second_moments[i]->elements() != elements)) {
      throw std::logic_error(fmt::format("Device::update_all: parameter {}'s arrays differ in size", i));
    }
  }
}

}  // namespace splitbrain::exec
