#pragma once
// Softmax cross-entropy over the last dimension of local logits [rows, classes] with int32 class
// labels (PyTorch's F.cross_entropy with reduction='sum'; the op divides by the GLOBAL number of
// rows, which only it knows when the batch or the sequence is split). Classes are never split
// (plans/op_sharding: batch and spatial roles only), so rows are complete here.

#include <cstdint>
#include <span>

namespace splitbrain::exec::kernels {

struct SoftmaxCrossEntropyShape {
  int64_t rows = 1;
  int64_t classes = 1;
};

class SoftmaxCrossEntropyKernel {
 public:
  virtual ~SoftmaxCrossEntropyKernel() = default;
  virtual const SoftmaxCrossEntropyShape& shape() const = 0;

  // Writes the softmax to `probs` (kept for backward; probs == logits is allowed) and the loss,
  // `scale` times the sum over rows of -log softmax(x)[label] (accumulated in double), to `loss`
  // (one double) and, rounded, to every element of `loss_output` (the loss layer's output). Every
  // pointer is the backend's memory, so nothing waits: the loss reaches the host by a queued
  // download (ArrayKernel::download_queued). `labels` are in [0, classes): the caller checks them
  // with check_labels on the host first (a GPU kernel cannot read them there).
  virtual void forward(const float* logits, const int32_t* labels, float* probs, double scale, double* loss,
                       std::span<float> loss_output) = 0;
  // dlogits = (probs - onehot(label)) * scale, where scale = d(loss)/d(summed loss), typically
  // 1 / the global row count. dlogits == probs is allowed.
  virtual void backward(const float* probs, const int32_t* labels, float scale, float* dlogits) = 0;
};

// Throws KernelArgumentError naming the first of `labels` (one per row) outside [0, classes).
void check_labels(const SoftmaxCrossEntropyShape& shape, std::span<const int32_t> labels);

}  // namespace splitbrain::exec::kernels
