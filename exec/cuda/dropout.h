#pragma once
// Split-independent dropout (exec/kernels/dropout.h) on the GPU: the twin of cpu::DropoutKernel.
// Own kernel: each thread evaluates kernels::dropout_kept (exec/kernels/dropout_mask.h, the same
// constexpr hash the CPU runs, compiled for the device) on its element's GLOBAL row-major index,
// so the same plan drops the same elements on either backend and on any number of ranks.
// cuDNN's dropout draws from a stateful RNG and could not give that.
//
// Device arrays in and out (cuda_context.h), the mask included (the op keeps it in a device
// KeptBuffer): the own kernels run on the caller's pointers, queued on the context's stream, and
// return without waiting. x == y and dx == dy are allowed as on the CPU: each thread reads its
// element before writing it.

#include <cstdint>

#include "exec/cuda/cuda_context.h"
#include "exec/kernels/dropout.h"

namespace splitbrain::exec::cuda {

class DropoutKernel final : public kernels::DropoutKernel {
 public:
  // Throws KernelArgumentError unless 0 <= probability <= 1.
  DropoutKernel(CudaContext& context, double probability);

  double probability() const override { return probability_; }
  // Blocks of rank above kMaxDropoutRank (elementwise_kernels.h) are refused (KernelArgumentError).
  void forward(const kernels::DropoutKey& key, const kernels::DropoutBlock& block, const float* x, float* y,
               uint8_t* mask) override;
  void backward(int64_t elements, const uint8_t* mask, const float* dy, float* dx) override;

 private:
  CudaContext& context_;
  double probability_;
  uint64_t threshold_;
  float keep_scale_;
};

}  // namespace splitbrain::exec::cuda
