// HostDevice's arrays allocated without zeroing: what nothing wrote reads NaN, as a GPU's
// uninitialised memory would not read zeros either.

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "exec/runtime/host_device.h"

namespace splitbrain::exec {
namespace {

TEST(HostDevice, WhatNothingWroteInAnArrayNotZeroedReadsNaN) {
  HostDevice device;
  const auto array = device.memory().allocate({5}, false);
  device.memory().fill(*array, 1, 2, 3.0f);
  const std::vector<float> values = host_copy(device.host_link(), *array);
  ASSERT_EQ(values.size(), 5u);
  EXPECT_TRUE(std::isnan(values[0]));
  EXPECT_EQ(values[1], 3.0f);
  EXPECT_EQ(values[2], 3.0f);
  EXPECT_TRUE(std::isnan(values[3]));
  EXPECT_TRUE(std::isnan(values[4]));
}

TEST(HostDevice, ReadingAnArrayNotZeroedThatNothingWroteThrows) {
  HostDevice device;
  const auto array = device.memory().allocate({2}, false);
  EXPECT_THROW(host_copy(device.host_link(), *array), std::logic_error);
}

TEST(HostDevice, AnArrayAllocatedZeroedReadsZerosAndOneWrittenWholeReadsItsValues) {
  HostDevice device;
  const auto zeroed = device.memory().allocate({3}, true);
  EXPECT_EQ(host_copy(device.host_link(), *zeroed), std::vector<float>(3, 0.0f));
  const auto written = device.memory().allocate({3}, false);
  device.host_link().upload(std::vector<float>{1.0f, 2.0f, 3.0f}, *written);
  EXPECT_EQ(host_copy(device.host_link(), *written), (std::vector<float>{1.0f, 2.0f, 3.0f}));
}

}  // namespace
}  // namespace splitbrain::exec
