// Grouped-query copies and rotary positions of attention on the GPU (grouped_heads_kernels.h):
// the twins of cpu::SelfAttentionKernel's unpack, pack_gradient and rotate, one thread per dense
// element (per pair of elements for the rotation).

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/grid.h"
#include "exec/cuda/grouped_heads_kernels.h"

namespace splitbrain::exec::cuda {
namespace {

// Dense element e of [N * heads, T, head_dim]: its sample, query head, position and column.
struct DenseIndex {
  int64_t n, h, t, j;
};

__device__ DenseIndex dense_index(const kernels::AttentionShape& s, int64_t e) {
  const int64_t j = e % s.head_dim, t = e / s.head_dim % s.seq, nh = e / (s.head_dim * s.seq);
  return {nh / s.heads, nh % s.heads, t, j};
}

__global__ void unpack_grouped_kernel(kernels::AttentionShape s, FusedPart part, const float* fused, float* dense) {
  const kernels::GroupedHeads l(s);
  SB_GRID_STRIDE_LOOP(e, s.batch * s.heads * s.seq * s.head_dim) {
    const DenseIndex i = dense_index(s, e);
    dense[e] = fused[(i.n * s.seq + i.t) * l.row_width() + l.offset_of(part, i.h) + i.j];
  }
}

__global__ void pack_query_gradient_kernel(kernels::AttentionShape s, const float* dense, float* fused) {
  const kernels::GroupedHeads l(s);
  SB_GRID_STRIDE_LOOP(e, s.batch * s.heads * s.seq * s.head_dim) {
    const DenseIndex i = dense_index(s, e);
    fused[(i.n * s.seq + i.t) * l.row_width() + l.query_offset(i.h) + i.j] = dense[e];
  }
}

// One thread per element of a group's k or v: the sum over the group's heads, in head order.
__global__ void pack_shared_gradient_kernel(kernels::AttentionShape s, FusedPart part, const float* dense,
                                            float* fused) {
  const kernels::GroupedHeads l(s);
  SB_GRID_STRIDE_LOOP(e, s.batch * l.kv_heads * s.seq * s.head_dim) {
    const int64_t j = e % s.head_dim, t = e / s.head_dim % s.seq, ng = e / (s.head_dim * s.seq);
    const int64_t n = ng / l.kv_heads, g = ng % l.kv_heads;
    float sum = 0.0f;
    for (int64_t h = g * l.group(); h < (g + 1) * l.group(); ++h)
      sum += dense[((n * s.heads + h) * s.seq + t) * s.head_dim + j];
    const int64_t offset = part == FusedPart::key ? l.key_offset(g) : l.value_offset(g);
    fused[(n * s.seq + t) * l.row_width() + offset + j] = sum;
  }
}

// One thread per pair (i, i + head_dim/2) of a row; the angle in double, as the CPU's table.
__global__ void rotate_positions_kernel(kernels::AttentionShape s, float sign, float* dense) {
  const int64_t pairs = s.head_dim / 2;
  SB_GRID_STRIDE_LOOP(p, s.batch * s.heads * s.seq * pairs) {
    const int64_t i = p % pairs, row = p / pairs, t = row % s.seq;
    const double angle =
        static_cast<double>(t) * pow(s.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(s.head_dim));
    const float c = static_cast<float>(cos(angle)), turn = sign * static_cast<float>(sin(angle));
    float* x = dense + row * s.head_dim;
    const float first = x[i], second = x[i + pairs];
    x[i] = first * c - second * turn;
    x[i + pairs] = second * c + first * turn;
  }
}

}  // namespace

void unpack_grouped(cudaStream_t stream, const kernels::AttentionShape& shape, FusedPart part, const float* fused,
                    float* dense) {
  const int64_t n = shape.batch * shape.heads * shape.seq * shape.head_dim;
  unpack_grouped_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(shape, part, fused, dense);
  SB_CUDA_CHECK(cudaGetLastError());
}

void pack_grouped_gradient(cudaStream_t stream, const kernels::AttentionShape& shape, FusedPart part,
                           const float* dense, float* fused) {
  if (part == FusedPart::query) {
    const int64_t n = shape.batch * shape.heads * shape.seq * shape.head_dim;
    pack_query_gradient_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(shape, dense, fused);
  } else {
    const int64_t n = shape.batch * kernels::GroupedHeads(shape).kv_heads * shape.seq * shape.head_dim;
    pack_shared_gradient_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(shape, part, dense, fused);
  }
  SB_CUDA_CHECK(cudaGetLastError());
}

void rotate_positions(cudaStream_t stream, const kernels::AttentionShape& shape, int direction, float* dense) {
  const int64_t n = shape.batch * shape.heads * shape.seq * (shape.head_dim / 2);
  rotate_positions_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(shape, static_cast<float>(direction), dense);
  SB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace splitbrain::exec::cuda
