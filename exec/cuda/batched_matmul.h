#pragma once
// C[b] = alpha * op(A[b]) op(B[b]) for b < batch on the GPU: the twin of
// cpu::BatchedMatmulKernel (same shape type: op(A) is [M, K], stored [M, K] or [K, M] with
// transpose_a; op(B) is [K, N], stored [K, N] or [N, K] with transpose_b; all row-major).
// cublasSgemmStridedBatched on the column-major views: C^T = op(B)^T op(A)^T, so the row-major
// buffers are used as they are.
//
// Device arrays in and out (see cuda_context.h): cuBLAS reads a and b and writes c where the
// caller has them, queued on the context's stream; run returns without waiting.

#include <cublas_v2.h>

#include "exec/cuda/cuda_context.h"
#include "exec/kernels/batched_matmul.h"

namespace splitbrain::exec::cuda {

// The product on DEVICE pointers, queued on the handle's stream (no synchronisation): what run
// does, for kernels that multiply without a BatchedMatmulKernel of their own (attention).
void batched_matmul_on_device(cublasHandle_t cublas, const kernels::BatchedMatmulShape& shape, const float* a,
                              const float* b, float* c);

class BatchedMatmulKernel final : public kernels::BatchedMatmulKernel {
 public:
  BatchedMatmulKernel(CudaContext& context, const kernels::BatchedMatmulShape& shape);
  const kernels::BatchedMatmulShape& shape() const override { return shape_; }
  // c is overwritten.
  void run(const float* a, const float* b, float* c) override;

 private:
  CudaContext& context_;
  kernels::BatchedMatmulShape shape_;
};

}  // namespace splitbrain::exec::cuda
