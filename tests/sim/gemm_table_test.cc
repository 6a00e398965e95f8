#include "sim/gemm_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/graph_builder.h"
#include "plans/op_sharding.h"
#include "sim/compute_cost.h"

namespace splitbrain::sim {
namespace {

constexpr KernelPass kPasses[] = {KernelPass::forward, KernelPass::backward, KernelPass::weight_gradient};

// A 3 x 2 x 2 grid whose values rise along every axis (by the product's size, as a GEMM's do)
// and differ per pass.
GemmEfficiencyTable rising_table() {
  GemmEfficiencyTable table;
  table.m = {1, 16, 256};
  table.n = {64, 4096};
  table.k = {64, 1024};
  for (KernelPass pass : kPasses) {
    const double pass_factor = 1.0 - 0.1 * static_cast<double>(pass);
    for (size_t i = 0; i < table.m.size(); ++i) {
      for (size_t j = 0; j < table.n.size(); ++j) {
        for (size_t l = 0; l < table.k.size(); ++l) {
          table.of(pass).push_back(pass_factor * (0.05 + 0.3 * static_cast<double>(i) + 0.1 * static_cast<double>(j) +
                                                  0.05 * static_cast<double>(l)));
        }
      }
    }
  }
  return table;
}

TEST(GemmTable, ExactAtEveryGridPoint) {
  const GemmEfficiencyTable table = rising_table();
  for (KernelPass pass : kPasses) {
    for (size_t i = 0; i < table.m.size(); ++i) {
      for (size_t j = 0; j < table.n.size(); ++j) {
        for (size_t l = 0; l < table.k.size(); ++l) {
          const GemmShape shape{static_cast<double>(table.m[i]), static_cast<double>(table.n[j]),
                                static_cast<double>(table.k[l])};
          EXPECT_DOUBLE_EQ(gemm_table_efficiency(table, pass, shape), table.of(pass)[table.index(i, j, l)]);
        }
      }
    }
  }
}

TEST(GemmTable, LinearInLogSizeBetweenNeighbours) {
  const GemmEfficiencyTable table = rising_table();
  // m = 4 lies halfway between 1 and 16 in log space; n and k on grid points.
  const double low = table.of(KernelPass::forward)[table.index(0, 1, 0)];
  const double high = table.of(KernelPass::forward)[table.index(1, 1, 0)];
  EXPECT_NEAR(gemm_table_efficiency(table, KernelPass::forward, {4, 4096, 64}), (low + high) / 2, 1e-12);
}

TEST(GemmTable, ClampedOutsideTheGrid) {
  const GemmEfficiencyTable table = rising_table();
  for (KernelPass pass : kPasses) {
    EXPECT_DOUBLE_EQ(gemm_table_efficiency(table, pass, {0.25, 8, 1}), table.of(pass)[table.index(0, 0, 0)]);
    EXPECT_DOUBLE_EQ(gemm_table_efficiency(table, pass, {1e6, 1e6, 1e6}), table.of(pass)[table.index(2, 1, 1)]);
    EXPECT_DOUBLE_EQ(gemm_table_efficiency(table, pass, {1e6, 64, 64}), table.of(pass)[table.index(2, 0, 0)]);
  }
}

// Random shapes between and beyond the grid: the value lies between the cell's lowest and
// highest corner, and never falls when any one size grows (the table rises along every axis).
TEST(GemmTable, BetweenNeighboursAndMonotoneWhereTheTableIs) {
  const GemmEfficiencyTable table = rising_table();
  std::mt19937 random(7);
  std::uniform_real_distribution<double> log_size(-1.0, 13.0);  // e^-1 .. e^13: past both ends of every axis
  for (int trial = 0; trial < 2000; ++trial) {
    const GemmShape shape{std::exp(log_size(random)), std::exp(log_size(random)), std::exp(log_size(random))};
    for (KernelPass pass : kPasses) {
      const double value = gemm_table_efficiency(table, pass, shape);
      EXPECT_GE(value, table.of(pass).front() - 1e-12);
      EXPECT_LE(value, table.of(pass).back() + 1e-12);
      for (int axis = 0; axis < 3; ++axis) {
        GemmShape larger = shape;
        double& size = axis == 0 ? larger.m : axis == 1 ? larger.n : larger.k;
        size *= 1.7;
        EXPECT_GE(gemm_table_efficiency(table, pass, larger), value - 1e-12);
      }
    }
  }
}

// fp32 peak 1 TFLOP/s, memory 100 GB/s at 100%; the gemm curve at 80% for any size.
Cluster cluster_with_table() {
  Cluster cluster;
  cluster.name = "table";
  cluster.device.name = "table-device";
  cluster.device.peak_fp32_flops_per_second = cluster.device.peak_fp16_flops_per_second = 1e12;
  cluster.device.peak_bf16_flops_per_second = 1e12;
  cluster.device.memory_capacity_bytes = 16'000'000'000;
  cluster.device.memory_bandwidth_bytes_per_second = 100e9;
  cluster.device.gemm_efficiency = {0.8, 0.0};
  cluster.device.conv_efficiency = cluster.device.elementwise_efficiency = {0.5, 0.0};
  cluster.device.memory_efficiency = {1.0, 0.0};
  cluster.levels = {{"node", 8, {100e9, 1e-6}, {}}};
  GemmEfficiencyTable table;
  table.m = {1, 256};
  table.n = {1024};
  table.k = {1024};
  table.of(KernelPass::forward) = {0.1, 0.8};
  table.of(KernelPass::backward) = {0.05, 0.4};
  table.of(KernelPass::weight_gradient) = {0.02, 0.2};
  cluster.device.gemm_table = table;
  validate_cluster(cluster, "test");
  return cluster;
}

// data [1024] -> fc1 (1024) -> fc2 (1024).
model::Model linear_net() {
  model::GraphBuilder b("linear-net", "test");
  b.add("data", model::OpKind::input, model::InputAttrs{{1024}, false}, {});
  model::LinearAttrs fc;
  fc.out_features = 1024;
  b.add("fc1", model::OpKind::linear, fc, {"data"});
  b.add("fc2", model::OpKind::linear, fc, {"fc1"});
  return b.build();
}

// One sample's row runs the product at the table's m = 1 efficiency, far below the curve's 80%;
// 16 rows (halfway between 1 and 256 in log space) at the mean of the two.
TEST(GemmTableCost, LinearLayersArePricedByTheirShape) {
  const Cluster cluster = cluster_with_table();
  const model::Model net = linear_net();
  const plans::Mesh mesh({{"data", 1}});
  const int fc2 = net.find("fc2");
  const auto seconds = [&](int64_t batch) {
    const plans::LayerLayouts layouts = plans::layer_layouts(net, fc2, {}, mesh, batch, model::DType::fp32);
    return layer_compute_seconds(cluster, net, fc2, layouts, mesh, batch, model::DType::fp32);
  };
  // Forward per sample: 2 x 1024 x 1024 + 1024 bias adds = 2,098,176 FLOPs at 10% of 1e12 ->
  // 20.98176 us, plus the output's zero fill: 4096 B at 100e9 -> 0.04096 us.
  const LayerComputeSeconds one = seconds(1);
  EXPECT_NEAR(one.forward, 20.98176e-6 + 0.04096e-6, 1e-12);
  // 16 samples: 16 x 2,098,176 FLOPs at 45% -> 74.60181 us, plus 65,536 B -> 0.65536 us.
  const LayerComputeSeconds sixteen = seconds(16);
  EXPECT_NEAR(sixteen.forward, 16 * 2'098'176 / 0.45e12 + 0.65536e-6, 1e-12);
  // The backward passes read their own rows of the table: the weight gradient at m = 1 runs at
  // 2%, five times slower per FLOP than the input gradient's 5% (zero fill aside).
  const double input_flops = net.layer(fc2).cost.backward_input_flops;
  EXPECT_NEAR(one.backward_input, input_flops / 0.05e12 + 0.04096e-6, 1e-12);
  EXPECT_NEAR(one.backward_weight, net.layer(fc2).cost.backward_weight_flops / 0.02e12, 1e-12);
}

}  // namespace
}  // namespace splitbrain::sim
