#pragma once
// Cuts of model tensors for ZeRO's flat buffers, as Device copies. The order is the bucket's
// (its layers, then each layer's tensors); a flat buffer is padded with zeros to a multiple of
// its group. (A plain bucket is DeviceMemory::pack / unpack.)

#include <cstdint>
#include <span>
#include <vector>

#include "exec/runtime/device_memory.h"

namespace splitbrain::exec {

// Elements [first, first + count) of the parts one after another (zeros past their end) into
// `into` at `into_first`.
void cut_slice(DeviceMemory& device, std::span<const DeviceArray* const> parts, int64_t first, int64_t count,
               DeviceArray& into, int64_t into_first);
// ZeRO 3: member r's block of `flat` (slice_elements long) is r's slice of each layer in turn;
// layer i's tensors, one after another and padded to layer_slices[i] x group, are cut into the
// group's slices, which go at layer_offsets[i] in each member's block.
void pack_rank_major(DeviceMemory& device, const std::vector<std::vector<const DeviceArray*>>& layers,
                     std::span<const int64_t> layer_offsets, std::span<const int64_t> layer_slices, int group,
                     int64_t slice_elements, DeviceArray& flat);

}  // namespace splitbrain::exec
