// `splitbrain models`: the zoo, with parameters and forward FLOPs per sample.

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "model/file_io.h"
#include "model/statistics.h"
#include "model/zoo.h"
#include "tools/splitbrain/commands.h"
#include "tools/splitbrain/human_units.h"
#include "tools/splitbrain/text_table.h"

namespace splitbrain::tools {
namespace {

struct ModelsOptions {
  std::string json_path;
};

void run_models(const ModelsOptions& options) {
  using model::ZooEntry;
  nlohmann::json entries = nlohmann::json::array();
  TextTable table({{"name", TextTable::Align::left},
                   {"params"},
                   {"fwd GFLOP/sample"},
                   {"options", TextTable::Align::left},
                   {"description", TextTable::Align::left}});
  for (const ZooEntry& entry : model::zoo_entries()) {
    const model::Model net = model::build_zoo_model(entry.name);
    const model::ModelStatistics stats = model::compute_statistics(net, 1, model::DType::fp32);
    std::string option_list;
    nlohmann::json options_json = nlohmann::json::array();
    for (const model::ZooOption& option : entry.options) {
      option_list += fmt::format("{}{}={}", option_list.empty() ? "" : ",", option.name, option.default_value);
      options_json.push_back({{"name", option.name},
                              {"default", option.default_value},
                              {"min", option.min_value},
                              {"max", option.max_value},
                              {"help", option.help}});
    }
    table.add_row({entry.name, with_thousands_separators(stats.params),
                   fmt::format("{:.3f}", stats.forward_flops / 1e9), option_list, entry.description});
    entries.push_back({{"name", entry.name},
                       {"description", entry.description},
                       {"params", stats.params},
                       {"flops_forward_per_sample", stats.forward_flops},
                       {"options", options_json}});
  }
  if (options.json_path.empty()) {
    table.print(std::cout);
    std::cout << "\nFLOPs count a multiply-add as 2. Use a name with options as name:key=value,...\n";
  } else {
    write_json_output(options.json_path, nlohmann::json{{"models", entries}});
  }
}

}  // namespace

void add_models_command(CLI::App& app) {
  auto options = std::make_shared<ModelsOptions>();
  CLI::App* command = app.add_subcommand("models", "List the built-in models with parameters and forward FLOPs");
  command->add_option("--json", options->json_path, "Write the list as JSON to FILE (- for standard output)")
      ->type_name("FILE|-");
  command->callback([options] { run_models(*options); });
}

}  // namespace splitbrain::tools
