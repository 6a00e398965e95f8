// The optimizer against torch.optim's update rules, written out by hand for two steps.

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "exec/runtime/host_device.h"
#include "exec/runtime/optimizer.h"

namespace splitbrain::exec {
namespace {

TEST(Optimizer, SgdMomentumFollowsTorch) {
  // torch.optim.SGD(lr=0.1, momentum=0.9): buf1 = g1, p1 = p0 - 0.1 buf1;
  // buf2 = 0.9 buf1 + g2, p2 = p1 - 0.1 buf2. p0 = 1, g1 = 0.5, g2 = -0.25:
  // p1 = 0.95; buf2 = 0.45 - 0.25 = 0.2; p2 = 0.93.
  MemoryTracker memory;
  plans::OptimizerConfig config;
  config.learning_rate = 0.1;
  config.momentum = 0.9;
  HostDevice device;
  Optimizer optimizer(config, device, memory);
  optimizer.add_parameter(1);
  EXPECT_EQ(memory.current(MemoryCategory::optimizer), 4);
  const auto p = device.memory().allocate({1}, false);
  const auto g = device.memory().allocate({1}, false);
  device.host_link().upload(std::vector<float>{1.0f}, *p);
  device.host_link().upload(std::vector<float>{0.5f}, *g);
  optimizer.step({p.get()}, {g.get()});
  EXPECT_FLOAT_EQ(host_copy(device.host_link(), *p)[0], 0.95f);
  device.host_link().upload(std::vector<float>{-0.25f}, *g);
  optimizer.step({p.get()}, {g.get()});
  EXPECT_FLOAT_EQ(host_copy(device.host_link(), *p)[0], 0.93f);
}

TEST(Optimizer, AdamFollowsTorch) {
  // torch.optim.Adam(lr=0.01, betas=(0.9, 0.999), eps=1e-8), p0 = 1, g1 = 0.5, g2 = -0.25:
  // m1 = 0.05, v1 = 0.00025; update = 0.01 * (m1 / 0.1) / (sqrt(v1 / 0.001) + eps) = 0.01 * 0.5 / 0.5.
  // m2 = 0.045 - 0.025 = 0.02, v2 = 0.00024975 + 0.0000625 = 0.00031225;
  // update = 0.01 * (m2 / 0.19) / (sqrt(v2 / 0.001999) + eps).
  MemoryTracker memory;
  plans::OptimizerConfig config;
  config.kind = plans::OptimizerKind::adam;
  config.learning_rate = 0.01;
  HostDevice device;
  Optimizer optimizer(config, device, memory);
  optimizer.add_parameter(1);
  EXPECT_EQ(memory.current(MemoryCategory::optimizer), 8);
  const auto p = device.memory().allocate({1}, false);
  const auto g = device.memory().allocate({1}, false);
  device.host_link().upload(std::vector<float>{1.0f}, *p);
  device.host_link().upload(std::vector<float>{0.5f}, *g);
  optimizer.step({p.get()}, {g.get()});
  const double p1 = 1.0 - 0.01 * (0.05 / 0.1) / (std::sqrt(0.00025 / 0.001) + 1e-8);
  EXPECT_NEAR(host_copy(device.host_link(), *p)[0], p1, 1e-6);
  device.host_link().upload(std::vector<float>{-0.25f}, *g);
  optimizer.step({p.get()}, {g.get()});
  const double p2 = p1 - 0.01 * (0.02 / 0.19) / (std::sqrt(0.00031225 / 0.001999) + 1e-8);
  EXPECT_NEAR(host_copy(device.host_link(), *p)[0], p2, 1e-6);
}

// update_all's lists go together, position by position: lists of different lengths, or arrays of
// one position that differ in size, are a caller's bug, named before any array is touched.
TEST(Optimizer, UpdatingAllRefusesListsThatDoNotPairUp) {
  HostDevice device;
  const plans::OptimizerConfig sgd;
  const auto a = device.memory().allocate({3}, true);
  const auto b = device.memory().allocate({3}, true);
  const auto c = device.memory().allocate({3}, true);
  const auto short_one = device.memory().allocate({2}, true);
  device.host_link().upload(std::vector<float>{1.0f, 2.0f, 3.0f}, *a);
  const std::vector<DeviceArray*> parameters = {a.get()};
  const std::vector<const DeviceArray*> gradients = {b.get()};
  const std::vector<DeviceArray*> moments = {c.get()};
  EXPECT_THROW(device.kernels().update_all(sgd, 1, parameters, gradients, {}, {}), std::logic_error);
  EXPECT_THROW(
      device.kernels().update_all(sgd, 1, parameters, gradients, moments, std::vector<DeviceArray*>{c.get(), c.get()}),
      std::logic_error);
  EXPECT_THROW(
      device.kernels().update_all(sgd, 1, parameters, std::vector<const DeviceArray*>{short_one.get()}, moments, {}),
      std::logic_error);
  EXPECT_EQ(host_copy(device.host_link(), *a), (std::vector<float>{1.0f, 2.0f, 3.0f}));
  device.kernels().update_all(sgd, 1, parameters, gradients, moments, {});  // zero gradients: p stays
  EXPECT_EQ(host_copy(device.host_link(), *a), (std::vector<float>{1.0f, 2.0f, 3.0f}));
  device.memory().zero_all(parameters);
  EXPECT_EQ(host_copy(device.host_link(), *a), (std::vector<float>{0.0f, 0.0f, 0.0f}));
}

}  // namespace
}  // namespace splitbrain::exec
