#pragma once
// Attention's own kernels for grouped-query attention and rotary positions (exec/kernels/
// attention.h): copies between the fused group-major rows [N, T, (heads + 2 kv_heads) head_dim]
// and dense per-query-head matrices [N * heads, rows, head_dim] (a group's k and v copied to each
// of its heads; their gradients summed back), and the rotate-half rotation of dense q and k by
// position. A part's rows are the shape's queries (AttentionShape::query_rows from query_start)
// for q, every position for k and v. Device pointers, queued on `stream`. C++17: the .cu file
// includes it.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "exec/kernels/attention.h"

namespace splitbrain::exec::cuda {

using kernels::FusedPart;

// dense = the part of every query head (a key or value: its group's) of the fused rows.
void unpack_grouped(cudaStream_t stream, const kernels::AttentionShape& shape, FusedPart part, const float* fused,
                    float* dense);
// Writes dense per-query-head gradients into the part's columns of the fused rows: queries as
// they are (zeros at the positions of other calls' queries), keys and values summed over each
// group's heads. Other columns are left as they are.
void pack_grouped_gradient(cudaStream_t stream, const kernels::AttentionShape& shape, FusedPart part,
                           const float* dense, float* fused);
// Turns every [head_dim] row of the part's dense [N * heads, rows, head_dim] by its global
// position t's angles t * rope_theta^(-2i/head_dim): direction +1 gives (x1 c - x2 s, x2 c + x1 s)
// of the halves x1, x2; -1 the transpose, for gradients.
void rotate_positions(cudaStream_t stream, const kernels::AttentionShape& shape, FusedPart part, int direction,
                      float* dense);

}  // namespace splitbrain::exec::cuda
