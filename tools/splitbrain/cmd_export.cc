// `splitbrain export`: one plan file as a launch configuration for Megatron-LM, DeepSpeed or
// torchrun. A plan the format cannot express exits 2 naming the part (export_formats.h).

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "model/file_io.h"
#include "model/output_files.h"
#include "plans/plan_json.h"
#include "sim/cluster_presets.h"
#include "tools/splitbrain/commands.h"
#include "tools/export/export_formats.h"

namespace splitbrain::tools {
namespace {

struct ExportOptions {
  std::string plan_path;
  std::string format;
  std::string folder;
  std::string cluster = "local-cpu";
  bool nearest = false;
};

void run_export(const ExportOptions& options) {
  check_output_folder(options.folder, "--output-dir");
  const plans::Plan plan = plans::load_plan_file(options.plan_path);
  const sim::Cluster cluster = sim::resolve_cluster(options.cluster);
  const ExportRequest request{&plan, cluster.levels.front().fan_out,
                              fmt::format("plan file {}", std::filesystem::path(options.plan_path).filename().string()),
                              options.nearest};
  const auto files = export_plan(parse_export_format(options.format), request);
  OutputFiles outputs;
  add_exported_files(outputs, "--output-dir", options.folder, files);
  outputs.write_all();
  for (const auto& file : files) std::cout << (std::filesystem::path(options.folder) / file.name).string() << '\n';
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* command = app.add_subcommand(
      "export",
      "Write a plan file as a launch configuration for Megatron-LM, DeepSpeed, torchrun or torchtitan (exit 2 naming "
      "the "
      "part a format cannot express)");
  command->add_option("--plan", options->plan_path, "Plan file")->type_name("FILE")->required();
  command
      ->add_option(
          "--format", options->format,
          "megatron: launch.sh for pretrain_gpt.py; deepspeed: ds_config.json "
          "and launch.sh; torchrun: launch.sh and torchrun_train.py (DDP); torchtitan: torchtitan.toml (Llama 3)")
      ->check(CLI::IsMember({"megatron", "deepspeed", "torchrun", "torchtitan"}))
      ->type_name("FORMAT")
      ->required();
  command->add_option("-o,--output-dir", options->folder, "Folder to write the files into (made if missing)")
      ->type_name("DIR")
      ->required();
  command->add_option("--cluster", options->cluster, "Cluster preset or file: its node size is the processes per node")
      ->type_name("NAME|FILE")
      ->default_val("local-cpu");
  command->add_flag("--nearest", options->nearest, kNearestHelp);
  command->callback([options] { run_export(*options); });
}

}  // namespace splitbrain::tools
