#include "sim/efficiency.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/dtype.h"
#include "sim/cluster.h"
#include "sim/cluster_presets.h"

namespace splitbrain::sim {
namespace {
using model::DType;

TEST(Efficiency, HalfPointAndAsymptote) {
  const EfficiencyCurve curve{0.8, 1e9};
  // 0.8 * 1e9 / (1e9 + 1e9) = 0.4: half the asymptote at the half point.
  EXPECT_DOUBLE_EQ(curve.efficiency(1e9), 0.4);
  // 0.8 * 3e9 / (3e9 + 1e9) = 0.6
  EXPECT_DOUBLE_EQ(curve.efficiency(3e9), 0.6);
  EXPECT_NEAR(curve.efficiency(1e20), 0.8, 1e-10);
  EXPECT_EQ(curve.efficiency(0.0), 0.0);
  EXPECT_EQ(curve.efficiency(-5.0), 0.0);
  EXPECT_EQ(curve.efficiency(std::nan("")), 0.0);
}

TEST(Efficiency, ZeroHalfPointMeansNoOverhead) {
  const EfficiencyCurve curve{0.7, 0.0};
  EXPECT_DOUBLE_EQ(curve.efficiency(1.0), 0.7);
  EXPECT_DOUBLE_EQ(curve.efficiency(1e15), 0.7);
}

// For every preset, op class and dtype: the achieved rate never decreases with op size and
// never exceeds the peak; the same for memory bandwidth.
TEST(Efficiency, MonotoneAndBoundedByPeakForEveryPreset) {
  for (const std::string& name : cluster_preset_names()) {
    SCOPED_TRACE(name);
    const Cluster cluster = cluster_preset(name);
    for (OpClass op_class : {OpClass::gemm, OpClass::conv, OpClass::elementwise}) {
      for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
        const double peak = cluster.device.peak_flops_per_second(dtype);
        double previous = 0.0;
        for (double flops = 1.0; flops <= 1e18; flops *= 1.7) {
          const double rate = achieved_flops_per_second(cluster, op_class, dtype, flops);
          EXPECT_GE(rate, previous) << "flops " << flops;
          EXPECT_LE(rate, peak);
          EXPECT_GT(rate, 0.0);
          previous = rate;
        }
      }
    }
    double previous = 0.0;
    for (double bytes = 1.0; bytes <= 1e15; bytes *= 1.7) {
      const double rate = achieved_memory_bytes_per_second(cluster, bytes);
      EXPECT_GE(rate, previous);
      EXPECT_LE(rate, cluster.device.memory_bandwidth_bytes_per_second);
      previous = rate;
    }
  }
}

TEST(Efficiency, AchievedRateUsesTheDtypePeak) {
  const Cluster cluster = cluster_preset("dgx-a100-80g");
  // gemm curve {0.8, 1.6e9}; at 1.6e9 FLOPs efficiency = 0.4:
  // fp16: 312e12 * 0.4 = 124.8e12; fp32: 19.5e12 * 0.4 = 7.8e12.
  EXPECT_NEAR(achieved_flops_per_second(cluster, OpClass::gemm, DType::fp16, 1.6e9), 124.8e12, 1e3);
  EXPECT_NEAR(achieved_flops_per_second(cluster, OpClass::gemm, DType::fp32, 1.6e9), 7.8e12, 1e2);
  // memory curve {0.85, 8e6}: at 8e6 bytes 0.425 * 2039e9 = 866.575e9 B/s.
  EXPECT_NEAR(achieved_memory_bytes_per_second(cluster, 8e6), 866.575e9, 1e0);
}

TEST(Efficiency, OpClassNamesRoundTrip) {
  for (OpClass op_class : {OpClass::gemm, OpClass::conv, OpClass::elementwise}) {
    EXPECT_EQ(op_class_from_name(op_class_name(op_class)), op_class);
  }
  EXPECT_FALSE(op_class_from_name("matmul").has_value());
}

}  // namespace
}  // namespace splitbrain::sim
