#include "exec/kernels/attention.h"

#include <cmath>

#include "exec/kernels/shape_checks.h"

namespace splitbrain::exec::kernels {

AttentionProducts attention_products(const AttentionShape& shape) {
  const AttentionShape& s = checked(shape);
  const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  auto product = [&](int64_t m, int64_t k, int64_t n, bool transpose_a, bool transpose_b, float alpha) {
    return BatchedMatmulShape{s.batch * s.heads, m, k, n, transpose_a, transpose_b, alpha};
  };
  const int64_t q = s.query_rows(), t = s.seq, d = s.head_dim;
  return {.scores = product(q, d, t, false, true, scale),
          .context = product(q, t, d, false, false, 1.0f),
          .grad_v = product(t, q, d, true, false, 1.0f),
          .grad_p = product(q, d, t, false, true, 1.0f),
          .grad_q = product(q, t, d, false, false, scale),
          .grad_k = product(t, q, d, true, false, scale)};
}

}  // namespace splitbrain::exec::kernels
