#pragma once
// Each subcommand registers itself on the top-level CLI11 app. A command reports bad input by
// throwing splitbrain::InputError; main() turns that into exit code 2.

#include <CLI/CLI.hpp>

namespace splitbrain::tools {

void add_models_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_program_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_import_command(CLI::App& app);

}  // namespace splitbrain::tools
