#pragma once
// C[b] = alpha * op(A[b]) op(B[b]) for b < batch, fp32, dense row-major matrices: oneDNN matmul.
// op(A) is [M, K]: A is stored [M, K], or [K, M] with transpose_a. op(B) is [K, N]: B is stored
// [K, N], or [N, K] with transpose_b. Transposes are strides in the memory descriptors, so
// nothing is copied. The building block of attention (Q K^T, P V and their gradients).

#include <cstdint>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"

namespace splitbrain::exec::cpu {

struct BatchedMatmulShape {
  int64_t batch = 1;
  int64_t m = 1;
  int64_t k = 1;
  int64_t n = 1;
  bool transpose_a = false;
  bool transpose_b = false;
  float alpha = 1.0f;
};

class BatchedMatmulKernel {
 public:
  BatchedMatmulKernel(CpuContext& context, const BatchedMatmulShape& shape);
  const BatchedMatmulShape& shape() const { return shape_; }
  // c is overwritten.
  void run(const float* a, const float* b, float* c);

 private:
  CpuContext& context_;
  BatchedMatmulShape shape_;
  dnnl::memory::desc a_md_, b_md_, c_md_;
  dnnl::matmul matmul_;
};

}  // namespace splitbrain::exec::cpu
