// The JSON model format: exact save/load round trips, hand-written files against the zoo, and
// errors that name the file, the layer and the field.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "model/errors.h"
#include "model/model_json.h"
#include "model/statistics.h"
#include "model/zoo.h"

namespace splitbrain::model {
namespace {

const std::string kExamples = std::string(SPLITBRAIN_SOURCE_DIR) + "/model/examples/";

void expect_same_graph(const Model& a, const Model& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.name(), b.name());
  for (int i = 0; i < a.size(); ++i) {
    const Layer& x = a.layer(i);
    const Layer& y = b.layer(i);
    SCOPED_TRACE(x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.attrs, y.attrs);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.consumers, y.consumers);
    EXPECT_EQ(x.output_shape, y.output_shape);
    EXPECT_EQ(x.output_is_tokens, y.output_is_tokens);
    EXPECT_EQ(x.needs_input_gradient, y.needs_input_gradient);
    EXPECT_EQ(x.cost, y.cost);
  }
}

TEST(ModelJson, EveryZooModelRoundTripsExactly) {
  for (const ZooEntry& entry : zoo_entries()) {
    SCOPED_TRACE(entry.name);
    const Model original = build_zoo_model(entry.name);
    const Model reloaded = model_from_json(nlohmann::json::parse(model_to_json(original).dump()), "roundtrip.json");
    expect_same_graph(original, reloaded);
  }
}

TEST(ModelJson, SaveThenLoadFileIsIdentical) {
  const auto path = std::filesystem::temp_directory_path() / "splitbrain_roundtrip_resnet18.json";
  const Model original = build_zoo_model("resnet18");
  save_model_file(original, path);
  expect_same_graph(original, load_model_file(path));
  std::filesystem::remove(path);
}

TEST(ModelJson, HandWrittenFileGivesTheZooNumbers) {
  // model/examples/fashion-vgg.json was written by hand, with defaults and implicit inputs.
  const Model from_file = load_model_file(kExamples + "fashion-vgg.json");
  const Model from_zoo = build_zoo_model("fashion-vgg");
  expect_same_graph(from_zoo, from_file);
  const ModelStatistics a = compute_statistics(from_zoo, 32, DType::fp32);
  const ModelStatistics b = compute_statistics(from_file, 32, DType::fp32);
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.forward_flops, b.forward_flops);
  EXPECT_EQ(a.backward_flops, b.backward_flops);
  EXPECT_EQ(a.saved_bytes, b.saved_bytes);
}

TEST(ModelJson, ResidualExampleIsADag) {
  const Model net = load_model_file(kExamples + "residual-block.json");
  const Layer& sum = net.layer(net.find("sum"));
  EXPECT_EQ(sum.inputs.size(), 2u);
  EXPECT_EQ(net.layer(net.find("data")).consumers.size(), 2u);
  // conv 3x3 16->32, conv 3x3 32->32, 1x1 shortcut 16->32, three batchnorms, fc 32->10.
  EXPECT_EQ(net.parameter_count(), 16 * 32 * 9 + 32 * 32 * 9 + 16 * 32 + 3 * 64 + 32 * 10 + 10);
}

TEST(ModelJson, LayersMayBeListedOutOfOrder) {
  const auto document = nlohmann::json::parse(R"({"format": "splitbrain-model", "version": 1, "name": "shuffled",
    "layers": [{"name": "fc", "op": "linear", "inputs": ["flat"], "out_features": 4},
               {"name": "flat", "op": "flatten", "inputs": ["data"]},
               {"name": "data", "op": "input", "shape": [2, 3]}]})");
  const Model net = model_from_json(document, "shuffled.json");
  EXPECT_EQ(net.layer(0).name, "data");
  EXPECT_EQ(net.layer(2).name, "fc");
  EXPECT_EQ(net.layer(2).output_shape, (Shape{4}));
}

// Bad input: each case must fail with a message naming file, layer and field.
struct BadModel {
  const char* what;
  const char* layers;  // the "layers" array of an otherwise valid document
  const char* expect;  // a substring the message must contain
};

class BadModelFile : public testing::TestWithParam<BadModel> {};

TEST_P(BadModelFile, IsRejectedWithAClearMessage) {
  const std::string text = std::string(R"({"format": "splitbrain-model", "version": 1, "name": "bad", "layers": )") +
                           GetParam().layers + "}";
  try {
    model_from_json(nlohmann::json::parse(text), "bad.json");
    FAIL() << "accepted: " << GetParam().what;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(GetParam().expect), std::string::npos) << e.what();
  }
}

constexpr const char* kData = R"({"name": "data", "op": "input", "shape": [3, 8, 8]})";

INSTANTIATE_TEST_SUITE_P(
    Cases, BadModelFile,
    testing::Values(
        BadModel{"unknown op", R"([{"name": "data", "op": "input", "shape": [4]}, {"name": "x", "op": "conv3d"}])",
                 "layer 'x': op: unknown op 'conv3d'"},
        BadModel{"unknown key", R"([{"name": "data", "op": "input", "shape": [4], "colour": 1}])",
                 "layer 'data': colour: unknown key"},
        BadModel{"zero size", R"([{"name": "data", "op": "input", "shape": [3, 0, 8]}])",
                 "layer 'data': shape: must be positive, got 0"},
        BadModel{
            "negative channels",
            R"([{"name": "data", "op": "input", "shape": [3, 8, 8]}, {"name": "c", "op": "conv2d", "out_channels": -4, "kernel": 3}])",
            "layer 'c': out_channels: must be positive, got -4"},
        BadModel{
            "linear input mismatch",
            R"([{"name": "data", "op": "input", "shape": [12]}, {"name": "fc", "op": "linear", "in_features": 10, "out_features": 2}])",
            "layer 'fc': in_features: is 10 but the input 'data' has 12 features"},
        BadModel{
            "kernel larger than input",
            R"([{"name": "data", "op": "input", "shape": [3, 8, 8]}, {"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 11}])",
            "layer 'c': kernel: window of 11 does not fit the input height of 8"},
        BadModel{"cycle",
                 R"([{"name": "data", "op": "input", "shape": [4]}, {"name": "a", "op": "add", "inputs": ["data", "b"]},
                     {"name": "b", "op": "relu", "inputs": ["a"]}])",
                 "is part of a cycle"},
        BadModel{"self loop",
                 R"([{"name": "data", "op": "input", "shape": [4]}, {"name": "r", "op": "relu", "inputs": ["r"]}])",
                 "layer 'r': inputs: is part of a cycle"},
        BadModel{"unknown input",
                 R"([{"name": "data", "op": "input", "shape": [4]}, {"name": "r", "op": "relu", "inputs": ["nope"]}])",
                 "layer 'r': inputs: no layer is named 'nope'"},
        BadModel{"duplicate name", R"([{"name": "data", "op": "input", "shape": [4]}, {"name": "data", "op": "relu"}])",
                 "layer 'data': name: is used by more than one layer"},
        BadModel{"wrong type", R"([{"name": "data", "op": "input", "shape": "big"}])",
                 "layer 'data': shape: expected a list of integers"},
        BadModel{"missing field",
                 R"([{"name": "data", "op": "input", "shape": [3, 8, 8]}, {"name": "c", "op": "conv2d", "kernel": 3}])",
                 "layer 'c': out_channels: missing required field"},
        BadModel{"add shape mismatch",
                 R"([{"name": "data", "op": "input", "shape": [4]}, {"name": "fc", "op": "linear", "out_features": 5},
                     {"name": "s", "op": "add", "inputs": ["data", "fc"]}])",
                 "layer 's': inputs: all inputs must have one shape"},
        BadModel{
            "conv on flat input",
            R"([{"name": "data", "op": "input", "shape": [4]}, {"name": "c", "op": "conv2d", "out_channels": 2, "kernel": 1}])",
            "layer 'c': inputs: needs a [C, H, W] input"},
        BadModel{
            "dropout probability",
            R"([{"name": "data", "op": "input", "shape": [4]}, {"name": "d", "op": "dropout", "probability": 1.5}])",
            "layer 'd': probability: must be in [0, 1)"},
        BadModel{"empty model", "[]", "layers: the model has no layers"},
        BadModel{"layers not a list", R"({"a": 1})", "layers"}),
    [](const testing::TestParamInfo<BadModel>& case_info) {
      std::string name = case_info.param.what;
      std::replace(name.begin(), name.end(), ' ', '_');
      return name;
    });

TEST(ModelJson, RejectsWrongFormatAndVersion) {
  EXPECT_THROW(model_from_json(nlohmann::json::parse(R"({"format": "other", "version": 1, "name": "x", "layers": []})"),
                               "f.json"),
               InputError);
  EXPECT_THROW(model_from_json(
                   nlohmann::json::parse(R"({"format": "splitbrain-model", "version": 7, "name": "x", "layers": []})"),
                   "f.json"),
               InputError);
}

TEST(ModelJson, MalformedAndMissingFilesNameTheFile) {
  const auto path = std::filesystem::temp_directory_path() / "splitbrain_malformed.json";
  std::ofstream(path) << "{\"format\": \"splitbrain-model\",\n \"version\": 1,, }";
  try {
    load_model_file(path);
    FAIL() << "malformed JSON accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ":2:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
  try {
    load_model_file("/nonexistent/net.json");
    FAIL() << "missing file accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/net.json: cannot open"), std::string::npos) << e.what();
  }
}

TEST(ModelJson, ResolveModelTakesZooSpecsAndFiles) {
  EXPECT_EQ(resolve_model("vgg11").parameter_count(), 132'863'336);
  EXPECT_EQ(resolve_model(kExamples + "fashion-vgg.json").name(), "fashion-vgg");
  EXPECT_THROW(resolve_model("no-such-model"), InputError);
}

}  // namespace
}  // namespace splitbrain::model
