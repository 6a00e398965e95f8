#pragma once
// Adaptive average pooling on the GPU: the twins of cpu::adaptive_avgpool_{forward,backward}
// (same shape type, PyTorch's uneven and possibly overlapping bins, the context as an extra first
// argument). Own kernels (indexing_kernels.h); backward gathers per input element, so it needs
// no atomics and is deterministic.
//
// Host arrays in and out (see cuda_context.h), staged in the context's staging buffers; every
// call synchronises.

#include "exec/cpu/adaptive_avgpool.h"
#include "exec/cuda/cuda_context.h"

namespace splitbrain::exec::cuda {

using AdaptiveAvgPoolShape = cpu::AdaptiveAvgPoolShape;

// y [N, C, out_height, out_width] = the mean of each bin of x [N, C, H, W].
void adaptive_avgpool_forward(CudaContext& context, const AdaptiveAvgPoolShape& shape, const float* x, float* y);
// dx (overwritten) spreads each dy evenly over its bin; overlapping bins add.
void adaptive_avgpool_backward(CudaContext& context, const AdaptiveAvgPoolShape& shape, const float* dy, float* dx);

}  // namespace splitbrain::exec::cuda
