#include "exec/cuda/page_locked_slots.h"

#include <algorithm>
#include <cstring>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/release_in_destructor.h"

namespace splitbrain::exec::cuda {

namespace {

// What a slot holds at least: a slot made for a loss's 8 bytes serves a small label upload later.
constexpr std::size_t kSmallestSlotBytes = 256;

}  // namespace

PageLockedSlots::~PageLockedSlots() {
  for (const auto& slot : slots_) {
    release_in_destructor([&] {
      SB_CUDA_CHECK(cudaEventSynchronize(slot->copied));
      SB_CUDA_CHECK(cudaEventDestroy(slot->copied));
    });
    memory_.deallocate(slot->memory, slot->bytes);
  }
}

bool PageLockedSlots::copy_done(const Slot& slot) {
  const cudaError_t status = cudaEventQuery(slot.copied);
  if (status == cudaErrorNotReady) return false;
  SB_CUDA_CHECK(status);
  return true;
}

PageLockedSlots::Slot& PageLockedSlots::take(std::size_t bytes) {
  for (const auto& slot : slots_) {
    if (!slot->held && slot->bytes >= bytes && copy_done(*slot)) {
      slot->held = true;
      return *slot;
    }
  }
  auto slot = std::make_unique<Slot>();
  slot->bytes = std::max(bytes, kSmallestSlotBytes);
  slot->memory = memory_.allocate(slot->bytes);
  // Timing off: the event only orders, and such events are the cheapest to record and query.
  if (const cudaError_t status = cudaEventCreateWithFlags(&slot->copied, cudaEventDisableTiming);
      status != cudaSuccess) {
    memory_.deallocate(slot->memory, slot->bytes);
    SB_CUDA_CHECK(status);
  }
  slot->held = true;
  slots_.push_back(std::move(slot));
  return *slots_.back();
}

void PageLockedSlots::copy_queued(Slot& slot, cudaStream_t stream) {
  SB_CUDA_CHECK(cudaEventRecord(slot.copied, stream));
}

void PageLockedSlots::upload(const void* host, std::size_t bytes, void* device, cudaStream_t stream) {
  if (bytes == 0) return;
  Slot& slot = take(bytes);
  std::memcpy(slot.memory, host, bytes);
  // Given back at once: the slot is taken again only once its copy is done.
  give_back(slot);
  SB_CUDA_CHECK(cudaMemcpyAsync(device, slot.memory, bytes, cudaMemcpyHostToDevice, stream));
  copy_queued(slot, stream);
}

void PageLockedSlots::wait(const Slot& slot) { SB_CUDA_CHECK(cudaEventSynchronize(slot.copied)); }

}  // namespace splitbrain::exec::cuda
