// layer_compute_seconds, optimizer_step_seconds and op_class_of against hand arithmetic on a
// cluster with flat efficiency curves (tests/sim/flat_cluster.h), so every golden value below is
// a division worked out in the comment next to it. Attention's pricing: attention_cost_test.cc.

#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "model/graph_builder.h"
#include "plans/compiled_plan.h"
#include "sim/compute_cost.h"
#include "sim/kernel_problem.h"
#include "tests/sim/flat_cluster.h"

namespace splitbrain::sim {
namespace {

using model::OpKind;
using testing::flat_cluster;
using testing::layouts_of;

// data [3, 32, 32] -> conv (16 channels, 3x3, padding 1) -> relu -> flatten.
model::Model conv_net() {
  model::GraphBuilder b("conv-net", "test");
  b.add("data", OpKind::input, model::InputAttrs{{3, 32, 32}, false}, {});
  model::Conv2dAttrs conv;
  conv.out_channels = 16;
  conv.kernel = {3, 3};
  conv.padding = {1, 1};
  b.add("conv", OpKind::conv2d, conv, {"data"});
  b.add("relu", OpKind::relu, model::NoAttrs{}, {"conv"});
  b.add("flat", OpKind::flatten, model::NoAttrs{}, {"relu"});
  return b.build();
}

// data [1024] -> fc1 (1024) -> fc2 (1024): fc2's input needs a gradient, fc1's does not.
model::Model linear_net() {
  model::GraphBuilder b("linear-net", "test");
  b.add("data", OpKind::input, model::InputAttrs{{1024}, false}, {});
  model::LinearAttrs fc;
  fc.out_features = 1024;
  b.add("fc1", OpKind::linear, fc, {"data"});
  b.add("fc2", OpKind::linear, fc, {"fc1"});
  return b.build();
}

TEST(ComputeCost, ConvIsComputeBoundAndMatchesHandArithmetic) {
  const model::Model net = conv_net();
  const plans::Mesh mesh({{"data", 1}});
  const int conv = net.find("conv");
  const LayerComputeSeconds t =
      layer_compute_seconds(flat_cluster(), net, conv, layouts_of(net, conv, mesh, 8), mesh, 8, model::DType::fp32);
  // Per sample: 16*32*32 = 16,384 outputs x 27 MACs = 442,368 MACs; forward 2 x MACs + 16,384
  // bias adds = 901,120 FLOPs; x 8 samples = 7,208,960 FLOPs at 0.5e12 -> 14.41792 us.
  // Bytes: input 8*3072*4 = 98,304 + weights 448*4 = 1,792 + output 8*16,384*4 = 524,288 =
  // 624,384 B at 100e9 -> 6.24384 us. Compute-bound.
  EXPECT_NEAR(t.forward, 14.41792e-6, 1e-12);
  // The conv reads the raw data: nothing upstream has parameters, so no input gradient.
  EXPECT_EQ(t.backward_input, 0.0);
  // Weight gradient: 2 x MACs + 16,384 bias sums per sample = the forward FLOPs.
  EXPECT_NEAR(t.backward_weight, 14.41792e-6, 1e-12);
}

TEST(ComputeCost, AMeasuredKernelProblemReplacesTheCurves) {
  const model::Model net = conv_net();
  const plans::Mesh mesh({{"data", 1}});
  const int conv = net.find("conv");
  const plans::LayerLayouts layouts = layouts_of(net, conv, mesh, 8);
  Cluster cluster = flat_cluster();
  const std::optional<KernelProblem> problem = kernel_problem(net, conv, layouts, mesh, 8);
  ASSERT_TRUE(problem.has_value());
  cluster.device.measured_kernels[kernel_key(*problem, 1)] = {1e-3, 2e-3, 3e-3};
  const LayerComputeSeconds t = layer_compute_seconds(cluster, net, conv, layouts, mesh, 8, model::DType::fp32);
  // The measured kernel plus the executor's passes around it at 100 GB/s: the output zero-filled
  // (8 x 16,384 x 4 = 524,288 B -> 5.24288 us); the weight gradient's fresh array and its add
  // (4 passes over 448 x 4 = 1,792 B -> 0.07168 us). No input gradient (the conv reads the data).
  EXPECT_NEAR(t.forward, 1e-3 + 5.24288e-6, 1e-12);
  EXPECT_EQ(t.backward_input, 0.0);
  EXPECT_NEAR(t.backward_weight, 3e-3 + 0.07168e-6, 1e-12);
  // Another micro-batch is read from the measured one in proportion to the samples: half of
  // them, half the kernel's time (the output's zero-fill is this problem's own: 2.62144 us).
  EXPECT_NEAR(
      layer_compute_seconds(cluster, net, conv, layouts_of(net, conv, mesh, 4), mesh, 4, model::DType::fp32).forward,
      0.5e-3 + 2.62144e-6, 1e-12);
}

TEST(ComputeCost, AnUnmeasuredProblemIsReadFromItsNearestMeasuredSibling) {
  const model::Model net = conv_net();
  const plans::Mesh mesh({{"data", 1}});
  const int conv = net.find("conv");
  Cluster cluster = flat_cluster();
  const auto problem_at = [&](int64_t samples) {
    return *kernel_problem(net, conv, layouts_of(net, conv, mesh, samples), mesh, samples);
  };
  const auto forward_at = [&](int64_t samples) {
    return layer_compute_seconds(cluster, net, conv, layouts_of(net, conv, mesh, samples), mesh, samples,
                                 model::DType::fp32)
               .forward -
           static_cast<double>(samples * 16'384 * 4) / 100e9;  // the output's zero-fill
  };
  const double curves_at_64 = forward_at(64);
  cluster.device.measured_kernels[kernel_key(problem_at(2), 1)] = {1e-3, 0.0, 0.0};
  // Up to 16 times the work of a measured problem: in proportion; 32 times: too far, the curves.
  EXPECT_NEAR(forward_at(16), 8e-3, 1e-12);
  EXPECT_NEAR(forward_at(32), 16e-3, 1e-12);
  EXPECT_NEAR(forward_at(64), curves_at_64, 1e-12);
  // The nearest sibling wins: 4 samples measured, 8 read from it rather than from 2.
  cluster.device.measured_kernels[kernel_key(problem_at(4), 1)] = {3e-3, 0.0, 0.0};
  EXPECT_NEAR(forward_at(8), 6e-3, 1e-12);
  // Siblings as near on both sides: the mean of both estimates (16 from 8 -> 2 ms, from 32 -> 4 ms).
  cluster.device.measured_kernels[kernel_key(problem_at(8), 1)] = {1e-3, 0.0, 0.0};
  cluster.device.measured_kernels[kernel_key(problem_at(32), 1)] = {8e-3, 0.0, 0.0};
  EXPECT_NEAR(forward_at(16), 3e-3, 1e-12);
}

TEST(ComputeCost, AMeasuredProblemRunsBetweenAloneAndBesideBusyNeighbours) {
  const model::Model net = conv_net();
  const plans::Mesh mesh({{"data", 2}});
  const int conv = net.find("conv");
  const plans::LayerLayouts layouts = layouts_of(net, conv, mesh, 8, plans::LayerSharding{{0}, {}, {}, {}});
  Cluster cluster = flat_cluster();  // 8 devices per node: 2 ranks busy at once
  const KernelProblem problem = *kernel_problem(net, conv, layouts, mesh, 8);
  cluster.device.measured_kernels[kernel_key(problem, 1)] = {1e-3, 0.0, 2e-3};
  cluster.device.measured_kernels[kernel_key(problem, 2)] = {3e-3, 0.0, 4e-3};
  const auto forward = [&](double busy) {
    return layer_compute_seconds(cluster, net, conv, layouts, mesh, 8, model::DType::fp32, {busy}).forward;
  };
  // Zero-fill of the local output: 4 x 16,384 x 4 B at 100 GB/s = 2.62144 us on top.
  EXPECT_NEAR(forward(1.0), 3e-3 + 2.62144e-6, 1e-12);
  EXPECT_NEAR(forward(0.0), 1e-3 + 2.62144e-6, 1e-12);
  EXPECT_NEAR(forward(0.25), 1.5e-3 + 2.62144e-6, 1e-12);
}

TEST(ComputeCost, AMeasuredProblemRunsBetweenSweptAndWarmCaches) {
  const model::Model net = conv_net();
  const plans::Mesh mesh({{"data", 2}});
  const int conv = net.find("conv");
  const plans::LayerLayouts layouts = layouts_of(net, conv, mesh, 8, plans::LayerSharding{{0}, {}, {}, {}});
  Cluster cluster = flat_cluster();
  const KernelProblem problem = *kernel_problem(net, conv, layouts, mesh, 8);
  cluster.device.measured_kernels[kernel_key(problem, 1)] = {2e-3, 0.0, 2e-3};
  cluster.device.measured_kernels[kernel_key(problem, 2)] = {4e-3, 0.0, 4e-3};
  const auto forward = [&](NodeConditions conditions) {
    return layer_compute_seconds(cluster, net, conv, layouts, mesh, 8, model::DType::fp32, conditions).forward -
           2.62144e-6;
  };
  // Without a warm measurement the swept one stands, however warm the caches.
  EXPECT_NEAR(forward({1.0, 1.0}), 4e-3, 1e-12);
  cluster.device.measured_kernels[kernel_key(problem, 1, CacheState::warm)] = {1e-3, 0.0, 1e-3};
  cluster.device.measured_kernels[kernel_key(problem, 2, CacheState::warm)] = {2e-3, 0.0, 2e-3};
  EXPECT_NEAR(forward({1.0, 0.0}), 4e-3, 1e-12);
  EXPECT_NEAR(forward({1.0, 1.0}), 2e-3, 1e-12);
  EXPECT_NEAR(forward({1.0, 0.5}), 3e-3, 1e-12);
  // Both at once: alone-beside within each cache state (swept 3 ms, warm 1.5 ms), then by the cache.
  EXPECT_NEAR(forward({0.5, 0.5}), 2.25e-3, 1e-12);
}

TEST(ComputeCost, CachesStayWarmWhileTheNodesStepFitsTheLastLevelCache) {
  Cluster cluster = flat_cluster();  // 8 devices per node
  const plans::Mesh two({{"data", 2}});
  EXPECT_EQ(caches_warm_fraction(cluster, two, 10e6), 0.0);  // cache unknown: swept
  cluster.device.last_level_cache_bytes = 32e6;
  EXPECT_EQ(caches_warm_fraction(cluster, two, 10e6), 1.0);  // 2 x 10 MB fit
  EXPECT_EQ(caches_warm_fraction(cluster, two, 16e6), 1.0);  // exactly
  EXPECT_DOUBLE_EQ(caches_warm_fraction(cluster, two, 64e6), 0.25);
  EXPECT_DOUBLE_EQ(caches_warm_fraction(cluster, plans::Mesh({{"data", 1}}), 64e6), 0.5);  // one rank busy
}

TEST(ComputeCost, AHeightSplitPaysTheExecutorsHaloCopies) {
  // data [3, 32, 32] -> conv1 -> conv2 (16 channels, 3x3, padding 1): conv2's input needs a gradient.
  model::GraphBuilder b("two-convs", "test");
  b.add("data", OpKind::input, model::InputAttrs{{3, 32, 32}, false}, {});
  model::Conv2dAttrs conv;
  conv.out_channels = 16;
  conv.kernel = {3, 3};
  conv.padding = {1, 1};
  b.add("conv1", OpKind::conv2d, conv, {"data"});
  b.add("conv2", OpKind::conv2d, conv, {"conv1"});
  const model::Model net = b.build();
  const plans::Mesh mesh({{"space", 2}});
  const int conv2 = net.find("conv2");
  const plans::LayerLayouts layouts = layouts_of(net, conv2, mesh, 8, plans::LayerSharding{{}, {}, {}, {0}});
  ASSERT_EQ(layouts.forward_internal.size(), 1u);
  ASSERT_EQ(layouts.forward_internal.front().halo_rows, 1);
  ASSERT_EQ(layouts.forward_internal.front().row_bytes, 8 * 16 * 32 * 4);  // one row of the local block
  Cluster cluster = flat_cluster();
  cluster.device.measured_kernels[kernel_key(*kernel_problem(net, conv2, layouts, mesh, 8), 2)] = {1e-3, 2e-3, 3e-3};
  const LayerComputeSeconds t = layer_compute_seconds(cluster, net, conv2, layouts, mesh, 8, model::DType::fp32);
  // Local block [8, 16, 16, 32] = b = 262,144 B; one halo row on a side = h = 16,384 B.
  // Forward: the output zero-filled (b), and the op's copies around the exchange: the block into
  // its extended array (2b), the boundary rows to the host (10h), the neighbours' rows up and into
  // place (8h): 2b + 18h. Backward: the input gradient zero-filled (b), the extended gradient's own
  // rows copied out (2b), its boundary rows to the host (10h), the one neighbour's part added into
  // the block's rows there (12h): 2b + 22h. All at 100 GB/s.
  const double block = 262'144;
  const double h = 16'384;
  EXPECT_NEAR(t.forward, 1e-3 + (block + 2 * block + 18 * h) / 100e9, 1e-12);
  EXPECT_NEAR(t.backward_input, 2e-3 + (block + 2 * block + 22 * h) / 100e9, 1e-12);
}

TEST(ComputeCost, LinearAtBatchOneIsMemoryBound) {
  const model::Model net = linear_net();
  const plans::Mesh mesh({{"data", 1}});
  const int fc2 = net.find("fc2");
  const LayerComputeSeconds t =
      layer_compute_seconds(flat_cluster(), net, fc2, layouts_of(net, fc2, mesh, 1), mesh, 1, model::DType::fp32);
  // Forward: 2 x 1,048,576 MACs + 1,024 bias = 2,098,176 FLOPs at 0.8e12 -> 2.62272 us.
  // Bytes: weights (1,048,576 + 1,024) x 4 = 4,198,400 + input 4,096 + output 4,096 written
  // twice (the executor zero-fills it first) = 4,210,688 B at 100e9 -> 42.10688 us.
  // Memory-bound: the weight read dominates.
  EXPECT_NEAR(t.forward, 42.10688e-6, 1e-12);
  // Input gradient: reads dY (4,096) and W (4,198,400), writes dX (4,096) twice: the same bytes.
  EXPECT_NEAR(t.backward_input, 42.10688e-6, 1e-12);
  // Weight gradient: reads dY (4,096) and the saved input (4,096), writes dW (4,198,400): 4,206,592 B.
  EXPECT_NEAR(t.backward_weight, 42.06592e-6, 1e-12);
  // fc1 reads the data: no input gradient.
  const int fc1 = net.find("fc1");
  EXPECT_EQ(layer_compute_seconds(flat_cluster(), net, fc1, layouts_of(net, fc1, mesh, 1), mesh, 1, model::DType::fp32)
                .backward_input,
            0.0);
}

// tokens [8] -> wte (vocab 1024, dim 1024) -> head (1024 -> 1024, no bias), tied to wte's
// table or with its own weight.
model::Model embedding_head_net(bool tied) {
  model::GraphBuilder b(tied ? "tied-head" : "own-head", "test");
  b.add("tokens", OpKind::input, model::InputAttrs{{8}, true}, {});
  b.add("wte", OpKind::embedding, model::EmbeddingAttrs{1024, 1024, false}, {"tokens"});
  model::LinearAttrs head;
  head.out_features = 1024;
  head.bias = false;
  if (tied) head.tied_to = "wte";
  b.add("head", OpKind::linear, head, {"wte"});
  return b.build();
}

TEST(ComputeCost, ATiedHeadIsTimedLikeAHeadWithItsOwnWeight) {
  // The tied head reads its block of the table forward and writes its gradient backward: the
  // same kernels and bytes as a head with its own weight, weight gradient included.
  const plans::Mesh mesh({{"model", 2}});
  plans::LayerSharding by_vocabulary;
  by_vocabulary.out = {0};
  for (const plans::LayerSharding& sharding : {plans::LayerSharding{}, by_vocabulary}) {
    const model::Model tied = embedding_head_net(true);
    const model::Model own = embedding_head_net(false);
    const int head = tied.find("head");
    const LayerComputeSeconds t = layer_compute_seconds(
        flat_cluster(), tied, head, layouts_of(tied, head, mesh, 1, sharding), mesh, 1, model::DType::fp32);
    const LayerComputeSeconds o = layer_compute_seconds(
        flat_cluster(), own, head, layouts_of(own, head, mesh, 1, sharding), mesh, 1, model::DType::fp32);
    EXPECT_GT(t.backward_weight, 0.0);
    EXPECT_DOUBLE_EQ(t.forward, o.forward);
    EXPECT_DOUBLE_EQ(t.backward_input, o.backward_input);
    EXPECT_DOUBLE_EQ(t.backward_weight, o.backward_weight);
  }
}

TEST(ComputeCost, ViewsCostNothingAndElementwiseOpsAreBandwidthBound) {
  const model::Model net = conv_net();
  const plans::Mesh mesh({{"data", 1}});
  const int flat = net.find("flat");
  const LayerComputeSeconds view =
      layer_compute_seconds(flat_cluster(), net, flat, layouts_of(net, flat, mesh, 8), mesh, 8, model::DType::fp32);
  EXPECT_EQ(view.forward, 0.0);
  EXPECT_EQ(view.backward_input, 0.0);
  EXPECT_EQ(view.backward_weight, 0.0);
  const int relu = net.find("relu");
  const LayerComputeSeconds r =
      layer_compute_seconds(flat_cluster(), net, relu, layouts_of(net, relu, mesh, 8), mesh, 8, model::DType::fp32);
  // Forward reads 524,288 B and writes 524,288 B twice (zero-filled, then the result):
  // 1,572,864 B at 100e9 = 15.72864 us, against 131,072 FLOPs at 0.5e12 = 0.26 us.
  EXPECT_NEAR(r.forward, 15.72864e-6, 1e-12);
  EXPECT_EQ(r.backward_weight, 0.0);  // no parameters
}

TEST(ComputeCost, MonotoneInBatch) {
  const model::Model net = conv_net();
  const plans::Mesh mesh({{"data", 1}});
  const Cluster cluster = flat_cluster();
  double previous = 0.0;
  for (int64_t batch : {1, 2, 4, 8, 16, 32, 64}) {
    for (int i = 0; i < net.size(); ++i) {
      const LayerComputeSeconds t =
          layer_compute_seconds(cluster, net, i, layouts_of(net, i, mesh, batch), mesh, batch, model::DType::fp32);
      EXPECT_GE(t.forward, 0.0);
      EXPECT_GE(t.backward_input, 0.0);
      EXPECT_GE(t.backward_weight, 0.0);
    }
    const int conv = net.find("conv");
    const LayerComputeSeconds t =
        layer_compute_seconds(cluster, net, conv, layouts_of(net, conv, mesh, batch), mesh, batch, model::DType::fp32);
    const double total = t.forward + t.backward_input + t.backward_weight;
    EXPECT_GT(total, previous) << "batch " << batch;
    previous = total;
  }
}

TEST(ComputeCost, SplittingTheWorkTakesLessTime) {
  const model::Model net = conv_net();
  const int conv = net.find("conv");
  const Cluster cluster = flat_cluster();
  const plans::Mesh one({{"data", 1}});
  const plans::Mesh two({{"data", 2}});
  const plans::LayerLayouts whole = layouts_of(net, conv, one, 8);
  const plans::LayerLayouts split = layouts_of(net, conv, two, 8, plans::LayerSharding{{0}, {}, {}, {}});
  ASSERT_DOUBLE_EQ(split.work_fraction, 0.5);
  const double t_whole = layer_compute_seconds(cluster, net, conv, whole, one, 8, model::DType::fp32).forward;
  const double t_split = layer_compute_seconds(cluster, net, conv, split, two, 8, model::DType::fp32).forward;
  EXPECT_NEAR(t_split, t_whole / 2, 1e-15);  // compute-bound at a flat efficiency: exactly half

  // The overload without a mesh takes activations as work_fraction of the global tensors.
  plans::LayerLayouts halved = whole;
  halved.work_fraction = 0.5;
  EXPECT_LT(layer_compute_seconds(cluster, net, conv, halved, 8, model::DType::fp32).forward,
            layer_compute_seconds(cluster, net, conv, whole, 8, model::DType::fp32).forward);
  EXPECT_NEAR(layer_compute_seconds(cluster, net, conv, whole, 8, model::DType::fp32).forward, t_whole, 1e-15);
}

TEST(ComputeCost, ZeroWorkIsFree) {
  const model::Model net = conv_net();
  const plans::Mesh mesh({{"data", 1}});
  const int data = net.find("data");
  const LayerComputeSeconds t =
      layer_compute_seconds(flat_cluster(), net, data, layouts_of(net, data, mesh, 8), mesh, 8, model::DType::fp32);
  EXPECT_EQ(t.forward + t.backward_input + t.backward_weight, 0.0);
}

TEST(ComputeCost, OptimizerStepStreamsTheModelStates) {
  plans::Plan plan;
  plan.optimizer.kind = plans::OptimizerKind::sgd_momentum;
  // fp32 SGD: (4 param + 4 grad + 4 momentum) x 2 = 24 B per parameter; 1e6 parameters ->
  // 24e6 B at 100e9 = 240 us.
  EXPECT_NEAR(optimizer_step_seconds(flat_cluster(), plan, 1'000'000), 240e-6, 1e-12);
  // bf16 Adam: (2 + 2 + 8 moments + 4 fp32 master) x 2 = 32 B per parameter -> 320 us.
  plan.dtype = model::DType::bf16;
  plan.optimizer.kind = plans::OptimizerKind::adam;
  EXPECT_NEAR(optimizer_step_seconds(flat_cluster(), plan, 1'000'000), 320e-6, 1e-12);
  EXPECT_EQ(optimizer_step_seconds(flat_cluster(), plan, 0), 0.0);
}

TEST(ComputeCost, OpClasses) {
  const model::Model net = conv_net();
  EXPECT_EQ(op_class_of(net.layer(net.find("conv"))), OpClass::conv);
  EXPECT_EQ(op_class_of(net.layer(net.find("relu"))), OpClass::elementwise);
  const model::Model fc = linear_net();
  EXPECT_EQ(op_class_of(fc.layer(fc.find("fc1"))), OpClass::gemm);
}

}  // namespace
}  // namespace splitbrain::sim

namespace splitbrain::sim {
namespace {

// One layer of conv_net at batch 8 on one rank, on `cluster`.
LayerComputeSeconds seconds_of(const Cluster& cluster, const std::string& layer) {
  const model::Model net = conv_net();
  const plans::Mesh mesh({{"data", 1}});
  const int index = net.find(layer);
  return layer_compute_seconds(cluster, net, index, layouts_of(net, index, mesh, 8), mesh, 8, model::DType::fp32);
}

TEST(ComputeCost, BackwardKernelsRunAtTheirOwnCurve) {
  Cluster cluster = flat_cluster();
  const LayerComputeSeconds same = seconds_of(cluster, "conv");
  // A backward convolution at half the forward's efficiency takes twice as long (compute-bound);
  // the forward does not move.
  EfficiencyCurve slower = cluster.device.conv_efficiency;
  slower.max_efficiency /= 2;
  cluster.device.backward.conv = slower;
  const LayerComputeSeconds split = seconds_of(cluster, "conv");
  EXPECT_DOUBLE_EQ(split.forward, same.forward);
  EXPECT_NEAR(split.backward_weight, 2 * same.backward_weight, 1e-15);
}

TEST(ComputeCost, BackwardMemoryBoundOpsUseTheBackwardMemoryCurve) {
  Cluster cluster = flat_cluster();
  const LayerComputeSeconds same = seconds_of(cluster, "relu");
  EfficiencyCurve quarter = cluster.device.memory_efficiency;
  quarter.max_efficiency /= 4;
  cluster.device.backward.memory = quarter;
  const LayerComputeSeconds split = seconds_of(cluster, "relu");
  EXPECT_DOUBLE_EQ(split.forward, same.forward);
  EXPECT_GT(same.backward_input, 0.0);
  EXPECT_NEAR(split.backward_input, 4 * same.backward_input, 1e-15);
}

TEST(ComputeCost, ConvWeightGradientIsReadInOutputPixelsOnlyFromACalibratedCurve) {
  Cluster cluster = flat_cluster();
  cluster.device.conv_efficiency = {1.0, 7'208'960};  // half efficiency at this conv's FLOPs (batch 8)
  // No weight-gradient curve: the forward's, read at the FLOPs, as the forward is.
  const LayerComputeSeconds by_flops = seconds_of(cluster, "conv");
  EXPECT_NEAR(by_flops.backward_weight, by_flops.forward, 1e-15);
  // A calibrated curve is read at the reduction length: 8 samples x 32 x 32 output pixels =
  // 8,192; half efficiency there doubles the time of a full-efficiency product.
  cluster.device.weight_gradient.conv = EfficiencyCurve{1.0, 8'192};
  EXPECT_NEAR(seconds_of(cluster, "conv").backward_weight, 7'208'960 / (1e12 * 0.5), 1e-12);
}

}  // namespace
}  // namespace splitbrain::sim
