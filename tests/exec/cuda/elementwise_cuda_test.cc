// The CUDA activations, softmax cross-entropy and dropout against their CPU twins. Dropout's
// mask must be the CPU's bit for bit (same global-index hash), on a block cut out of a larger
// tensor as a split layer's rank holds it.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "exec/cpu/cpu_context.h"
#include "exec/cpu/dropout.h"
#include "exec/cpu/eltwise.h"
#include "exec/cpu/softmax_cross_entropy.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/dropout.h"
#include "exec/cuda/eltwise.h"
#include "exec/cuda/softmax_cross_entropy.h"
#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::count;
using testing::expect_matches_cpu;
using testing::OnDevice;
using testing::random_floats;

void expect_activation_matches_cpu(kernels::Activation kind) {
  constexpr int64_t kElements = 1000;
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0);
  cpu::ActivationKernel cpu_kernel(cpu_context, kind, kElements);
  ActivationKernel gpu_kernel(gpu_context, kind, kElements);
  const auto x = random_floats(count(kElements), 41, -4.0f, 4.0f);
  const auto dy = random_floats(count(kElements), 42);
  std::vector<float> cpu_y(x.size());
  cpu_kernel.forward(x.data(), cpu_y.data());
  const OnDevice<float> gpu_x(x), gpu_y(x.size());
  gpu_kernel.forward(gpu_x.get(), gpu_y.get());
  expect_matches_cpu(gpu_y.host(), cpu_y, "y");
  // In place, as the runtime may run it (x == y).
  const OnDevice<float> gpu_in_place(x);
  gpu_kernel.forward(gpu_in_place.get(), gpu_in_place.get());
  expect_matches_cpu(gpu_in_place.host(), cpu_y, "y in place");
  // relu's backward reads y, gelu's reads x.
  const std::vector<float>& saved = kind == kernels::Activation::relu ? cpu_y : x;
  std::vector<float> cpu_dx(x.size());
  cpu_kernel.backward(saved.data(), dy.data(), cpu_dx.data());
  const OnDevice<float> gpu_saved(saved), gpu_dy(dy), gpu_dx(x.size());
  gpu_kernel.backward(gpu_saved.get(), gpu_dy.get(), gpu_dx.get());
  expect_matches_cpu(gpu_dx.host(), cpu_dx, "dx");
}

TEST(CudaActivation, ReluMatchesTheCpu) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  expect_activation_matches_cpu(kernels::Activation::relu);
}

TEST(CudaActivation, GeluTanhMatchesTheCpu) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  expect_activation_matches_cpu(kernels::Activation::gelu_tanh);
}

TEST(CudaSoftmaxCrossEntropy, LossProbabilitiesAndGradientMatchTheCpu) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const kernels::SoftmaxCrossEntropyShape s{.rows = 6, .classes = 10};
  CudaContext gpu_context(0);
  cpu::SoftmaxCrossEntropyKernel cpu_kernel(s);
  SoftmaxCrossEntropyKernel gpu_kernel(gpu_context, s);
  // Large logits in one row: its softmax underflows, the loss must stay finite and equal.
  auto logits = random_floats(count(s.rows * s.classes), 51, -3.0f, 3.0f);
  logits[3] = 120.0f;
  // Labels in device memory, where the loss op uploads them (it checks them on the host first).
  const std::vector<int32_t> labels{0, 9, 4, 4, 1, 7};
  const OnDevice<int32_t> gpu_labels(labels);
  const float scale = 1.0f / 12.0f;
  std::vector<float> cpu_probs(logits.size());
  double cpu_loss = 0.0;
  float cpu_loss_float = 0.0f;
  cpu_kernel.forward(logits.data(), labels.data(), cpu_probs.data(), scale, &cpu_loss, {&cpu_loss_float, 1});
  // The loss stays on the device until read here.
  const OnDevice<float> gpu_logits(logits), gpu_probs(logits.size()), gpu_loss_float(3);
  const OnDevice<double> gpu_loss(1);
  gpu_kernel.forward(gpu_logits.get(), gpu_labels.get(), gpu_probs.get(), scale, gpu_loss.get(),
                     {gpu_loss_float.get(), 3});
  EXPECT_NEAR(gpu_loss.host()[0], cpu_loss, testing::kRelativeTolerance * cpu_loss);
  EXPECT_EQ(gpu_loss_float.host(), std::vector<float>(3, static_cast<float>(gpu_loss.host()[0])));
  expect_matches_cpu(gpu_probs.host(), cpu_probs, "probs");
  // probs == logits, which the interface allows.
  const OnDevice<float> gpu_in_place(logits);
  gpu_kernel.forward(gpu_in_place.get(), gpu_labels.get(), gpu_in_place.get(), scale, gpu_loss.get(),
                     {gpu_loss_float.get(), 3});
  EXPECT_NEAR(gpu_loss.host()[0], cpu_loss, testing::kRelativeTolerance * cpu_loss);
  expect_matches_cpu(gpu_in_place.host(), cpu_probs, "probs in place");
  std::vector<float> cpu_d(logits.size());
  cpu_kernel.backward(cpu_probs.data(), labels.data(), scale, cpu_d.data());
  const OnDevice<float> gpu_saved_probs(cpu_probs), gpu_d(logits.size());
  gpu_kernel.backward(gpu_saved_probs.get(), gpu_labels.get(), scale, gpu_d.get());
  expect_matches_cpu(gpu_d.host(), cpu_d, "dlogits");
  // Neither pass crossed to the host: the loss goes there by the op's queued download.
  EXPECT_EQ(gpu_context.host_transfers().count(), 0);
}

TEST(CudaSoftmaxCrossEntropy, LabelsAreCheckedOnTheHostBeforeTheyAreUploaded) {
  const kernels::SoftmaxCrossEntropyShape s{.rows = 6, .classes = 10};
  const std::vector<int32_t> bad{0, 10, 0, 0, 0, 0};
  EXPECT_THROW(kernels::check_labels(s, bad), kernels::KernelArgumentError);
  const std::vector<int32_t> good{0, 9, 4, 4, 1, 7};
  EXPECT_NO_THROW(kernels::check_labels(s, good));
}

TEST(CudaDropout, SameMaskAndValuesAsTheCpuOnABlock) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  CudaContext gpu_context(0);
  const kernels::DropoutKey key{.seed = 1234, .step = 7, .layer = 3};
  const double p = 0.3;
  cpu::DropoutKernel cpu_kernel(p);
  DropoutKernel gpu_kernel(gpu_context, p);
  // A rank's block of a [4, 6, 10] tensor split along the first two dims.
  const kernels::DropoutBlock block{.global_shape = {4, 6, 10}, .offset = {2, 3, 0}, .local_shape = {2, 3, 10}};
  const auto x = random_floats(count(block.local_elements()), 61);
  std::vector<float> cpu_y(x.size());
  std::vector<uint8_t> cpu_mask(x.size());
  cpu_kernel.forward(key, block, x.data(), cpu_y.data(), cpu_mask.data());
  const OnDevice<float> gpu_x(x), gpu_y(x.size());
  const OnDevice<uint8_t> gpu_mask(x.size());
  gpu_kernel.forward(key, block, gpu_x.get(), gpu_y.get(), gpu_mask.get());
  EXPECT_EQ(gpu_mask.host(), cpu_mask);
  EXPECT_EQ(gpu_y.host(), cpu_y);  // the same product x * scale per element: exactly equal

  const auto dy = random_floats(x.size(), 62);
  std::vector<float> cpu_dx(x.size());
  cpu_kernel.backward(block.local_elements(), cpu_mask.data(), dy.data(), cpu_dx.data());
  const OnDevice<uint8_t> gpu_saved_mask(cpu_mask);
  const OnDevice<float> gpu_dy(dy), gpu_dx(x.size());
  gpu_kernel.backward(block.local_elements(), gpu_saved_mask.get(), gpu_dy.get(), gpu_dx.get());
  EXPECT_EQ(gpu_dx.host(), cpu_dx);
}

}  // namespace
}  // namespace splitbrain::exec::cuda
