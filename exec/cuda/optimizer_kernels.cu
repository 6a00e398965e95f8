#include "exec/cuda/optimizer_kernels.h"

#include <cmath>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/grid.h"

namespace splitbrain::exec::cuda {

namespace {

// Each line mirrors a line of Optimizer::step; __f*_rn / __d*_rn round every operation on its own.
__global__ void sgd_momentum_kernel(int64_t n, float lr, float momentum, float decay, bool first_step, float* p,
                                    const float* g, float* m) {
  SB_GRID_STRIDE_LOOP(k, n) {
    const float gradient = __fadd_rn(g[k], __fmul_rn(decay, p[k]));
    m[k] = first_step ? gradient : __fadd_rn(__fmul_rn(momentum, m[k]), gradient);
    p[k] = __fsub_rn(p[k], __fmul_rn(lr, m[k]));
  }
}

struct AdamConstants {
  float decay;
  double b1, one_minus_b1, b2, one_minus_b2, correction2, step_size, epsilon;
};

__global__ void adam_kernel(int64_t n, AdamConstants c, float* p, const float* g, float* m, float* v) {
  SB_GRID_STRIDE_LOOP(k, n) {
    const float gradient = __fadd_rn(g[k], __fmul_rn(c.decay, p[k]));
    const double gd = gradient;
    m[k] = __double2float_rn(__dadd_rn(__dmul_rn(c.b1, m[k]), __dmul_rn(c.one_minus_b1, gd)));
    v[k] = __double2float_rn(__dadd_rn(__dmul_rn(c.b2, v[k]), __dmul_rn(__dmul_rn(c.one_minus_b2, gd), gd)));
    const double denominator = __dadd_rn(__dsqrt_rn(__ddiv_rn(v[k], c.correction2)), c.epsilon);
    p[k] = __fsub_rn(p[k], __double2float_rn(__ddiv_rn(__dmul_rn(c.step_size, m[k]), denominator)));
  }
}

}  // namespace

void sgd_momentum_update(cudaStream_t stream, int64_t elements, double learning_rate, double momentum,
                         double weight_decay, int64_t step, float* params, const float* grads, float* momentum_buffer) {
  sgd_momentum_kernel<<<blocks_for(elements), kThreadsPerBlock, 0, stream>>>(
      elements, static_cast<float>(learning_rate), static_cast<float>(momentum), static_cast<float>(weight_decay),
      step == 1, params, grads, momentum_buffer);
  SB_CUDA_CHECK(cudaGetLastError());
}

void adam_update(cudaStream_t stream, int64_t elements, double learning_rate, double beta1, double beta2,
                 double epsilon, double weight_decay, int64_t step, float* params, const float* grads,
                 float* first_moment, float* second_moment) {
  const double correction1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double correction2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  const AdamConstants constants{static_cast<float>(weight_decay), beta1,  1 - beta1, beta2, 1 - beta2, correction2,
                                learning_rate / correction1,      epsilon};
  adam_kernel<<<blocks_for(elements), kThreadsPerBlock, 0, stream>>>(elements, constants, params, grads, first_moment,
                                                                     second_moment);
  SB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace splitbrain::exec::cuda
