// `splitbrain compare PREDICTION.json MEASURED.json`: predicted and measured side by side.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <filesystem>
#include <iostream>
#include <optional>

#include "model/errors.h"
#include "model/file_io.h"
#include "model/json_object_reader.h"
#include "model/output_files.h"
#include "tools/splitbrain/commands.h"
#include "tools/comparison/comparison.h"
#include "tools/comparison/host_level_comparison.h"
#include "tools/comparison/host_wait_comparison.h"
#include "tools/splitbrain/human_units.h"
#include "tools/comparison/merged_trace.h"
#include "tools/splitbrain/text_table.h"
#include "tools/comparison/trace_differences.h"
#include "tools/comparison/trace_reader.h"

namespace splitbrain::tools {
namespace {

struct CompareOptions {
  std::string predicted;
  std::string measured;
  std::string out_dir;
  std::string predicted_trace;
  std::string measured_trace;
  bool figures = true;
};

nlohmann::json read_report(const std::string& path) { return parse_json_strict(read_text_file(path), path); }

std::string percent(double error) { return fmt::format("{:+.1f}%", 100 * error); }

void print(const Comparison& c) {
  TextTable time({{"time", TextTable::Align::left}, {"predicted ms"}, {"measured ms"}, {"error"}});
  for (const ComparedValue& v : c.time) {
    time.add_row({v.name, fmt::format("{:.3f}", v.predicted * 1e3), fmt::format("{:.3f}", v.measured * 1e3),
                  v.measured > 0 ? percent(v.error()) : "-"});
  }
  time.print(std::cout);
  std::cout << '\n';
  TextTable memory({{"rank"}, {"memory", TextTable::Align::left}, {"predicted"}, {"measured"}, {"error"}});
  for (size_t r = 0; r < c.memory.size(); ++r) {
    for (const ComparedValue& v : c.memory[r]) {
      memory.add_row({std::to_string(r), v.name, human_bytes(v.predicted), human_bytes(v.measured),
                      v.measured > 0 ? percent(v.error()) : "-"});
    }
  }
  memory.print(std::cout);
  std::cout << '\n';
  TextTable bytes({{"bytes sent per step", TextTable::Align::left},
                   {"predicted"},
                   {"measured"},
                   {"equal", TextTable::Align::left}});
  for (const ComparedValue& v : c.bytes) {
    bytes.add_row({v.name, with_thousands_separators(static_cast<int64_t>(v.predicted)),
                   with_thousands_separators(static_cast<int64_t>(v.measured)),
                   v.predicted == v.measured ? "yes" : "NO"});
  }
  bytes.print(std::cout);
}

std::string level_list(const std::vector<std::string>& levels) {
  std::string text;
  for (const std::string& level : levels) text += (text.empty() ? "" : " + ") + level;
  return text.empty() ? "none" : text;
}

void print(const HostLevelComparison& c) {
  std::cout << '\n';
  if (!c.mapped) {
    std::cout << "bytes per level: not compared: " << c.why_not_mapped << '\n';
    return;
  }
  std::cout << fmt::format("bytes per level: within a host = the prediction's {}, across hosts = {}\n", c.inner_level,
                           level_list(c.outer_levels));
  TextTable table(
      {{"rank"}, {"level", TextTable::Align::left}, {"predicted"}, {"measured"}, {"equal", TextTable::Align::left}});
  for (size_t r = 0; r < c.ranks.size(); ++r) {
    for (const ComparedValue& v : c.ranks[r]) {
      table.add_row({std::to_string(r), v.name, with_thousands_separators(static_cast<int64_t>(v.predicted)),
                     with_thousands_separators(static_cast<int64_t>(v.measured)),
                     v.predicted == v.measured ? "yes" : "NO"});
    }
  }
  table.print(std::cout);
}

// The instructions of `from` that `other` lacks, as text.
std::string missing_from(const std::vector<int>& from, const std::vector<int>& other) {
  std::vector<int> missing;
  std::ranges::set_difference(from, other, std::back_inserter(missing));
  return fmt::format("{}", fmt::join(missing, ", "));
}

void print(const HostWaitComparison& c) {
  if (!c.compared) {
    if (!c.why_not.empty()) std::cout << "\nhost waits: not compared: " << c.why_not << '\n';
    return;
  }
  std::cout << '\n';
  std::cout << "host waits per step: the instructions (splitbrain program --plan P --rank R) in which the host "
               "waited for the device\n";
  TextTable table({{"rank"}, {"predicted"}, {"measured"}, {"equal", TextTable::Align::left}});
  for (const RankHostWaits& r : c.ranks) {
    table.add_row({std::to_string(r.rank), std::to_string(r.predicted.size()), std::to_string(r.measured.size()),
                   r.equal() ? "yes" : "NO"});
  }
  table.print(std::cout);
  for (const RankHostWaits& r : c.ranks) {
    if (r.equal()) continue;
    std::cout << fmt::format("rank {}: waited, not predicted: [{}]; predicted, did not wait: [{}]\n", r.rank,
                             missing_from(r.measured, r.predicted), missing_from(r.predicted, r.measured));
  }
}

// The instructions the time model misses most, by |predicted - measured| summed over micro-batches.
constexpr size_t kDifferencesShown = 10;

void print(const std::vector<InstructionDifference>& differences, std::optional<int64_t> median_steps) {
  const std::string measured = median_steps
                                   ? fmt::format("measured: the median over the run's {} timed steps", *median_steps)
                                   : "measured: the trace's one step";
  std::cout << fmt::format(
      "\nwhere predicted and measured differ most (each instruction's seconds per step, micro-batches together, the "
      "buckets' reductions left out; {}; all of them in comparison.json):\n",
      measured);
  TextTable table({{"rank"},
                   {"instruction", TextTable::Align::left},
                   {"predicted ms"},
                   {"measured ms"},
                   {"predicted - measured ms"}});
  for (size_t i = 0; i < std::min(kDifferencesShown, differences.size()); ++i) {
    const InstructionDifference& d = differences[i];
    table.add_row({std::to_string(d.rank), d.instruction, fmt::format("{:.3f}", d.predicted_seconds * 1e3),
                   fmt::format("{:.3f}", d.measured_seconds * 1e3),
                   fmt::format("{:+.3f}", d.difference_seconds() * 1e3)});
  }
  table.print(std::cout);
}

// Quotes a path for /bin/sh.
std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The figures are drawn by matplotlib (tools/figures/comparison_figures.py): a plotting library
// does that better than anything we would write here. Without it the comparison is still whole.
void draw_figures(const std::filesystem::path& dir) {
  const char* python_override = std::getenv("SPLITBRAIN_PYTHON");
  const std::string python = python_override != nullptr ? python_override : "/usr/bin/python3";
  const std::filesystem::path script =
      std::filesystem::path(SPLITBRAIN_SOURCE_DIR) / "tools/figures/comparison_figures.py";
  const std::string probe = shell_quoted(python) + " -c 'import matplotlib' > /dev/null 2>&1";
  if (!std::filesystem::exists(script) || std::system(probe.c_str()) != 0) {
    std::cout << fmt::format("figures skipped: needs {} with matplotlib (apt-get install python3-matplotlib) and {}\n",
                             python, script.string());
    return;
  }
  const std::string command =
      shell_quoted(python) + " " + shell_quoted(script.string()) + " " + shell_quoted(dir.string());
  std::cout << "figures:" << std::endl;  // flushed: the script writes to the same stdout
  if (std::system(command.c_str()) != 0)
    std::cout << "figures failed: see the message above (the comparison itself is written)\n";
}

// Both traces, each checked to be of its kind and of the prediction's plan, and what compare makes
// of them.
struct ComparedTraces {
  std::vector<InstructionDifference> differences;
  std::optional<int64_t> median_steps;
  nlohmann::ordered_json merged;
};

std::optional<ComparedTraces> compare_traces(const CompareOptions& options, const nlohmann::json& prediction) {
  if (options.predicted_trace.empty() || options.measured_trace.empty()) return std::nullopt;
  const nlohmann::json predicted = read_report(options.predicted_trace);
  const nlohmann::json measured = read_report(options.measured_trace);
  check_trace_of_plan(predicted, options.predicted_trace, TraceKind::predicted, prediction, options.predicted);
  check_trace_of_plan(measured, options.measured_trace, TraceKind::measured, prediction, options.predicted);
  return ComparedTraces{instruction_differences(predicted, options.predicted_trace, measured, options.measured_trace),
                        median_steps_of(measured, options.measured_trace),
                        merge_traces(predicted, options.predicted_trace, measured, options.measured_trace)};
}

void run_compare(const CompareOptions& options) {
  if (!options.out_dir.empty()) check_output_folder(options.out_dir, "--out");
  const nlohmann::json predicted = read_report(options.predicted);
  const nlohmann::json measured = read_report(options.measured);
  const Comparison c = compare_reports(predicted, options.predicted, measured, options.measured);
  const HostLevelComparison levels = compare_host_levels(predicted, options.predicted, measured, options.measured);
  const HostWaitComparison waits = compare_host_waits(predicted, options.predicted, measured, options.measured);
  const std::optional<ComparedTraces> traces = compare_traces(options, predicted);
  // Every input is read and checked before anything is written: a refusal leaves no output.
  const auto comparison_path = std::filesystem::path(options.out_dir) / "comparison.json";
  const auto trace_path = std::filesystem::path(options.out_dir) / "trace.json";
  if (!options.out_dir.empty()) {
    nlohmann::ordered_json document = comparison_to_json(c);
    document["bytes_per_host_level"] = host_level_comparison_to_json(levels);
    document["host_waits"] = host_wait_comparison_to_json(waits);
    if (traces) document["instructions"] = instruction_differences_to_json(traces->differences);
    OutputFiles outputs;  // both or neither
    outputs.add_json("--out", comparison_path.string(), document);
    if (traces) outputs.add_json("--out", trace_path.string(), traces->merged);
    outputs.write_all();
  }
  print(c);
  print(levels);
  print(waits);
  if (traces) print(traces->differences, traces->median_steps);
  if (!options.out_dir.empty()) {
    std::cout << "\nwrote " << comparison_path.string() << '\n';
    if (traces) std::cout << "wrote " << trace_path.string() << " (predicted and measured timelines side by side)\n";
    if (options.figures) draw_figures(options.out_dir);
  }
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* command =
      app.add_subcommand("compare", "Put a prediction (simulate --json) and a measurement (run --report) side by side");
  command->add_option("prediction", options->predicted, "Prediction report")->required()->type_name("PREDICTION.json");
  command->add_option("measurement", options->measured, "Measured report")->required()->type_name("MEASURED.json");
  command
      ->add_option("--out", options->out_dir, "Write comparison.json, figures (PNG, SVG) and the merged trace into DIR")
      ->type_name("DIR");
  CLI::Option* predicted_trace =
      command
          ->add_option("--predicted-trace", options->predicted_trace,
                       "Predicted Chrome trace (simulate --trace): with --measured-trace, the instructions that differ "
                       "most, and the two traces merged into DIR")
          ->type_name("FILE")
          ->check(CLI::ExistingFile);
  CLI::Option* measured_trace =
      command->add_option("--measured-trace", options->measured_trace, "Measured Chrome trace (run --trace)")
          ->type_name("FILE")
          ->check(CLI::ExistingFile);
  predicted_trace->needs(measured_trace);
  measured_trace->needs(predicted_trace);
  command->add_flag("!--no-figures", options->figures, "Do not draw the figures (they need python3-matplotlib)");
  command->callback([options] { run_compare(*options); });
}

}  // namespace splitbrain::tools
