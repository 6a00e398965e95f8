#include "exec/cpu/embedding.h"

#include <algorithm>
#include <string>

#include "exec/cpu/dnnl_check.h"

namespace splitbrain::exec::cpu {

namespace {

void check(const EmbeddingShape& s, const int32_t* ids) {
  if (s.count < 0 || s.dim <= 0 || s.num_embeddings <= 0)
    throw KernelArgumentError("embedding: count >= 0, dim and num_embeddings > 0 required");
  if (s.row_begin < 0 || s.row_begin > s.row_end || s.row_end > s.num_embeddings)
    throw KernelArgumentError("embedding: rows [" + std::to_string(s.row_begin) + ", " + std::to_string(s.row_end) +
                              ") are not inside the table of " + std::to_string(s.num_embeddings));
  for (int64_t i = 0; i < s.count; ++i)
    if (ids[i] < 0 || ids[i] >= s.num_embeddings)
      throw KernelArgumentError("embedding: id " + std::to_string(ids[i]) + " at " + std::to_string(i) +
                                " is outside [0, " + std::to_string(s.num_embeddings) + ")");
}

bool local(const EmbeddingShape& s, int32_t id) { return id >= s.row_begin && id < s.row_end; }

}  // namespace

void embedding_forward(const EmbeddingShape& s, const int32_t* ids, const float* table, float* y) {
  check(s, ids);
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

void embedding_backward(const EmbeddingShape& s, const int32_t* ids, const float* dy, float* dtable) {
  check(s, ids);
  for (int64_t i = 0; i < s.count; ++i) {
    if (!local(s, ids[i])) continue;
    float* row = dtable + (ids[i] - s.row_begin) * s.dim;
    const float* g = dy + i * s.dim;
    for (int64_t j = 0; j < s.dim; ++j) row[j] += g[j];
  }
}

void embedding_positions(int64_t batch, int64_t seq, int64_t position_begin, int32_t* ids) {
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t t = 0; t < seq; ++t) ids[n * seq + t] = static_cast<int32_t>(position_begin + t);
}

}  // namespace splitbrain::exec::cpu
