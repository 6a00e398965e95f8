#include "exec/cuda/embedding.h"

#include <string>
#include <vector>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/indexing_kernels.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cuda {

namespace {

// The CPU kernel's checks of the shape.
EmbeddingRows checked(const kernels::EmbeddingShape& s) {
  if (s.count < 0 || s.dim <= 0 || s.num_embeddings <= 0)
    throw kernels::KernelArgumentError("embedding: count >= 0, dim and num_embeddings > 0 required");
  if (s.row_begin < 0 || s.row_begin > s.row_end || s.row_end > s.num_embeddings)
    throw kernels::KernelArgumentError("embedding: rows [" + std::to_string(s.row_begin) + ", " +
                                       std::to_string(s.row_end) + ") are not inside the table of " +
                                       std::to_string(s.num_embeddings));
  return {s.dim, s.row_begin, s.row_end};
}

enum Slot : std::size_t { kIds, kTable, kRows };

struct Staged {
  float* ids;
  float* table;
  float* rows;  // y, or dy
  std::size_t table_bytes;
  std::size_t row_bytes;
};

Staged stage(CudaContext& context, const kernels::EmbeddingShape& s, const float* ids) {
  const auto id_bytes = static_cast<std::size_t>(s.count) * sizeof(float);
  const auto table_bytes = static_cast<std::size_t>((s.row_end - s.row_begin) * s.dim) * sizeof(float);
  const auto row_bytes = static_cast<std::size_t>(s.count * s.dim) * sizeof(float);
  Staged staged{static_cast<float*>(context.staging(kIds, id_bytes)),
                static_cast<float*>(context.staging(kTable, table_bytes)),
                static_cast<float*>(context.staging(kRows, row_bytes)), table_bytes, row_bytes};
  SB_CUDA_CHECK(cudaMemcpyAsync(staged.ids, ids, id_bytes, cudaMemcpyDefault, context.stream()));
  return staged;
}

// The ids may be device memory; the check reads a host copy of them (they came from the host
// batch, so this is one more small transfer, not a round trip of activations).
void check_ids(CudaContext& context, const kernels::EmbeddingShape& s, const float* ids) {
  std::vector<float> host(static_cast<std::size_t>(s.count));
  if (!host.empty()) {
    SB_CUDA_CHECK(cudaMemcpyAsync(host.data(), ids, host.size() * sizeof(float), cudaMemcpyDefault, context.stream()));
    context.synchronize();
  }
  kernels::check_embedding_ids(s, host.data());
}

}  // namespace

EmbeddingKernel::EmbeddingKernel(CudaContext& context, const kernels::EmbeddingShape& shape)
    : context_(context), shape_(shape), rows_(checked(shape)) {}

void EmbeddingKernel::forward(const float* ids, const float* table, float* y) {
  check_ids(context_, shape_, ids);
  if (shape_.count == 0) return;
  const Staged staged = stage(context_, shape_, ids);
  SB_CUDA_CHECK(cudaMemcpyAsync(staged.table, table, staged.table_bytes, cudaMemcpyDefault, context_.stream()));
  embedding_gather(context_.stream(), rows_, shape_.count, staged.ids, staged.table, staged.rows);
  SB_CUDA_CHECK(cudaMemcpyAsync(y, staged.rows, staged.row_bytes, cudaMemcpyDefault, context_.stream()));
  context_.synchronize();
}

void EmbeddingKernel::backward(const float* ids, const float* dy, float* dtable) {
  check_ids(context_, shape_, ids);
  if (shape_.count == 0) return;
  const Staged staged = stage(context_, shape_, ids);
  SB_CUDA_CHECK(cudaMemcpyAsync(staged.rows, dy, staged.row_bytes, cudaMemcpyDefault, context_.stream()));
  SB_CUDA_CHECK(cudaMemcpyAsync(staged.table, dtable, staged.table_bytes, cudaMemcpyDefault, context_.stream()));
  embedding_scatter_add(context_.stream(), rows_, shape_.count, staged.ids, staged.rows, staged.table);
  SB_CUDA_CHECK(cudaMemcpyAsync(dtable, staged.table, staged.table_bytes, cudaMemcpyDefault, context_.stream()));
  context_.synchronize();
}

}  // namespace splitbrain::exec::cuda
