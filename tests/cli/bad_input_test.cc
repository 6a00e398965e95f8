// Bad input of every kind exits 2 with a message that names the file, the layer and the field;
// never a crash, never a silent default.

#include <gtest/gtest.h>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {
namespace {

void expect_rejected(const CommandResult& r, const std::string& expected_message) {
  EXPECT_EQ(r.exit_code, 2) << "stdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(expected_message), std::string::npos) << "stderr: " << r.err;
  EXPECT_TRUE(r.out.empty()) << "stdout: " << r.out;
}

std::string model_file(const std::string& name, const std::string& layers) {
  return write_temp_file(name,
                         R"({"format": "splitbrain-model", "version": 1, "name": "bad", "layers": )" + layers + "}");
}

TEST(CliBadInput, MalformedJson) {
  const std::string path = write_temp_file("malformed.json", "{\"format\": \"splitbrain-model\",\n \"layers\": [,]}");
  expect_rejected(run_splitbrain("inspect --model " + path), path + ":2:");
}

TEST(CliBadInput, UnknownOp) {
  const std::string path = model_file("unknown-op.json", R"([{"name": "data", "op": "input", "shape": [4]},
      {"name": "mystery", "op": "warp"}])");
  expect_rejected(run_splitbrain("inspect --model " + path), path + ": layer 'mystery': op: unknown op 'warp'");
}

TEST(CliBadInput, UnknownKey) {
  const std::string path = model_file("unknown-key.json", R"([{"name": "data", "op": "input", "shape": [4]},
      {"name": "fc", "op": "linear", "out_features": 3, "out_feature": 3}])");
  expect_rejected(run_splitbrain("inspect --model " + path), path + ": layer 'fc': out_feature: unknown key");
}

TEST(CliBadInput, ZeroSize) {
  const std::string path = model_file("zero.json", R"([{"name": "data", "op": "input", "shape": [3, 32, 0]}])");
  expect_rejected(run_splitbrain("inspect --model " + path), path + ": layer 'data': shape: must be positive, got 0");
}

TEST(CliBadInput, NegativeSize) {
  const std::string path = model_file("negative.json", R"([{"name": "data", "op": "input", "shape": [3, 8, 8]},
      {"name": "pool", "op": "maxpool", "kernel": 2, "stride": -2}])");
  expect_rejected(run_splitbrain("inspect --model " + path), path + ": layer 'pool': stride: must be positive");
}

TEST(CliBadInput, LinearInputMismatch) {
  const std::string path = model_file("linear.json", R"([{"name": "data", "op": "input", "shape": [1, 28, 28]},
      {"name": "flat", "op": "flatten"}, {"name": "fc", "op": "linear", "in_features": 512, "out_features": 10}])");
  expect_rejected(run_splitbrain("inspect --model " + path),
                  path + ": layer 'fc': in_features: is 512 but the input 'flat' has 784 features");
}

TEST(CliBadInput, KernelLargerThanInput) {
  const std::string path = model_file("kernel.json", R"([{"name": "data", "op": "input", "shape": [1, 4, 4]},
      {"name": "conv", "op": "conv2d", "out_channels": 8, "kernel": 5}])");
  expect_rejected(run_splitbrain("inspect --model " + path), path + ": layer 'conv': kernel: window of 5 does not fit");
}

TEST(CliBadInput, Cycle) {
  const std::string path = model_file("cycle.json", R"([{"name": "data", "op": "input", "shape": [4]},
      {"name": "a", "op": "add", "inputs": ["data", "c"]}, {"name": "b", "op": "relu", "inputs": ["a"]},
      {"name": "c", "op": "relu", "inputs": ["b"]}])");
  expect_rejected(run_splitbrain("inspect --model " + path), "inputs: is part of a cycle: a -> b -> c");
}

TEST(CliBadInput, MissingFile) {
  expect_rejected(run_splitbrain("inspect --model /nonexistent/model.json"), "/nonexistent/model.json: cannot open");
}

TEST(CliBadInput, UnknownModelName) {
  expect_rejected(run_splitbrain("inspect --model vgg99"), "model 'vgg99' is neither a zoo model");
}

TEST(CliBadInput, UnknownZooOption) {
  expect_rejected(run_splitbrain("inspect --model gpt:depth=2"), "zoo model 'gpt': unknown option 'depth'");
}

TEST(CliBadInput, UnknownFlagAndExtraArgument) {
  EXPECT_EQ(run_splitbrain("inspect --model vgg11 --colour red").exit_code, 2);
  EXPECT_EQ(run_splitbrain("inspect --model vgg11 extra").exit_code, 2);
  EXPECT_EQ(run_splitbrain("frobnicate").exit_code, 2);
  EXPECT_EQ(run_splitbrain("").exit_code, 2);
}

TEST(CliBadInput, BadBatchAndDtype) {
  EXPECT_EQ(run_splitbrain("inspect --model vgg11 --batch 0").exit_code, 2);
  EXPECT_EQ(run_splitbrain("inspect --model vgg11 --batch -3").exit_code, 2);
  EXPECT_EQ(run_splitbrain("inspect --model vgg11 --dtype fp64").exit_code, 2);
}

TEST(CliBadInput, UnwritableOutputLeavesNothingBehind) {
  const CommandResult r = run_splitbrain("inspect --model vgg11 --json /nonexistent/dir/out.json");
  expect_rejected(r, "--json /nonexistent/dir/out.json: folder /nonexistent/dir does not exist");
}

}  // namespace
}  // namespace splitbrain::testing_support
