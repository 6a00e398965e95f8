// `splitbrain import` and `--model FILE.onnx` as users run them, on the nets
// tools/export_onnx_models.py exports at test time (ctest fixture `onnx_models`).

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {
namespace {

std::string exported(const std::string& file) { return std::string(SPLITBRAIN_ONNX_MODELS_DIR) + "/" + file; }

#define SKIP_WITHOUT_EXPORT(file)                                                                  \
  if (!std::filesystem::exists(exported(file))) {                                                  \
    GTEST_SKIP() << exported(file) << " was not exported: ctest's model_onnx_export makes it and " \
                 << "skips without python3-torch, python3-torchvision and python3-onnx";           \
  }

void expect_rejected(const CommandResult& r, const std::string& expected_message) {
  EXPECT_EQ(r.exit_code, 2) << "stdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(expected_message), std::string::npos) << "stderr: " << r.err;
}

TEST(CliOnnx, ImportWritesAModelFileThatInspectReads) {
  SKIP_WITHOUT_EXPORT("resnet18.onnx");
  const std::string json = std::filesystem::path(write_temp_file("resnet18.json", "")).string();
  const CommandResult r = run_splitbrain("import " + exported("resnet18.onnx") + " -o " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("11,689,512 parameters"), std::string::npos) << r.out;
  const CommandResult inspect = run_splitbrain("inspect --model " + json + " --json -");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_EQ(nlohmann::json::parse(inspect.out).at("params").get<int64_t>(), 11'689'512);
}

TEST(CliOnnx, PlanRanksPlansForAnOnnxModel) {
  SKIP_WITHOUT_EXPORT("resnet18.onnx");
  const CommandResult r = run_splitbrain("plan --model " + exported("resnet18.onnx") +
                                         " --cluster dgx-a100-80g --devices 2 --batch 64 --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto plans = nlohmann::json::parse(r.out).at("plans");
  ASSERT_GE(plans.size(), 2u);
  for (size_t i = 1; i < plans.size(); ++i) {
    if (plans[i].at("feasible") == plans[i - 1].at("feasible")) {
      EXPECT_GE(plans[i].at("iteration_seconds").get<double>(), plans[i - 1].at("iteration_seconds").get<double>());
    }
  }
}

TEST(CliOnnx, UnsupportedOpExitsTwoNamingTheNode) {
  SKIP_WITHOUT_EXPORT("unsupported.onnx");
  const CommandResult r = run_splitbrain("plan --model " + exported("unsupported.onnx") + " --devices 2 --batch 8");
  expect_rejected(r, exported("unsupported.onnx") + ": node '/Sin' (Sin): ONNX op 'Sin' is not supported");
}

TEST(CliOnnx, CorruptOrMissingFilesExitTwoNamingTheFile) {
  const std::string corrupt = write_temp_file("corrupt.onnx", "not a protobuf \xff\xff\xff\xff");
  expect_rejected(run_splitbrain("plan --model " + corrupt + " --devices 2 --batch 8"),
                  corrupt + ": not an ONNX model");
  expect_rejected(run_splitbrain("import /nonexistent/net.onnx -o -"), "/nonexistent/net.onnx: cannot open");
  expect_rejected(run_splitbrain("inspect --model /nonexistent/net.onnx"), "/nonexistent/net.onnx: cannot open");
}

TEST(CliOnnx, ImportToAnUnwritableFolderWritesNothing) {
  SKIP_WITHOUT_EXPORT("gpt.onnx");
  expect_rejected(run_splitbrain("import " + exported("gpt.onnx") + " -o /nonexistent/gpt.json"),
                  "/nonexistent/gpt.json");
}

}  // namespace
}  // namespace splitbrain::testing_support
