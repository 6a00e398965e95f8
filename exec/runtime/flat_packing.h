#pragma once
// Copies between model tensors and the flat buffers that gradient buckets and ZeRO's slices are
// reduced and gathered in. The order is the bucket's (its layers, then each layer's tensors);
// a flat buffer is padded with zeros to a multiple of its group.

#include <cstdint>
#include <span>
#include <vector>

#include "exec/comm/local_array.h"

namespace splitbrain::exec {

// Throws std::logic_error unless `elements` fill `into`'s shape exactly (what an instruction
// delivers into a buffer; `what` names it).
void check_same_size(const comm::LocalArray& into, size_t elements, const char* what);

// `parts` one after another into `flat` (of its shape's size, allocated here if it has no
// storage yet); what is left of `flat` is zeroed.
void pack_flat(std::span<const comm::LocalArray* const> parts, comm::LocalArray& flat);
// The inverse: `flat`'s leading elements back into `parts`.
void unpack_flat(const comm::LocalArray& flat, std::span<comm::LocalArray* const> parts);
// Elements [first, first + slice.size) of the parts one after another (zeros past their end).
void cut_slice(std::span<const comm::LocalArray* const> parts, int64_t first, comm::LocalArray& slice);
// ZeRO 3: member r's block of `flat` (slice_elements long) is r's slice of each layer in turn;
// layer i's tensors, one after another and padded to layer_slices[i] x group, are cut into the
// group's slices, which go at layer_offsets[i] in each member's block.
void pack_rank_major(const std::vector<std::vector<const comm::LocalArray*>>& layers,
                     std::span<const int64_t> layer_offsets, std::span<const int64_t> layer_slices, int group,
                     int64_t slice_elements, comm::LocalArray& flat);

}  // namespace splitbrain::exec
