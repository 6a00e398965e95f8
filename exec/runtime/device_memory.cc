#include "exec/runtime/device_memory.h"

#include <fmt/format.h>

#include <stdexcept>

namespace splitbrain::exec {

void DeviceMemory::pack(std::span<const DeviceArray* const> parts, DeviceArray& flat) {
  int64_t at = 0;
  for (const DeviceArray* part : parts) {
    copy(*part, 0, flat, at, part->elements());
    at += part->elements();
  }
  fill(flat, at, flat.elements() - at, 0.0f);
}

void DeviceMemory::unpack(const DeviceArray& flat, std::span<DeviceArray* const> parts) {
  int64_t at = 0;
  for (DeviceArray* part : parts) {
    copy(flat, at, *part, 0, part->elements());
    at += part->elements();
  }
}

void DeviceMemory::zero_all(std::span<DeviceArray* const> arrays) {
  for (DeviceArray* array : arrays) fill(*array, 0, array->elements(), 0.0f);
}

void check_element_range(const DeviceArray& array, int64_t first, int64_t count, const char* what) {
  if (first < 0 || count < 0 || first + count > array.elements()) {
    throw std::logic_error(fmt::format("Device::{}: elements [{}, {}) outside an array of {}", what, first,
                                       first + count, array.elements()));
  }
}

void check_rows_inside(const DeviceArray& from, int64_t from_first, const DeviceArray& into, int64_t into_first,
                       const kernels::RowCopy& c) {
  const bool rows_fit = c.planes >= 0 && c.rows >= 0 && c.row_elements >= 0 && c.from_first_row >= 0 &&
                        c.into_first_row >= 0 && c.from_first_row + c.rows <= c.from_plane_rows &&
                        c.into_first_row + c.rows <= c.into_plane_rows;
  if (!rows_fit) {
    throw std::logic_error(fmt::format(
        "DeviceMemory::copy_rows: rows [{}, {}) into [{}, {}) outside planes of {} and {} rows", c.from_first_row,
        c.from_first_row + c.rows, c.into_first_row, c.into_first_row + c.rows, c.from_plane_rows, c.into_plane_rows));
  }
  check_element_range(from, from_first, kernels::row_copy_from_elements(c), "copy_rows");
  check_element_range(into, into_first, kernels::row_copy_into_elements(c), "copy_rows");
}

void check_block_inside(const DeviceArray& block, const DeviceArray& whole, std::span<const int64_t> offset,
                        const char* what) {
  const auto& b = block.shape();
  const auto& w = whole.shape();
  if (b.size() != 2 || w.size() != 2 || offset.size() != 2 || offset[0] < 0 || offset[1] < 0 ||
      offset[0] + b[0] > w[0] || offset[1] + b[1] > w[1]) {
    throw std::logic_error(fmt::format("Device::{}: a 2-d block outside its array", what));
  }
}

void DeviceMemory::round_to_bf16(DeviceArray& /*array*/) {
  throw std::logic_error("this device does not emulate bf16 (bf16 plans run on the CPU backend only)");
}

}  // namespace splitbrain::exec
