#pragma once
// Factories for the two transfers that are not layout changes: the halo exchange a spatially
// split convolution needs before it computes, and the pipeline hand-over between stages.
// Their semantics and byte counts are documented with Collective (plans/collective.h).

#include <cstdint>
#include <span>

#include "plans/collective.h"
#include "plans/mesh.h"
#include "plans/tensor_layout.h"

namespace splitbrain::plans {

// Halo exchange for a spatially split dim of a tensor in `layout` (a convolution's input split
// on H, say): the group is all the axes splitting `dim`, halo_rows rows go to each neighbour
// (kernel_size / 2 for a stride-1 convolution). Throws PlanError when the layout is invalid,
// dim is out of range, halo_rows < 0, halo_rows exceeds the local rows of a split dim, or
// element_bytes < 1. An unsplit dim gives a group of 1 that sends nothing.
Collective halo_exchange(const TensorLayout& layout, const Mesh& mesh, std::span<const int64_t> global_shape,
                         int64_t element_bytes, int dim, int64_t halo_rows);

// Pipeline hand-over on axis `pipe_axis`: every rank at stage coordinate source_stage sends
// shard_bytes to the rank with the same other coordinates at destination_stage. Throws
// PlanError for an axis or stage out of range, equal stages, or negative bytes.
Collective pipeline_send(const Mesh& mesh, int pipe_axis, int source_stage, int destination_stage, int64_t shard_bytes);
// The same, with the shard size taken from the tensor's layout (which must not use pipe_axis).
Collective pipeline_send(const Mesh& mesh, int pipe_axis, int source_stage, int destination_stage,
                         const TensorLayout& layout, std::span<const int64_t> global_shape, int64_t element_bytes);

}  // namespace splitbrain::plans
