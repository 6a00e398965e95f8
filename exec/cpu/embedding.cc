#include "exec/cpu/embedding.h"

#include <algorithm>
#include <string>

#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cpu {

namespace {

const kernels::EmbeddingShape& checked(const kernels::EmbeddingShape& s) {
  if (s.count < 0 || s.dim <= 0 || s.num_embeddings <= 0)
    throw kernels::KernelArgumentError("embedding: count >= 0, dim and num_embeddings > 0 required");
  if (s.row_begin < 0 || s.row_begin > s.row_end || s.row_end > s.num_embeddings)
    throw kernels::KernelArgumentError("embedding: rows [" + std::to_string(s.row_begin) + ", " +
                                       std::to_string(s.row_end) + ") are not inside the table of " +
                                       std::to_string(s.num_embeddings));
  return s;
}

bool local(const kernels::EmbeddingShape& s, int64_t id) { return id >= s.row_begin && id < s.row_end; }

}  // namespace

EmbeddingKernel::EmbeddingKernel(const kernels::EmbeddingShape& shape) : shape_(checked(shape)) {}

void EmbeddingKernel::forward(const float* ids, const float* table, float* y) {
  const auto& s = shape_;
  kernels::check_embedding_ids(s, ids);
  for (int64_t i = 0; i < s.count; ++i) {
    float* out = y + i * s.dim;
    const auto id = static_cast<int64_t>(ids[i]);
    if (local(s, id)) {
      const float* row = table + (id - s.row_begin) * s.dim;
      std::copy(row, row + s.dim, out);
    } else {
      std::fill(out, out + s.dim, 0.0f);
    }
  }
}

void EmbeddingKernel::backward(const float* ids, const float* dy, float* dtable) {
  const auto& s = shape_;
  kernels::check_embedding_ids(s, ids);
  for (int64_t i = 0; i < s.count; ++i) {
    const auto id = static_cast<int64_t>(ids[i]);
    if (!local(s, id)) continue;
    float* row = dtable + (id - s.row_begin) * s.dim;
    const float* g = dy + i * s.dim;
    for (int64_t j = 0; j < s.dim; ++j) row[j] += g[j];
  }
}

}  // namespace splitbrain::exec::cpu
