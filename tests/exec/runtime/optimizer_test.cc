// The optimizer against torch.optim's update rules, written out by hand for two steps.

#include <gtest/gtest.h>

#include <cmath>

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
  const auto p = device.allocate({1}, false);
  const auto g = device.allocate({1}, false);
  device.upload(std::vector<float>{1.0f}, *p);
  device.upload(std::vector<float>{0.5f}, *g);
  optimizer.step({p.get()}, {g.get()});
  EXPECT_FLOAT_EQ(host_copy(device, *p)[0], 0.95f);
  device.upload(std::vector<float>{-0.25f}, *g);
  optimizer.step({p.get()}, {g.get()});
  EXPECT_FLOAT_EQ(host_copy(device, *p)[0], 0.93f);
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
  const auto p = device.allocate({1}, false);
  const auto g = device.allocate({1}, false);
  device.upload(std::vector<float>{1.0f}, *p);
  device.upload(std::vector<float>{0.5f}, *g);
  optimizer.step({p.get()}, {g.get()});
  const double p1 = 1.0 - 0.01 * (0.05 / 0.1) / (std::sqrt(0.00025 / 0.001) + 1e-8);
  EXPECT_NEAR(host_copy(device, *p)[0], p1, 1e-6);
  device.upload(std::vector<float>{-0.25f}, *g);
  optimizer.step({p.get()}, {g.get()});
  const double p2 = p1 - 0.01 * (0.02 / 0.19) / (std::sqrt(0.00031225 / 0.001999) + 1e-8);
  EXPECT_NEAR(host_copy(device, *p)[0], p2, 1e-6);
}

}  // namespace
}  // namespace splitbrain::exec
