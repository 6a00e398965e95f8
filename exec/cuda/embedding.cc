#include "exec/cuda/embedding.h"

#include <string>

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

// Whether the kernels can read `pointer` as it is. Managed memory counts as device memory: the
// host may read it only after a synchronisation, like device memory.
bool device_readable(const void* pointer) {
  cudaPointerAttributes attributes{};
  SB_CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

// The staging slot of host ids.
constexpr std::size_t kIdsSlot = 0;

}  // namespace

EmbeddingKernel::EmbeddingKernel(CudaContext& context, const kernels::EmbeddingShape& shape)
    : context_(context), shape_(shape), rows_(checked(shape)) {}

const float* EmbeddingKernel::device_ids(const float* ids) {
  if (device_readable(ids)) return ids;
  kernels::check_embedding_ids(shape_, ids);
  const auto id_bytes = static_cast<std::size_t>(shape_.count) * sizeof(float);
  auto* staged = static_cast<float*>(context_.staging(kIdsSlot, id_bytes));
  SB_CUDA_CHECK(cudaMemcpyAsync(staged, ids, id_bytes, cudaMemcpyDefault, context_.stream()));
  context_.count_host_transfer(HostTransferPurpose::other, id_bytes);
  return staged;
}

void EmbeddingKernel::forward(const float* ids, const float* table, float* y) {
  // No ids: nothing to check or look up (and ids may then be null).
  if (shape_.count == 0) return;
  embedding_gather(context_.stream(), rows_, shape_.count, device_ids(ids), table, y);
}

void EmbeddingKernel::backward(const float* ids, const float* dy, float* dtable) {
  if (shape_.count == 0) return;
  embedding_scatter_add(context_.stream(), rows_, shape_.count, device_ids(ids), dy, dtable);
}

}  // namespace splitbrain::exec::cuda
