// The device's curves as a node's other ranks leave them: the speed-up alone read from the
// problems calibrate timed both ways, and the rates moved toward it by the neighbours' idle share.

#include <gtest/gtest.h>

#include <string>

#include "plans/plan_builder.h"
#include "sim/cluster_presets.h"
#include "sim/neighbour_speed.h"

namespace splitbrain::sim {
namespace {

Device::MeasuredKernel kernel_of(double seconds) { return {seconds, seconds / 2, seconds / 4}; }

// A device with problems timed alone and beside one busy neighbour, busy `ratios[i]` times slower.
Device device_with(const std::vector<double>& ratios) {
  Device device = cluster_preset("local-cpu").device;
  for (size_t i = 0; i < ratios.size(); ++i) {
    const std::string problem = "relu " + std::to_string(1000 * (i + 1));
    device.measured_kernels[problem + ", 1 busy"] = kernel_of(1e-3);
    device.measured_kernels[problem + ", 2 busy"] = kernel_of(1e-3 * ratios[i]);
    // Warm timings and other busy counts are not the pairs read.
    device.measured_kernels[problem + ", 2 busy, caches warm"] = kernel_of(1e-3 * 10);
    device.measured_kernels[problem + ", 4 busy"] = kernel_of(1e-3 * 10);
  }
  return device;
}

TEST(NeighbourSpeed, AloneSpeedupIsTheMedianRatioOfProblemsTimedBothWays) {
  EXPECT_DOUBLE_EQ(alone_speedup(device_with({1.5, 2.0, 3.0}), 2), 2.0);
  EXPECT_DOUBLE_EQ(alone_speedup(device_with({1.2, 1.9, 2.1, 5.0, 7.0}), 2), 2.1);
}

TEST(NeighbourSpeed, NoSpeedupWithoutPairsOrNeighbours) {
  EXPECT_EQ(alone_speedup(cluster_preset("local-cpu").device, 2), 1.0);
  EXPECT_EQ(alone_speedup(device_with({2.0}), 1), 1.0);
  EXPECT_EQ(alone_speedup(device_with({2.0}), 3), 1.0);  // no "3 busy" timings
  // Neighbours never make a kernel faster: noise below 1 reads as 1.
  EXPECT_EQ(alone_speedup(device_with({0.8, 0.9, 0.95}), 2), 1.0);
}

TEST(NeighbourSpeed, RatesMoveFromBusyToAloneInProportionToTime) {
  Cluster cluster = cluster_preset("local-cpu");
  cluster.device = device_with({2.0, 2.0, 2.0});
  const Device& busy = cluster.device;
  const double speedup = alone_speedup(busy, 2);
  for (const double neighbours_busy : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    const Device moved = with_neighbours_busy(cluster, speedup, neighbours_busy).device;
    // Seconds are busy's x (1 - idle / 2): a kernel twice as fast alone gains half its time idle.
    const double seconds_factor = 1.0 - (1.0 - neighbours_busy) * 0.5;
    EXPECT_NEAR(moved.peak_fp32_flops_per_second, busy.peak_fp32_flops_per_second / seconds_factor,
                1e-6 * busy.peak_fp32_flops_per_second);
    EXPECT_NEAR(moved.memory_bandwidth_bytes_per_second, busy.memory_bandwidth_bytes_per_second / seconds_factor,
                1e-6 * busy.memory_bandwidth_bytes_per_second);
    // The timed problems keep their seconds: they are interpolated where they are read.
    EXPECT_EQ(moved.measured_kernels, busy.measured_kernels);
  }
  // Out-of-range shares are clamped, not extrapolated.
  EXPECT_EQ(with_neighbours_busy(cluster, speedup, 1.5).device, busy);
  EXPECT_DOUBLE_EQ(with_neighbours_busy(cluster, speedup, -1.0).device.peak_fp32_flops_per_second,
                   2.0 * busy.peak_fp32_flops_per_second);
}

// A node's cores are what its busy ranks achieve together: twice as slow beside one neighbour
// is one core shared, 1.25 times is two cores (contending).
TEST(NeighbourSpeed, NodeSharingReadsCoresAndContentionFromTheSpeedup) {
  Cluster cluster = cluster_preset("local-cpu");  // one node of 2 ranks: made two
  cluster.levels.push_back(cluster.levels.front());
  cluster.levels.back().name = "cluster";
  const auto batch_over_axis_0 = [](const model::Layer&) { return plans::LayerSharding{{0}, {}, {}, {}}; };
  const plans::Plan plan = plans::build_plan("fashion-vgg", plans::Mesh({{"data", 4}}), 16, batch_over_axis_0);
  EXPECT_FALSE(node_sharing(cluster, plan, alone_speedup(cluster.device, 2)).has_value());  // nothing timed alone
  cluster.device = device_with({2.0, 2.0, 2.0});
  const std::optional<NodeSharing> shared = node_sharing(cluster, plan, alone_speedup(cluster.device, 2));
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(shared->cores, 1);
  EXPECT_EQ(shared->ranks_per_node, 2);
  // One stage: its 2 ranks on node 0 are its replicas there.
  EXPECT_EQ(shared->node_of_stage, (std::vector<int>{0}));
  EXPECT_EQ(shared->replicas, 2);
  // Two stages of one rank each ({pipe: 4}, 4 stages): two to a node.
  plans::Plan piped = plans::build_plan("fashion-vgg", plans::Mesh({{"pipe", 4}}), 16, [](const model::Layer&) {
    return plans::LayerSharding{{}, {}, {}, {}};
  });
  piped.pipe_axis = 0;
  for (int i = 0; i < piped.model->size(); ++i)
    piped.stage_of_layer[static_cast<size_t>(i)] = i * 4 / piped.model->size();
  const std::optional<NodeSharing> stages = node_sharing(cluster, piped, alone_speedup(cluster.device, 2));
  ASSERT_TRUE(stages.has_value());
  EXPECT_EQ(stages->node_of_stage, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(stages->replicas, 1);
  cluster.device = device_with({1.25, 1.25, 1.25});
  const std::optional<NodeSharing> contended = node_sharing(cluster, plan, alone_speedup(cluster.device, 2));
  ASSERT_TRUE(contended.has_value());
  EXPECT_EQ(contended->cores, 2);
}

// The cores calibrate recorded decide, whatever the speed-up: a node whose 2 vCPUs run kernels
// twice as slow side by side (SMT siblings) still runs both ranks at once, and 2 ranks bound to
// one CPU take turns however little they slow each other.
TEST(NeighbourSpeed, RecordedCoresOverruleTheSpeedup) {
  Cluster cluster = cluster_preset("local-cpu");
  cluster.levels.push_back(cluster.levels.front());
  cluster.levels.back().name = "cluster";
  const auto batch_over_axis_0 = [](const model::Layer&) { return plans::LayerSharding{{0}, {}, {}, {}}; };
  const plans::Plan plan = plans::build_plan("fashion-vgg", plans::Mesh({{"data", 4}}), 16, batch_over_axis_0);
  cluster.device = device_with({2.0, 2.0, 2.0});
  cluster.cpu_cores_per_node = 2;
  std::optional<NodeSharing> shared = node_sharing(cluster, plan, alone_speedup(cluster.device, 2));
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(shared->cores, 2);
  cluster.device = device_with({1.1, 1.1, 1.1});
  cluster.cpu_cores_per_node = 1;
  shared = node_sharing(cluster, plan, alone_speedup(cluster.device, 2));
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(shared->cores, 1);
  // More cores than ranks: each rank has one.
  cluster.cpu_cores_per_node = 64;
  EXPECT_EQ(node_sharing(cluster, plan, alone_speedup(cluster.device, 2))->cores, 2);
}

}  // namespace
}  // namespace splitbrain::sim
