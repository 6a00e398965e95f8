#include "exec/cuda/pinned_host_memory.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <new>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/release_in_destructor.h"

namespace splitbrain::exec::cuda {

void* PinnedHostMemory::do_allocate(size_t bytes, size_t alignment) {
  SB_CUDA_CHECK(cudaSetDevice(device_));
  void* memory = nullptr;
  // A std::bad_alloc, as every memory_resource reports running out; cudaHostAlloc's error code
  // says no more than that.
  if (cudaHostAlloc(&memory, std::max<size_t>(bytes, 1), cudaHostAllocPortable) != cudaSuccess) {
    (void)cudaGetLastError();  // clears the error, so the next CUDA call does not report it
    throw std::bad_alloc();
  }
  if (reinterpret_cast<uintptr_t>(memory) % alignment != 0) {  // page-aligned in practice
    do_deallocate(memory, bytes, alignment);
    throw std::bad_alloc();
  }
  return memory;
}

void PinnedHostMemory::do_deallocate(void* memory, size_t /*bytes*/, size_t /*alignment*/) {
  // Called from containers' destructors, which must not throw.
  release_in_destructor([&] {
    SB_CUDA_CHECK(cudaSetDevice(device_));
    SB_CUDA_CHECK(cudaFreeHost(memory));
  });
}

bool is_page_locked(const void* host) {
  cudaPointerAttributes attributes{};
  SB_CUDA_CHECK(cudaPointerGetAttributes(&attributes, host));
  return attributes.type == cudaMemoryTypeHost;
}

}  // namespace splitbrain::exec::cuda
