#include "exec/cpu/embedding.h"

#include <algorithm>
#include <string>

#include "exec/kernels/shape_checks.h"
#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

namespace {

bool local(const kernels::EmbeddingShape& s, int64_t id) { return id >= s.row_begin && id < s.row_end; }

}  // namespace

EmbeddingKernel::EmbeddingKernel(const kernels::EmbeddingShape& shape) : shape_(kernels::checked(shape)) {}

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

std::unique_ptr<kernels::EmbeddingKernel> make_embedding(CpuContext& /*context*/,
                                                         const kernels::EmbeddingShape& shape) {
  return std::make_unique<EmbeddingKernel>(shape);
}

}  // namespace splitbrain::exec::cpu
