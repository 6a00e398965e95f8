#pragma once
// Softmax cross-entropy over the last dimension of local logits [rows, classes] with int32 class
// labels (PyTorch's F.cross_entropy with reduction='sum'; the runtime divides by the GLOBAL
// number of rows, which only it knows when the batch or the sequence is split).
//
// Own code, not oneDNN's softmax: the loss needs log-sum-exp per row (loss = lse - x[label],
// finite even where the softmax underflows to 0), which the softmax primitive does not return,
// and forward, loss and backward fuse into two passes over the row. Classes are never split
// (plans/op_sharding: batch and spatial roles only), so rows are complete here.

#include <cstdint>

namespace splitbrain::exec::cpu {

struct SoftmaxCrossEntropyShape {
  int64_t rows = 1;
  int64_t classes = 1;
};

// Returns the sum over rows of -log softmax(x)[label] (accumulated in double) and writes the
// softmax to `probs` (kept for backward; probs == logits is allowed). Labels must be in
// [0, classes): KernelArgumentError otherwise.
double softmax_cross_entropy_forward(const SoftmaxCrossEntropyShape& shape, const float* logits,
                                     const int32_t* labels, float* probs);

// dlogits = (probs - onehot(label)) * scale, where scale = d(loss)/d(summed loss), typically
// 1 / the global row count. dlogits == probs is allowed.
void softmax_cross_entropy_backward(const SoftmaxCrossEntropyShape& shape, const float* probs,
                                    const int32_t* labels, float scale, float* dlogits);

}  // namespace splitbrain::exec::cpu
