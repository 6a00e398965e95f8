#include "exec/cuda/stream_hold.h"

#include "exec/cuda/cuda_check.h"

namespace splitbrain::exec::cuda {
namespace {

__device__ unsigned long long global_nanoseconds() {
  unsigned long long now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void hold_kernel(unsigned long long nanoseconds) {
  const unsigned long long start = global_nanoseconds();
  while (global_nanoseconds() - start < nanoseconds) __nanosleep(1000);
}

}  // namespace

void hold_stream(cudaStream_t stream, double seconds) {
  if (seconds <= 0.0) return;
  hold_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(seconds * 1e9));
  SB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace splitbrain::exec::cuda
