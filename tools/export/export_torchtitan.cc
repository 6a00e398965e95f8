// torchtitan: its train config TOML (torchtitan.train --job.config_file FILE) for a plan of one of
// the Llama 3 models torchtitan builds (its `llama3` flavors 8B, 70B and 405B, matched against
// the zoo's llama3-8b, -70b and -405b), with the plan's FSDP or DDP, tensor and pipeline sizes,
// batches, precision, optimizer and activation checkpointing. Field names are those of
// torchtitan/config/job_config.py (tests/cli/torchtitan_job_config_fields.txt names the commit).
//
// torchtitan shards with FSDP (fully_shard: parameters, gradients and optimizer state, ZeRO 3)
// or replicates with DDP; its DDP runs alone, not beside tensor or pipeline parallelism. Its
// tensor parallelism splits a Llama block as Megatron-LM's does (sequence parallelism on the
// norms included), and its pipeline cuts between blocks, so a plan Megatron-LM would run only
// in its nearest form is refused here.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cmath>
#include <string_view>

#include "model/zoo.h"
#include "tools/export/export_formats.h"
#include "tools/export/export_refusal.h"
#include "tools/export/llama_shape.h"

namespace splitbrain::tools {
namespace {

struct Llama3Flavor {
  std::string_view flavor;     // torchtitan's [model] flavor of name "llama3"
  std::string_view zoo_model;  // the zoo entry of the same shape
};
constexpr std::array<Llama3Flavor, 3> kLlama3Flavors = {
    {{"8B", "llama3-8b"}, {"70B", "llama3-70b"}, {"405B", "llama3-405b"}}};

// The first hyperparameter in which `ours` differs from `theirs` ("" when none); the sequence
// length is a training setting (seq_len), not part of a flavor.
std::string first_difference(const GptShape& ours, const GptShape& theirs) {
  const auto differs = [](std::string_view field, auto a, auto b) {
    return a == b ? std::string() : fmt::format("{} {} (the flavor's {})", field, a, b);
  };
  for (const std::string& difference :
       {differs("experts", ours.experts, theirs.experts), differs("layers", ours.layers, theirs.layers),
        differs("hidden", ours.hidden, theirs.hidden), differs("heads", ours.heads, theirs.heads),
        differs("kv_heads", ours.kv_heads, theirs.kv_heads), differs("ffn", ours.ffn_hidden, theirs.ffn_hidden),
        differs("vocabulary", ours.vocabulary, theirs.vocabulary),
        differs("rope_theta", ours.rope_theta, theirs.rope_theta),
        differs("norm epsilon", ours.norm_epsilon, theirs.norm_epsilon),
        differs("tied head", ours.tied_head, theirs.tied_head),
        differs("linear bias", ours.linear_bias, theirs.linear_bias),
        differs("attention dropout", ours.attention_dropout, theirs.attention_dropout)}) {
    if (!difference.empty()) return difference;
  }
  return "";
}

// torchtitan builds its own models by name and flavor: the plan's model must be one of them.
std::string_view llama3_flavor(const plans::Plan& plan, const TrainerLayout& layout) {
  const model::Model& model = *plan.model;
  if (!layout.gpt || layout.gpt->style != DecoderStyle::llama) {
    throw ExportRefusal(
        fmt::format("model '{}': is no Llama 3 model ({}); torchtitan's config names one of the "
                    "models it builds (llama3 flavors 8B, 70B, 405B)",
                    model.name(), layout.gpt ? "a GPT-2-style decoder" : layout.not_gpt));
  }
  std::string nearest;
  for (const Llama3Flavor& flavor : kLlama3Flavors) {
    const GptShape theirs = read_llama_shape(model::build_zoo_model(flavor.zoo_model));
    const std::string difference = first_difference(*layout.gpt, theirs);
    if (difference.empty()) return flavor.flavor;
    if (nearest.empty() || theirs.hidden == layout.gpt->hidden)
      nearest = fmt::format("from {} ({}) in {}", flavor.flavor, flavor.zoo_model, difference);
  }
  throw ExportRefusal(
      fmt::format("model '{}': is none of torchtitan's llama3 flavors 8B, 70B, 405B (it differs {}); torchtitan "
                  "builds its models by flavor, not from a shape",
                  model.name(), nearest));
}

void refuse_unsupported(const plans::Plan& plan, const TrainerLayout& layout) {
  if (!layout.megatron_differences.empty()) {
    throw ExportRefusal(
        fmt::format("{} (torchtitan splits a Llama block as Megatron-LM does)", layout.megatron_differences.front()));
  }
  if (plan.zero_stage == 1 || plan.zero_stage == 2) {
    throw ExportRefusal(fmt::format(
        "options.zero_stage: {} shards the optimizer state{} but not the parameters; torchtitan's FSDP shards "
        "parameters, gradients and optimizer state together (ZeRO 3) and its DDP shards nothing",
        plan.zero_stage, plan.zero_stage == 2 ? " and gradients" : ""));
  }
  if (plan.zero_stage == 0 && layout.data_parallel > 1 &&
      (layout.tensor_parallel > 1 || layout.pipeline_parallel > 1 || layout.context_parallel > 1)) {
    throw ExportRefusal(
        "options.zero_stage: 0 (data parallelism without sharding, torchtitan's DDP) beside tensor, pipeline or "
        "context parallelism; torchtitan runs DDP alone and shards with FSDP (ZeRO 3) otherwise");
  }
  if (plan.dtype == model::DType::fp16) {
    throw ExportRefusal("dtype: fp16; torchtitan's mixed_precision_param is bfloat16 or float32");
  }
  if (plan.optimizer.kind != plans::OptimizerKind::adam) {
    throw ExportRefusal("optimizer.kind: sgd; torchtitan's optimizers are Adam and AdamW");
  }
  if (plan.recompute_activations && plan.recompute_blocks > 0) {
    throw ExportRefusal(
        fmt::format("options.recompute_blocks: {} (the first blocks of each stage); torchtitan checkpoints every "
                    "block (full) or every n-th (selective n)",
                    plan.recompute_blocks));
  }
}

// A TOML float: always with a point or an exponent, so that TOML reads it as a float.
std::string toml_float(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eE") == std::string::npos && std::isfinite(value)) text += ".0";
  return text;
}

std::string_view torchtitan_schedule(plans::PipelineSchedule schedule) {
  switch (schedule) {
    case plans::PipelineSchedule::gpipe:
      return "GPipe";
    case plans::PipelineSchedule::one_f_one_b:
      return "1F1B";
    case plans::PipelineSchedule::interleaved_one_f_one_b:
      return "Interleaved1F1B";
  }
  return "1F1B";
}

// The module names torchtitan's Llama starts each pipeline chunk but the first with.
std::vector<std::string> split_points(const TrainerLayout& layout) {
  std::vector<std::string> points;
  int block = 0;
  for (size_t c = 0; c < layout.layers_per_chunk.size(); ++c) {
    if (layout.layers_per_chunk[c] == 0) {
      throw ExportRefusal(fmt::format(
          "pipeline.stage_starts: chunk {} holds no transformer block; torchtitan starts every stage at one", c));
    }
    if (c > 0) points.push_back(fmt::format("\"layers.{}\"", block));
    block += layout.layers_per_chunk[c];
  }
  return points;
}

std::string parallelism_section(const plans::Plan& plan, const TrainerLayout& layout) {
  const bool sharded = plan.zero_stage == 3;
  std::string text = "[parallelism]\n";
  text += fmt::format("data_parallel_replicate_degree = {}\n", sharded ? 1 : layout.data_parallel);
  text += fmt::format("data_parallel_shard_degree = {}\n", sharded ? layout.data_parallel : 1);
  text += fmt::format("tensor_parallel_degree = {}\n", layout.tensor_parallel);
  text += fmt::format("pipeline_parallel_degree = {}\n", layout.pipeline_parallel);
  if (layout.pipeline_parallel > 1) {
    text += fmt::format("pipeline_parallel_schedule = \"{}\"\n", torchtitan_schedule(plan.schedule));
    text += fmt::format("pipeline_parallel_split_points = [{}]\n", fmt::join(split_points(layout), ", "));
    text += fmt::format("pipeline_parallel_microbatch_size = {}\n", layout.micro_batch_per_replica);
  }
  text += fmt::format("context_parallel_degree = {}\n", layout.context_parallel);
  return text;
}

// Full recomputation: torchtitan's full mode checkpoints each block, keeping its input, where the
// plan keeps only each stage's. Selective: torchtitan's per-op policy.
std::string activation_checkpoint_section(const plans::Plan& plan, TrainerLayout& layout) {
  std::string text = "[activation_checkpoint]\n";
  if (plan.recompute_activations) {
    layout.notes.push_back(
        "torchtitan's full activation checkpointing keeps each block's input, the plan only each stage's");
    return text + "mode = \"full\"\n";
  }
  if (plan.recompute_attention) {
    layout.notes.push_back(
        "torchtitan's per-op selective checkpointing keeps the attention's output and every other matrix "
        "product, recomputing the rest; the plan recomputes the attention's scores");
    return text + "mode = \"selective\"\nselective_ac_option = \"op\"\n";
  }
  return text + "mode = \"none\"\n";
}

}  // namespace

std::vector<ExportedFile> export_torchtitan(const ExportRequest& request, const TrainerLayout& given) {
  const plans::Plan& plan = *request.plan;
  TrainerLayout layout = given;
  const std::string_view flavor = llama3_flavor(plan, layout);
  refuse_unsupported(plan, layout);
  const GptShape& gpt = *layout.gpt;
  const NodeLaunch launch = node_launch(plan, request.devices_per_node);

  if (layout.context_parallel > 1) {
    // torchtitan's load balancing gives each rank two chunks of the sequence, one from each end.
    if (gpt.sequence % (2 * layout.context_parallel) != 0) {
      throw ExportRefusal(fmt::format(
          "mesh: '{}' splits sequences of {} tokens over {} ranks; torchtitan's context parallelism needs the "
          "sequence to be a multiple of 2 x {}",
          plan.mesh.axis(layout.context_axis).name, gpt.sequence, layout.context_parallel, layout.context_parallel));
    }
    layout.notes.push_back(
        "torchtitan's context parallelism gives each rank two sequence chunks, one from each end, all-gathers keys "
        "and values (not queries) and shards FSDP over the data and context ranks together; the plan gives each "
        "rank one contiguous block and all-gathers q|k|v");
  }
  if (layout.tensor_parallel > 1 && !layout.sequence_parallel) {
    layout.notes.push_back(
        "torchtitan's tensor parallelism splits the norms by sequence (sequence parallelism); the plan keeps them "
        "whole");
  }
  if (plan.dtype == model::DType::bf16 && plan.gradient_dtype.value_or(plan.dtype) != model::DType::fp32) {
    layout.notes.push_back("torchtitan reduces gradients in float32 (mixed_precision_reduce), the plan in bf16");
  }
  layout.notes.push_back(
      "torchtitan clips gradients to a global norm of 1 (training.max_norm) and warms the learning rate up over "
      "200 steps, then decays it (lr_scheduler); the plan neither clips nor schedules");
  const std::string checkpointing = activation_checkpoint_section(plan, layout);

  // With a pipeline torchtitan splits each replica's local batch into its micro-batches; without
  // one, a global batch above local x data parallel is gradient accumulation.
  const int64_t local_batch = layout.pipeline_parallel > 1 ? layout.micro_batch_per_replica * layout.micro_batches
                                                           : layout.micro_batch_per_replica;

  std::string toml = header_comment(request, layout, "torchtitan train config (llama3), for torchtitan.train.");
  toml += fmt::format(
      "# Run on each of the {} node(s), from a torchtitan checkout:\n"
      "#   torchrun --nnodes {} --nproc_per_node {} --node_rank \"$NODE_RANK\" --rdzv_backend c10d --rdzv_endpoint "
      "\"$MASTER_ADDR:$MASTER_PORT\" "
      "\\\n#     -m torchtitan.train --job.config_file THIS_FILE\n"
      "# Give its tokenizer (Llama 3's, a vocabulary of {}) and dataset in [model] and [training].\n\n",
      launch.nodes, launch.nodes, launch.processes_per_node, gpt.vocabulary);
  toml +=
      fmt::format("[job]\ndescription = \"splitbrain plan: {} on mesh {}\"\n\n", plan.family, plan.mesh.to_string());
  toml += fmt::format("[model]\nname = \"llama3\"\nflavor = \"{}\"\n\n", flavor);
  const auto& o = plan.optimizer;
  // The plan's Adam adds weight_decay x parameter to the gradient, as torch.optim.Adam does.
  toml += fmt::format("[optimizer]\nname = \"Adam\"\nlr = {}\nbeta1 = {}\nbeta2 = {}\neps = {}\nweight_decay = {}\n\n",
                      toml_float(o.learning_rate), toml_float(o.beta1), toml_float(o.beta2), toml_float(o.epsilon),
                      toml_float(o.weight_decay));
  toml += fmt::format(
      "[training]\nlocal_batch_size = {}\nglobal_batch_size = {}\nseq_len = {}\nmixed_precision_param = \"{}\"\n"
      "steps = 100\n\n",
      local_batch, plan.global_batch, gpt.sequence, plan.dtype == model::DType::bf16 ? "bfloat16" : "float32");
  toml += parallelism_section(plan, layout) + '\n';
  toml += checkpointing;
  return {{"torchtitan.toml", toml, false}};
}

}  // namespace splitbrain::tools
