// The `splitbrain` command: subcommands register in commands.h; this file only parses and maps
// failures to exit codes (0 ok, 1 internal error, 2 bad input: flag, file, model, plan, cluster).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "model/errors.h"
#include "model/onnx/onnx_import.h"
#include "tools/splitbrain/closest_word.h"
#include "tools/splitbrain/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "splitbrain: plan, simulate and run hybrid data/model/pipeline/spatial-parallel training.\n"
      "Models are zoo names (see `splitbrain models`, options as name:key=value,...), JSON model files or\n"
      "ONNX files (.onnx)."};
  // Every command that takes a model reads .onnx files through the one model resolver.
  splitbrain::model::register_onnx_model_reader();
  app.set_version_flag("--version", "splitbrain 0.1.0");
  app.require_subcommand(1);
  splitbrain::tools::add_models_command(app);
  splitbrain::tools::add_inspect_command(app);
  splitbrain::tools::add_plan_command(app);
  splitbrain::tools::add_export_command(app);
  splitbrain::tools::add_simulate_command(app);
  splitbrain::tools::add_program_command(app);
  splitbrain::tools::add_run_command(app);
  splitbrain::tools::add_compare_command(app);
  splitbrain::tools::add_calibrate_command(app);
  splitbrain::tools::add_import_command(app);

  // CLI11 would only say a subcommand is required: name the word it did not know.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> commands;
    for (const CLI::App* command : app.get_subcommands({})) commands.push_back(command->get_name());
    const std::string word = argv[1];
    if (std::find(commands.begin(), commands.end(), word) == commands.end()) {
      const auto suggestion = splitbrain::tools::closest_word(word, commands);
      std::cerr << fmt::format("splitbrain: error: unknown command '{}'{}; the commands are {}\n", word,
                               suggestion ? fmt::format(" (did you mean '{}'?)", *suggestion) : "",
                               fmt::join(commands, ", "));
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, version, or the parse error
    return code == 0 ? 0 : 2;
  } catch (const splitbrain::InputError& e) {
    std::cerr << fmt::format("splitbrain: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::cerr << fmt::format("splitbrain: internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}
