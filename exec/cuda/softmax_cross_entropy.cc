#include "exec/cuda/softmax_cross_entropy.h"

#include <string>
#include <vector>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/cudnn_descriptors.h"
#include "exec/cuda/elementwise_kernels.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cuda {

namespace {

// The CPU kernel's checks of the shape.
const kernels::SoftmaxCrossEntropyShape& checked(const kernels::SoftmaxCrossEntropyShape& s) {
  if (s.rows <= 0 || s.classes <= 0)
    throw kernels::KernelArgumentError("softmax_cross_entropy: rows and classes must be positive");
  return s;
}

// The labels are host memory, so they are checked before any upload.
void check_labels(const kernels::SoftmaxCrossEntropyShape& s, const int32_t* labels) {
  for (int64_t r = 0; r < s.rows; ++r)
    if (labels[r] < 0 || labels[r] >= s.classes)
      throw kernels::KernelArgumentError("softmax_cross_entropy: label " + std::to_string(labels[r]) + " of row " +
                                         std::to_string(r) + " is outside [0, " + std::to_string(s.classes) + ")");
}

// Staging slots of the context.
enum Slot : std::size_t { kValues, kLabels, kRowLoss, kProbs };

struct Staged {
  float* values;
  int32_t* labels;
  std::size_t value_bytes;
};

Staged stage(CudaContext& context, const kernels::SoftmaxCrossEntropyShape& s, const float* values,
             const int32_t* labels) {
  const auto value_bytes = static_cast<std::size_t>(s.rows * s.classes) * sizeof(float);
  const auto label_bytes = static_cast<std::size_t>(s.rows) * sizeof(int32_t);
  Staged staged{static_cast<float*>(context.staging(kValues, value_bytes)),
                static_cast<int32_t*>(context.staging(kLabels, label_bytes)), value_bytes};
  SB_CUDA_CHECK(cudaMemcpyAsync(staged.values, values, value_bytes, cudaMemcpyDefault, context.stream()));
  SB_CUDA_CHECK(cudaMemcpyAsync(staged.labels, labels, label_bytes, cudaMemcpyDefault, context.stream()));
  return staged;
}

}  // namespace

SoftmaxCrossEntropyKernel::SoftmaxCrossEntropyKernel(CudaContext& context,
                                                     const kernels::SoftmaxCrossEntropyShape& shape)
    : context_(context), shape_(checked(shape)) {}

double SoftmaxCrossEntropyKernel::forward(const float* logits, const int32_t* labels, float* probs) {
  const kernels::SoftmaxCrossEntropyShape& s = shape_;
  check_labels(s, labels);
  const Staged staged = stage(context_, s, logits, labels);
  const auto loss_bytes = static_cast<std::size_t>(s.rows) * sizeof(double);
  auto* row_loss = static_cast<double*>(context_.staging(kRowLoss, loss_bytes));
  const TensorDescriptor rows(s.rows, s.classes, 1, 1);
  auto* device_probs = static_cast<float*>(context_.staging(kProbs, staged.value_bytes));
  const float one = 1.0f, zero = 0.0f;
  SB_CUDNN_CHECK(cudnnSoftmaxForward(context_.cudnn(), CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &one, rows.get(),
                                     staged.values, &zero, rows.get(), device_probs));
  softmax_from_log_with_loss(context_.stream(), s.rows, s.classes, staged.labels, device_probs, row_loss);
  std::vector<double> losses(static_cast<std::size_t>(s.rows));
  SB_CUDA_CHECK(cudaMemcpyAsync(probs, device_probs, staged.value_bytes, cudaMemcpyDefault, context_.stream()));
  SB_CUDA_CHECK(cudaMemcpyAsync(losses.data(), row_loss, loss_bytes, cudaMemcpyDefault, context_.stream()));
  context_.synchronize();
  double loss = 0.0;  // in row order, as the CPU sums
  for (const double row : losses) loss += row;
  return loss;
}

void SoftmaxCrossEntropyKernel::backward(const float* probs, const int32_t* labels, float scale, float* dlogits) {
  const kernels::SoftmaxCrossEntropyShape& s = shape_;
  check_labels(s, labels);
  const Staged staged = stage(context_, s, probs, labels);
  // In place: each element reads its own probability only.
  softmax_cross_entropy_grad(context_.stream(), s.rows, s.classes, staged.values, staged.labels, scale, staged.values);
  SB_CUDA_CHECK(cudaMemcpyAsync(dlogits, staged.values, staged.value_bytes, cudaMemcpyDefault, context_.stream()));
  context_.synchronize();
}

}  // namespace splitbrain::exec::cuda
