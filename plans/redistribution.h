#pragma once
// Redistribution: the exact list of collectives that turns a tensor held in one layout into the
// same tensor held in another. The simulator costs this list and the executor runs it; both call
// the same function, so predicted and counted bytes agree exactly.
//
// The conversions (SoyBean / Tofu's table, per mesh axis):
//   partial -> split       reduce_scatter        split -> replicated   all_gather
//   partial -> replicated  all_reduce            split dim d -> dim e  all_to_all
//   replicated -> split    local slice           replicated -> partial local (ranks off
//                                                                      coordinate 0 zero out)
//
// How plan_redistribution() orders the work (a greedy loop; each turn takes the first rule
// that applies, then starts over):
//   1. local: slice axes that are replicated now and come next in their target dim; make
//      replicated axes partial where the target wants it. Free, and shrinks later messages.
//   2. reduce_scatter: partial axes that come next in a target dim, as one collective over the
//      longest such run (the group order then equals the block order).
//   3. all_to_all: a trailing run of misplaced axes of one dim that comes next in another dim.
//   4. all_reduce: all remaining partial axes the target does not keep, in one collective
//      (cheaper now than after any gather grows the array; the axes are sliced again later).
//   5. all_gather: the last axis of a dim whose axes are not a prefix of the target's (the
//      smallest such axis first); consecutive gathers of one dim are merged afterwards.
// A dim's axes can only be changed at the end of its list (the innermost split), so an order
// change within a dim ({a, b} -> {b, a}) gathers and re-slices. Steps whose group has one rank
// become local steps. from == to gives no steps.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "plans/collective.h"
#include "plans/mesh.h"
#include "plans/tensor_layout.h"
#include "plans/transfers.h"  // halo_exchange, pipeline_send

namespace splitbrain::plans {

// One step; the layout `after` one step is the `before` of the next.
struct RedistributionStep {
  // The communication, or nullopt for a local step: each rank cuts its `after` block out of its
  // `before` block (see local_reslice) with no communication.
  std::optional<Collective> collective;
  TensorLayout before;
  TensorLayout after;
};

// All steps, local ones included (what an executor runs). Throws PlanError when either layout is
// invalid for the mesh and shape (message prefixed "redistribute from:" / "to:"), or when
// element_bytes < 1.
std::vector<RedistributionStep> plan_redistribution(const TensorLayout& from, const TensorLayout& to, const Mesh& mesh,
                                                    std::span<const int64_t> global_shape, int64_t element_bytes);

// Only the collectives of plan_redistribution(), in order (what a cost model needs).
std::vector<Collective> redistribute(const TensorLayout& from, const TensorLayout& to, const Mesh& mesh,
                                     std::span<const int64_t> global_shape, int64_t element_bytes);

// What one rank does in a local step from `before` to `after`: copy the sub-array of `shape`
// starting at `offset` (relative to its own `before` block), then, if `zero`, set it to zero
// (the rank is off coordinate 0 on an axis that became partial, so the group's sum stays the
// value). Throws std::logic_error when this rank lacks the data (see is_local_transition).
struct LocalReslice {
  std::vector<int64_t> offset;
  std::vector<int64_t> shape;
  bool zero = false;
};
LocalReslice local_reslice(const TensorLayout& before, const TensorLayout& after, const Mesh& mesh,
                           std::span<const int64_t> global_shape, int rank);

// True when every rank's `after` block lies inside its `before` block and no partial axis of
// more than one rank stops being partial: the transition needs no communication.
bool is_local_transition(const TensorLayout& before, const TensorLayout& after, const Mesh& mesh,
                         std::span<const int64_t> global_shape);

}  // namespace splitbrain::plans
