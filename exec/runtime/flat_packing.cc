#include "exec/runtime/flat_packing.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace splitbrain::exec {

void check_same_size(const comm::LocalArray& into, size_t elements, const char* what) {
  if (static_cast<int64_t>(elements) != comm::element_count(into.shape)) {
    throw std::logic_error(fmt::format("step program: {} delivers {} elements into a buffer of {}", what, elements,
                                       comm::element_count(into.shape)));
  }
}

void pack_flat(std::span<const comm::LocalArray* const> parts, comm::LocalArray& flat) {
  const auto size = static_cast<size_t>(comm::element_count(flat.shape));
  // Appended part by part, so the storage is written once (no zero-fill first).
  flat.values.clear();
  flat.values.reserve(size);
  for (const comm::LocalArray* part : parts) {
    if (size - flat.values.size() < part->values.size()) {
      throw std::logic_error(fmt::format("pack: {} elements do not fit the flat buffer", part->values.size()));
    }
    flat.values.insert(flat.values.end(), part->values.begin(), part->values.end());
  }
  flat.values.resize(size, 0.0f);
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
  slice.values.assign(static_cast<size_t>(comm::element_count(slice.shape)), 0.0f);
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
  flat.values.assign(static_cast<size_t>(comm::element_count(flat.shape)), 0.0f);
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
