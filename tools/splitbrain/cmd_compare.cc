// `splitbrain compare PREDICTION.json MEASURED.json`: predicted and measured side by side.

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "model/errors.h"
#include "model/file_io.h"
#include "tools/splitbrain/commands.h"
#include "tools/splitbrain/comparison.h"
#include "tools/splitbrain/human_units.h"
#include "tools/splitbrain/text_table.h"

namespace splitbrain::tools {
namespace {

struct CompareOptions {
  std::string predicted;
  std::string measured;
  std::string out_dir;
};

nlohmann::json read_report(const std::string& path) {
  try {
    return nlohmann::json::parse(read_text_file(path));
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
}

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
  TextTable bytes({{"bytes sent per step", TextTable::Align::left}, {"predicted"}, {"measured"}, {"equal", TextTable::Align::left}});
  for (const ComparedValue& v : c.bytes) {
    bytes.add_row({v.name, with_thousands_separators(static_cast<int64_t>(v.predicted)),
                   with_thousands_separators(static_cast<int64_t>(v.measured)), v.predicted == v.measured ? "yes" : "NO"});
  }
  bytes.print(std::cout);
}

void run_compare(const CompareOptions& options) {
  const Comparison c = compare_reports(read_report(options.predicted), options.predicted, read_report(options.measured),
                                       options.measured);
  print(c);
  if (!options.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.out_dir, ec);
    if (ec) throw InputError(fmt::format("--out: cannot create {}: {}", options.out_dir, ec.message()));
    const auto path = std::filesystem::path(options.out_dir) / "comparison.json";
    write_json_output(path.string(), comparison_to_json(c));
    std::cout << "\nwrote " << path.string() << '\n';
  }
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* command = app.add_subcommand("compare", "Put a prediction (simulate --json) and a measurement (run --report) side by side");
  command->add_option("prediction", options->predicted, "Prediction report")->required()->type_name("PREDICTION.json");
  command->add_option("measurement", options->measured, "Measured report")->required()->type_name("MEASURED.json");
  command->add_option("--out", options->out_dir, "Write comparison.json into DIR")->type_name("DIR");
  command->callback([options] { run_compare(*options); });
}

}  // namespace splitbrain::tools
