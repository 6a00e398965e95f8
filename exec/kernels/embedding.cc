#include "exec/kernels/embedding.h"

#include <cmath>
#include <sstream>

#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::kernels {

void embedding_positions(int64_t batch, int64_t seq, int64_t position_begin, float* ids) {
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t t = 0; t < seq; ++t) ids[n * seq + t] = static_cast<float>(position_begin + t);
}

void check_embedding_ids(const EmbeddingShape& shape, const float* ids) {
  for (int64_t i = 0; i < shape.count; ++i) {
    const float id = ids[i];
    if (!(id >= 0.0f) || id >= static_cast<float>(shape.num_embeddings) || std::floor(id) != id) {
      std::ostringstream message;  // prints 7, 2.5 or nan as they are
      message << "token id " << id << " at local position " << i << " is not an integer in [0, " << shape.num_embeddings
              << ")";
      throw KernelArgumentError(message.str());
    }
  }
}

}  // namespace splitbrain::exec::kernels
