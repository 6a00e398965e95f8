#include "exec/cuda/embedding.h"

#include <string>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/indexing_kernels.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

namespace {

EmbeddingRows rows(const kernels::EmbeddingShape& s) { return {s.dim, s.row_begin, s.row_end}; }

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
    : context_(context), shape_(kernels::checked(shape)), rows_(rows(shape_)) {}

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

std::unique_ptr<kernels::EmbeddingKernel> make_embedding(CudaContext& context, const kernels::EmbeddingShape& shape) {
  return std::make_unique<EmbeddingKernel>(context, shape);
}

}  // namespace splitbrain::exec::cuda
