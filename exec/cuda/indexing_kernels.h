#pragma once
// Own kernels that move elements by index, on device pointers, queued on `stream`: embedding
// gather and scatter-add, adaptive average pooling's uneven bins, and attention's copies between
// the fused head-major qkv rows and dense per-head matrices (with its causal mask). None has a
// cuDNN or cuBLAS counterpart.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace splitbrain::exec::cuda {

// The local rows [row_begin, row_end) of an embedding table of `dim` floats a row.
struct EmbeddingRows {
  int64_t dim = 1;
  int64_t row_begin = 0;
  int64_t row_end = 1;
};

// y[i] = table[ids[i] - row_begin] for local ids (fp32, whole numbers), zeros otherwise; y is [count, dim].
void embedding_gather(cudaStream_t stream, const EmbeddingRows& rows, int64_t count, const float* ids,
                      const float* table, float* y);
// dtable[ids[i] - row_begin] += dy[i] for local ids (atomic adds: repeated ids add up).
void embedding_scatter_add(cudaStream_t stream, const EmbeddingRows& rows, int64_t count, const float* ids,
                           const float* dy, float* dtable);

// planes = N * C planes of height x width pooled to out_height x out_width with PyTorch's bins
// [floor(i * in / out), ceil((i + 1) * in / out)).
struct AdaptiveBins {
  int64_t planes = 1;
  int64_t height = 1;
  int64_t width = 1;
  int64_t out_height = 1;
  int64_t out_width = 1;
};

void adaptive_avgpool_forward_on_device(cudaStream_t stream, const AdaptiveBins& bins, const float* x, float* y);
// dx (overwritten): each input element gathers dy / bin size from every bin that holds it.
void adaptive_avgpool_backward_on_device(cudaStream_t stream, const AdaptiveBins& bins, const float* dy, float* dx);

// Fused rows [batch, seq, heads * parts * head_dim] (per position [head][part][head_dim]) and
// dense per-head matrices [batch * heads, seq, head_dim].
struct HeadLayout {
  int64_t batch = 1;
  int64_t seq = 1;
  int64_t heads = 1;
  int64_t head_dim = 1;
};

// dense = part `part` of `parts` of every head of the fused rows.
void unpack_heads(cudaStream_t stream, const HeadLayout& layout, int64_t parts, int64_t part, const float* fused,
                  float* dense);
// Writes dense into part `part` of the fused rows (the other parts are left as they are).
void pack_heads(cudaStream_t stream, const HeadLayout& layout, int64_t parts, int64_t part, const float* dense,
                float* fused);
// scores [matrices, rows, seq], row i of each the query at position first_row + i of the seq
// keys: every column after the row's position becomes -inf (exp gives 0).
void mask_future(cudaStream_t stream, int64_t matrices, int64_t rows, int64_t seq, int64_t first_row, float* scores);

}  // namespace splitbrain::exec::cuda
