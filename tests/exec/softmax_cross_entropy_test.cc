// Softmax cross-entropy against float64 log-sum-exp, including logits large enough to overflow
// a naive exp(), and probs written over the logits.

#include "exec/cpu/softmax_cross_entropy.h"

#include <gtest/gtest.h>

#include <cmath>

#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::KernelArgumentError;
using kernels::SoftmaxCrossEntropyShape;
using testing::expect_close;
using testing::random_floats;

TEST(SoftmaxCrossEntropy, MatchesFloat64ReferenceAndStaysFinite) {
  for (const float spread : {4.0f, 200.0f}) {  // 200: exp(logit) overflows fp32 without the max shift
    const SoftmaxCrossEntropyShape s{9, 11};
    const auto rows = static_cast<std::size_t>(s.rows), classes = static_cast<std::size_t>(s.classes);
    const auto logits = random_floats(rows * classes, 71, -spread, spread);
    std::vector<int32_t> labels(rows);
    for (std::size_t r = 0; r < rows; ++r) labels[r] = static_cast<int32_t>((r * 7) % classes);
    const float scale = 1.0f / 36.0f;  // e.g. 1 / the global row count
    double loss_ref = 0;
    std::vector<double> grad_ref(rows * classes);
    for (std::size_t r = 0; r < rows; ++r) {
      double max = -1e300, sum = 0;
      for (std::size_t c = 0; c < classes; ++c) max = std::max(max, static_cast<double>(logits[r * classes + c]));
      for (std::size_t c = 0; c < classes; ++c) sum += std::exp(logits[r * classes + c] - max);
      loss_ref += std::log(sum) + max - logits[r * classes + static_cast<std::size_t>(labels[r])];
      for (std::size_t c = 0; c < classes; ++c)
        grad_ref[r * classes + c] =
            (std::exp(logits[r * classes + c] - max) / sum - (c == static_cast<std::size_t>(labels[r]) ? 1.0 : 0.0)) *
            scale;
    }
    std::vector<float> buffer = logits;  // probs over the logits, then the gradient over the probs
    double loss = 0.0;
    float loss_float = 0.0f;
    SoftmaxCrossEntropyKernel(s).forward(buffer.data(), labels.data(), buffer.data(), scale, &loss, {&loss_float, 1});
    EXPECT_NEAR(loss, loss_ref * scale, 1e-5 * std::abs(loss_ref * scale));
    EXPECT_EQ(loss_float, static_cast<float>(loss));
    SoftmaxCrossEntropyKernel(s).backward(buffer.data(), labels.data(), scale, buffer.data());
    expect_close(buffer, grad_ref, 1e-5, "dlogits");
  }
}

TEST(SoftmaxCrossEntropy, RejectsLabelOutOfRange) {
  const std::vector<float> logits(6, 0.0f);
  std::vector<float> probs(6);
  const std::vector<int32_t> labels{0, 3};
  double loss = 0.0;
  float loss_float = 0.0f;
  EXPECT_THROW(SoftmaxCrossEntropyKernel({2, 3}).forward(logits.data(), labels.data(), probs.data(), 1.0, &loss,
                                                         {&loss_float, 1}),
               KernelArgumentError);
}

}  // namespace
}  // namespace splitbrain::exec::cpu
