#pragma once
// Concatenation of local fp32 tensors along one dimension (all other dims equal, rank 1 to 5),
// and its backward, the split of dy into the inputs' gradients. Forward is oneDNN's concat
// primitive; the split is own code (oneDNN has no split primitive): per input, `outer` copies of
// one contiguous run each.

#include <cstdint>
#include <span>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"
#include "exec/cpu/staged_memory.h"

namespace splitbrain::exec::cpu {

class ConcatKernel {
 public:
  // `input_dims` are the full local shapes (batch included); `axis` indexes them.
  ConcatKernel(CpuContext& context, std::vector<Dims> input_dims, int axis);
  const Dims& output_dims() const { return output_dims_; }

  void forward(std::span<const float* const> xs, float* y);
  // dxs[i] (overwritten) = the slice of dy that input i gave.
  void backward(const float* dy, std::span<float* const> dxs) const;

 private:
  CpuContext& context_;
  std::vector<Dims> input_dims_;
  int axis_;
  Dims output_dims_;
  std::vector<dnnl::memory::desc> input_mds_;
  dnnl::memory::desc output_md_;
  dnnl::concat concat_;
};

}  // namespace splitbrain::exec::cpu
