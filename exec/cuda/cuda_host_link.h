#pragma once
// CudaHostLink: CudaArrayDevice's transfers to and from the host (HostLink,
// exec/runtime/host_link.h), queued on the context's compute stream. An upload or a download
// waits for the stream (its host memory may go, or be read, when it returns); the step's queued
// uploads do not.

#include <memory>
#include <memory_resource>
#include <span>

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/page_locked_slots.h"
#include "exec/cuda/pinned_host_memory.h"
#include "exec/runtime/host_link.h"

namespace splitbrain::exec::cuda {

class CudaHostLink final : public HostLink {
 public:
  explicit CudaHostLink(CudaContext& context);

  // Page-locked (pinned_host_memory.h): an upload from it is the copy engine's alone.
  std::shared_ptr<std::pmr::memory_resource> upload_memory() const override { return pinned_; }
  // The arrays' uploads and downloads, and the kernels' own transfers (CudaContext counts them).
  HostTransfers host_transfers() const override;

 protected:
  void upload_values(std::span<const float> host, DeviceArray& into) override;
  void download_values(const DeviceArray& from, std::span<float> host) override;
  // From page-locked memory (the data reader's blocks, upload_memory()) the copy is queued as it
  // is; from pageable memory, through a page-locked slot, since the driver would first wait for
  // the stream. Neither waits.
  void upload_values_queued(std::span<const float> host, DeviceArray& into) override;

 private:
  CudaContext& context_;
  std::shared_ptr<PinnedHostMemory> pinned_;
  PageLockedSlots slots_;  // queued uploads from pageable memory
};

}  // namespace splitbrain::exec::cuda
