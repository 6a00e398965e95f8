#pragma once
// Embedding lookup on the GPU: the twins of cpu::embedding_{forward,backward} (same shape type,
// vocabulary-split tables, the context as an extra first argument). Own gather and scatter-add
// kernels (indexing_kernels.h). Backward ADDS into dtable as on the CPU; its atomic adds make the
// order of repeated ids' additions, and so the last bits, vary from run to run.
// cpu::embedding_positions only writes host ids and is used as it is.
//
// Host arrays in and out (see cuda_context.h), staged in the context's staging buffers; every
// call synchronises.

#include <cstdint>

#include "exec/cpu/embedding.h"
#include "exec/cuda/cuda_context.h"

namespace splitbrain::exec::cuda {

using EmbeddingShape = cpu::EmbeddingShape;

// y[i] = table[ids[i] - row_begin] when the id is local, else zeros. y is [count, dim].
void embedding_forward(CudaContext& context, const EmbeddingShape& shape, const int32_t* ids, const float* table,
                       float* y);

// dtable[ids[i] - row_begin] += dy[i] for local ids. ADDS into dtable.
void embedding_backward(CudaContext& context, const EmbeddingShape& shape, const int32_t* ids, const float* dy,
                        float* dtable);

}  // namespace splitbrain::exec::cuda
