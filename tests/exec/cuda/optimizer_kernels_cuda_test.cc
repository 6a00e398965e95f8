// The device optimizer updates against exec::Optimizer itself over three steps (momentum and
// Adam state carried, weight decay on): the results must be the same floats, bit for bit.

#include "exec/cuda/optimizer_kernels.h"

#include <gtest/gtest.h>

#include <vector>

#include "exec/comm/local_array.h"
#include "exec/cuda/cuda_check.h"
#include "exec/cuda/cuda_context.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/device_buffer.h"
#include "exec/runtime/memory_tracker.h"
#include "exec/runtime/host_device.h"
#include "exec/runtime/optimizer.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::random_floats;

constexpr int64_t kElements = 1000;
constexpr int kSteps = 3;

std::size_t float_bytes() { return static_cast<std::size_t>(kElements) * sizeof(float); }

// Runs `kSteps` updates with the CPU optimizer and, from the same start, with `device_step`
// (called with the step number and the device parameter and gradient pointers); compares p.
template <typename DeviceStep>
void expect_same_parameters(const plans::OptimizerConfig& config, CudaContext& context, DeviceStep&& device_step) {
  MemoryTracker memory;
  HostDevice host;
  Optimizer optimizer(config, host, memory);
  optimizer.add_parameter(kElements);
  const std::vector<float> start = random_floats(static_cast<std::size_t>(kElements), 101);
  const auto p = host.memory().allocate({kElements}, false);
  const auto g = host.memory().allocate({kElements}, false);
  host.host_link().upload(start, *p);
  DeviceBuffer device_p(float_bytes()), device_g(float_bytes());
  upload(context.stream(), start.data(), float_bytes(), device_p);
  for (int step = 1; step <= kSteps; ++step) {
    const std::vector<float> gradient = random_floats(static_cast<std::size_t>(kElements), 200 + step);
    host.host_link().upload(gradient, *g);
    optimizer.step({p.get()}, {g.get()});
    upload(context.stream(), gradient.data(), float_bytes(), device_g);
    device_step(step, device_p.as<float>(), device_g.as<float>());
  }
  std::vector<float> gpu_p(static_cast<std::size_t>(kElements));
  download(context.stream(), device_p, float_bytes(), gpu_p.data());
  context.synchronize();
  EXPECT_EQ(gpu_p, host_copy(host.host_link(), *p));
}

TEST(CudaOptimizerKernels, SgdMomentumIsTheCpuUpdate) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  CudaContext context(0);
  plans::OptimizerConfig config;
  config.learning_rate = 0.05;
  config.momentum = 0.9;
  config.weight_decay = 1e-3;
  DeviceBuffer momentum(float_bytes());
  SB_CUDA_CHECK(cudaMemsetAsync(momentum.data(), 0, float_bytes(), context.stream()));
  expect_same_parameters(config, context, [&](int step, float* p, const float* g) {
    sgd_momentum_update(context.stream(), kElements, config.learning_rate, config.momentum, config.weight_decay, step,
                        p, g, momentum.as<float>());
  });
}

TEST(CudaOptimizerKernels, AdamIsTheCpuUpdate) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  CudaContext context(0);
  plans::OptimizerConfig config;
  config.kind = plans::OptimizerKind::adam;
  config.learning_rate = 1e-3;
  config.weight_decay = 1e-2;
  DeviceBuffer first(float_bytes()), second(float_bytes());
  SB_CUDA_CHECK(cudaMemsetAsync(first.data(), 0, float_bytes(), context.stream()));
  SB_CUDA_CHECK(cudaMemsetAsync(second.data(), 0, float_bytes(), context.stream()));
  expect_same_parameters(config, context, [&](int step, float* p, const float* g) {
    adam_update(context.stream(), kElements, config.learning_rate, config.beta1, config.beta2, config.epsilon,
                config.weight_decay, step, p, g, first.as<float>(), second.as<float>());
  });
}

}  // namespace
}  // namespace splitbrain::exec::cuda
