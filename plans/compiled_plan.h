#pragma once
// A plan made concrete: for every layer its layouts and the exact communication around it, and
// the gradient buckets. This is THE list the simulator costs and the executor runs, so the bytes
// each rank sends are predicted exactly; everything here is per micro-batch unless it says
// otherwise (gradient buckets are once per step).

#include <optional>
#include <vector>

#include "plans/collective.h"
#include "plans/op_sharding.h"
#include "plans/plan.h"

namespace splitbrain::plans {

// How one input of a layer gets to it, and how its gradient gets back.
struct InputTransfer {
  int producer = -1;       // layer index
  int input_position = 0;  // which input of the consumer
  // Forward: when the producer sits on an earlier pipeline stage, its output (in the producer's
  // layout) is first sent to the consumer's stage; then it is redistributed there into the
  // layout the consumer needs.
  // A tensor read by several layers of one later stage crosses once: the first of them in model
  // order carries forward_send and the others read what it received (from_other_stage without
  // a send); backward, the first whose gradient flows carries backward_send with the sum of
  // their gradients.
  bool from_other_stage = false;
  std::optional<Collective> forward_send;
  std::vector<Collective> forward;
  // Backward (only when the producer needs a gradient): the gradient the consumer produced is
  // redistributed into the gradient layout of the producer's output (plans::gradient_layout:
  // whole where the output is a partial sum) on the consumer's stage, then sent back.
  std::vector<Collective> backward;
  std::optional<Collective> backward_send;
  bool gradient_flows = false;
};

// A tied head on another pipeline stage than its table (Megatron-LM's embedding group): the head
// holds a copy of the table as its weight (its first parameter), initialised alike; after the
// gradient reductions the two stages swap their gradients of it and each adds the other's, so
// both updates see the same sum and the copies stay equal.
struct TiedCopy {
  int table = -1;       // the embedding layer whose table the head copies
  int table_stage = 0;  // the stage that holds the table (the head's stage is the layer's)
  Collective to_head;   // the table's stage sends its gradient to the head's
  Collective to_table;  // and the head's stage its gradient to the table's
};

struct CompiledLayer {
  int stage = 0;  // the pipeline stage (the coordinate on the pipe axis) that runs it
  int chunk = 0;  // its model chunk (virtual stage, Plan::stage_of_layer): the stage itself but interleaved
  LayerLayouts layouts;
  std::vector<InputTransfer> inputs;
  // ZeRO stage 3: the parameters a pass of the layer computes with, gathered whole before its
  // forward (and a recompute) and again before its backward, one gather per layer that owns
  // some: a tied head on its table's stage gathers its embedding's table first (it computes with
  // the table: plans/tied_weights.h), then any parameters of its own.
  // (parameter_gather_owners says whose parameters each one gathers.)
  std::vector<Collective> parameter_gathers;
  std::optional<TiedCopy> tied_copy;  // a tied head on another stage than its table
};

// Parameters whose gradients are synchronised by one collective: consecutive in backward order
// (reverse model order), in one model chunk (so on one stage), with the same synchronisation
// axes, filling up to the plan's bucket size. With ZeRO stage >= 1 a bucket is reduce-scattered, the optimizer updates
// each rank's slice, and the updated slices are all-gathered back.
struct GradientBucket {
  int stage = 0;
  std::vector<int> layers;            // layer indices, in backward order
  int64_t elements = 0;               // local gradient elements in the bucket (before padding)
  int64_t padded_elements = 0;        // rounded up so a reduce-scatter splits evenly (ZeRO 3: per layer)
  std::vector<int> axes;              // synchronisation axes
  std::vector<Collective> reduction;  // all_reduce, or reduce_scatter (ZeRO >= 1)
  std::vector<Collective> gather;     // all_gather of updated parameters (ZeRO >= 1)
};

struct CompiledPlan {
  int64_t micro_batch = 0;
  std::vector<CompiledLayer> layers;    // one per model layer
  std::vector<GradientBucket> buckets;  // in the order backward fills them
};

// Throws PlanError (naming the layer) when a layer's sharding is invalid.
CompiledPlan compile_plan(const Plan& plan);

// The transfer into input `position` of layer `consumer` from its producer, given both layers'
// layouts and stages (`from` is the producer's). compile_plan uses it for every edge; the planner
// uses it to cost a candidate edge without compiling a whole plan.
InputTransfer compile_input(const Plan& plan, const CompiledLayer& from, const CompiledLayer& to, int consumer,
                            int position);

// Gradient element size: gradients are kept in the model dtype.
int64_t gradient_element_bytes(const Plan& plan);

// Whether ZeRO (stage >= 1) shards the layer's model states: it has parameters whose gradients
// are reduced over more than one rank.
bool zero_shards_layer(const Plan& plan, const CompiledLayer& layer);

// Whether ZeRO 3 gathers whole parameters before each of the layer's passes, its own or (a tied
// head) its table's: CompiledLayer::parameter_gathers (the step compiler emits them; the
// simulator counts their bytes and its lower bound their time).
bool gathers_parameters_per_pass(const Plan& plan, const CompiledLayer& layer);

// A tied head that computes with its table itself (the table on its stage, so no copy of its
// own): the table's embedding; else -1.
int shared_tied_table(const Plan& plan, const CompiledPlan& compiled, int layer);

// Whose parameters each of layer `layer`'s parameter_gathers makes whole, in their order: for a
// tied head sharing the table on its stage the table's embedding first (where ZeRO 3 slices the
// table), then the layer itself (where it slices the layer's own parameters).
std::vector<int> parameter_gather_owners(const Plan& plan, const CompiledPlan& compiled, int layer);

// The gather of layer `layer`'s own parameters among its parameter_gathers (ZeRO 3), or nullptr
// (none of its own, or not sharded).
const Collective* own_parameter_gather(const Plan& plan, const CompiledPlan& compiled, int layer);

}  // namespace splitbrain::plans
