#include "exec/cuda/array_kernel.h"

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/elementwise_kernels.h"

namespace splitbrain::exec::cuda {

namespace {
std::size_t float_bytes(std::size_t elements) { return elements * sizeof(float); }
}  // namespace

void ArrayKernel::copy(const float* from, float* into, int64_t elements) {
  if (from == into || elements <= 0) return;
  SB_CUDA_CHECK(cudaMemcpyAsync(into, from, float_bytes(static_cast<std::size_t>(elements)), cudaMemcpyDefault,
                                context_.stream()));
}

void ArrayKernel::fill(float* into, int64_t elements, float value) {
  fill_on_device(context_.stream(), elements, value, into);
}

void ArrayKernel::download(const float* from, std::span<float> host) {
  if (host.empty()) return;
  SB_CUDA_CHECK(cudaMemcpyAsync(host.data(), from, float_bytes(host.size()), cudaMemcpyDefault, context_.stream()));
  context_.count_host_transfer(float_bytes(host.size()));
  context_.synchronize();
}

void ArrayKernel::upload(std::span<const float> host, float* into) {
  if (host.empty()) return;
  SB_CUDA_CHECK(cudaMemcpyAsync(into, host.data(), float_bytes(host.size()), cudaMemcpyDefault, context_.stream()));
  context_.count_host_transfer(float_bytes(host.size()));
  context_.synchronize();
}

void ArrayKernel::add_from_host(std::span<const float> host, float* into) {
  if (host.empty()) return;
  auto* addend = static_cast<float*>(context_.staging(0, float_bytes(host.size())));
  SB_CUDA_CHECK(cudaMemcpyAsync(addend, host.data(), float_bytes(host.size()), cudaMemcpyDefault, context_.stream()));
  context_.count_host_transfer(float_bytes(host.size()));
  const float one = 1.0f;
  SB_CUBLAS_CHECK(cublasSaxpy_64(context_.cublas(), static_cast<int64_t>(host.size()), &one, addend, 1, into, 1));
  context_.synchronize();
}

void ArrayKernel::upload(std::span<const int32_t> host, int32_t* into) {
  if (host.empty()) return;
  SB_CUDA_CHECK(cudaMemcpyAsync(into, host.data(), host.size_bytes(), cudaMemcpyHostToDevice, context_.stream()));
  context_.count_host_transfer(host.size_bytes());
  // The host labels may go as soon as this returns.
  context_.synchronize();
}

}  // namespace splitbrain::exec::cuda
