#pragma once
// Batched matrix products (exec/kernels/batched_matmul.h) with oneDNN's matmul. Transposes are
// strides in the memory descriptors, so nothing is copied.

#include <cstdint>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"
#include "exec/kernels/batched_matmul.h"

namespace splitbrain::exec::cpu {

class BatchedMatmulKernel final : public kernels::BatchedMatmulKernel {
 public:
  BatchedMatmulKernel(CpuContext& context, const kernels::BatchedMatmulShape& shape);
  const kernels::BatchedMatmulShape& shape() const override { return shape_; }
  void run(const float* a, const float* b, float* c) override;

 private:
  CpuContext& context_;
  kernels::BatchedMatmulShape shape_;
  dnnl::memory::desc a_md_, b_md_, c_md_;
  dnnl::matmul matmul_;
};

}  // namespace splitbrain::exec::cpu
