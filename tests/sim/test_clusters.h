#pragma once
// Small clusters built in code for tests, with round numbers so golden values can be worked
// out by hand in a comment.

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "sim/cluster.h"

namespace splitbrain::sim::testing {

// 4 nodes x 4 devices. Node links: 100 GB/s, 1 us. Cluster links: 10 GB/s, 10 us.
inline Cluster two_level_cluster() {
  Cluster cluster;
  cluster.name = "two-level";
  cluster.description = "test cluster";
  cluster.device.name = "test-device";
  cluster.device.peak_fp32_flops_per_second = 10e12;
  cluster.device.peak_fp16_flops_per_second = 100e12;
  cluster.device.peak_bf16_flops_per_second = 100e12;
  cluster.device.memory_capacity_bytes = 16'000'000'000;
  cluster.device.memory_bandwidth_bytes_per_second = 1e12;
  cluster.device.gemm_efficiency = {0.8, 1e9};
  cluster.device.conv_efficiency = {0.6, 2e9};
  cluster.device.elementwise_efficiency = {0.5, 1e8};
  cluster.device.memory_efficiency = {0.9, 1e6};
  cluster.levels = {{"node", 4, {100e9, 1e-6}, {}}, {"cluster", 4, {10e9, 10e-6}, {}}};
  return cluster;
}

// A fresh file path under the test temp directory, named after the running test.
inline std::filesystem::path scratch_file(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "splitbrain_sim_tests" /
                                    (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::create_directories(dir);
  return dir / name;
}

}  // namespace splitbrain::sim::testing
