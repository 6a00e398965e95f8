#include "exec/runtime/flat_packing.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace splitbrain::exec {

void pack_flat(std::span<const comm::LocalArray* const> parts, comm::LocalArray& flat) {
  auto at = flat.values.begin();
  for (const comm::LocalArray* part : parts) {
    if (static_cast<size_t>(flat.values.end() - at) < part->values.size()) {
      throw std::logic_error(fmt::format("pack: {} elements do not fit the flat buffer", part->values.size()));
    }
    at = std::copy(part->values.begin(), part->values.end(), at);
  }
  std::fill(at, flat.values.end(), 0.0f);
}

void unpack_flat(const comm::LocalArray& flat, std::span<comm::LocalArray* const> parts) {
  auto at = flat.values.begin();
  for (comm::LocalArray* part : parts) {
    if (static_cast<size_t>(flat.values.end() - at) < part->values.size()) {
      throw std::logic_error("unpack: the flat buffer is shorter than what it is unpacked into");
    }
    std::copy_n(at, part->values.size(), part->values.begin());
    at += static_cast<std::ptrdiff_t>(part->values.size());
  }
}

void cut_slice(std::span<const comm::LocalArray* const> parts, int64_t first, comm::LocalArray& slice) {
  std::fill(slice.values.begin(), slice.values.end(), 0.0f);
  const auto last = first + static_cast<int64_t>(slice.values.size());
  int64_t start = 0;  // of the current part in the concatenation
  for (const comm::LocalArray* part : parts) {
    const auto end = start + static_cast<int64_t>(part->values.size());
    const int64_t from = std::max(start, first);
    const int64_t to = std::min(end, last);
    if (from < to) {
      std::copy(part->values.begin() + (from - start), part->values.begin() + (to - start),
                slice.values.begin() + (from - first));
    }
    start = end;
  }
}

void pack_rank_major(const std::vector<std::vector<const comm::LocalArray*>>& layers,
                     std::span<const int64_t> layer_offsets, std::span<const int64_t> layer_slices, int group,
                     int64_t slice_elements, comm::LocalArray& flat) {
  std::fill(flat.values.begin(), flat.values.end(), 0.0f);
  for (size_t i = 0; i < layers.size(); ++i) {
    comm::LocalArray member_slice{{layer_slices[i]}, std::vector<float>(static_cast<size_t>(layer_slices[i]))};
    for (int member = 0; member < group; ++member) {
      cut_slice(layers[i], member * layer_slices[i], member_slice);
      std::copy(member_slice.values.begin(), member_slice.values.end(),
                flat.values.begin() + member * slice_elements + layer_offsets[i]);
    }
  }
}

}  // namespace splitbrain::exec
