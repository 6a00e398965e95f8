#pragma once
// HostMemory: HostDevice's arrays (DeviceMemory, device_memory.h): HostArrays in host memory,
// written and read in place by the host.

#include <memory>
#include <span>
#include <vector>

#include "exec/runtime/device_memory.h"
#include "exec/runtime/host_array.h"

namespace splitbrain::exec {

class HostMemory : public DeviceMemory {
 public:
  std::unique_ptr<DeviceArray> allocate(std::vector<int64_t> shape, bool zeroed) override;
  void fill(DeviceArray& array, int64_t first, int64_t count, float value) override;
  void copy(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first, int64_t count) override;
  void add(const DeviceArray& from, DeviceArray& into) override;
  void copy_block(const DeviceArray& from, std::span<const int64_t> offset, DeviceArray& block) override;
  void add_block(const DeviceArray& block, DeviceArray& into, std::span<const int64_t> offset) override;
  void copy_rows(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                 const kernels::RowCopy& rows) override;
  // Appends the parts to the flat array's storage: written once, with no zero-fill first.
  void pack(std::span<const DeviceArray* const> parts, DeviceArray& flat) override;
  void round_to_bf16(DeviceArray& array) override;
};

}  // namespace splitbrain::exec
