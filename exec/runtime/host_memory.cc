#include "exec/runtime/host_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "exec/comm/bf16.h"
#include "exec/kernels/array_kernel.h"

namespace splitbrain::exec {

std::unique_ptr<DeviceArray> HostMemory::allocate(std::vector<int64_t> shape, bool zeroed) {
  return std::make_unique<HostArray>(std::move(shape), zeroed);
}

void HostMemory::fill(DeviceArray& array, int64_t first, int64_t count, float value) {
  check_element_range(array, first, count, "fill");
  std::fill_n(HostArray::storage(array).values.begin() + first, count, value);
}

void HostMemory::copy(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                      int64_t count) {
  check_element_range(from, from_first, count, "copy");
  check_element_range(into, into_first, count, "copy");
  std::copy_n(HostArray::storage(from).values.begin() + from_first, count,
              HostArray::storage(into).values.begin() + into_first);
}

void HostMemory::add(const DeviceArray& from, DeviceArray& into) {
  if (from.elements() != into.elements()) throw std::logic_error("HostDevice::add: arrays of different sizes");
  const std::vector<float>& source = HostArray::storage(from).values;
  std::vector<float>& target = HostArray::storage(into).values;
  for (size_t i = 0; i < source.size(); ++i) target[i] += source[i];
}

namespace {

// Calls visit(row of `block`, row of `whole`) for each row of a 2-d block at `offset` of `whole`.
template <typename Visit>
void for_block_rows(const DeviceArray& block, const DeviceArray& whole, std::span<const int64_t> offset,
                    Visit&& visit) {
  check_block_inside(block, whole, offset, "copy_block/add_block");
  const auto& b = block.shape();
  const auto& w = whole.shape();
  for (int64_t r = 0; r < b[0]; ++r) visit(r * b[1], (offset[0] + r) * w[1] + offset[1], b[1]);
}

}  // namespace

void HostMemory::copy_block(const DeviceArray& from, std::span<const int64_t> offset, DeviceArray& block) {
  const std::vector<float>& source = HostArray::storage(from).values;
  std::vector<float>& target = HostArray::storage(block).values;
  for_block_rows(block, from, offset, [&](int64_t in_block, int64_t in_whole, int64_t columns) {
    std::copy_n(source.begin() + in_whole, columns, target.begin() + in_block);
  });
}

void HostMemory::add_block(const DeviceArray& block, DeviceArray& into, std::span<const int64_t> offset) {
  const std::vector<float>& source = HostArray::storage(block).values;
  std::vector<float>& target = HostArray::storage(into).values;
  for_block_rows(block, into, offset, [&](int64_t in_block, int64_t in_whole, int64_t columns) {
    for (int64_t c = 0; c < columns; ++c)
      target[static_cast<size_t>(in_whole + c)] += source[static_cast<size_t>(in_block + c)];
  });
}

void HostMemory::copy_rows(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                           const kernels::RowCopy& rows) {
  check_rows_inside(from, from_first, into, into_first, rows);
  // The ops' host kernel does it (it keeps no state).
  static const std::unique_ptr<kernels::ArrayKernel> host_kernel = kernels::make_host_array_kernel();
  host_kernel->copy_rows(HostArray::storage(from).values.data() + from_first,
                         HostArray::storage(into).values.data() + into_first, rows);
}

void HostMemory::pack(std::span<const DeviceArray* const> parts, DeviceArray& flat) {
  auto& host = dynamic_cast<HostArray&>(flat).array.values;
  const auto size = static_cast<size_t>(flat.elements());
  // Appended part by part, so the storage is written once (no zero-fill first: a bucket can be
  // the model's size).
  host.clear();
  host.reserve(size);
  for (const DeviceArray* part : parts) {
    const std::vector<float>& values = HostArray::storage(*part).values;
    if (size - host.size() < values.size()) {
      throw std::logic_error(fmt::format("pack: {} elements do not fit the flat buffer", values.size()));
    }
    host.insert(host.end(), values.begin(), values.end());
  }
  host.resize(size, 0.0f);
}

void HostMemory::round_to_bf16(DeviceArray& array) { comm::round_to_bf16(HostArray::storage(array).values); }

}  // namespace splitbrain::exec
