#pragma once
// Softmax cross-entropy over the last dimension of local logits [rows, classes] with int32 class
// labels (PyTorch's F.cross_entropy with reduction='sum'; the op divides by the GLOBAL number of
// rows, which only it knows when the batch or the sequence is split). Classes are never split
// (plans/op_sharding: batch and spatial roles only), so rows are complete here.

#include <cstdint>

namespace splitbrain::exec::kernels {

struct SoftmaxCrossEntropyShape {
  int64_t rows = 1;
  int64_t classes = 1;
};

class SoftmaxCrossEntropyKernel {
 public:
  virtual ~SoftmaxCrossEntropyKernel() = default;
  virtual const SoftmaxCrossEntropyShape& shape() const = 0;

  // Returns the sum over rows of -log softmax(x)[label] (accumulated in double) and writes the
  // softmax to `probs` (kept for backward; probs == logits is allowed). Labels must be in
  // [0, classes): KernelArgumentError otherwise.
  virtual double forward(const float* logits, const int32_t* labels, float* probs) = 0;
  // dlogits = (probs - onehot(label)) * scale, where scale = d(loss)/d(summed loss), typically
  // 1 / the global row count. dlogits == probs is allowed.
  virtual void backward(const float* probs, const int32_t* labels, float scale, float* dlogits) = 0;
};

}  // namespace splitbrain::exec::kernels
