#include "exec/cuda/batched_matmul.h"

#include "exec/cuda/cuda_check.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

BatchedMatmulKernel::BatchedMatmulKernel(CudaContext& context, const kernels::BatchedMatmulShape& shape)
    : context_(context), shape_(kernels::checked(shape)) {}

void batched_matmul_on_device(cublasHandle_t cublas, const kernels::BatchedMatmulShape& s, const float* a,
                              const float* b, float* c) {
  const float beta = 0.0f;
  // Column-major, C^T [n, m] = op(B)^T [n, k] . op(A)^T [k, m]. A row-major [r, c] buffer is the
  // column-major [c, r] matrix, i.e. its transpose: B stored [k, n] is B^T already (no op, ld n),
  // B stored [n, k] needs op T (ld k); likewise A stored [m, k] (ld k) or [k, m] (op T, ld m).
  const cublasOperation_t op_b = s.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = s.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t ld_b = s.transpose_b ? s.k : s.n;
  const int64_t ld_a = s.transpose_a ? s.m : s.k;
  SB_CUBLAS_CHECK(cublasSgemmStridedBatched_64(cublas, op_b, op_a, s.n, s.m, s.k, &s.alpha, b, ld_b, s.k * s.n, a, ld_a,
                                               s.m * s.k, &beta, c, s.n, s.m * s.n, s.batch));
}

void BatchedMatmulKernel::run(const float* a, const float* b, float* c) {
  batched_matmul_on_device(context_.cublas(), shape_, a, b, c);
}

std::unique_ptr<kernels::BatchedMatmulKernel> make_batched_matmul(CudaContext& context,
                                                                  const kernels::BatchedMatmulShape& shape) {
  return std::make_unique<BatchedMatmulKernel>(context, shape);
}

}  // namespace splitbrain::exec::cuda
