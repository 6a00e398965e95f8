#include "exec/kernels/embedding.h"

namespace splitbrain::exec::kernels {

void embedding_positions(int64_t batch, int64_t seq, int64_t position_begin, int32_t* ids) {
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t t = 0; t < seq; ++t) ids[n * seq + t] = static_cast<int32_t>(position_begin + t);
}

}  // namespace splitbrain::exec::kernels
