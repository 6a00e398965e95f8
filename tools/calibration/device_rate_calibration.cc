#include "tools/calibration/device_rate_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <memory_resource>
#include <utility>
#include <vector>

#include "exec/runtime/device.h"
#include "tools/calibration/calibration_timing.h"
#include "tools/calibration/line_fit.h"

namespace splitbrain::tools {
namespace {

constexpr int kRuns = 7;  // per size; the median counts

// The median seconds of `work` over kRuns runs after one untimed, each on the backend's clock.
double median_seconds(exec::StepClock& clock, const std::function<void()>& work) {
  work();
  std::vector<double> seconds;
  for (int run = 0; run < kRuns; ++run) {
    clock.start();
    work();
    clock.mark();
    seconds.push_back(clock.seconds_since_start().at(0));
  }
  return upper_median(std::move(seconds));
}

void measure_host_link(BackendKernels& kernels, bool print, sim::Device& device) {
  exec::DeviceMemory& memory = kernels.device->memory();
  exec::HostLink& link = kernels.device->host_link();
  // From the memory a run reads its input batches into (page-locked on a GPU).
  const std::shared_ptr<std::pmr::memory_resource> host_memory = link.upload_memory();
  // From a convolution's single-sample input to a large batch's (16 MiB: batch 1024 of 32x32x3).
  const std::vector<int64_t> sizes_bytes = {64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20};
  std::vector<double> bytes, seconds;
  for (const int64_t size : sizes_bytes) {
    const int64_t elements = size / static_cast<int64_t>(sizeof(float));
    const std::pmr::vector<float> host(static_cast<size_t>(elements), 0.5f, host_memory.get());
    const auto array = memory.allocate({elements}, false);
    const double s = median_seconds(*kernels.clock, [&] { link.upload(host, *array); });
    bytes.push_back(static_cast<double>(size));
    seconds.push_back(s);
    if (print) std::cout << fmt::format("[calibrate] host -> device upload {:>9} B: {:8.3f} ms\n", size, s * 1e3);
  }
  // Relative errors weigh alike (weights 1 / seconds^2): the latency comes from the small uploads,
  // which the large ones would otherwise drown.
  std::vector<double> weights;
  for (const double s : seconds) weights.push_back(1.0 / (s * s));
  const Line line = fit_line(bytes, seconds, weights);
  device.host_transfer_latency_seconds = std::max(0.0, line.intercept);
  device.host_to_device_bytes_per_second = 1.0 / line.slope;
}

void measure_update(BackendKernels& kernels, bool print, sim::Device& device) {
  exec::DeviceMemory& memory = kernels.device->memory();
  exec::DeviceKernels& device_kernels = kernels.device->kernels();
  const plans::OptimizerConfig sgd{};  // SGD with momentum
  std::vector<double> bytes, rates;
  for (const int64_t elements : {int64_t{1} << 18, int64_t{1} << 20, int64_t{1} << 22, int64_t{1} << 24}) {
    const auto parameters = memory.allocate({elements}, true);
    const auto gradients = memory.allocate({elements}, true);
    const auto momentum = memory.allocate({elements}, true);
    int64_t step = 1;
    const double s = median_seconds(
        *kernels.clock, [&] { device_kernels.update(sgd, ++step, *parameters, *gradients, *momentum, nullptr); });
    // As sim::optimizer_step_seconds counts them: parameter, gradient and momentum, each read
    // and written.
    const double moved = 2.0 * 3.0 * sizeof(float) * static_cast<double>(elements);
    bytes.push_back(moved);
    rates.push_back(moved / s);
    if (print) {
      std::cout << fmt::format("[calibrate] sgd-momentum update of {:>9} parameters: {:8.3f} ms, {:7.1f} GB/s\n",
                               elements, s * 1e3, moved / s / 1e9);
    }
  }
  const SaturatingRate rate = fit_saturating_rate(bytes, rates);
  device.memory_bandwidth_bytes_per_second = rate.peak;
  device.memory_efficiency = {1.0, rate.half_size};
  // The curve is one kernel's; a step's update takes this many parameters per kernel.
  device.optimizer_tensors_per_kernel = device_kernels.arrays_per_update_pass();
}

// The host's seconds to queue one small kernel as the runtime queues those beside a layer's: an
// array allocated zero-filled through the Device (the pool's allocation and a memset), the step
// clock's mark, the array released; behind the clock's lead, so the GPU is busy. The median over
// runs of 16 back to back.
void measure_launch(BackendKernels& kernels, bool print, sim::Device& device) {
  exec::DeviceMemory& memory = kernels.device->memory();
  constexpr int kLaunches = 16;
  std::vector<double> seconds;
  for (int run = 0; run < kRuns; ++run) {
    kernels.clock->start();
    const auto start = std::chrono::steady_clock::now();
    for (int launch = 0; launch < kLaunches; ++launch) {
      const auto array = memory.allocate({1024}, true);
      kernels.clock->mark();
    }
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / kLaunches);
    kernels.clock->seconds_since_start();
  }
  device.launch_host_seconds = upper_median(std::move(seconds));
  if (print)
    std::cout << fmt::format("[calibrate] host queues a kernel in {:.1f} us\n", device.launch_host_seconds * 1e6);
}

}  // namespace

void measure_device_rates(BackendKernels& kernels, bool print, sim::Device& device) {
  measure_host_link(kernels, print, device);
  measure_update(kernels, print, device);
  measure_launch(kernels, print, device);
  if (print) {
    std::cout << fmt::format(
        "[calibrate] host link: {:.1f} us + bytes / {:.2f} GB/s; optimizer update: {:.1f} GB/s (half of it at {:.1f} "
        "MB)\n",
        device.host_transfer_latency_seconds * 1e6, device.host_to_device_bytes_per_second / 1e9,
        device.memory_bandwidth_bytes_per_second / 1e9, device.memory_efficiency.half_efficiency_size / 1e6);
  }
}

}  // namespace splitbrain::tools
