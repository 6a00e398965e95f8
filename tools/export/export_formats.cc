// The export formats' dispatch and what they share: node counts, header comments, writing.

#include "tools/export/export_formats.h"

#include <fmt/format.h>

#include <filesystem>

#include "model/file_io.h"
#include "tools/export/export_refusal.h"

namespace splitbrain::tools {

ExportFormat parse_export_format(std::string_view name) {
  if (name == "megatron") return ExportFormat::megatron;
  if (name == "deepspeed") return ExportFormat::deepspeed;
  if (name == "torchrun") return ExportFormat::torchrun;
  if (name == "torchtitan") return ExportFormat::torchtitan;
  throw InputError(fmt::format("--export: '{}' is not a format (megatron, deepspeed, torchrun, torchtitan)", name));
}

std::vector<ExportedFile> export_plan(ExportFormat format, const ExportRequest& request) {
  const TrainerLayout layout = trainer_layout(*request.plan);
  switch (format) {
    case ExportFormat::megatron:
      return export_megatron(request, layout);
    case ExportFormat::deepspeed:
      return export_deepspeed(request, layout);
    case ExportFormat::torchrun:
      return export_torchrun(request, layout);
    case ExportFormat::torchtitan:
      return export_torchtitan(request, layout);
  }
  return {};
}

NodeLaunch node_launch(const plans::Plan& plan, int devices_per_node) {
  const int ranks = plan.mesh.rank_count();
  if (ranks <= devices_per_node) return {1, ranks};
  if (ranks % devices_per_node != 0) {
    throw ExportRefusal(
        fmt::format("mesh: {} ranks do not fill whole nodes of {} devices; launchers start the same "
                    "number of processes on every node",
                    ranks, devices_per_node));
  }
  return {ranks / devices_per_node, devices_per_node};
}

std::string header_comment(const ExportRequest& request, const TrainerLayout& layout, std::string_view what,
                           std::string_view comment) {
  const plans::Plan& plan = *request.plan;
  std::string text = fmt::format("{}{}\n{}Written by `splitbrain` from {}: {} on mesh {}.\n", comment, what, comment,
                                 request.origin, plan.family, plan.mesh.to_string());
  text += fmt::format(
      "{}Data parallel {}{}, tensor parallel {}{}{}, pipeline {}{}; {} micro-batch(es) of {} per replica.\n", comment,
      layout.data_parallel,
      layout.expert_parallel > 1 ? fmt::format(" (the experts split over {} of them)", layout.expert_parallel) : "",
      layout.tensor_parallel, layout.sequence_parallel ? " with sequence parallelism" : "",
      layout.context_parallel > 1 ? fmt::format(", context parallel {}", layout.context_parallel) : "",
      layout.pipeline_parallel,
      layout.virtual_stages > 1 ? fmt::format(" x {} virtual stages", layout.virtual_stages) : "", layout.micro_batches,
      layout.micro_batch_per_replica);
  for (const auto& note : layout.notes) text += fmt::format("{}Note: {}.\n", comment, note);
  return text;
}

void add_exported_files(OutputFiles& outputs, std::string_view flag, const std::string& folder,
                        const std::vector<ExportedFile>& files) {
  for (const ExportedFile& file : files) {
    outputs.add_file(flag, std::filesystem::path(folder) / file.name, [file](const std::filesystem::path& path) {
      write_file_atomically(path, file.content);
      if (file.executable) {
        std::error_code ec;
        std::filesystem::permissions(path,
                                     std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec |
                                         std::filesystem::perms::others_exec,
                                     std::filesystem::perm_options::add, ec);
      }
    });
  }
}

}  // namespace splitbrain::tools
