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

void check_ids(const kernels::EmbeddingShape& s, const int32_t* ids) {
  for (int64_t i = 0; i < s.count; ++i)
    if (ids[i] < 0 || ids[i] >= s.num_embeddings)
      throw kernels::KernelArgumentError("embedding: id " + std::to_string(ids[i]) + " at " + std::to_string(i) +
                                         " is outside [0, " + std::to_string(s.num_embeddings) + ")");
}

bool local(const kernels::EmbeddingShape& s, int32_t id) { return id >= s.row_begin && id < s.row_end; }

}  // namespace

EmbeddingKernel::EmbeddingKernel(const kernels::EmbeddingShape& shape) : shape_(checked(shape)) {}

void EmbeddingKernel::forward(const int32_t* ids, const float* table, float* y) {
  const auto& s = shape_;
  check_ids(s, ids);
  for (int64_t i = 0; i < s.count; ++i) {
    float* out = y + i * s.dim;
    if (local(s, ids[i])) {
      const float* row = table + (ids[i] - s.row_begin) * s.dim;
      std::copy(row, row + s.dim, out);
    } else {
      std::fill(out, out + s.dim, 0.0f);
    }
  }
}

void EmbeddingKernel::backward(const int32_t* ids, const float* dy, float* dtable) {
  const auto& s = shape_;
  check_ids(s, ids);
  for (int64_t i = 0; i < s.count; ++i) {
    if (!local(s, ids[i])) continue;
    float* row = dtable + (ids[i] - s.row_begin) * s.dim;
    const float* g = dy + i * s.dim;
    for (int64_t j = 0; j < s.dim; ++j) row[j] += g[j];
  }
}

}  // namespace splitbrain::exec::cpu
