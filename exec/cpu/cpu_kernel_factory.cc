#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

CpuKernelFactory::CpuKernelFactory(int threads) : context_(threads) {}

// Host memory: the CPU backend's arrays are plain host arrays.
std::unique_ptr<kernels::ArrayKernel> make_array_kernel(CpuContext& /*context*/) {
  return kernels::make_host_array_kernel();
}

std::unique_ptr<kernels::KeptBuffer> make_kept_buffer(CpuContext& /*context*/, int64_t bytes) {
  return kernels::make_host_kept_buffer(bytes);
}

}  // namespace splitbrain::exec::cpu
