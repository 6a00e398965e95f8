#pragma once
// Split-independent dropout (exec/kernels/dropout.h) on the CPU. Own code: oneDNN 2.6 has no
// dropout primitive, and a stateful RNG would tie the mask to the split.

#include <cstdint>

#include "exec/kernels/dropout.h"

namespace splitbrain::exec::cpu {

class DropoutKernel final : public kernels::DropoutKernel {
 public:
  // Throws KernelArgumentError unless 0 <= probability <= 1.
  explicit DropoutKernel(double probability);
  double probability() const override { return probability_; }

  void forward(const kernels::DropoutKey& key, const kernels::DropoutBlock& block, const float* x, float* y,
               uint8_t* mask) override;
  void backward(int64_t elements, const uint8_t* mask, const float* dy, float* dx) override;

 private:
  double probability_;
  uint64_t threshold_;
  float keep_scale_;
};

}  // namespace splitbrain::exec::cpu
