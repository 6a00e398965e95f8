// Kernel calls queued through recorded CUDA graphs (call_graphs.h): a convolution's and a linear
// layer's four passes, called again and again on the same device arrays with new values in them
// (as a step's arrays are), match the CPU twin on every call (direct, recorded, replayed), and in
// the third round every call is a replay; arrays at other addresses get a recording of their own;
// with the graphs off nothing is recorded. And the caching allocator hands a repeated step the same
// blocks, which is what lets a step's calls be replays.

#include "exec/cuda/call_graphs.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "exec/cpu/conv2d.h"
#include "exec/cpu/linear.h"
#include "exec/cuda/conv2d.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/device_memory_pool.h"
#include "exec/cuda/linear.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::count;
using testing::expect_matches_cpu;
using testing::OnDevice;
using testing::random_floats;

// New host values into an existing device array (its address unchanged).
void overwrite(const OnDevice<float>& array, const std::vector<float>& values) {
  SB_CUDA_CHECK(cudaDeviceSynchronize());
  SB_CUDA_CHECK(cudaMemcpy(array.get(), values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice));
}

struct LayerSizes {
  int64_t x = 0, y = 0, w = 0, b = 0;
};

// `rounds` rounds of forward, backward data, backward weights and accumulated weights on the same
// device arrays, new random values each round, every result against the CPU twin's. Returns the
// kernel graph counts of the last round alone (round 1 queues directly, round 2 records).
template <class CpuKernel, class GpuKernel>
KernelGraphCounts expect_rounds_match_cpu(const CudaContext& context, CpuKernel& cpu, GpuKernel& gpu,
                                          const LayerSizes& n, int rounds) {
  KernelGraphCounts before;
  const OnDevice<float> x(count(n.x)), w(count(n.w)), b(count(n.b)), dy(count(n.y));
  const OnDevice<float> y(count(n.y)), dx(count(n.x)), dw(count(n.w)), db(count(n.b));
  for (int round = 0; round < rounds; ++round) {
    before = context.kernel_graph_counts();
    const auto seed = static_cast<uint32_t>(10 * round);
    const auto hx = random_floats(count(n.x), seed + 1), hw = random_floats(count(n.w), seed + 2);
    const auto hb = random_floats(count(n.b), seed + 3), hdy = random_floats(count(n.y), seed + 4);
    overwrite(x, hx);
    overwrite(w, hw);
    overwrite(b, hb);
    overwrite(dy, hdy);
    std::vector<float> cy(count(n.y)), cdx(count(n.x)), cdw(count(n.w)), cdb(count(n.b));
    cpu.forward(hx.data(), hw.data(), hb.data(), cy.data());
    gpu.forward(x.get(), w.get(), b.get(), y.get());
    expect_matches_cpu(y.host(), cy, "y");
    cpu.backward_data(hdy.data(), hw.data(), cdx.data());
    gpu.backward_data(dy.get(), w.get(), dx.get());
    expect_matches_cpu(dx.host(), cdx, "dx");
    cpu.backward_weights(hx.data(), hdy.data(), cdw.data(), cdb.data());
    gpu.backward_weights(x.get(), dy.get(), dw.get(), db.get());
    expect_matches_cpu(dw.host(), cdw, "dw");
    expect_matches_cpu(db.host(), cdb, "db");
    // beta = 1 on the same arrays: a recording of its own, adding this round's gradients again.
    cpu.accumulate_weight_gradients(hx.data(), hdy.data(), cdw.data(), cdb.data());
    gpu.accumulate_weight_gradients(x.get(), dy.get(), dw.get(), db.get());
    expect_matches_cpu(dw.host(), cdw, "accumulated dw");
    expect_matches_cpu(db.host(), cdb, "accumulated db");
  }
  const KernelGraphCounts& after = context.kernel_graph_counts();
  return {after.first_calls - before.first_calls, after.recorded - before.recorded, after.replayed - before.replayed,
          after.unrecordable - before.unrecordable};
}

const kernels::Conv2dShape kConv{.batch = 4,
                                 .in_channels = 8,
                                 .height = 8,
                                 .width = 8,
                                 .out_channels = 16,
                                 .kernel_h = 3,
                                 .kernel_w = 3,
                                 .pad_top = 1,
                                 .pad_bottom = 1,
                                 .pad_left = 1,
                                 .pad_right = 1};

LayerSizes conv_sizes(const kernels::Conv2dShape& s) {
  return {s.batch * s.in_channels * s.height * s.width, s.batch * s.out_channels * s.out_height() * s.out_width(),
          s.out_channels * s.in_channels / s.groups * s.kernel_h * s.kernel_w, s.out_channels};
}

TEST(CudaCallGraphs, ConvolutionReplaysMatchTheCpuEveryRound) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0);
  cpu::Conv2dKernel cpu(cpu_context, kConv);
  Conv2dKernel gpu(gpu_context, kConv);
  const KernelGraphCounts last = expect_rounds_match_cpu(gpu_context, cpu, gpu, conv_sizes(kConv), 3);
  EXPECT_EQ(last.recorded, 0);
  EXPECT_EQ(last.replayed, 4);  // the four passes
  EXPECT_EQ(gpu_context.kernel_graph_counts().unrecordable, 0);
}

TEST(CudaCallGraphs, PerSidePaddingIsRecordedWithItsOwnBuffer) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  kernels::Conv2dShape shape = kConv;
  shape.pad_top = 2;  // cuDNN pads symmetrically only: the kernel pads into a buffer of its own
  shape.pad_bottom = 0;
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0);
  cpu::Conv2dKernel cpu(cpu_context, shape);
  Conv2dKernel gpu(gpu_context, shape);
  const KernelGraphCounts last = expect_rounds_match_cpu(gpu_context, cpu, gpu, conv_sizes(shape), 3);
  EXPECT_EQ(last.replayed, 4);
  EXPECT_EQ(gpu_context.kernel_graph_counts().unrecordable, 0);
}

TEST(CudaCallGraphs, LinearReplaysMatchTheCpuEveryRound) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const kernels::LinearShape shape{.rows = 6, .in_features = 20, .out_features = 12};
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0);
  cpu::LinearKernel cpu(cpu_context, shape);
  LinearKernel gpu(gpu_context, shape);
  const KernelGraphCounts last =
      expect_rounds_match_cpu(gpu_context, cpu, gpu,
                              {shape.rows * shape.in_features, shape.rows * shape.out_features,
                               shape.in_features * shape.out_features, shape.out_features},
                              3);
  EXPECT_EQ(last.recorded, 0);
  EXPECT_EQ(last.replayed, 4);
  EXPECT_EQ(gpu_context.kernel_graph_counts().unrecordable, 0);
}

TEST(CudaCallGraphs, OtherArraysGetARecordingOfTheirOwn) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const LayerSizes n = conv_sizes(kConv);
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0);
  cpu::Conv2dKernel cpu(cpu_context, kConv);
  Conv2dKernel gpu(gpu_context, kConv);
  const auto hx = random_floats(count(n.x), 1), hw = random_floats(count(n.w), 2), hb = random_floats(count(n.b), 3);
  const OnDevice<float> x(hx), w(hw), b(hb), y(count(n.y)), other_y(count(n.y));
  std::vector<float> cy(count(n.y));
  cpu.forward(hx.data(), hw.data(), hb.data(), cy.data());
  for (int call = 0; call < 2; ++call) {  // directly, then recorded: for each output
    gpu.forward(x.get(), w.get(), b.get(), y.get());
    gpu.forward(x.get(), w.get(), b.get(), other_y.get());
  }
  EXPECT_EQ(gpu_context.kernel_graph_counts().first_calls, 2);
  EXPECT_EQ(gpu_context.kernel_graph_counts().recorded, 2);
  SB_CUDA_CHECK(cudaDeviceSynchronize());  // the memset below is on another stream
  SB_CUDA_CHECK(cudaMemset(y.get(), 0, count(n.y) * sizeof(float)));
  gpu.forward(x.get(), w.get(), b.get(), y.get());  // the first output's graph, not the other's
  EXPECT_EQ(gpu_context.kernel_graph_counts().replayed, 1);
  expect_matches_cpu(y.host(), cy, "y");
  expect_matches_cpu(other_y.host(), cy, "the other y");
}

TEST(CudaCallGraphs, OffRecordsNothing) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0, Fp32Math::exact, KernelGraphs::off);
  cpu::Conv2dKernel cpu(cpu_context, kConv);
  Conv2dKernel gpu(gpu_context, kConv);
  expect_rounds_match_cpu(gpu_context, cpu, gpu, conv_sizes(kConv), 2);
  const KernelGraphCounts& counts = gpu_context.kernel_graph_counts();
  EXPECT_EQ(counts.first_calls + counts.recorded + counts.replayed + counts.unrecordable, 0);
}

TEST(CudaDeviceMemoryPool, HandsARepeatedStepTheSameBlocks) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  SB_CUDA_CHECK(cudaSetDevice(0));
  DeviceMemoryPool pool;
  // A step's requests: three blocks of one size, freed out of order, one reused within the step.
  auto step = [&] {
    std::vector<void*> got;
    void* a = pool.allocate(4096);
    void* b = pool.allocate(4096);
    got.insert(got.end(), {a, b});
    pool.give_back(a, 4096);
    void* c = pool.allocate(4096);
    void* d = pool.allocate(4096);
    got.insert(got.end(), {c, d});
    pool.give_back(d, 4096);
    pool.give_back(b, 4096);
    pool.give_back(c, 4096);
    return got;
  };
  step();  // the first step's blocks come from cudaMalloc
  const std::vector<void*> second = step();
  for (int repeat = 0; repeat < 3; ++repeat) EXPECT_EQ(step(), second);
}

}  // namespace
}  // namespace splitbrain::exec::cuda
