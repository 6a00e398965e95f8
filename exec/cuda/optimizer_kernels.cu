#include "exec/cuda/optimizer_kernels.h"

#include <cmath>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/grid.h"

namespace splitbrain::exec::cuda {

namespace {

// Each line mirrors a line of Optimizer::step; __f*_rn / __d*_rn round every operation on its own.
// One element's update, shared by the one-tensor and the many-tensor kernels.
struct SgdConstants {
  float lr, momentum, decay;
  bool first_step;
};

__device__ void sgd_momentum_element(const SgdConstants& c, int64_t k, float* p, const float* g, float* m) {
  const float gradient = __fadd_rn(g[k], __fmul_rn(c.decay, p[k]));
  m[k] = c.first_step ? gradient : __fadd_rn(__fmul_rn(c.momentum, m[k]), gradient);
  p[k] = __fsub_rn(p[k], __fmul_rn(c.lr, m[k]));
}

struct AdamConstants {
  float decay;
  double b1, one_minus_b1, b2, one_minus_b2, correction2, step_size, epsilon;
};

__device__ void adam_element(const AdamConstants& c, int64_t k, float* p, const float* g, float* m, float* v) {
  const float gradient = __fadd_rn(g[k], __fmul_rn(c.decay, p[k]));
  const double gd = gradient;
  m[k] = __double2float_rn(__dadd_rn(__dmul_rn(c.b1, m[k]), __dmul_rn(c.one_minus_b1, gd)));
  v[k] = __double2float_rn(__dadd_rn(__dmul_rn(c.b2, v[k]), __dmul_rn(__dmul_rn(c.one_minus_b2, gd), gd)));
  const double denominator = __dadd_rn(__dsqrt_rn(__ddiv_rn(v[k], c.correction2)), c.epsilon);
  p[k] = __fsub_rn(p[k], __double2float_rn(__ddiv_rn(__dmul_rn(c.step_size, m[k]), denominator)));
}

__global__ void sgd_momentum_kernel(int64_t n, SgdConstants c, float* p, const float* g, float* m) {
  SB_GRID_STRIDE_LOOP(k, n) { sgd_momentum_element(c, k, p, g, m); }
}

__global__ void adam_kernel(int64_t n, AdamConstants c, float* p, const float* g, float* m, float* v) {
  SB_GRID_STRIDE_LOOP(k, n) { adam_element(c, k, p, g, m, v); }
}

// Calls element(tensor, k) for every element k of every tensor of the batch: each block takes
// chunks in turn. The batch stays in the kernel's parameters (__grid_constant__: read in place,
// never copied per thread).
template <class Element>
__device__ void for_each_chunked_element(const TensorBatch& batch, const Element& element) {
  for (int64_t chunk = blockIdx.x; chunk < batch.chunks; chunk += gridDim.x) {
    const ChunkElements span = chunk_elements(batch, chunk);
    const ChunkedTensor& tensor = batch.tensors[span.tensor];
    for (int64_t k = span.begin + threadIdx.x; k < span.end; k += blockDim.x) element(tensor, k);
  }
}

__global__ void sgd_momentum_all_kernel(const __grid_constant__ TensorBatch batch, SgdConstants c) {
  for_each_chunked_element(
      batch, [&](const ChunkedTensor& t, int64_t k) { sgd_momentum_element(c, k, t.first, t.second, t.third); });
}

__global__ void adam_all_kernel(const __grid_constant__ TensorBatch batch, AdamConstants c) {
  for_each_chunked_element(
      batch, [&](const ChunkedTensor& t, int64_t k) { adam_element(c, k, t.first, t.second, t.third, t.fourth); });
}

__global__ void zero_all_kernel(const __grid_constant__ TensorBatch batch) {
  for_each_chunked_element(batch, [](const ChunkedTensor& t, int64_t k) { t.first[k] = 0.0f; });
}

SgdConstants sgd_constants(double learning_rate, double momentum, double weight_decay, int64_t step) {
  return {static_cast<float>(learning_rate), static_cast<float>(momentum), static_cast<float>(weight_decay), step == 1};
}

AdamConstants adam_constants(double learning_rate, double beta1, double beta2, double epsilon, double weight_decay,
                             int64_t step) {
  const double correction1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double correction2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  return {static_cast<float>(weight_decay), beta1,  1 - beta1, beta2, 1 - beta2, correction2,
          learning_rate / correction1,      epsilon};
}

// Blocks for a many-tensor launch: one per chunk, up to blocks_for's cap (they then loop).
unsigned blocks_for_chunks(int64_t chunks) { return blocks_for(chunks * kThreadsPerBlock); }

}  // namespace

void sgd_momentum_update(cudaStream_t stream, int64_t elements, double learning_rate, double momentum,
                         double weight_decay, int64_t step, float* params, const float* grads, float* momentum_buffer) {
  sgd_momentum_kernel<<<blocks_for(elements), kThreadsPerBlock, 0, stream>>>(
      elements, sgd_constants(learning_rate, momentum, weight_decay, step), params, grads, momentum_buffer);
  SB_CUDA_CHECK(cudaGetLastError());
}

void adam_update(cudaStream_t stream, int64_t elements, double learning_rate, double beta1, double beta2,
                 double epsilon, double weight_decay, int64_t step, float* params, const float* grads,
                 float* first_moment, float* second_moment) {
  adam_kernel<<<blocks_for(elements), kThreadsPerBlock, 0, stream>>>(
      elements, adam_constants(learning_rate, beta1, beta2, epsilon, weight_decay, step), params, grads, first_moment,
      second_moment);
  SB_CUDA_CHECK(cudaGetLastError());
}

void sgd_momentum_update_all(cudaStream_t stream, const TensorBatch& batch, double learning_rate, double momentum,
                             double weight_decay, int64_t step) {
  if (batch.chunks == 0) return;
  sgd_momentum_all_kernel<<<blocks_for_chunks(batch.chunks), kThreadsPerBlock, 0, stream>>>(
      batch, sgd_constants(learning_rate, momentum, weight_decay, step));
  SB_CUDA_CHECK(cudaGetLastError());
}

void adam_update_all(cudaStream_t stream, const TensorBatch& batch, double learning_rate, double beta1, double beta2,
                     double epsilon, double weight_decay, int64_t step) {
  if (batch.chunks == 0) return;
  adam_all_kernel<<<blocks_for_chunks(batch.chunks), kThreadsPerBlock, 0, stream>>>(
      batch, adam_constants(learning_rate, beta1, beta2, epsilon, weight_decay, step));
  SB_CUDA_CHECK(cudaGetLastError());
}

void zero_all(cudaStream_t stream, const TensorBatch& batch) {
  if (batch.chunks == 0) return;
  zero_all_kernel<<<blocks_for_chunks(batch.chunks), kThreadsPerBlock, 0, stream>>>(batch);
  SB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace splitbrain::exec::cuda
