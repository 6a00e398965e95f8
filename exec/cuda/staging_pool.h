#pragma once
// Buffers for moving host arrays through the GPU: a device buffer and a pinned host buffer of
// the same size. The runtime's arrays are host memory in this first version of the CUDA backend
// (comm::LocalArray), so every NCCL collective stages its data: host array -> pinned copy ->
// device (on the engine's stream) and back. Pinned memory makes the copies true DMA that runs
// asynchronously, which the non-blocking bucket reductions need; the pool reuses buffers so a
// step after the first allocates nothing (the buckets and layers repeat their sizes).

#include <cstddef>
#include <vector>

namespace splitbrain::exec::cuda {

class StagingPool {
  struct Buffers {
    std::byte* device = nullptr;
    std::byte* host = nullptr;  // pinned (cudaMallocHost)
    size_t bytes = 0;
  };

 public:
  // Buffers of at least the asked size, given back to the pool when the lease goes.
  class Lease {
   public:
    Lease(StagingPool* pool, Buffers buffers) : pool_(pool), buffers_(buffers) {}
    Lease(Lease&& other) noexcept : pool_(other.pool_), buffers_(other.buffers_) { other.pool_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    std::byte* device() const { return buffers_.device; }
    std::byte* host() const { return buffers_.host; }
    // The GPU may still use the buffers (an operation abandoned while an exception unwinds):
    // never give them back, so no later operation writes into them meanwhile.
    void abandon() { pool_ = nullptr; }

   private:
    StagingPool* pool_;
    Buffers buffers_;
  };

  StagingPool() = default;
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;
  ~StagingPool();  // every lease must have gone (or been abandoned) before

  // On the current device. The smallest free buffer that fits; when none does, the largest free
  // one (too small) is freed and a new one allocated, so the pool holds at most as many buffers
  // as were ever leased at once.
  Lease acquire(size_t bytes);

 private:
  void give_back(Buffers buffers) { free_.push_back(buffers); }
  static void free_buffers(Buffers buffers);

  std::vector<Buffers> free_;
};

// Runs `queue`, which puts work that uses the lease's buffers on a stream. Should it throw
// (a CUDA or NCCL error half way), the buffers are never given back: what was queued may still run.
template <class Queue>
void queue_on_lease(StagingPool::Lease& lease, Queue&& queue) {
  try {
    queue();
  } catch (...) {
    lease.abandon();
    throw;
  }
}

}  // namespace splitbrain::exec::cuda
