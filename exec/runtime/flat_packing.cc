#include "exec/runtime/flat_packing.h"

#include <algorithm>

namespace splitbrain::exec {

void cut_slice(DeviceMemory& device, std::span<const DeviceArray* const> parts, int64_t first, int64_t count,
               DeviceArray& into, int64_t into_first) {
  const int64_t last = first + count;
  int64_t start = 0;       // of the current part in the concatenation
  int64_t filled = first;  // where the copies have reached
  for (const DeviceArray* part : parts) {
    const int64_t end = start + part->elements();
    const int64_t from = std::max(start, first);
    const int64_t to = std::min(end, last);
    if (from < to) {
      device.copy(*part, from - start, into, into_first + (from - first), to - from);
      filled = to;
    }
    start = end;
  }
  if (filled < last) device.fill(into, into_first + (filled - first), last - filled, 0.0f);
}

void pack_rank_major(DeviceMemory& device, const std::vector<std::vector<const DeviceArray*>>& layers,
                     std::span<const int64_t> layer_offsets, std::span<const int64_t> layer_slices, int group,
                     int64_t slice_elements, DeviceArray& flat) {
  // Every member's block is its layer slices one after another (slice_elements is their sum),
  // each zero-padded by cut_slice: the flat buffer is written whole.
  for (size_t i = 0; i < layers.size(); ++i) {
    for (int member = 0; member < group; ++member) {
      cut_slice(device, layers[i], member * layer_slices[i], layer_slices[i], flat,
                member * slice_elements + layer_offsets[i]);
    }
  }
}

}  // namespace splitbrain::exec
