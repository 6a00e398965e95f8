#pragma once
// Launch configurations for other trainers, written from a plan: Megatron-LM's pretrain_gpt.py
// arguments, a DeepSpeed config, a torchrun command for tools/torchrun_train.py, or torchtitan's
// train config TOML for a Llama 3 model. Each format
// takes the plan's trainer_layout() and refuses (ExportRefusal, naming the part) what it cannot
// run.

#include <string>
#include <string_view>
#include <vector>

#include "model/output_files.h"
#include "plans/plan.h"
#include "tools/export/trainer_layout.h"

namespace splitbrain::tools {

enum class ExportFormat { megatron, deepspeed, torchrun, torchtitan };

// The --nearest flag of `plan --export` and `export`.
inline constexpr const char* kNearestHelp =
    "megatron: for a GPT or Llama plan that splits some layers otherwise than Megatron-LM (or cuts its pipeline inside "
    "a "
    "transformer layer), write Megatron-LM's own form with the same data/tensor/pipeline sizes and note each "
    "difference, instead of refusing it";

ExportFormat parse_export_format(std::string_view name);  // "megatron", "deepspeed", "torchrun", "torchtitan"

struct ExportedFile {
  std::string name;  // within the export folder
  std::string content;
  bool executable = false;
};

struct ExportRequest {
  const plans::Plan* plan = nullptr;
  int devices_per_node = 1;  // the cluster's node size: torchrun's --nproc_per_node
  std::string origin;        // where the plan came from, for the files' header comment
  // Megatron-LM: write its own form of a GPT plan that splits some layers otherwise (or cuts a
  // pipeline inside a transformer layer), with the same sizes, noting each difference, instead
  // of refusing it (TrainerLayout::megatron_differences).
  bool nearest = false;
};

// The files of `format` for the plan; throws ExportRefusal when the format cannot express it.
std::vector<ExportedFile> export_plan(ExportFormat format, const ExportRequest& request);

// Adds the files, in `folder` (made if missing), to the command's outputs; `flag` names the folder.
void add_exported_files(OutputFiles& outputs, std::string_view flag, const std::string& folder,
                        const std::vector<ExportedFile>& files);

// --- shared by the formats (export_formats.cc) ---

std::vector<ExportedFile> export_megatron(const ExportRequest& request, const TrainerLayout& layout);
std::vector<ExportedFile> export_deepspeed(const ExportRequest& request, const TrainerLayout& layout);
std::vector<ExportedFile> export_torchrun(const ExportRequest& request, const TrainerLayout& layout);
std::vector<ExportedFile> export_torchtitan(const ExportRequest& request, const TrainerLayout& layout);

struct NodeLaunch {
  int nodes = 1;
  int processes_per_node = 1;
};
// Ranks spread over whole nodes of `devices_per_node`; throws ExportRefusal when the mesh's
// ranks do not fill its nodes evenly.
NodeLaunch node_launch(const plans::Plan& plan, int devices_per_node);

// "# " lines: what the files are for, the plan's origin and family, and the layout's notes.
std::string header_comment(const ExportRequest& request, const TrainerLayout& layout, std::string_view what,
                           std::string_view comment = "# ");

}  // namespace splitbrain::tools
