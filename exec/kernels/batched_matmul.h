#pragma once
// C[b] = alpha * op(A[b]) op(B[b]) for b < batch, fp32, dense row-major matrices. op(A) is
// [M, K]: A is stored [M, K], or [K, M] with transpose_a. op(B) is [K, N]: B is stored [K, N],
// or [N, K] with transpose_b. The building block of attention (Q K^T, P V and their gradients)
// and of the matmul layer.

#include <cstdint>

namespace splitbrain::exec::kernels {

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
  virtual ~BatchedMatmulKernel() = default;
  virtual const BatchedMatmulShape& shape() const = 0;
  // c is overwritten.
  virtual void run(const float* a, const float* b, float* c) = 0;
};

}  // namespace splitbrain::exec::kernels
