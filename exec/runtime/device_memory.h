#pragma once
// DeviceMemory: a device's arrays and the copies between them, the one place where array values
// are written without a layer, the optimizer or a collective (device.h). Every call is on arrays
// already of the right sizes (the runtime checks them, with the step program's buffer numbers in
// its messages); a device checks its arguments with the helpers below.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "exec/kernels/row_copy.h"
#include "exec/runtime/device_array.h"

namespace splitbrain::exec {

// What a device's own allocator and its driver say of its memory, to cross-check the tracked
// figures (MemoryTracker): the allocator's peak in use (the tracked arrays and kept buffers,
// rounded to its granule), what it holds from the driver (in use and cached), and the memory the
// driver counts as used on the device since the device was made (the allocator's, the
// libraries' workspaces and code, the kernels' own buffers).
struct DeviceMemoryUse {
  int64_t allocator_peak_in_use_bytes = 0;
  int64_t allocator_reserved_bytes = 0;
  int64_t driver_used_bytes = 0;
};

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;

  // A new array of `shape`: all zeros, or (zeroed false) contents undefined until written.
  virtual std::unique_ptr<DeviceArray> allocate(std::vector<int64_t> shape, bool zeroed) = 0;
  // None where the device has no allocator of its own to ask (HostDevice: host memory).
  virtual std::optional<DeviceMemoryUse> memory_use() const { return std::nullopt; }

  // Element ranges of the arrays seen flat (row-major).
  virtual void fill(DeviceArray& array, int64_t first, int64_t count, float value) = 0;
  virtual void copy(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                    int64_t count) = 0;
  // into += from, element by element (the same element count).
  virtual void add(const DeviceArray& from, DeviceArray& into) = 0;
  // 2-d blocks: `block` (its shape is the extent) = `from` at `offset`, or `into` at `offset` +=
  // `block`.
  virtual void copy_block(const DeviceArray& from, std::span<const int64_t> offset, DeviceArray& block) = 0;
  virtual void add_block(const DeviceArray& block, DeviceArray& into, std::span<const int64_t> offset) = 0;
  // Rows of arrays seen as planes of rows (kernels::RowCopy), `from` from its element `from_first`
  // on and `into` from `into_first` on: a collective's pieces cut out of an array along one
  // dimension and laid into another (collectives_in_device_memory.h).
  virtual void copy_rows(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                         const kernels::RowCopy& rows) = 0;
  // `parts` one after another into `flat`, the rest of it zeros (a gradient bucket), and back;
  // by default as copies and a fill.
  virtual void pack(std::span<const DeviceArray* const> parts, DeviceArray& flat);
  virtual void unpack(const DeviceArray& flat, std::span<DeviceArray* const> parts);
  // Every array set to zeros (the kept gradients after the update). By default one fill per
  // array; a device that queues its work does them in one pass (DeviceKernels::arrays_per_update_pass
  // arrays at a time), so the host queues one kernel, not one per array.
  virtual void zero_all(std::span<DeviceArray* const> arrays);
  // Every element rounded to the nearest bf16 (comm/bf16.h), kept in the array's fp32 storage: a
  // bf16 plan's values on a device that emulates bf16 (HostDevice). By default refused: a device
  // without that emulation (a GPU's: no bf16 path built).
  virtual void round_to_bf16(DeviceArray& array);
};

// The checks every device makes of its arguments: std::logic_error naming the call (`what`) when
// elements [first, first + count) are not inside `array`, or when the 2-d `block` at `offset` is
// not inside the 2-d `whole`.
void check_element_range(const DeviceArray& array, int64_t first, int64_t count, const char* what);
void check_block_inside(const DeviceArray& block, const DeviceArray& whole, std::span<const int64_t> offset,
                        const char* what);
// std::logic_error when a copy_rows call's rows are not inside its planes, or its planes not inside
// the arrays.
void check_rows_inside(const DeviceArray& from, int64_t from_first, const DeviceArray& into, int64_t into_first,
                       const kernels::RowCopy& rows);

}  // namespace splitbrain::exec
