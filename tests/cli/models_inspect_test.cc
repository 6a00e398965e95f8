// `splitbrain models` and `splitbrain inspect` as a user runs them, and their JSON contracts.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {
namespace {

TEST(Cli, HelpListsTheSubcommands) {
  const CommandResult r = run_splitbrain("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("models"), std::string::npos);
  EXPECT_NE(r.out.find("inspect"), std::string::npos);
}

TEST(Cli, ModelsListsTheZooAsTextAndJson) {
  const CommandResult text = run_splitbrain("models");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("138,357,544"), std::string::npos);  // vgg16
  const CommandResult json = run_splitbrain("models --json -");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto document = nlohmann::json::parse(json.out);
  bool found_gpt3 = false;
  for (const auto& entry : document.at("models")) {
    EXPECT_GT(entry.at("params").get<int64_t>(), 0);
    EXPECT_GT(entry.at("flops_forward_per_sample").get<double>(), 0);
    found_gpt3 = found_gpt3 || entry.at("name") == "gpt3-175b";
  }
  EXPECT_TRUE(found_gpt3);
}

TEST(Cli, InspectJsonContract) {
  const CommandResult r = run_splitbrain("inspect --model vgg16 --batch 2 --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("params").get<int64_t>(), 138'357'544);
  // Whole-batch FLOPs: 2 images x about 31 GFLOP.
  EXPECT_NEAR(doc.at("flops_forward").get<double>() / (2 * 2 * 15.47e9), 1.0, 0.01);
  EXPECT_GT(doc.at("flops_backward").get<double>(), doc.at("flops_forward").get<double>());
  const auto& layers = doc.at("layers");
  ASSERT_FALSE(layers.empty());
  for (const auto& layer : layers) {
    for (const char* key : {"name", "op", "output_shape", "params", "flops_forward"}) {
      EXPECT_TRUE(layer.contains(key)) << key;
    }
  }
  EXPECT_EQ(layers.at(1).at("output_shape"), nlohmann::json::parse("[2, 64, 224, 224]"));
}

TEST(Cli, InspectWritesJsonFileAndSavesTheModel) {
  const std::string json_path = write_temp_file("inspect.json", "");
  const std::string model_path = write_temp_file("saved-model.json", "");
  const CommandResult r =
      run_splitbrain("inspect --model resnet18 --dtype bf16 --json " + json_path + " --save " + model_path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CommandResult again = run_splitbrain("inspect --model " + model_path + " --dtype bf16 --json -");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto first = nlohmann::json::parse(run_splitbrain("inspect --model resnet18 --dtype bf16 --json -").out);
  auto second = nlohmann::json::parse(again.out);
  EXPECT_EQ(first.at("layers"), second.at("layers"));
  EXPECT_EQ(first.at("params"), second.at("params"));
}

TEST(Cli, InspectTableHasTotals) {
  const CommandResult r = run_splitbrain("inspect --model fashion-vgg --batch 64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("total"), std::string::npos);
  EXPECT_NE(r.out.find("870,634"), std::string::npos);
}

TEST(Cli, HandWrittenModelFileMatchesTheZoo) {
  const std::string file = std::string(SPLITBRAIN_SOURCE_DIR) + "/model/examples/fashion-vgg.json";
  const auto from_file = nlohmann::json::parse(run_splitbrain("inspect --model " + file + " --batch 8 --json -").out);
  const auto from_zoo = nlohmann::json::parse(run_splitbrain("inspect --model fashion-vgg --batch 8 --json -").out);
  EXPECT_EQ(from_file, from_zoo);
}

}  // namespace
}  // namespace splitbrain::testing_support
