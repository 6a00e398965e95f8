#include "tests/exec/equivalence/scrambled_memory.h"

#include <utility>

#include "tests/exec/equivalence/scrambled_array.h"

namespace splitbrain::equivalence {

using exec::DeviceArray;

std::unique_ptr<DeviceArray> ScrambledMemory::allocate(std::vector<int64_t> shape, bool zeroed) {
  next_key_ = next_key_ * 1664525u + 1013904223u;  // every array its own key
  return std::make_unique<ScrambledArray>(std::move(shape), zeroed, next_key_ | 0x40000000u);
}

void ScrambledMemory::fill(DeviceArray& array, int64_t first, int64_t count, float value) {
  InUse use{&array};
  HostMemory::fill(array, first, count, value);
}

void ScrambledMemory::copy(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                           int64_t count) {
  InUse use{&from, &into};
  HostMemory::copy(from, from_first, into, into_first, count);
}

void ScrambledMemory::add(const DeviceArray& from, DeviceArray& into) {
  InUse use{&from, &into};
  HostMemory::add(from, into);
}

void ScrambledMemory::copy_block(const DeviceArray& from, std::span<const int64_t> offset, DeviceArray& block) {
  InUse use{&from, &block};
  HostMemory::copy_block(from, offset, block);
}

void ScrambledMemory::add_block(const DeviceArray& block, DeviceArray& into, std::span<const int64_t> offset) {
  InUse use{&block, &into};
  HostMemory::add_block(block, into, offset);
}

void ScrambledMemory::copy_rows(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                                const exec::kernels::RowCopy& rows) {
  InUse use{&from, &into};
  HostMemory::copy_rows(from, from_first, into, into_first, rows);
}

void ScrambledMemory::pack(std::span<const DeviceArray* const> parts, DeviceArray& flat) {
  InUse use{&flat};
  use.add_all(parts);
  HostMemory::pack(parts, flat);
}

void ScrambledMemory::unpack(const DeviceArray& flat, std::span<DeviceArray* const> parts) {
  InUse use{&flat};
  use.add_all(parts);
  HostMemory::unpack(flat, parts);
}

}  // namespace splitbrain::equivalence
