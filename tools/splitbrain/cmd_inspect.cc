// `splitbrain inspect`: per-layer shapes, parameters, FLOPs and saved activations of a model.

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "model/file_io.h"
#include "model/output_files.h"
#include "model/model_json.h"
#include "model/statistics.h"
#include "tools/splitbrain/commands.h"
#include "tools/splitbrain/human_units.h"
#include "tools/splitbrain/text_table.h"
#include "tools/splitbrain/number_flags.h"

namespace splitbrain::tools {
namespace {

struct InspectOptions {
  std::string model;
  int64_t batch = 1;
  std::string dtype = "fp32";
  std::string json_path;
  std::string save_path;
};

nlohmann::json statistics_to_json(const model::Model& net, const model::ModelStatistics& stats) {
  nlohmann::json layers = nlohmann::json::array();
  for (int i = 0; i < net.size(); ++i) {
    const model::Layer& layer = net.layer(i);
    const model::LayerStatistics& s = stats.layers[static_cast<size_t>(i)];
    nlohmann::json inputs = nlohmann::json::array();
    for (int producer : layer.inputs) inputs.push_back(net.layer(producer).name);
    layers.push_back({{"name", layer.name},
                      {"op", model::op_name(layer.kind)},
                      {"inputs", inputs},
                      {"output_shape", model::with_batch(layer.output_shape, stats.batch)},
                      {"params", s.params},
                      {"flops_forward", s.forward_flops},
                      {"flops_backward_input", s.backward_input_flops},
                      {"flops_backward_weight", s.backward_weight_flops},
                      {"output_bytes", s.output_bytes},
                      {"saved_bytes", s.saved_bytes}});
  }
  return {{"model", net.name()},
          {"batch", stats.batch},
          {"dtype", model::dtype_name(stats.dtype)},
          {"params", stats.params},
          {"param_bytes", stats.param_bytes},
          {"flops_forward", stats.forward_flops},
          {"flops_backward", stats.backward_flops},
          {"saved_bytes", stats.saved_bytes},
          {"layers", layers}};
}

void print_table(const model::Model& net, const model::ModelStatistics& stats) {
  TextTable table({{"layer", TextTable::Align::left},
                   {"op", TextTable::Align::left},
                   {"output shape", TextTable::Align::left},
                   {"params"},
                   {"fwd FLOPs"},
                   {"saved for bwd"}});
  for (int i = 0; i < net.size(); ++i) {
    const model::Layer& layer = net.layer(i);
    const model::LayerStatistics& s = stats.layers[static_cast<size_t>(i)];
    table.add_row({layer.name, std::string(model::op_name(layer.kind)),
                   model::shape_to_string(model::with_batch(layer.output_shape, stats.batch)),
                   with_thousands_separators(s.params), human_flops(s.forward_flops),
                   human_bytes(static_cast<double>(s.saved_bytes))});
  }
  table.add_rule();
  table.add_row({"total", "", "", with_thousands_separators(stats.params), human_flops(stats.forward_flops),
                 human_bytes(static_cast<double>(stats.saved_bytes))});
  std::cout << fmt::format("model {}: {} layers, batch {}, {}\n\n", net.name(), net.size(), stats.batch,
                           model::dtype_name(stats.dtype));
  table.print(std::cout);
  std::cout << fmt::format(
      "\nparameters   {} ({} of weights)\n"
      "forward      {}   backward {} (a multiply-add counts 2 FLOPs)\n"
      "activations  {} kept for backward\n",
      with_thousands_separators(stats.params), human_bytes(static_cast<double>(stats.param_bytes)),
      human_flops(stats.forward_flops), human_flops(stats.backward_flops),
      human_bytes(static_cast<double>(stats.saved_bytes)));
}

void run_inspect(const InspectOptions& options) {
  if (!options.json_path.empty()) check_output_path(options.json_path, "--json");
  if (!options.save_path.empty()) check_output_path(options.save_path, "--save");
  const model::Model net = model::resolve_model(options.model);
  const model::ModelStatistics stats = model::compute_statistics(net, options.batch, model::parse_dtype(options.dtype));
  OutputFiles outputs;  // both or neither
  if (!options.save_path.empty()) {
    outputs.add_file("--save", options.save_path,
                     [&net](const std::filesystem::path& file) { model::save_model_file(net, file); });
  }
  if (!options.json_path.empty()) outputs.add_json("--json", options.json_path, statistics_to_json(net, stats));
  outputs.write_all();
  if (options.json_path.empty()) print_table(net, stats);
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* command = app.add_subcommand("inspect", "Per-layer shapes, parameters, FLOPs and activation memory");
  command->add_option("--model", options->model, "Zoo name (with options, e.g. gpt:layers=4) or model file")
      ->type_name("NAME|FILE")
      ->required();
  command->add_option("--batch", options->batch, "Samples per batch")
      ->check(positive_integer_for(options->batch))
      ->default_val(1);
  command->add_option("--dtype", options->dtype, "Element type of activations and weights")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}))
      ->default_val("fp32");
  command->add_option("--json", options->json_path, "Write the figures as JSON to FILE (- for standard output)")
      ->type_name("FILE|-");
  command->add_option("--save", options->save_path, "Also write the model in the JSON model format to FILE")
      ->type_name("FILE");
  command->callback([options] { run_inspect(*options); });
}

}  // namespace splitbrain::tools
