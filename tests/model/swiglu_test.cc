// swiglu's model unit: shape, FLOPs and saved inputs of a layer in the Llama-style MLP of
// tests/exec/equivalence/swiglu.json, its JSON round trip, and errors naming the layer and field
// for inputs of two shapes, token ids, or the wrong number of inputs.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "model/errors.h"
#include "model/model_json.h"
#include "model/op_unit.h"
#include "model/statistics.h"

namespace splitbrain::model {
namespace {

const std::string kModel = std::string(SPLITBRAIN_SOURCE_DIR) + "/tests/exec/equivalence/swiglu.json";

TEST(Swiglu, ShapeFlopsAndSavedInputs) {
  const Model net = load_model_file(kModel);
  const Layer& gate = net.layer(net.find("gate"));  // on two [8 positions, 32 features] projections
  EXPECT_EQ(gate.kind, OpKind::swiglu);
  EXPECT_EQ(gate.output_shape, (Shape{8, 32}));
  EXPECT_EQ(gate.cost.params, 0);
  EXPECT_TRUE(gate.needs_input_gradient);
  EXPECT_EQ(gate.cost.forward_flops, 5.0 * 256);
  EXPECT_EQ(gate.cost.backward_input_flops, 11.0 * 256);
  EXPECT_EQ(gate.cost.backward_weight_flops, 0.0);
  EXPECT_EQ(gate.cost.saved.inputs, (std::vector<int>{0, 1}));  // the gate and up, silu recomputed
  EXPECT_FALSE(gate.cost.saved.output);
  EXPECT_EQ(gate.cost.saved.extra_bytes, 0);
  EXPECT_EQ(op_unit(OpKind::swiglu).arithmetic, ArithmeticPattern::elementwise);
  EXPECT_EQ(op_unit(OpKind::swiglu).parameter_init, nullptr);

  // 16 x 16 table, two 16-wide norms, bias-free 16->32 gate and up, 32->16 down, 16->16 head.
  const ModelStatistics stats = compute_statistics(net, 4, DType::fp32);
  EXPECT_EQ(stats.params, 256 + 16 + 2 * (16 * 32) + 32 * 16 + 16 + 16 * 16);
}

TEST(Swiglu, RoundTripsThroughModelJson) {
  const Model net = load_model_file(kModel);
  const nlohmann::json written = model_to_json(net);
  bool found = false;
  for (const nlohmann::json& layer : written.at("layers")) {
    if (layer.at("op") != "swiglu") continue;
    found = true;
    EXPECT_EQ(layer.at("inputs"), (nlohmann::json{"w1", "w3"})) << layer.dump();  // gate first, then up
  }
  EXPECT_TRUE(found);
  const Model reloaded = model_from_json(nlohmann::json::parse(written.dump()), "roundtrip.json");
  ASSERT_EQ(reloaded.size(), net.size());
  for (int i = 0; i < net.size(); ++i) {
    SCOPED_TRACE(net.layer(i).name);
    EXPECT_EQ(reloaded.layer(i).kind, net.layer(i).kind);
    EXPECT_EQ(reloaded.layer(i).inputs, net.layer(i).inputs);
    EXPECT_EQ(reloaded.layer(i).output_shape, net.layer(i).output_shape);
    EXPECT_EQ(reloaded.layer(i).cost, net.layer(i).cost);
  }
}

// The message of loading `layers` (after a [4, 8] input "data"), or "" when it loads.
std::string load_error(const std::string& layers) {
  const std::string text = R"({"format": "splitbrain-model", "version": 1, "name": "bad", "layers": [)"
                           R"({"name": "data", "op": "input", "shape": [4, 8]}, )" +
                           layers + "]}";
  try {
    model_from_json(nlohmann::json::parse(text), "bad.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Swiglu, InputsOfTwoShapesNameTheLayerAndBoth) {
  const std::string message = load_error(
      R"({"name": "a", "op": "linear", "inputs": ["data"], "out_features": 16},
         {"name": "b", "op": "linear", "inputs": ["data"], "out_features": 12},
         {"name": "g", "op": "swiglu", "inputs": ["a", "b"]})");
  EXPECT_NE(message.find("bad.json"), std::string::npos) << message;
  EXPECT_NE(message.find("layer 'g': inputs: the gate 'a' is [4, 16] but the up projection 'b' is [4, 12]"),
            std::string::npos)
      << message;
}

TEST(Swiglu, RefusesTokenIdsAndOneInput) {
  const std::string tokens = R"({"format": "splitbrain-model", "version": 1, "name": "bad", "layers": [
      {"name": "ids", "op": "input", "shape": [8], "tokens": true},
      {"name": "emb", "op": "embedding", "inputs": ["ids"], "num_embeddings": 4, "embedding_dim": 8},
      {"name": "g", "op": "swiglu", "inputs": ["ids", "ids"]}]})";
  try {
    model_from_json(nlohmann::json::parse(tokens), "tokens.json");
    FAIL() << "token ids accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'g': inputs: 'ids' holds token ids"), std::string::npos) << e.what();
  }
  const std::string message = load_error(R"({"name": "g", "op": "swiglu", "inputs": ["data"]})");
  EXPECT_NE(message.find("layer 'g'"), std::string::npos) << message;
  EXPECT_NE(message.find("inputs"), std::string::npos) << message;
}

}  // namespace
}  // namespace splitbrain::model
