// `splitbrain import`: an ONNX model file to the JSON model format, with a one-line summary.
// Every command that takes --model reads .onnx files directly too; import writes the graph out
// once, to read, edit or commit.

#include <fmt/format.h>

#include <iostream>

#include "model/file_io.h"
#include "model/model_json.h"
#include "model/onnx/onnx_import.h"
#include "model/statistics.h"
#include "tools/splitbrain/commands.h"
#include "tools/splitbrain/human_units.h"

namespace splitbrain::tools {
namespace {

struct ImportOptions {
  std::string onnx_path;
  std::string output_path;
};

void run_import(const ImportOptions& options) {
  check_output_path(options.output_path, "-o");
  const model::Model net = model::import_onnx_model(options.onnx_path);
  write_json_output(options.output_path, model::model_to_json(net));
  if (options.output_path == "-") return;
  const model::ModelStatistics stats = model::compute_statistics(net, 1, model::DType::fp32);
  std::cout << fmt::format("{}: {} layers, {} parameters, {} forward per sample -> {}\n", options.onnx_path, net.size(),
                           with_thousands_separators(stats.params), human_flops(stats.forward_flops),
                           options.output_path);
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto options = std::make_shared<ImportOptions>();
  CLI::App* command = app.add_subcommand("import", "Convert an ONNX model to the JSON model format");
  command->add_option("onnx", options->onnx_path, "ONNX model file (model/README.md lists the ops imported)")
      ->type_name("FILE.onnx")
      ->required();
  command->add_option("-o,--output", options->output_path, "JSON model file to write (- for standard output)")
      ->type_name("FILE|-")
      ->required();
  command->callback([options] { run_import(*options); });
}

}  // namespace splitbrain::tools
