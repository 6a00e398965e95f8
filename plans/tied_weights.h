#pragma once
// A linear tied to an embedding on its stage (GPT's lm_head reads wte's table) owns no weight: the
// table belongs to the embedding (plans/op_sharding.cc), sits in its gradient bucket and is
// synchronised once, with the bytes the simulator counts. The head computes with the block of
// the table it needs and ADDS its weight gradient into the table's gradient before the bucket is
// reduced over the embedding's synchronisation axes (exec/runtime/tied_parameters.h).
//
// The step then needs no communication beyond what it lists when, for every mesh axis,
//   - an axis the table's gradient is summed over (the embedding's batch or positions) may do
//     anything to the head: if it splits the head's samples or weight, the sum adds each rank's
//     distinct contribution once; if it replicates the head, its ranks hold the same
//     contribution and only the first of them adds it (the rule of a partial sum's bias);
//   - any other axis plays the same part for both: it splits the same dimension of the table
//     (vocabulary rows or columns), or neither uses it;
//   - on a dimension both split, the embedding's axes come first (the head's block then lies
//     inside the rank's table block);
// So a replicated table serves a head that splits its vocabulary over the data axes (SplitBrain's
// plans), and a head split exactly like the table uses it whole. Other plans would need a gather
// of the table and a reduction of its gradient that no step program lists, so neither the
// simulator nor the executor takes them, and the planner proposes none.
//
// Under ZeRO 3 the rank keeps only its slice of the table: the head's passes gather the rank's
// whole block of it, as the embedding's do (CompiledLayer::parameter_gathers), and free it after
// the pass. The gradient follows the same rule as under every other stage: the head adds its
// contribution into the table's whole gradient (a working buffer from the head's backward, which
// comes first, to the bucket's reduce-scatter), the embedding adds its own, and the bucket
// reduce-scatters the sum once.
//
// A head on another pipeline stage than its table is Megatron-LM's case: it holds a copy of the
// table, and the two stages add up their gradients of it (the embedding group, CompiledLayer::
// tied_copy) before each reduces its own over the data axes (so under any ZeRO stage). That
// needs the copy split like the table (the ranks that swap hold the same block) and reduced over
// the same axes (each contribution is then summed once).

#include <optional>
#include <string>

#include "plans/plan.h"
#include "plans/tensor_layout.h"

namespace splitbrain::plans {

// Why `plan` ties a weight in a way no step program can express, naming the tied layer, its
// embedding and the mesh axis or option at fault; "" when every tie is fine (always "" for a
// model without one). compile_plan() refuses a plan with a problem; the planner asks first.
std::string tied_weight_problem(const Plan& plan);

// The plan with every tied embedding sharded like its head (table rows split as the head's
// vocabulary, columns as its contraction, samples and positions as the head's), which leaves
// no axis at fault; nullopt when no embedding changes. The head's sharding is the one the search
// chose for its cost; the embedding is cheap, so it is the one that follows.
std::optional<Plan> with_tables_following_heads(const Plan& plan);

// The layout of the block of the table a tied head with sharding `head` computes with.
TensorLayout tied_weight_layout(const LayerSharding& head);

// Whether `rank` adds tied head `head`'s weight gradient into the table of `table`: not when it
// is a replica, other than the first, over axes the table's gradient is summed over.
bool adds_tied_gradient(const Plan& plan, int rank, int head, int table);

}  // namespace splitbrain::plans
