#pragma once
// PageLockedSlots: small page-locked host buffers, each with an event recorded after its last
// queued copy, reused once that copy is done: the host side of the copies a kernel queues without
// waiting (ArrayKernel's upload of a batch's labels and download of the loss). Page-locked because
// a queued copy from pageable memory may first wait for the stream (the driver stages it) and one
// into pageable memory always does; reused because page-locking costs a system call.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "exec/cuda/pinned_host_memory.h"

namespace splitbrain::exec::cuda {

class PageLockedSlots {
 public:
  struct Slot {
    void* memory = nullptr;
    std::size_t bytes = 0;
    cudaEvent_t copied = nullptr;  // recorded after the last copy queued from or into `memory`
    bool held = false;             // taken and not given back
  };

  // Page-locks for `device` (PinnedHostMemory).
  explicit PageLockedSlots(int device) : memory_(device) {}
  // Waits for the copies still queued, then frees every slot.
  ~PageLockedSlots();
  PageLockedSlots(const PageLockedSlots&) = delete;
  PageLockedSlots& operator=(const PageLockedSlots&) = delete;

  // A slot of at least `bytes`, now held, that nobody held and whose last copy is done; a new one
  // where none is. The reference stays valid for the life of this object.
  Slot& take(std::size_t bytes);
  // Records the slot's event on `stream`, after the copy just queued there.
  static void copy_queued(Slot& slot, cudaStream_t stream);
  // `bytes` of `host` copied into a slot, and the slot's copy into `device` queued on `stream`:
  // the caller may change or free `host` as soon as this returns, and nothing waits.
  void upload(const void* host, std::size_t bytes, void* device, cudaStream_t stream);
  // Waits for the slot's last copy.
  static void wait(const Slot& slot);
  // The slot may be taken again once its last copy is done.
  static void give_back(Slot& slot) { slot.held = false; }
  std::size_t size() const { return slots_.size(); }

 private:
  static bool copy_done(const Slot& slot);

  PinnedHostMemory memory_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace splitbrain::exec::cuda
