// Bad inputs found by a mutation fuzz of the command line, one test per cause: numbers beyond
// double's range and nesting without end in every JSON reader, reports that are not reports, a
// mistyped command, a flag that needs another. Each exits 2 naming the file or flag and the
// field, and writes nothing.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {
namespace {

const std::string kSource = SPLITBRAIN_SOURCE_DIR;
const std::string kPlan = kSource + "/plans/examples/fashion-vgg-data-parallel-2.json";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void expect_rejected(const CommandResult& r, const std::string& expected_message) {
  EXPECT_EQ(r.exit_code, 2) << "stdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(expected_message), std::string::npos) << "stderr: " << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << "stderr: " << r.err;
}

// `text` with its first `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(CliBadInputCauses, NumbersBeyondDoublesRangeNameTheirField) {
  const std::string plan = read_file(kPlan);
  for (const std::string& number : {std::string("1e999"), std::string("-1e999"), std::string(400, '9')}) {
    const std::string path =
        write_temp_file("huge-batch.json", replaced(plan, "\"batch\": 128", "\"batch\": " + number));
    expect_rejected(run_splitbrain("simulate --plan " + path), path + ": batch: number out of range");
  }
  const std::string model = write_temp_file(
      "huge-shape.json",
      R"({"format": "splitbrain-model", "version": 1, "name": "m", "layers": [{"name": "data", "op": "input", "shape": [3, 1e999]}]})");
  expect_rejected(run_splitbrain("inspect --model " + model), model + ": layers[0].shape[1]: number out of range");
  const std::string cluster = write_temp_file(
      "huge-cluster.json", replaced(read_file(kSource + "/sim/clusters/local-cpu.json"), "12000000000", "-1e999"));
  expect_rejected(run_splitbrain("simulate --plan " + kPlan + " --cluster " + cluster),
                  cluster + ": device.memory_capacity_bytes: number out of range");
}

TEST(CliBadInputCauses, ClusterValuesThatMakeACostNonFiniteNameTheirField) {
  const std::string local = read_file(kSource + "/sim/clusters/local-cpu.json");
  const std::string latency =
      write_temp_file("latency.json", replaced(local, "\"latency_seconds\": 1e-6", "\"latency_seconds\": 1e308"));
  expect_rejected(run_splitbrain("simulate --plan " + kPlan + " --cluster " + latency),
                  latency + ": levels[0].link.latency_seconds: must be between 0 and 1e+06");
  const std::string flops = write_temp_file("flops.json", replaced(local, "\"fp32\": 75e9", "\"fp32\": 5e-324"));
  expect_rejected(run_splitbrain("simulate --plan " + kPlan + " --cluster " + flops),
                  flops + ": device.peak_flops_per_second.fp32: must be between 1 and 1e+21");
}

TEST(CliBadInputCauses, TooFewDevicesNameTheClusterFileAndCountInWords) {
  const std::string one = write_temp_file(
      "one-device.json",
      replaced(read_file(kSource + "/sim/clusters/local-cpu.json"), "\"levels\"", "\"placement\": [0], \"levels\""));
  expect_rejected(
      run_splitbrain("simulate --plan " + kPlan + " --cluster " + one),
      "--cluster " + one + ": cluster 'local-cpu' places ranks on 1 device but the plan's mesh {data: 2} needs 2");
}

TEST(CliBadInputCauses, SizesBeyond64BitsAreRefusedNamingTheLayer) {
  const std::string out = (std::filesystem::temp_directory_path() / "overflow-stats.json").string();
  std::filesystem::remove(out);
  const std::string shape =
      write_temp_file("huge-shape.json", R"({"format": "splitbrain-model", "version": 1, "name": "m", "layers": [
        {"name": "data", "op": "input", "shape": [3, 4294967296, 4294967296]}]})");
  expect_rejected(
      run_splitbrain("inspect --model " + shape + " --json " + out),
      shape + ": layer 'data': size: shape [3, 4294967296, 4294967296] has more elements than fit in 64 bits");
  const std::string weights =
      write_temp_file("huge-weights.json", R"({"format": "splitbrain-model", "version": 1, "name": "m", "layers": [
        {"name": "data", "op": "input", "shape": [4294967296]}, {"name": "fc", "op": "linear", "out_features": 4294967296}]})");
  expect_rejected(run_splitbrain("inspect --model " + weights + " --json " + out),
                  weights + ": layer 'fc': size: parameters: 4294967296 x 4294967296 does not fit in 64 bits");
  // A batch whose bytes overflow, of a model whose sizes alone do not.
  const std::string plan = write_temp_file(
      "huge-batch-bytes.json", replaced(read_file(kPlan), "\"batch\": 128", "\"batch\": 4611686018427387904"));
  expect_rejected(run_splitbrain("simulate --plan " + plan + " --json " + out),
                  plan + ": batch: 4611686018427387904 samples of layer");
  EXPECT_FALSE(std::filesystem::exists(out)) << "a refused command left " << out;
}

TEST(CliBadInputCauses, ResourceLimitsAreCheckedBeforeWork) {
  // Refused at once, instead of searching the whole mesh space and running out of memory.
  const CommandResult devices = run_splitbrain("plan --model vgg11 --devices 1000000000 --batch 64");
  EXPECT_EQ(devices.exit_code, 2) << devices.err;
  EXPECT_NE(devices.err.find("--devices"), std::string::npos) << devices.err;
  EXPECT_NE(devices.err.find("1048576"), std::string::npos) << devices.err;
}

TEST(CliBadInputCauses, NestingWithoutEndIsRefusedBeforeItIsRead) {
  const std::string deep = std::string(50000, '[') + std::string(50000, ']');
  const std::string plan = replaced(read_file(kPlan), "\"family\"", "\"notes\": " + deep + ", \"family\"");
  const std::string path = write_temp_file("deep.json", plan);
  expect_rejected(run_splitbrain("simulate --plan " + path), "nested deeper than 64 levels");
}

TEST(CliBadInputCauses, CompareNamesTheFieldAReportLacksOrMistypes) {
  const std::string predicted = write_temp_file("predicted.json", "");
  ASSERT_EQ(run_splitbrain("simulate --plan " + kPlan + " --json " + predicted).exit_code, 0);
  // A measurement with the prediction's numbers: what compare reads of both is the same.
  nlohmann::json measured = nlohmann::json::parse(read_file(predicted));
  measured["format"] = "splitbrain-measurement";
  measured["steps"] = 10;  // a run report says how many steps it took
  const std::string good = write_temp_file("measured.json", measured.dump());
  ASSERT_EQ(run_splitbrain("compare --no-figures " + predicted + " " + good).exit_code, 0);

  nlohmann::json missing = measured;
  missing["phases"].erase("bubble");
  const std::string lacking = write_temp_file("lacking.json", missing.dump());
  expect_rejected(run_splitbrain("compare --no-figures " + predicted + " " + lacking),
                  lacking + ": phases.bubble: missing");

  nlohmann::json mistyped = measured;
  mistyped["ranks"][1]["memory"]["grads"] = "many";
  const std::string wrong = write_temp_file("mistyped.json", mistyped.dump());
  expect_rejected(run_splitbrain("compare --no-figures " + predicted + " " + wrong),
                  wrong + ": ranks[1].memory.grads: expected a number, got string");

  nlohmann::json not_ranks = measured;
  not_ranks["ranks"] = 3;
  const std::string scalar = write_temp_file("scalar-ranks.json", not_ranks.dump());
  expect_rejected(run_splitbrain("compare --no-figures " + predicted + " " + scalar),
                  scalar + ": ranks: expected an array");
}

TEST(CliBadInputCauses, CompareOfVanishingValuesStaysFinite) {
  const std::string predicted = write_temp_file("predicted-tiny.json", "");
  ASSERT_EQ(run_splitbrain("simulate --plan " + kPlan + " --json " + predicted).exit_code, 0);
  nlohmann::json measured = nlohmann::json::parse(read_file(predicted));
  measured["format"] = "splitbrain-measurement";
  measured["steps"] = 10;  // a run report says how many steps it took
  measured["phases"]["optimizer"] = 5e-324;
  measured["ranks"][0]["memory"]["activations"] = 5e-324;
  const std::string tiny = write_temp_file("tiny.json", measured.dump());
  const std::string out = (std::filesystem::temp_directory_path() / "compare-tiny").string();
  std::filesystem::remove_all(out);
  const CommandResult r = run_splitbrain("compare --no-figures --out " + out + " " + predicted + " " + tiny);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("nan"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("inf"), std::string::npos) << r.out;
  const std::string comparison = read_file(out + "/comparison.json");
  EXPECT_EQ(comparison.find("null"), std::string::npos) << comparison;
}

TEST(CliBadInputCauses, AMistypedCommandIsNamedWithASuggestion) {
  const CommandResult r = run_splitbrain("simulte --plan " + kPlan);
  expect_rejected(r, "unknown command 'simulte' (did you mean 'simulate'?)");
  expect_rejected(run_splitbrain("deploy"), "unknown command 'deploy'; the commands are models, inspect, plan");
}

TEST(CliBadInputCauses, AFlagThatNeedsAnotherSaysSo) {
  const CommandResult r = run_splitbrain("run --plan " + kPlan + " --data synthetic --checkpoint-every 5");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--checkpoint-every requires --checkpoint"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace splitbrain::testing_support
