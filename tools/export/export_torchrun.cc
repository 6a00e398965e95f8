// torchrun: data-parallel plans of a GPT, as a torch.distributed.run command for
// tools/torchrun_train.py (PyTorch DDP; gloo on CPU, NCCL on GPUs), copied beside the command.

#include <fmt/format.h>

#include <filesystem>

#include "model/file_io.h"
#include "tools/export/export_formats.h"
#include "tools/export/export_refusal.h"

namespace splitbrain::tools {
namespace {

void refuse_unsupported(const plans::Plan& plan, const TrainerLayout& layout) {
  if (!layout.gpt) throw ExportRefusal(layout.not_gpt);
  if (layout.gpt->style != DecoderStyle::gpt2) {
    throw ExportRefusal(
        fmt::format("model '{}': a {} decoder (RMSNorm, SwiGLU, rotary positions); torchrun_train.py builds "
                    "GPT-2-style decoders only: export megatron",
                    plan.model->name(), decoder_style_name(layout.gpt->style)));
  }
  if (layout.tensor_axis >= 0) {
    throw ExportRefusal(
        fmt::format("layer '{}': splits features over '{}'; torchrun_train.py runs data parallelism "
                    "only: export megatron",
                    plan.model->layer(layout.first_tensor_layer).name, plan.mesh.axis(layout.tensor_axis).name));
  }
  if (layout.context_axis >= 0) {
    throw ExportRefusal(
        fmt::format("mesh: '{}' splits every layer's sequence (context parallelism); "
                    "torchrun_train.py runs data parallelism only: export megatron",
                    plan.mesh.axis(layout.context_axis).name));
  }
  if (layout.pipeline_parallel > 1) {
    throw ExportRefusal(
        fmt::format("pipeline.axis: '{}' makes {} stages; torchrun_train.py runs data parallelism "
                    "only: export megatron or deepspeed",
                    plan.mesh.axis(plan.pipe_axis).name, layout.pipeline_parallel));
  }
  if (plan.zero_stage > 0) {
    throw ExportRefusal(
        fmt::format("options.zero_stage: {}; torchrun_train.py keeps whole optimizer states (DDP): "
                    "export deepspeed for ZeRO",
                    plan.zero_stage));
  }
  if (plan.dtype == model::DType::fp16) {
    throw ExportRefusal("dtype: fp16 needs loss scaling, which torchrun_train.py does not do (fp32 and bf16 only)");
  }
  if (plan.recompute_attention && !plan.recompute_activations) {
    throw ExportRefusal("options.recompute: \"selective\": torchrun_train.py recomputes all blocks or none");
  }
  if (plan.recompute_activations && plan.recompute_blocks > 0) {
    throw ExportRefusal("options.recompute_blocks: torchrun_train.py recomputes all blocks or none");
  }
}

}  // namespace

std::vector<ExportedFile> export_torchrun(const ExportRequest& request, const TrainerLayout& layout) {
  const plans::Plan& plan = *request.plan;
  refuse_unsupported(plan, layout);
  const GptShape& gpt = *layout.gpt;
  const NodeLaunch launch = node_launch(plan, request.devices_per_node);
  const auto& o = plan.optimizer;

  std::string arguments = fmt::format(
      "  --layers {} --hidden {} --heads {} --ffn-hidden {} --seq {} --vocab {} --positions {} \\\n"
      "  --dropout {} --attention-dropout {}{}{} \\\n"
      "  --batch-per-replica {} --micro-batches {} --dtype {} \\\n",
      gpt.layers, gpt.hidden, gpt.heads, gpt.ffn_hidden, gpt.sequence, gpt.vocabulary, gpt.positions,
      gpt.hidden_dropout, gpt.attention_dropout, gpt.tied_head ? "" : " --untied", gpt.linear_bias ? "" : " --no-bias",
      layout.micro_batch_per_replica, layout.micro_batches, model::dtype_name(plan.dtype));
  if (o.kind == plans::OptimizerKind::adam) {
    arguments += fmt::format("  --optimizer adam --lr {} --beta1 {} --beta2 {} --eps {} --weight-decay {}",
                             o.learning_rate, o.beta1, o.beta2, o.epsilon, o.weight_decay);
  } else {
    arguments += fmt::format("  --optimizer sgd --lr {} --momentum {} --weight-decay {}", o.learning_rate, o.momentum,
                             o.weight_decay);
  }
  if (plan.recompute_activations) arguments += " --recompute";

  std::string script = "#!/usr/bin/env bash\n";
  script += header_comment(request, layout, "PyTorch DDP launch of torchrun_train.py (beside this file).");
  script += fmt::format(
      "# Run on each of the {} node(s) with NODE_RANK, MASTER_ADDR and MASTER_PORT set; STEPS steps (default 10).\n"
      "# --redirects 1 --tee 1 copies rank output to the console; torch 1.13 under Python 3.11 (Debian 12) fails\n"
      "# without them.\n"
      "set -euo pipefail\nhere=\"$(cd \"$(dirname \"$0\")\" && pwd)\"\n\n"
      "\"${{PYTHON:-python3}}\" -m torch.distributed.run --nnodes {} --nproc_per_node {} --node_rank "
      "\"${{NODE_RANK:-0}}\" \\\n"
      "  --redirects 1 --tee 1 \\\n"
      "  --master_addr \"${{MASTER_ADDR:-localhost}}\" --master_port \"${{MASTER_PORT:-29500}}\" \\\n"
      "  \"$here/torchrun_train.py\" --steps \"${{STEPS:-10}}\" \\\n{} \"$@\"\n",
      launch.nodes, launch.nodes, launch.processes_per_node, arguments);
  const std::string trainer =
      read_text_file(std::filesystem::path(SPLITBRAIN_SOURCE_DIR) / "tools" / "torchrun_train.py");
  return {{"launch.sh", script, true}, {"torchrun_train.py", trainer, false}};
}

}  // namespace splitbrain::tools
