#pragma once
// HostLink: a device's transfers to and from host memory (device.h), counted, so a step's report
// can say how many it made (the input batch; the evaluation's logits; a checkpoint's arrays):
// those through upload/download here, and those a backend's kernels make themselves (a GPU's
// labels and loss), which the backend adds to host_transfers().

#include <memory>
#include <memory_resource>
#include <span>
#include <vector>

#include "exec/runtime/device_array.h"
#include "exec/runtime/host_transfers.h"

namespace splitbrain::exec {

class HostLink {
 public:
  virtual ~HostLink() = default;

  // Host transfers, counted (as `other`: a value read back, a staged collective, a checkpoint):
  // `host` holds exactly the array's elements.
  void upload(std::span<const float> host, DeviceArray& into);
  void download(const DeviceArray& from, std::span<float> host);
  // The step's input batch, queued behind the device's work: the host does not wait for it, so
  // `host` must stay as it is until the device's queued work is done (the step's end, where its
  // clock waits for the device). Counted as the step's input.
  void upload_queued(std::span<const float> host, DeviceArray& into);
  // Host memory to upload from, for what fills the arrays a step uploads (the input batches):
  // where an upload is fastest (a GPU's page-locked memory, which its copy engine reads
  // directly); plain host memory by default. Shared, so what was allocated from it may outlive
  // the device.
  virtual std::shared_ptr<std::pmr::memory_resource> upload_memory() const;
  // Every host transfer so far: upload's and download's, and the backend's own.
  virtual HostTransfers host_transfers() const { return transfers_; }

 protected:
  virtual void upload_values(std::span<const float> host, DeviceArray& into) = 0;
  virtual void download_values(const DeviceArray& from, std::span<float> host) = 0;
  // By default the upload itself, done when it returns (a device that queues nothing).
  virtual void upload_values_queued(std::span<const float> host, DeviceArray& into) { upload_values(host, into); }

 private:
  HostTransfers transfers_;
};

// The array's values in a new host vector (HostLink::download, counted).
std::vector<float> host_copy(HostLink& link, const DeviceArray& array);

}  // namespace splitbrain::exec
