#include "exec/cuda/softmax_cross_entropy.h"

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/cudnn_descriptors.h"
#include "exec/cuda/elementwise_kernels.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

namespace {

// Staging slots of the context: what the arguments cannot hold.
enum Slot : std::size_t { kRowLoss, kLogitsCopy };

std::size_t value_bytes(const kernels::SoftmaxCrossEntropyShape& s) {
  return static_cast<std::size_t>(s.rows * s.classes) * sizeof(float);
}

}  // namespace

SoftmaxCrossEntropyKernel::SoftmaxCrossEntropyKernel(CudaContext& context,
                                                     const kernels::SoftmaxCrossEntropyShape& shape)
    : context_(context), shape_(kernels::checked(shape)) {}

void SoftmaxCrossEntropyKernel::forward(const float* logits, const int32_t* labels, float* probs, double scale,
                                        double* loss, std::span<float> loss_output) {
  const kernels::SoftmaxCrossEntropyShape& s = shape_;
  if (probs == logits) {
    // cuDNN does not document an in-place softmax: it reads a copy of the logits instead.
    auto* logits_copy = static_cast<float*>(context_.staging(kLogitsCopy, value_bytes(s)));
    SB_CUDA_CHECK(cudaMemcpyAsync(logits_copy, logits, value_bytes(s), cudaMemcpyDeviceToDevice, context_.stream()));
    logits = logits_copy;
  }
  const auto loss_bytes = static_cast<std::size_t>(s.rows) * sizeof(double);
  auto* row_loss = static_cast<double*>(context_.staging(kRowLoss, loss_bytes));
  const TensorDescriptor rows(s.rows, s.classes, 1, 1);
  const float one = 1.0f, zero = 0.0f;
  SB_CUDNN_CHECK(cudnnSoftmaxForward(context_.cudnn(), CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &one, rows.get(),
                                     logits, &zero, rows.get(), probs));
  softmax_from_log_with_loss(context_.stream(), s.rows, s.classes, labels, probs, row_loss);
  sum_row_losses(context_.stream(), s.rows, row_loss, scale, loss, loss_output.data(),
                 static_cast<int64_t>(loss_output.size()));
}

void SoftmaxCrossEntropyKernel::backward(const float* probs, const int32_t* labels, float scale, float* dlogits) {
  const kernels::SoftmaxCrossEntropyShape& s = shape_;
  // In place allowed (dlogits == probs): each element reads its own probability only.
  softmax_cross_entropy_grad(context_.stream(), s.rows, s.classes, probs, labels, scale, dlogits);
}

std::unique_ptr<kernels::SoftmaxCrossEntropyKernel> make_softmax_cross_entropy(
    CudaContext& context, const kernels::SoftmaxCrossEntropyShape& shape) {
  return std::make_unique<SoftmaxCrossEntropyKernel>(context, shape);
}

}  // namespace splitbrain::exec::cuda
