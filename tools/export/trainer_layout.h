#pragma once
// What a plan is in the terms trainers use: data-parallel, tensor-parallel and pipeline sizes,
// sequence parallelism, batch sizes. Decided once here, for every export format; each format then
// refuses what it cannot run (export_formats.h).
//
// Trainers know one kind of split per mesh axis: an axis splits the batch of every layer (data
// parallelism), the features of the layers Megatron-LM splits (tensor parallelism, with the
// sequence of the per-token layers under sequence parallelism) or the sequence of every layer of
// a GPT- or Llama-style decoder, attention's queries included (context parallelism), and the
// pipeline axis holds contiguous runs of layers; a data axis may also split the experts of the
// moe layers (expert parallelism). Plans outside that are refused, naming the layer
// and role: a SplitBrain group (one axis splitting the batch of some layers and the features of
// others), a spatial (domain) split of anything else, two feature-splitting axes (a 2-D grid), features split in a
// model that is not a GPT (a per-layer tiling). A GPT whose tensor-parallel layers are split otherwise than Megatron-LM
// splits them (a c_proj splitting outputs, a vocabulary split by hidden width) or whose pipeline is cut inside a
// transformer layer has the same sizes: those differences are listed, and the Megatron-LM format refuses them unless
// asked for its nearest form.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plans/plan.h"
#include "tools/export/gpt_shape.h"

namespace splitbrain::tools {

struct TrainerLayout {
  std::vector<int> data_axes;  // mesh axes splitting every layer's batch, outermost first
  int tensor_axis = -1;        // the mesh axis splitting features (-1: none)
  // The mesh axis splitting the sequence of every layer of a decoder, attention's queries
  // included (context parallelism; -1: none).
  int context_axis = -1;
  int context_parallel = 1;
  // Data axes over which the moe layers split their experts (`out`) while every other layer
  // splits the batch: expert parallelism inside the data-parallel group (Megatron-LM's
  // --expert-model-parallel-size with its all-gather token dispatcher). First such moe layer.
  std::vector<int> expert_axes;
  int expert_parallel = 1;
  int first_expert_layer = -1;
  int first_tensor_layer = -1;  // the first layer splitting features over it
  int data_parallel = 1;
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int virtual_stages = 1;
  bool sequence_parallel = false;
  int micro_batches = 1;                // per step, per pipeline (gradient accumulation without one)
  int64_t micro_batch_per_replica = 1;  // samples per micro-batch on one data-parallel replica
  // Set for GPT-2- and Llama-style models (gpt_shape.h); the formats that build the network need it.
  // Otherwise `not_gpt` says why the model is not one (the refusal those formats give).
  std::optional<GptShape> gpt;
  std::string not_gpt;
  // Megatron-LM's form, for a GPT with tensor parallelism: the token embedding splits its
  // vocabulary rows over the tensor axis and the output head its vocabulary outputs.
  bool vocabulary_split = false;
  // Transformer layers per pipeline chunk, in chunk order, each layer counted in the chunk of its
  // first layer; a chunk may hold none (GPT only; empty without one).
  std::vector<int> layers_per_chunk;
  // Where a GPT plan departs from Megatron-LM's form: "layer 'X': splits ...; Megatron-LM's
  // tensor parallelism over 'T' ..." or "pipeline.stage_starts: ...", in model order.
  std::vector<std::string> megatron_differences;
  // Differences between the plan and what the trainers will run that change memory or speed but
  // not the arithmetic, written into every exported file.
  std::vector<std::string> notes;
};

// Throws ExportRefusal naming the layer and role (or the option) that no trainer expresses.
TrainerLayout trainer_layout(const plans::Plan& plan);

}  // namespace splitbrain::tools
