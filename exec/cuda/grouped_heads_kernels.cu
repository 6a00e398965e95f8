// Grouped-query copies and rotary positions of attention on the GPU (grouped_heads_kernels.h):
// the twins of cpu::SelfAttentionKernel's unpack, pack_gradient and rotate, one thread per dense
// element (per pair of elements for the rotation).

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/grid.h"
#include "exec/cuda/grouped_heads_kernels.h"

namespace splitbrain::exec::cuda {
namespace {

// The global positions a part's dense rows hold: the queries', or every position's k and v.
struct PartRows {
  int64_t first, count;
};

__host__ __device__ PartRows part_rows(const kernels::AttentionShape& s, FusedPart part) {
  if (part == FusedPart::query) return {s.query_start, s.query_rows()};
  return {0, s.seq};
}

// Dense element e of [N * heads, rows, head_dim]: its sample, query head, dense row and column.
struct DenseIndex {
  int64_t n, h, t, j;
};

__device__ DenseIndex dense_index(const kernels::AttentionShape& s, int64_t rows, int64_t e) {
  const int64_t j = e % s.head_dim, t = e / s.head_dim % rows, nh = e / (s.head_dim * rows);
  return {nh / s.heads, nh % s.heads, t, j};
}

__global__ void unpack_grouped_kernel(kernels::AttentionShape s, FusedPart part, const float* fused, float* dense) {
  const kernels::GroupedHeads l(s);
  const PartRows rows = part_rows(s, part);
  SB_GRID_STRIDE_LOOP(e, s.batch * s.heads * rows.count * s.head_dim) {
    const DenseIndex i = dense_index(s, rows.count, e);
    dense[e] = fused[(i.n * s.seq + rows.first + i.t) * l.row_width() + l.offset_of(part, i.h) + i.j];
  }
}

// One thread per q element of every position of the fused rows: this call's queries' gradient,
// zero at the positions of other calls' queries.
__global__ void pack_query_gradient_kernel(kernels::AttentionShape s, const float* dense, float* fused) {
  const kernels::GroupedHeads l(s);
  const PartRows rows = part_rows(s, FusedPart::query);
  SB_GRID_STRIDE_LOOP(e, s.batch * s.seq * s.heads * s.head_dim) {
    const int64_t j = e % s.head_dim, h = e / s.head_dim % s.heads, position = e / (s.head_dim * s.heads) % s.seq;
    const int64_t n = e / (s.head_dim * s.heads * s.seq), t = position - rows.first;
    const bool own = t >= 0 && t < rows.count;
    fused[(n * s.seq + position) * l.row_width() + l.query_offset(h) + j] =
        own ? dense[((n * s.heads + h) * rows.count + t) * s.head_dim + j] : 0.0f;
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
__global__ void rotate_positions_kernel(kernels::AttentionShape s, PartRows rows, float sign, float* dense) {
  const int64_t pairs = s.head_dim / 2;
  SB_GRID_STRIDE_LOOP(p, s.batch * s.heads * rows.count * pairs) {
    const int64_t i = p % pairs, row = p / pairs, t = rows.first + row % rows.count;
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
  const int64_t n = shape.batch * shape.heads * part_rows(shape, part).count * shape.head_dim;
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

void rotate_positions(cudaStream_t stream, const kernels::AttentionShape& shape, FusedPart part, int direction,
                      float* dense) {
  const PartRows rows = part_rows(shape, part);
  const int64_t n = shape.batch * shape.heads * rows.count * (shape.head_dim / 2);
  rotate_positions_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(shape, rows, static_cast<float>(direction),
                                                                          dense);
  SB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace splitbrain::exec::cuda
