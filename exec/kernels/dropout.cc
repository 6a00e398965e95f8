#include "exec/kernels/dropout.h"

#include <cmath>
#include <string>

#include "exec/kernels/dropout_mask.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::kernels {

int64_t DropoutBlock::local_elements() const {
  int64_t n = 1;
  for (int64_t d : local_shape) n *= d;
  return n;
}

uint64_t dropout_threshold(double p) {
  if (!(p >= 0.0 && p <= 1.0))
    throw KernelArgumentError("dropout: probability " + std::to_string(p) + " is not in [0, 1]");
  return static_cast<uint64_t>(std::ldexp(p, 32));
}

bool dropout_keeps(const DropoutKey& key, double p, uint64_t index) {
  return dropout_kept(dropout_stream(key), dropout_threshold(p), index);
}

void check_dropout_block(const DropoutBlock& b) {
  const std::size_t rank = b.global_shape.size();
  if (rank == 0 || b.offset.size() != rank || b.local_shape.size() != rank)
    throw KernelArgumentError("dropout: global_shape, offset and local_shape need the same rank (> 0)");
  for (std::size_t d = 0; d < rank; ++d)
    if (b.offset[d] < 0 || b.local_shape[d] < 0 || b.offset[d] + b.local_shape[d] > b.global_shape[d])
      throw KernelArgumentError("dropout: the local block does not fit the global shape in dimension " +
                                std::to_string(d));
}

}  // namespace splitbrain::exec::kernels
