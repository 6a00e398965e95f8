#pragma once
// Softmax cross-entropy on the GPU: the twin of cpu::softmax_cross_entropy_{forward,backward},
// same shape type and results, with the context as an extra first argument. Forward is cuDNN's
// log-softmax (CUDNN_SOFTMAX_LOG, max-subtracted, so -log p[label] stays finite where p underflows,
// as the CPU's log-sum-exp) followed by an own kernel that reads the row losses and turns the
// log-probabilities into probabilities in place; backward is an own kernel.
//
// Host arrays in and out (see cuda_context.h), staged in the context's staging buffers; the
// call synchronises, so probs == logits and dlogits == probs are allowed as on the CPU.

#include <cstdint>

#include "exec/cpu/softmax_cross_entropy.h"
#include "exec/cuda/cuda_context.h"

namespace splitbrain::exec::cuda {

using SoftmaxCrossEntropyShape = cpu::SoftmaxCrossEntropyShape;

// Returns the sum over rows of -log softmax(x)[label] (summed in double) and writes the softmax to
// `probs`. Labels must be in [0, classes): cpu::KernelArgumentError otherwise.
double softmax_cross_entropy_forward(CudaContext& context, const SoftmaxCrossEntropyShape& shape, const float* logits,
                                     const int32_t* labels, float* probs);

// dlogits = (probs - onehot(label)) * scale.
void softmax_cross_entropy_backward(CudaContext& context, const SoftmaxCrossEntropyShape& shape, const float* probs,
                                    const int32_t* labels, float scale, float* dlogits);

}  // namespace splitbrain::exec::cuda
