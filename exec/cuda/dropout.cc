#include "exec/cuda/dropout.h"

#include <cmath>
#include <string>

#include "exec/cpu/dnnl_check.h"
#include "exec/cuda/cuda_check.h"
#include "exec/cuda/elementwise_kernels.h"
#include "exec/data/seeded_hash.h"

namespace splitbrain::exec::cuda {

namespace {

// The CPU's threshold and scale: drop iff the hash's top 32 bits fall below p * 2^32.
uint64_t threshold(double p) {
  if (!(p >= 0.0 && p <= 1.0))
    throw cpu::KernelArgumentError("dropout: probability " + std::to_string(p) + " is not in [0, 1]");
  return static_cast<uint64_t>(std::ldexp(p, 32));
}

float keep_scale(double p) { return p < 1.0 ? static_cast<float>(1.0 / (1.0 - p)) : 0.0f; }

DropoutGeometry geometry(const DropoutBlock& b) {
  const std::size_t rank = b.global_shape.size();
  if (rank == 0 || b.offset.size() != rank || b.local_shape.size() != rank)
    throw cpu::KernelArgumentError("dropout: global_shape, offset and local_shape need the same rank (> 0)");
  if (rank > static_cast<std::size_t>(kMaxDropoutRank))
    throw cpu::KernelArgumentError("dropout: the CUDA kernel takes blocks of rank <= " +
                                   std::to_string(kMaxDropoutRank) + ", got " + std::to_string(rank));
  DropoutGeometry g;
  g.rank = static_cast<int>(rank);
  int64_t stride = 1;
  for (std::size_t d = rank; d-- > 0;) {
    if (b.offset[d] < 0 || b.local_shape[d] < 0 || b.offset[d] + b.local_shape[d] > b.global_shape[d])
      throw cpu::KernelArgumentError("dropout: the local block does not fit the global shape in dimension " +
                                     std::to_string(d));
    g.local_shape[d] = b.local_shape[d];
    g.offset[d] = b.offset[d];
    g.global_stride[d] = stride;
    stride *= b.global_shape[d];
  }
  return g;
}

enum Slot : std::size_t { kInput, kOutput, kMask };

}  // namespace

void dropout_forward(CudaContext& context, const DropoutKey& key, double p, const DropoutBlock& block, const float* x,
                     float* y, uint8_t* mask) {
  const DropoutGeometry g = geometry(block);
  const uint64_t limit = threshold(p);
  const int64_t elements = block.local_elements();
  if (elements == 0) return;
  const auto bytes = static_cast<std::size_t>(elements) * sizeof(float);
  const auto mask_bytes = static_cast<std::size_t>(elements);
  auto* device_x = static_cast<float*>(context.staging(kInput, bytes));
  auto* device_y = static_cast<float*>(context.staging(kOutput, bytes));
  auto* device_mask = static_cast<uint8_t*>(context.staging(kMask, mask_bytes));
  SB_CUDA_CHECK(cudaMemcpyAsync(device_x, x, bytes, cudaMemcpyHostToDevice, context.stream()));
  const uint64_t stream_key = data::hash_keys(key.seed, {key.step, key.layer});
  dropout_forward_on_device(context.stream(), g, elements, stream_key, limit, keep_scale(p), device_x, device_y,
                        device_mask);
  SB_CUDA_CHECK(cudaMemcpyAsync(y, device_y, bytes, cudaMemcpyDeviceToHost, context.stream()));
  SB_CUDA_CHECK(cudaMemcpyAsync(mask, device_mask, mask_bytes, cudaMemcpyDeviceToHost, context.stream()));
  context.synchronize();
}

void dropout_backward(CudaContext& context, double p, int64_t elements, const uint8_t* mask, const float* dy,
                      float* dx) {
  threshold(p);  // validates p
  const float scale = keep_scale(p);
  if (elements <= 0) return;
  const auto bytes = static_cast<std::size_t>(elements) * sizeof(float);
  const auto mask_bytes = static_cast<std::size_t>(elements);
  auto* device_dy = static_cast<float*>(context.staging(kInput, bytes));
  auto* device_dx = static_cast<float*>(context.staging(kOutput, bytes));
  auto* device_mask = static_cast<uint8_t*>(context.staging(kMask, mask_bytes));
  SB_CUDA_CHECK(cudaMemcpyAsync(device_dy, dy, bytes, cudaMemcpyHostToDevice, context.stream()));
  SB_CUDA_CHECK(cudaMemcpyAsync(device_mask, mask, mask_bytes, cudaMemcpyHostToDevice, context.stream()));
  dropout_backward_on_device(context.stream(), elements, device_mask, scale, device_dy, device_dx);
  SB_CUDA_CHECK(cudaMemcpyAsync(dx, device_dx, bytes, cudaMemcpyDeviceToHost, context.stream()));
  context.synchronize();
}

}  // namespace splitbrain::exec::cuda
