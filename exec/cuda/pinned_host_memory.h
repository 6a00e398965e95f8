#pragma once
// PinnedHostMemory: page-locked host memory (cudaHostAlloc) as a std::pmr::memory_resource, for
// the host arrays a step uploads from (CudaHostLink::upload_memory: the input batches the data
// reader fills). The GPU's copy engine reads such memory directly; from pageable memory the
// driver first copies through its own page-locked buffers, a host memcpy at a fraction of the
// link's rate (an H200's step spent about 4x the link's time uploading a 6.3 MB batch that way).
//
// Page-locking is slow (a system call per allocation) and takes memory from the OS's pool, so it
// is for long-lived buffers that are reused, as the reader's blocks are; not for every array.

#include <memory_resource>

namespace splitbrain::exec::cuda {

class PinnedHostMemory final : public std::pmr::memory_resource {
 public:
  // Allocates with `device` current on the calling thread: a data reader's worker thread has no
  // device of its own, and CUDA would otherwise start device 0's context in every process of a
  // node.
  explicit PinnedHostMemory(int device) : device_(device) {}

 private:
  // Portable: page-locked for every device's context, not only the current one's. std::bad_alloc
  // when CUDA cannot page-lock `bytes` or the memory is not aligned as asked.
  void* do_allocate(size_t bytes, size_t alignment) override;
  void do_deallocate(void* memory, size_t bytes, size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  int device_;
};

// Whether `host` lies in page-locked memory (this resource's, or any other cudaHostAlloc'd or
// registered memory): a copy queued from there waits for nothing, where one from pageable memory
// first waits for the stream.
bool is_page_locked(const void* host);

}  // namespace splitbrain::exec::cuda
