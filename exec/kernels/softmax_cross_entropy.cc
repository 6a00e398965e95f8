#include "exec/kernels/softmax_cross_entropy.h"

#include <string>

#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::kernels {

void check_labels(const SoftmaxCrossEntropyShape& shape, std::span<const int32_t> labels) {
  for (size_t r = 0; r < labels.size(); ++r)
    if (labels[r] < 0 || labels[r] >= shape.classes)
      throw KernelArgumentError("softmax_cross_entropy: label " + std::to_string(labels[r]) + " of row " +
                                std::to_string(r) + " is outside [0, " + std::to_string(shape.classes) + ")");
}

}  // namespace splitbrain::exec::kernels
