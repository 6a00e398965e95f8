// Output paths and inputs found bad before the work, and outputs written all or none: a command
// that exits 2 leaves none of the files it was asked for (not the ones it wrote before the bad
// one), and says so before a search or a calibration rather than after it.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {
namespace {

namespace fs = std::filesystem;

const std::string kSource = SPLITBRAIN_SOURCE_DIR;
const std::string kPlan = kSource + "/plans/examples/fashion-vgg-data-parallel-2.json";
const std::string kPlanCommand = "plan --model fashion-vgg --devices 2 --batch 64";

// A fresh, empty folder of its own for each test.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("splitbrain_outputs_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void expect_rejected(const CommandResult& r, const std::string& expected_message) {
  EXPECT_EQ(r.exit_code, 2) << "stdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(expected_message), std::string::npos) << "stderr: " << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << "stderr: " << r.err;
}

// The folder holds nothing: no output, no temporary or probe file.
void expect_empty(const fs::path& dir) {
  std::vector<std::string> left;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) left.push_back(entry.path().string());
  EXPECT_TRUE(left.empty()) << "left behind: " << (left.empty() ? "" : left.front());
}

// The planner reports its search on stderr as "[plan] ..." lines: none means it never ran.
void expect_no_search(const CommandResult& r) {
  EXPECT_EQ(r.err.find("[plan] "), std::string::npos) << "the search ran first:\n" << r.err;
}

TEST(CliBadInputOutputs, PlanWithAnUnwritableCsvLeavesNoJson) {
  const fs::path dir = fresh_dir("plan-csv");
  const std::string csv = (dir / "no" / "r.csv").string();
  const CommandResult r = run_splitbrain(kPlanCommand + " --json " + (dir / "r.json").string() + " --csv " + csv);
  expect_rejected(r, "--csv " + csv + ": folder " + (dir / "no").string() + " does not exist");
  expect_no_search(r);
  expect_empty(dir);
}

TEST(CliBadInputOutputs, PlanWithAnExportThatCannotBeWrittenLeavesNoJsonNorEmittedPlans) {
  // Megatron-LM builds GPTs only: every ranked plan of a VGG is refused after the search.
  const fs::path dir = fresh_dir("plan-export");
  const CommandResult r = run_splitbrain(kPlanCommand + " --export megatron --export-dir " + (dir / "e").string() +
                                         " --json " + (dir / "r.json").string() + " --csv " + (dir / "r.csv").string() +
                                         " --emit-plans " + (dir / "plans").string());
  expect_rejected(r, "--export megatron: no ranked plan that fits can be expressed");
  expect_empty(dir);
}

TEST(CliBadInputOutputs, PlanOutputPathsAreCheckedBeforeTheSearch) {
  const fs::path dir = fresh_dir("plan-paths");
  const std::string file = write_temp_file("a-file.txt", "not a folder");
  {
    const std::string json = (dir / "missing" / "r.json").string();
    const CommandResult r = run_splitbrain(kPlanCommand + " --json " + json);
    expect_rejected(r, "--json " + json + ": folder " + (dir / "missing").string() + " does not exist");
    expect_no_search(r);
  }
  {
    const CommandResult r = run_splitbrain(kPlanCommand + " --json " + dir.string());
    expect_rejected(r, "--json " + dir.string() + ": is a folder, not a file");
    expect_no_search(r);
  }
  {
    const CommandResult r = run_splitbrain(kPlanCommand + " --emit-plans " + file);
    expect_rejected(r, "--emit-plans " + file + ": is a file, not a folder");
    expect_no_search(r);
  }
  {
    const std::string below_a_file = file + "/e";
    const CommandResult r = run_splitbrain(kPlanCommand + " --export torchrun --export-dir " + below_a_file);
    expect_rejected(r, "--export-dir " + below_a_file + ": " + file + " is a file, not a folder");
    expect_no_search(r);
  }
  expect_empty(dir);
}

TEST(CliBadInputOutputs, PlanWritesEveryOutputWhenAllCanBeWritten) {
  const fs::path dir = fresh_dir("plan-all");
  const CommandResult r = run_splitbrain(kPlanCommand + " --json " + (dir / "r.json").string() + " --csv " +
                                         (dir / "r.csv").string() + " --emit-plans " + (dir / "a" / "plans").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(dir / "r.json"));
  EXPECT_TRUE(fs::is_regular_file(dir / "r.csv"));
  EXPECT_FALSE(fs::is_empty(dir / "a" / "plans")) << "the emitted plans' folder is made, parents too";
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    EXPECT_EQ(entry.path().string().find(".partial."), std::string::npos) << entry.path();
  }
}

TEST(CliBadInputOutputs, SimulateWithAnUnwritableJsonLeavesNoTrace) {
  const fs::path dir = fresh_dir("simulate");
  const std::string json = (dir / "no" / "p.json").string();
  const CommandResult r =
      run_splitbrain("simulate --plan " + kPlan + " --trace " + (dir / "t.json").string() + " --json " + json);
  expect_rejected(r, "--json " + json + ": folder");
  expect_empty(dir);
}

TEST(CliBadInputOutputs, InspectWithAnUnwritableJsonLeavesNoSavedModel) {
  const fs::path dir = fresh_dir("inspect");
  const std::string json = (dir / "no" / "s.json").string();
  const CommandResult r =
      run_splitbrain("inspect --model fashion-vgg --save " + (dir / "m.json").string() + " --json " + json);
  expect_rejected(r, "--json " + json + ": folder");
  expect_empty(dir);
}

TEST(CliBadInputOutputs, ExportIntoAFileNamesTheFlag) {
  const std::string file = write_temp_file("export-target.txt", "not a folder");
  expect_rejected(run_splitbrain("export --plan " + kPlan + " --format deepspeed -o " + file),
                  "--output-dir " + file + ": is a file, not a folder");
}

// calibrate measures for minutes before it writes: its inputs and its --out are checked first.
// Each case must fail well within the time a real calibration takes.
class CliCalibrateChecksFirst : public ::testing::Test {
 protected:
  void SetUp() override {
    // calibrate starts MPI even without mpirun; Open MPI refuses root unless told.
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  }

  void expect_refused_at_once(const std::string& arguments, const std::string& expected_message) {
    const auto start = std::chrono::steady_clock::now();
    const CommandResult r = run_splitbrain("calibrate --no-bind " + arguments);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    expect_rejected(r, expected_message);
    EXPECT_EQ(r.out.find("[calibrate] kernels"), std::string::npos) << "measured first:\n" << r.out;
    EXPECT_LT(seconds, 60.0) << "refused only after measuring";
  }
};

TEST_F(CliCalibrateChecksFirst, OutInAMissingFolder) {
  const fs::path dir = fresh_dir("calibrate-out");
  const std::string out = (dir / "no" / "c.json").string();
  expect_refused_at_once("--out " + out, "--out " + out + ": folder " + (dir / "no").string() + " does not exist");
  expect_empty(dir);
}

TEST_F(CliCalibrateChecksFirst, OutOntoAFolder) {
  const fs::path dir = fresh_dir("calibrate-out-folder");
  expect_refused_at_once("--out " + dir.string(), "--out " + dir.string() + ": is a folder, not a file");
}

TEST_F(CliCalibrateChecksFirst, MissingModelFile) {
  const fs::path dir = fresh_dir("calibrate-model");
  const std::string model = (dir / "missing.json").string();
  expect_refused_at_once("--out " + (dir / "c.json").string() + " --model " + model, "--model " + model + ": ");
  expect_empty(dir);
}

TEST_F(CliCalibrateChecksFirst, ZooModelWithoutLayers) {
  const fs::path dir = fresh_dir("calibrate-zoo");
  expect_refused_at_once("--out " + (dir / "c.json").string() + " --model gpt:layers=0", "--model gpt:layers=0: ");
  expect_empty(dir);
}

TEST_F(CliCalibrateChecksFirst, GarbageOnnxFile) {
  const fs::path dir = fresh_dir("calibrate-onnx");
  const std::string onnx = write_temp_file("garbage.onnx", "this is not a protobuf");
  expect_refused_at_once("--out " + (dir / "c.json").string() + " --model " + onnx, "--model " + onnx + ": ");
  expect_empty(dir);
}

}  // namespace
}  // namespace splitbrain::testing_support
