#pragma once
// Checks on a whole Plan, whoever built it (the plan file reader, the search, a test): the
// reader reports most mistakes earlier with the JSON field at fault, and this is the backstop
// that every Plan passes before anything simulates or runs it.

#include <string>
#include <string_view>

#include "plans/plan.h"

namespace splitbrain::plans {

// Throws PlanError, prefixed with `source` (a file name, or e.g. "search") and naming the layer
// and role or the field at fault, unless: the model is set; batch > 0; one sharding and one
// stage per layer; every axis index in range, used at most once per layer and never the pipeline
// axis; stages (virtual stages, under the interleaved schedule) start at 0 and step by 0 or 1 up
// to chunk_count() - 1 (contiguous, none empty); micro_batches >= 1 and divides the batch;
// virtual_stages > 1 only with the interleaved schedule, which needs at least 2 of them, a
// pipeline of at least 2 stages, micro-batches a multiple of the stages (as Megatron-LM), and
// no tensor read beyond the next chunk (chunk_hand_over_problem); zero_stage in 0..3; a positive gradient bucket;
// sane optimizer settings; and layer_layouts() (plans/op_sharding.h) accepts every layer at the
// micro-batch size, which checks that each split divides the dimension it splits.
void validate_plan(const Plan& plan, std::string_view source);

// Under the interleaved schedule a chunk hands tensors only to the next chunk, which sits on the
// next stage (chunk c on stage c % S, so the last stage's chunks hand over to stage 0): a layer
// may read only layers of its own chunk and of the one before. The problem, naming both layers
// and their chunks, or "" when there is none (always "" with one virtual stage).
std::string chunk_hand_over_problem(const Plan& plan);

// Throws PlanError "<source>: mesh {data: 2, model: 2} has 4 ranks but 3 devices were given"
// unless the mesh has exactly `devices` ranks. `simulate` and `run` call it with the size of
// the cluster or of MPI_COMM_WORLD.
void check_device_count(const Plan& plan, int devices, std::string_view source);

}  // namespace splitbrain::plans
