#include "exec/cpu/softmax_cross_entropy.h"

#include <algorithm>
#include <cmath>

#include "exec/kernels/shape_checks.h"
#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

SoftmaxCrossEntropyKernel::SoftmaxCrossEntropyKernel(const kernels::SoftmaxCrossEntropyShape& shape)
    : shape_(kernels::checked(shape)) {}

void SoftmaxCrossEntropyKernel::forward(const float* logits, const int32_t* labels, float* probs, double scale,
                                        double* loss_out, std::span<float> loss_output) {
  const auto& s = shape_;
  kernels::check_labels(s, {labels, static_cast<size_t>(s.rows)});
  double loss = 0.0;
  for (int64_t r = 0; r < s.rows; ++r) {
    const float* x = logits + r * s.classes;
    float* p = probs + r * s.classes;
    // Subtracting the row maximum keeps every exp() in (0, 1]: no overflow for large logits.
    const float max = *std::max_element(x, x + s.classes);
    const float target = x[labels[r]];  // read before p (which may be x) is overwritten
    double sum = 0.0;
    for (int64_t c = 0; c < s.classes; ++c) {
      const float e = std::exp(x[c] - max);
      p[c] = e;
      sum += e;
    }
    const double log_sum = std::log(sum);
    loss += log_sum - (static_cast<double>(target) - max);
    const auto inv = static_cast<float>(1.0 / sum);
    for (int64_t c = 0; c < s.classes; ++c) p[c] *= inv;
  }
  *loss_out = loss * scale;
  std::fill(loss_output.begin(), loss_output.end(), static_cast<float>(*loss_out));
}

void SoftmaxCrossEntropyKernel::backward(const float* probs, const int32_t* labels, float scale, float* dlogits) {
  const auto& s = shape_;
  kernels::check_labels(s, {labels, static_cast<size_t>(s.rows)});
  for (int64_t r = 0; r < s.rows; ++r) {
    const float* p = probs + r * s.classes;
    float* d = dlogits + r * s.classes;
    for (int64_t c = 0; c < s.classes; ++c) d[c] = p[c] * scale;
    d[labels[r]] -= scale;
  }
}

std::unique_ptr<kernels::SoftmaxCrossEntropyKernel> make_softmax_cross_entropy(
    CpuContext& /*context*/, const kernels::SoftmaxCrossEntropyShape& shape) {
  return std::make_unique<SoftmaxCrossEntropyKernel>(shape);
}

}  // namespace splitbrain::exec::cpu
