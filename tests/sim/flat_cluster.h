#pragma once
// The cluster the compute-cost suites price on: flat efficiency curves (half_efficiency_size 0: the
// asymptote at any size), so every golden value of theirs is a division worked out by hand.

#include <cstdint>

#include "model/model.h"
#include "plans/layer_sharding.h"
#include "plans/op_sharding.h"
#include "sim/cluster.h"

namespace splitbrain::sim::testing {

// fp32 peak 1 TFLOP/s; conv reaches 50%, gemm 80%, elementwise 50%; memory 100 GB/s at 100%.
inline Cluster flat_cluster() {
  Cluster cluster;
  cluster.name = "flat";
  cluster.device.name = "flat-device";
  cluster.device.peak_fp32_flops_per_second = 1e12;
  cluster.device.peak_fp16_flops_per_second = 4e12;
  cluster.device.peak_bf16_flops_per_second = 4e12;
  cluster.device.memory_capacity_bytes = 16'000'000'000;
  cluster.device.memory_bandwidth_bytes_per_second = 100e9;
  cluster.device.gemm_efficiency = {0.8, 0.0};
  cluster.device.conv_efficiency = {0.5, 0.0};
  cluster.device.elementwise_efficiency = {0.5, 0.0};
  cluster.device.memory_efficiency = {1.0, 0.0};
  cluster.levels = {{"node", 8, {100e9, 1e-6}, {}}};
  return cluster;
}

// Layer `index`'s layouts in fp32 under `sharding` (every role unsplit by default).
inline plans::LayerLayouts layouts_of(const model::Model& net, int index, const plans::Mesh& mesh, int64_t batch,
                                      const plans::LayerSharding& sharding = {}) {
  return plans::layer_layouts(net, index, sharding, mesh, batch, model::DType::fp32);
}

}  // namespace splitbrain::sim::testing
