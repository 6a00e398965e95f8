#pragma once
// A caching allocator of GPU memory for the runtime's arrays: a freed block goes back to a free
// list of its (rounded) size and the next request of that size takes it, so after the first
// step, whose buffers repeat their sizes every step, no cudaMalloc or cudaFree runs (both
// synchronise the device). Of the free blocks of a size the one at the lowest address goes first:
// what is free at a step's end is the same set every step, so a step that repeats its requests
// gets the very same blocks every step, and the kernels' recorded graphs, keyed by their
// arguments' addresses, are launched again rather than recorded anew (call_graphs.h). in_use_bytes() is what the arrays
// hold; reserved_bytes() what the pool holds from the driver (in use + cached), the figure cudaMemGetInfo sees.
//
// Blocks are handed out on the compute stream's order: a block freed while kernels queued on
// that stream may still read it is safe to reuse for work queued on the same stream later, and
// only there; every user of the pool runs on the one compute stream (CudaContext::stream()).

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>

namespace splitbrain::exec::cuda {

class DeviceMemoryPool {
 public:
  DeviceMemoryPool() = default;
  DeviceMemoryPool(const DeviceMemoryPool&) = delete;
  DeviceMemoryPool& operator=(const DeviceMemoryPool&) = delete;
  ~DeviceMemoryPool();  // frees the cached blocks; every block must have been given back

  // At least `bytes` on the current device (nullptr for 0 bytes).
  void* allocate(std::size_t bytes);
  // `data` came from allocate(bytes) with the same `bytes`.
  void give_back(void* data, std::size_t bytes);
  // Returns the cached blocks to the driver (after a failed cudaMalloc, before retrying it).
  void release_cached();

  int64_t in_use_bytes() const { return in_use_bytes_; }
  int64_t peak_in_use_bytes() const { return peak_in_use_bytes_; }
  int64_t reserved_bytes() const { return reserved_bytes_; }

  // Sizes are rounded up to this many bytes, cuDNN's and cuBLAS's preferred alignment.
  static constexpr std::size_t kGranuleBytes = 512;

 private:
  static std::size_t rounded(std::size_t bytes);

  std::map<std::size_t, std::set<void*>> free_by_size_;
  int64_t in_use_bytes_ = 0;
  int64_t peak_in_use_bytes_ = 0;
  int64_t reserved_bytes_ = 0;
};

}  // namespace splitbrain::exec::cuda
