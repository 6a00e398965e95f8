// Megatron-LM: a launch script running pretrain_gpt.py under torchrun with the plan's
// parallelism, batch, recomputation, precision, optimizer and model shape, a GPT-2-style or a
// Llama-style decoder, the latter also with Mixtral's experts. Flag names are those of
// megatron/training/arguments.py (tests/cli/megatron_arguments.txt, at the commit its header names).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "plans/recompute_scope.h"
#include "tools/export/export_formats.h"
#include "tools/export/export_refusal.h"

namespace splitbrain::tools {
namespace {

using Flags = std::vector<std::string>;

// Megatron-LM's pipeline split: the same number of transformer layers per stage, or (without
// interleaving) other numbers on the first and last stage only.
void pipeline_flags(const TrainerLayout& layout, Flags& flags) {
  if (layout.pipeline_parallel == 1) return;
  flags.push_back(fmt::format("--pipeline-model-parallel-size {}", layout.pipeline_parallel));
  const auto& counts = layout.layers_per_chunk;
  for (size_t c = 0; c < counts.size(); ++c) {
    if (counts[c] == 0) {
      throw ExportRefusal(
          fmt::format("pipeline.stage_starts: chunk {} holds no transformer layer; Megatron-LM gives "
                      "every pipeline chunk at least one",
                      c));
    }
  }
  const bool even = std::all_of(counts.begin(), counts.end(), [&](int n) { return n == counts[0]; });
  if (layout.virtual_stages > 1) {
    if (!even) {
      throw ExportRefusal(
          fmt::format("pipeline.stage_starts: the chunks hold {} transformer layers; Megatron-LM's "
                      "interleaved schedule needs the same number in every chunk",
                      fmt::join(counts, ", ")));
    }
    flags.push_back(fmt::format("--num-layers-per-virtual-pipeline-stage {}", counts[0]));
    return;
  }
  if (even) return;
  const size_t last = counts.size() - 1;
  for (size_t s = 2; s < last; ++s) {
    if (counts[s] != counts[1]) {
      throw ExportRefusal(
          fmt::format("pipeline.stage_starts: stage {} holds {} transformer layers and stage 1 holds {}; "
                      "Megatron-LM splits the layers evenly but for the first and last stage",
                      s, counts[s], counts[1]));
    }
  }
  if (counts[0] != counts[1] || last == 1)
    flags.push_back(fmt::format("--decoder-first-pipeline-num-layers {}", counts[0]));
  if (counts[last] != counts[1] || last == 1)
    flags.push_back(fmt::format("--decoder-last-pipeline-num-layers {}", counts[last]));
}

// Full recomputation of every layer of a chunk keeps only the chunk's input: Megatron-LM's uniform
// method with one unit per chunk. Recomputing the first N blocks of each chunk is its block method
// when those blocks make whole transformer layers.
void recompute_flags(const plans::Plan& plan, TrainerLayout& layout, Flags& flags) {
  if (!plan.recompute_activations) {
    if (plan.recompute_attention) flags.push_back("--recompute-granularity selective");
    return;
  }
  if (plan.recompute_attention) layout.notes.push_back("full recomputation includes the plan's selective one");
  const GptShape& gpt = *layout.gpt;
  const std::vector<bool> recomputed = plans::recomputed_layers(plan);
  std::vector<int> recomputed_per_chunk(layout.layers_per_chunk.size(), 0);
  size_t chunk = 0;
  int seen_in_chunk = 0;
  for (int b = 0; b < gpt.layers; ++b) {
    const int start = gpt.block_starts[static_cast<size_t>(b)];
    if (seen_in_chunk == layout.layers_per_chunk[chunk]) {
      ++chunk;
      seen_in_chunk = 0;
    }
    const bool first = recomputed[static_cast<size_t>(start)];
    for (int offset = 1; offset < gpt.layers_per_block(); ++offset) {
      if (recomputed[static_cast<size_t>(start + offset)] != first) {
        throw ExportRefusal(
            fmt::format("options.recompute_blocks: layer '{}' is {}recomputed but '{}' is {}; "
                        "Megatron-LM recomputes whole transformer layers",
                        plan.model->layer(start + offset).name, first ? "not " : "", plan.model->layer(start).name,
                        first ? "" : "not"));
      }
    }
    if (first && recomputed_per_chunk[chunk] != seen_in_chunk) {
      throw ExportRefusal(
          fmt::format("options.recompute_blocks: layer '{}' is recomputed after a layer that is not; "
                      "Megatron-LM recomputes the first layers of a stage",
                      plan.model->layer(start).name));
    }
    if (first) ++recomputed_per_chunk[chunk];
    ++seen_in_chunk;
  }
  const int most = *std::max_element(recomputed_per_chunk.begin(), recomputed_per_chunk.end());
  bool all = true;
  for (size_t c = 0; c < recomputed_per_chunk.size(); ++c) {
    if (recomputed_per_chunk[c] != std::min(most, layout.layers_per_chunk[c])) {
      throw ExportRefusal(
          fmt::format("options.recompute_blocks: chunk {} recomputes {} transformer layers and another "
                      "{}; Megatron-LM recomputes the same number in every stage",
                      c, recomputed_per_chunk[c], most));
    }
    all = all && recomputed_per_chunk[c] == layout.layers_per_chunk[c];
  }
  flags.push_back("--recompute-granularity full");
  const auto& counts = layout.layers_per_chunk;
  if (all && std::all_of(counts.begin(), counts.end(), [&](int n) { return n == counts[0]; })) {
    flags.push_back(fmt::format("--recompute-method uniform --recompute-num-layers {}", counts[0]));
  } else if (all) {
    flags.push_back("--recompute-method uniform --recompute-num-layers 1");
    layout.notes.push_back("uneven stages: Megatron-LM recomputes layer by layer, keeping each layer's input");
  } else {
    flags.push_back(fmt::format("--recompute-method block --recompute-num-layers {}", most));
    layout.notes.push_back("Megatron-LM's block method keeps the input of each recomputed layer");
  }
}

void precision_flags(const plans::Plan& plan, Flags& flags) {
  const auto gradients = plan.gradient_dtype.value_or(plan.dtype);
  if (plan.dtype == model::DType::bf16) flags.push_back("--bf16");
  if (plan.dtype == model::DType::fp16) flags.push_back("--fp16");
  if (plan.dtype == model::DType::fp32) return;
  if (gradients == model::DType::fp32)
    flags.push_back("--accumulate-allreduce-grads-in-fp32");
  else if (plan.dtype == model::DType::bf16)
    flags.push_back("--grad-reduce-in-bf16");
}

void optimizer_flags(const plans::Plan& plan, Flags& flags) {
  const auto& o = plan.optimizer;
  if (o.kind == plans::OptimizerKind::adam) {
    flags.push_back(
        fmt::format("--optimizer adam --adam-beta1 {} --adam-beta2 {} --adam-eps {}", o.beta1, o.beta2, o.epsilon));
  } else {
    flags.push_back(fmt::format("--optimizer sgd --sgd-momentum {}", o.momentum));
  }
  flags.push_back(fmt::format("--lr {} --lr-decay-style constant --weight-decay {}", o.learning_rate, o.weight_decay));
}

// The differences from Megatron-LM's form as notes, one per kind: a difference repeated in every
// transformer layer (the same words but the layer's number) is noted once with its count.
void note_form_differences(const std::vector<std::string>& differences, TrainerLayout& layout) {
  const std::regex layer_number("'h[0-9]+\\.");
  std::vector<std::pair<std::string, int>> kinds;  // (first message, count)
  std::vector<std::string> keys;
  for (const auto& difference : differences) {
    const std::string key = std::regex_replace(difference, layer_number, "'hN.");
    const auto found = std::find(keys.begin(), keys.end(), key);
    if (found != keys.end()) {
      ++kinds[static_cast<size_t>(found - keys.begin())].second;
      continue;
    }
    keys.push_back(key);
    kinds.emplace_back(difference, 1);
  }
  for (const auto& [first, count] : kinds) {
    layout.notes.push_back(count == 1
                               ? fmt::format("nearest Megatron-LM form: {}", first)
                               : fmt::format("nearest Megatron-LM form ({} layers like this one): {}", count, first));
  }
}

// Mixtral's experts in every layer. Megatron-LM's router takes the softmax of the top k logits,
// which equals the moe op's softmax over all experts renormalised over the top k; its auxiliary
// load-balancing loss is 0 by default (--moe-aux-loss-coeff), as the model has none.
void expert_flags(const GptShape& gpt, Flags& flags) {
  flags.push_back(fmt::format("--num-experts {} --moe-router-topk {} --moe-ffn-hidden-size {}", gpt.experts,
                              gpt.expert_top_k, gpt.ffn_hidden));
  if (gpt.expert_capacity_factor > 0.0) {
    // Megatron-LM drops tokens past an expert's capacity only with its all-to-all dispatcher.
    flags.push_back(fmt::format("--moe-expert-capacity-factor {} --moe-token-dispatcher-type alltoall",
                                gpt.expert_capacity_factor));
  }
}

// The network: GPT-2's blocks (learned positions, LayerNorm, GELU) are Megatron-LM's defaults;
// Llama's are the flags of its RMSNorm, SwiGLU MLP, rotary positions and query groups.
Flags model_flags(const plans::Plan& plan, const GptShape& gpt) {
  Flags flags = {fmt::format("--num-layers {}", gpt.layers), fmt::format("--hidden-size {}", gpt.hidden),
                 fmt::format("--num-attention-heads {}", gpt.heads), fmt::format("--seq-length {}", gpt.sequence),
                 // Without a position table, Megatron-LM still asks for the longest sequence.
                 fmt::format("--max-position-embeddings {}", gpt.positions > 0 ? gpt.positions : gpt.sequence)};
  // With --swiglu Megatron-LM's default width is about 8/3 x hidden, not the model's.
  if (gpt.swiglu || gpt.ffn_hidden != 4 * gpt.hidden)
    flags.push_back(fmt::format("--ffn-hidden-size {}", gpt.ffn_hidden));
  if (gpt.kv_heads != gpt.heads)
    flags.push_back(fmt::format("--group-query-attention --num-query-groups {}", gpt.kv_heads));
  if (gpt.rms_norm) flags.push_back(fmt::format("--normalization RMSNorm --norm-epsilon {}", gpt.norm_epsilon));
  if (gpt.swiglu) flags.push_back("--swiglu");
  if (gpt.rope_theta > 0.0) {
    // Megatron-LM reads the base as an integer; its rotation is Hugging Face's rotate-half, ours.
    if (gpt.rope_theta != std::floor(gpt.rope_theta) || gpt.rope_theta >= 1e15) {
      throw ExportRefusal(
          fmt::format("layer '{}': rope_theta: {} is not a whole number Megatron-LM's --rotary-base takes",
                      plan.model->layer(gpt.attention_layer(0)).name, gpt.rope_theta));
    }
    flags.push_back(
        fmt::format("--position-embedding-type rope --rotary-base {}", static_cast<int64_t>(gpt.rope_theta)));
  }
  if (gpt.experts > 0) expert_flags(gpt, flags);
  if (!gpt.tied_head) flags.push_back("--untie-embeddings-and-output-weights");
  if (!gpt.linear_bias) flags.push_back("--disable-bias-linear");
  flags.push_back(fmt::format("--hidden-dropout {} --attention-dropout {}", gpt.hidden_dropout, gpt.attention_dropout));
  return flags;
}

// Megatron-LM gives every tensor-parallel rank the same number of query heads and of whole
// key/value groups (it does not replicate key/value heads). The plan's own split divides them
// (the planner refuses one that does not), but Megatron-LM's nearest form of a plan that keeps
// the attention whole may not.
void refuse_uneven_heads(const plans::Plan& plan, const GptShape& gpt, int tensor_parallel) {
  const std::string& attention = plan.model->layer(gpt.attention_layer(0)).name;
  if (gpt.heads % tensor_parallel != 0) {
    throw ExportRefusal(
        fmt::format("layer '{}': heads: {} heads do not divide over {} tensor-parallel ranks; Megatron-LM gives "
                    "every rank the same number of heads",
                    attention, gpt.heads, tensor_parallel));
  }
  if (gpt.kv_heads % tensor_parallel != 0) {
    throw ExportRefusal(
        fmt::format("layer '{}': kv_heads: {} key/value heads do not divide over {} tensor-parallel ranks; "
                    "Megatron-LM gives every rank whole query groups",
                    attention, gpt.kv_heads, tensor_parallel));
  }
}

// Context parallelism: Megatron-LM splits every layer's sequence in 2 x CP chunks, each rank
// holding one from each end (balancing the causal attention's work), and passes keys and values
// round a ring; the plan splits it in CP contiguous blocks and all-gathers q|k|v. The same
// arithmetic, other bytes and balance.
void context_flags(const plans::Plan& plan, const GptShape& gpt, TrainerLayout& layout, Flags& flags) {
  if (gpt.sequence % (2 * layout.context_parallel) != 0) {
    throw ExportRefusal(fmt::format(
        "mesh: '{}' splits sequences of {} tokens over {} ranks; Megatron-LM's context parallelism needs the "
        "sequence to be a multiple of 2 x {} (two chunks a rank)",
        plan.mesh.axis(layout.context_axis).name, gpt.sequence, layout.context_parallel, layout.context_parallel));
  }
  flags.push_back(fmt::format("--context-parallel-size {}", layout.context_parallel));
  layout.notes.push_back(
      "Megatron-LM's context parallelism gives each rank two sequence chunks, one from each end, and passes keys and "
      "values round a ring; the plan gives each rank one contiguous block and all-gathers q|k|v");
}

// Expert parallelism: the moe layers split their experts over data-parallel ranks, each holding
// the tokens of the whole group (gathered) and giving its experts' share of the output, as
// Megatron-LM's all-gather token dispatcher does.
void expert_parallel_flags(const plans::Plan& plan, const TrainerLayout& layout, Flags& flags) {
  const std::string& moe = plan.model->layer(layout.first_expert_layer).name;
  if (plan.dtype == model::DType::fp16) {
    throw ExportRefusal(
        fmt::format("layer '{}': out: splits its experts over {} ranks in fp16; Megatron-LM runs "
                    "expert parallelism in bf16 or fp32 only",
                    moe, layout.expert_parallel));
  }
  if (layout.tensor_parallel > 1 && !layout.sequence_parallel) {
    throw ExportRefusal(
        fmt::format("layer '{}': out: splits its experts over {} ranks beside tensor parallelism "
                    "without sequence parallelism; Megatron-LM needs sequence parallelism there",
                    moe, layout.expert_parallel));
  }
  flags.push_back(fmt::format("--expert-model-parallel-size {}", layout.expert_parallel));
}

std::string bash_array(std::string_view name, const Flags& flags) {
  std::string text = fmt::format("{}=(\n", name);
  for (const auto& flag : flags) text += fmt::format("  {}\n", flag);
  text += ")\n";
  return text;
}

}  // namespace

std::vector<ExportedFile> export_megatron(const ExportRequest& request, const TrainerLayout& given) {
  const plans::Plan& plan = *request.plan;
  TrainerLayout layout = given;
  if (!layout.gpt) throw ExportRefusal(layout.not_gpt);
  if (!layout.megatron_differences.empty()) {
    if (!request.nearest) {
      throw ExportRefusal(
          fmt::format("{} (--nearest writes Megatron-LM's own form with the same sizes, noting each "
                      "difference)",
                      layout.megatron_differences.front()));
    }
    note_form_differences(layout.megatron_differences, layout);
  }
  if (plan.zero_stage > 1) {
    throw ExportRefusal(
        fmt::format("options.zero_stage: {} also shards the {}; Megatron-LM's distributed optimizer "
                    "shards the optimizer state (ZeRO 1): export deepspeed for ZeRO 2-3",
                    plan.zero_stage, plan.zero_stage == 2 ? "gradients" : "gradients and parameters"));
  }
  if (plan.pipe_axis >= 0 && plan.schedule == plans::PipelineSchedule::gpipe) {
    layout.notes.push_back(
        "Megatron-LM runs 1F1B where the plan runs GPipe (the same arithmetic, fewer micro-batches in flight)");
  }
  layout.notes.push_back(
      "Megatron-LM clips gradients to a global norm of 1 unless told otherwise (--clip-grad); "
      "the plan does not clip");
  const GptShape& gpt = *layout.gpt;
  const NodeLaunch launch = node_launch(plan, request.devices_per_node);

  refuse_uneven_heads(plan, gpt, layout.tensor_parallel);
  Flags shape = model_flags(plan, gpt);

  Flags parallel = {fmt::format("--tensor-model-parallel-size {}", layout.tensor_parallel)};
  if (layout.sequence_parallel) parallel.push_back("--sequence-parallel");
  if (layout.context_parallel > 1) context_flags(plan, gpt, layout, parallel);
  if (layout.expert_parallel > 1) expert_parallel_flags(plan, layout, parallel);
  // Megatron-LM splits each expert over the tensor-parallel ranks unless told otherwise; the plan
  // keeps every expert whole on every rank (expert parallelism is not built: each holds all).
  if (gpt.experts > 0 && layout.tensor_parallel > 1) parallel.push_back("--expert-tensor-parallel-size 1");
  pipeline_flags(layout, parallel);
  if (plan.zero_stage == 1) parallel.push_back("--use-distributed-optimizer");
  if (plan.overlap_gradient_sync && layout.data_parallel > 1) parallel.push_back("--overlap-grad-reduce");

  Flags training = {fmt::format("--micro-batch-size {}", layout.micro_batch_per_replica),
                    fmt::format("--global-batch-size {}", plan.global_batch)};
  recompute_flags(plan, layout, training);
  precision_flags(plan, training);
  optimizer_flags(plan, training);
  training.push_back("--train-iters \"${TRAIN_ITERS:-100}\"");

  const Flags data = {fmt::format("--mock-data --tokenizer-type NullTokenizer --vocab-size {}", gpt.vocabulary)};

  std::string script = "#!/usr/bin/env bash\n";
  script += header_comment(request, layout, "Megatron-LM launch (pretrain_gpt.py under torchrun), one per node.");
  script += fmt::format(
      "# Run on each of the {} node(s) with NODE_RANK, MASTER_ADDR and MASTER_PORT set and MEGATRON_LM\n"
      "# pointing at a Megatron-LM checkout. Megatron-LM pads the vocabulary (--make-vocab-size-divisible-by).\n"
      "set -euo pipefail\n: \"${{MEGATRON_LM:?set MEGATRON_LM to a Megatron-LM checkout}}\"\n",
      launch.nodes);
  if (layout.tensor_parallel > 1)
    script += "export CUDA_DEVICE_MAX_CONNECTIONS=1  # Megatron-LM asks for it with tensor parallelism\n";
  script += '\n';
  script += bash_array("MODEL_ARGS", shape);
  script += bash_array("PARALLEL_ARGS", parallel);
  script += bash_array("TRAINING_ARGS", training);
  script += "# Synthetic tokens; give your data and tokenizer here instead (--data-path, --tokenizer-type, ...).\n";
  script += bash_array("DATA_ARGS", data);
  script += fmt::format(
      "\ntorchrun --nnodes {} --nproc_per_node {} --node_rank \"${{NODE_RANK:-0}}\" \\\n"
      "  --master_addr \"${{MASTER_ADDR:-localhost}}\" --master_port \"${{MASTER_PORT:-6000}}\" \\\n"
      "  \"$MEGATRON_LM/pretrain_gpt.py\" \"${{MODEL_ARGS[@]}}\" \"${{PARALLEL_ARGS[@]}}\" \"${{TRAINING_ARGS[@]}}\" "
      "\"${{DATA_ARGS[@]}}\" \"$@\"\n",
      launch.nodes, launch.processes_per_node);
  return {{"launch.sh", script, true}};
}

}  // namespace splitbrain::tools
