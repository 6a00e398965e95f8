// DeepSpeed: ds_config.json (batch sizes, ZeRO stage, precision, optimizer, activation
// checkpointing, pipeline stages) and a launch script for the user's DeepSpeed training script.
// DeepSpeed alone has no tensor parallelism (Megatron-LM, or Megatron-DeepSpeed, brings it), no
// interleaved pipeline and, in its pipeline engine, ZeRO stages 0-1 only.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tools/export/export_formats.h"
#include "tools/export/export_refusal.h"

namespace splitbrain::tools {
namespace {

void refuse_unsupported(const plans::Plan& plan, const TrainerLayout& layout) {
  if (layout.tensor_axis >= 0) {
    const int layer = layout.first_tensor_layer;
    throw ExportRefusal(
        fmt::format("layer '{}': splits features over '{}' (tensor parallelism), which DeepSpeed "
                    "runs only with Megatron-LM's layers (Megatron-DeepSpeed): export megatron",
                    plan.model->layer(layer).name, plan.mesh.axis(layout.tensor_axis).name));
  }
  if (layout.expert_parallel > 1) {
    throw ExportRefusal(
        fmt::format("layer '{}': out: splits its experts over {} ranks (expert parallelism), which "
                    "DeepSpeed's config does not express: export megatron",
                    plan.model->layer(layout.first_expert_layer).name, layout.expert_parallel));
  }
  if (layout.context_axis >= 0) {
    throw ExportRefusal(
        fmt::format("mesh: '{}' splits every layer's sequence (context parallelism), which "
                    "DeepSpeed's config does not express: export megatron",
                    plan.mesh.axis(layout.context_axis).name));
  }
  if (layout.virtual_stages > 1) {
    throw ExportRefusal("pipeline.virtual_stages: DeepSpeed's pipeline engine has no interleaved schedule");
  }
  if (layout.pipeline_parallel > 1 && plan.zero_stage > 1) {
    throw ExportRefusal(
        fmt::format("options.zero_stage: {} with a pipeline; DeepSpeed's pipeline engine runs ZeRO "
                    "stages 0 and 1 only",
                    plan.zero_stage));
  }
  if (plan.recompute_attention && !plan.recompute_activations) {
    throw ExportRefusal("options.recompute: \"selective\": DeepSpeed has no attention-only recomputation");
  }
  if (plan.recompute_activations && plan.recompute_blocks > 0) {
    throw ExportRefusal("options.recompute_blocks: DeepSpeed checkpoints every layer or none");
  }
}

// Where each pipeline stage starts, for the PipelineModule the training script builds.
std::string stage_comment(const plans::Plan& plan) {
  if (plan.pipe_axis < 0 || plan.stage_of_layer.empty()) return "";
  std::string text = fmt::format("# Build the model as a PipelineModule(num_stages={}) cut where the plan cuts:\n",
                                 plan.stage_count());
  int first = 0;
  for (int i = 1; i <= plan.model->size(); ++i) {
    if (i < plan.model->size() &&
        plan.stage_of_layer[static_cast<size_t>(i)] == plan.stage_of_layer[static_cast<size_t>(first)])
      continue;
    text += fmt::format("#   stage {}: layers '{}' to '{}'\n", plan.stage_of_layer[static_cast<size_t>(first)],
                        plan.model->layer(first).name, plan.model->layer(i - 1).name);
    first = i;
  }
  return text;
}

}  // namespace

std::vector<ExportedFile> export_deepspeed(const ExportRequest& request, const TrainerLayout& given) {
  const plans::Plan& plan = *request.plan;
  TrainerLayout layout = given;
  refuse_unsupported(plan, layout);
  const NodeLaunch launch = node_launch(plan, request.devices_per_node);

  nlohmann::ordered_json config;
  config["train_batch_size"] = plan.global_batch;
  config["train_micro_batch_size_per_gpu"] = layout.micro_batch_per_replica;
  config["gradient_accumulation_steps"] = layout.micro_batches;
  config["zero_optimization"] = {{"stage", plan.zero_stage}, {"overlap_comm", plan.overlap_gradient_sync}};
  config["bf16"] = {{"enabled", plan.dtype == model::DType::bf16}};
  config["fp16"] = {{"enabled", plan.dtype == model::DType::fp16}};
  const auto& o = plan.optimizer;
  if (o.kind == plans::OptimizerKind::adam) {
    config["optimizer"] = {{"type", "Adam"},
                           {"params",
                            {{"lr", o.learning_rate},
                             {"betas", {o.beta1, o.beta2}},
                             {"eps", o.epsilon},
                             {"weight_decay", o.weight_decay}}}};
  } else {
    layout.notes.push_back(
        fmt::format("the training script builds its optimizer: SGD, lr {}, momentum {}, weight decay {}",
                    o.learning_rate, o.momentum, o.weight_decay));
  }
  if (plan.recompute_activations) {
    config["activation_checkpointing"] = {
        {"partition_activations", false}, {"cpu_checkpointing", false}, {"contiguous_memory_optimization", false}};
    layout.notes.push_back(
        "the training script checkpoints its layers (deepspeed.checkpointing.checkpoint, or "
        "PipelineModule's activation_checkpoint_interval)");
  }
  if (layout.pipeline_parallel > 1) config["pipeline"] = {{"stages", layout.pipeline_parallel}};
  if (plan.pipe_axis >= 0 && plan.schedule == plans::PipelineSchedule::gpipe) {
    layout.notes.push_back("DeepSpeed's pipeline engine runs its 1F1B-style schedule where the plan runs GPipe");
  }
  if (plan.gradient_dtype && *plan.gradient_dtype != plan.dtype) {
    layout.notes.push_back(
        fmt::format("the plan accumulates and reduces gradients in {}; this config leaves "
                    "DeepSpeed's gradient precision at its default",
                    model::dtype_name(*plan.gradient_dtype)));
  }

  std::string script = "#!/usr/bin/env bash\n";
  script +=
      header_comment(request, layout, "DeepSpeed launch with ds_config.json, for your DeepSpeed training script.");
  script += stage_comment(plan);
  script += fmt::format(
      "# Set TRAIN_SCRIPT to a script that takes deepspeed.add_config_arguments' flags and calls\n"
      "# deepspeed.initialize on the model.{}\n"
      "set -euo pipefail\n: \"${{TRAIN_SCRIPT:?set TRAIN_SCRIPT to your DeepSpeed training script}}\"\n"
      "here=\"$(cd \"$(dirname \"$0\")\" && pwd)\"\n\n"
      "deepspeed --num_nodes {} --num_gpus {} \"$TRAIN_SCRIPT\" --deepspeed --deepspeed_config "
      "\"$here/ds_config.json\" \"$@\"\n",
      launch.nodes > 1 ? " Run once: the launcher starts every node listed in its hostfile (-H)." : "", launch.nodes,
      launch.processes_per_node);
  return {{"ds_config.json", config.dump(2) + "\n", false}, {"launch.sh", script, true}};
}

}  // namespace splitbrain::tools
