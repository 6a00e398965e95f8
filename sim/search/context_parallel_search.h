#pragma once
// Context parallelism in the overall search (mesh_search.h): for a model with attention (GPT,
// Llama, MoE), a `space` axis over which every layer splits its sequence, attention included
// (each rank's queries against the keys and values all-gathered over the axis), as Megatron-LM's
// --context-parallel-size and torchtitan's context_parallel_degree do.
//
// Which meshes are worth building. A context-parallel mesh {pipe P, data D, space S, model M}
// whose micro-batches hold b samples per replica computes what the mesh {pipe P, data D x S,
// model M} computes with micro-batches of b / S samples: the same tokens per rank, the same
// number of micro-batches (so the same bubble), the same weights and gradient group, but with
// attention's gathers on top. So the split is only worth pricing where b / S is no whole number
// of samples: where the batch is too small to give every rank a sample of each micro-batch
// (long sequences at a fixed token budget, or more micro-batches for a smaller bubble). Only
// those micro-batch counts are built on a context-parallel mesh, and a mesh with none is not
// built at all. Sizes are those dividing the sequence into 2 x S chunks (each rank two chunks, as
// both trainers balance the causal mask), up to the request's max_space_axis.

#include <cstdint>
#include <optional>
#include <vector>

#include "model/model.h"
#include "plans/plan.h"
#include "sim/search/planner_request.h"
#include "sim/search/search_mesh.h"

namespace splitbrain::sim {

// The number of positions the model's attention layers see, 0 without attention.
int64_t attention_sequence_length(const model::Model& net);

// Whether the search gives `net` context-parallel meshes: it has attention and no convolution (a
// convolutional net's space axis splits image height instead).
bool searches_context_parallelism(const model::Model& net);

// The shortest sequence the search splits over context-parallel ranks. Not a bound it can prove:
// below it a sample's activations are small enough for tensor and pipeline parallelism to hold
// (Megatron-LM recommends context parallelism for long contexts), and the context-parallel meshes
// triple the meshes built (Llama 3 405B on 1,024 GPUs: 96 meshes, 28 before), so short-sequence
// jobs (GPT-3's 2,048 tokens) are planned as fast as before.
inline constexpr int64_t kMinContextParallelSequence = 4096;

// The context-parallel sizes worth a mesh: none for a sequence under kMinContextParallelSequence,
// else 2..max_space_axis dividing the devices, with the sequence a multiple of 2 x size.
std::vector<int> context_parallel_sizes(const PlannerRequest& request);

// Micro-batches per stage a context-parallel pipeline is built with, at most. Not a bound the
// search can prove (unlike the rest of its pruning): past 16 a stage the 1F1B bubble is under
// 1/16 of the step before interleaving, and each micro-batch more adds hand-overs and shrinks
// every kernel; without it, context parallelism multiplies the counts (and the timelines' length)
// by its size, and Llama 3 405B on 1,024 GPUs took 3.4 times the CPU time to plan.
inline constexpr int kMaxContextParallelMicroBatchesPerStage = 16;

// The micro-batch counts worth building on a mesh of `stages` stages, `data` replicas and
// `context` ranks splitting each sequence: those of micro_batch_counts whose micro-batches of a
// replica hold a number of samples that is no multiple of `context` (the others are the plain
// mesh's plans with gathers added; see above), at most kMaxContextParallelMicroBatchesPerStage a
// stage. 1 without a pipeline, when it qualifies.
std::vector<int> context_parallel_micro_batch_counts(int64_t batch, int stages, int data, int context);

// Every context-parallel mesh {pipe, data, space, model} of the request with at least one
// micro-batch count worth building, in a stable order (pipe, space, model ascending).
std::vector<SearchMesh> context_parallel_meshes(const PlannerRequest& request, int max_model);

// `plan`'s sequence-parallel twin (plans/sequence_parallel.h) that keeps the context-parallel
// split: a per-token layer that split its sequence over other axes splits it over those, then
// over the tensor-parallel axes (Megatron-LM's sequence parallelism inside each context rank's
// block). nullopt where the plan has no twin or a layer cannot take the combined split.
std::optional<plans::Plan> sequence_parallel_twin(const plans::Plan& plan);

}  // namespace splitbrain::sim
