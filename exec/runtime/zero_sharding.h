#pragma once
// ZeRO's slices on this rank (Rajbhandari et al. 2020), as the compiled plan lists them, so the
// bytes equal the simulator's and the memory per category equals the step program's walk:
//   stage 1: each bucket of gradients is reduce-scattered over its sync group; the rank updates
//            its slice of the bucket (optimizer state only for that slice) and the updated slices
//            are all-gathered back into the whole parameters;
//   stage 2: as 1, and the gradients kept between backward and the update are the slice only;
//   stage 3: as 2, and the parameters too are kept as the slice only, gathered for each pass.
// Stage 3 slices per layer (each layer padded to the group, as its gather is), and packs a
// bucket rank-major: member r's part of the bucket is r's slice of every layer, one after another,
// so the reduce-scatter hands each rank the gradients of exactly the parameters it holds.
// When each of these happens is the step program's business (plans/step_compiler.h).

#include <cstdint>
#include <vector>

#include "exec/comm/communicator.h"
#include "exec/runtime/device_memory.h"
#include "exec/runtime/layer_parameters.h"
#include "exec/runtime/memory_tracker.h"
#include "exec/runtime/optimizer.h"
#include "plans/compiled_plan.h"
#include "plans/plan.h"

namespace splitbrain::exec {

struct ZeroBucketSlice {
  size_t index = 0;  // into CompiledPlan::buckets
  int group = 1;
  int member = 0;                      // this rank's index in the bucket's sync group
  int64_t slice_elements = 0;          // padded_elements / group
  TrackedArray grad_slice;             // stage >= 2: the reduced gradients of this rank's slice
  TrackedArray param_slice;            // stage 3: this rank's parameters (every layer's slice in turn)
  std::vector<int64_t> layer_offsets;  // stage 3: where each layer's slice starts, bucket order
  std::vector<int64_t> layer_slices;   // stage 3: round_up(layer elements, group) / group
};

struct ZeroSlices {
  std::vector<ZeroBucketSlice> buckets;  // this stage's, in the compiled order
  std::vector<int> bucket_of_layer;      // index into buckets, -1 for a layer ZeRO leaves whole
  std::vector<int> position_in_bucket;

  // The slice of compiled bucket `bucket` (throws std::logic_error where this rank has none).
  const ZeroBucketSlice& of_bucket(size_t bucket) const;
  // Where in buckets (the optimizer registers the slices in this order).
  size_t position_of_bucket(size_t bucket) const;
};

// ZeRO shards this layer's model states: it has parameters synchronised over more than one rank.
bool zero_shards(const plans::Plan& plan, const plans::CompiledPlan& compiled, int layer);

// After the parameters exist: the slices of the stage's buckets, each registered with the
// optimizer after the whole parameters. Stage 3 keeps this rank's slice of each layer's
// (initialised) parameters and leaves the whole tensors empty.
ZeroSlices make_zero_slices(const plans::Plan& plan, const plans::CompiledPlan& compiled, int stage,
                            comm::Communicator& communicator, std::vector<LayerParameters>& parameters,
                            Optimizer& optimizer, DeviceMemory& device, MemoryTracker& memory);

}  // namespace splitbrain::exec
