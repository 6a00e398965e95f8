#pragma once
// The scrambled test device's arrays (scrambled_device.h): HostMemory whose arrays are
// ScrambledArrays, each with a key of its own, plain only for the duration of the call handed them.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "exec/runtime/host_memory.h"

namespace splitbrain::equivalence {

class ScrambledMemory final : public exec::HostMemory {
 public:
  std::unique_ptr<exec::DeviceArray> allocate(std::vector<int64_t> shape, bool zeroed) override;
  void fill(exec::DeviceArray& array, int64_t first, int64_t count, float value) override;
  void copy(const exec::DeviceArray& from, int64_t from_first, exec::DeviceArray& into, int64_t into_first,
            int64_t count) override;
  void add(const exec::DeviceArray& from, exec::DeviceArray& into) override;
  void copy_block(const exec::DeviceArray& from, std::span<const int64_t> offset, exec::DeviceArray& block) override;
  void add_block(const exec::DeviceArray& block, exec::DeviceArray& into, std::span<const int64_t> offset) override;
  void copy_rows(const exec::DeviceArray& from, int64_t from_first, exec::DeviceArray& into, int64_t into_first,
                 const exec::kernels::RowCopy& rows) override;
  void pack(std::span<const exec::DeviceArray* const> parts, exec::DeviceArray& flat) override;
  void unpack(const exec::DeviceArray& flat, std::span<exec::DeviceArray* const> parts) override;

 private:
  uint32_t next_key_ = 0x2545F491u;
};

}  // namespace splitbrain::equivalence
