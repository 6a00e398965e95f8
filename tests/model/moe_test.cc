// moe's model unit: the shape, parameters, FLOPs and saved tensors of a sparse MLP of 4 experts
// (top 2) on [16 positions, 32 features], recounted here from the routing's definition, with and
// without a capacity; the saved bytes at a batch and dtype; its JSON round trip; and errors naming
// the layer and the field for every attribute out of range, for inputs it cannot read and for
// counts beyond 64 bits.

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "model/errors.h"
#include "model/model_json.h"
#include "model/op_unit.h"
#include "model/statistics.h"

namespace splitbrain::model {
namespace {

constexpr int64_t kTokens = 16, kFeatures = 32, kExperts = 4, kTopK = 2, kFfn = 48;

// A projection before the layer, so its input needs a gradient; `moe_fields` are the layer's own.
Model moe_model(const std::string& moe_fields) {
  const std::string text = R"({"format": "splitbrain-model", "version": 1, "name": "moe", "layers": [
      {"name": "data", "op": "input", "shape": [16, 32]},
      {"name": "proj", "op": "linear", "out_features": 32, "bias": false},
      {"name": "experts", "op": "moe", )" +
                           moe_fields + R"(},
      {"name": "res", "op": "add", "inputs": ["proj", "experts"]}]})";
  return model_from_json(nlohmann::json::parse(text), "moe.json");
}

// The FLOPs of one sample, from the routing: `rows` routed rows computed by the experts.
struct ExpectedFlops {
  double forward, backward_input, backward_weight;
};
ExpectedFlops expected_flops(double rows) {
  const double t = kTokens, d = kFeatures, e = kExperts, k = kTopK, f = kFfn;
  const double router = 2 * t * d * e;                 // x W_router
  const double experts = 2 * rows * 3 * d * f;         // w1, w3 and w2 on each routed row
  const double routing = t * e * (5 + k) + 2 * t * k;  // softmax, top-k selection, renormalisation
  const double forward = router + routing + experts + 5 * rows * f + 2 * rows * d;  // + swiglu, combine
  const double input = router + 2 * rows * 2 * d * f + rows * d;  // dx through router, w1, w3; summed rows
  const double weight = router + experts + 2 * rows * d * f       // weight gradients; w2's input gradient
                        + (11 + 4) * rows * f                     // swiglu backward; routing weights' gradients
                        + 4 * t * e + 4 * t * k;                  // softmax and renormalisation backward
  return {forward, input, weight};
}

TEST(Moe, ShapeParametersFlopsAndSavedTensors) {
  const Model net = moe_model(R"("experts": 4, "top_k": 2, "ffn": 48)");
  const Layer& moe = net.layer(net.find("experts"));
  EXPECT_EQ(moe.kind, OpKind::moe);
  EXPECT_EQ(moe.output_shape, (Shape{kTokens, kFeatures}));
  // Router D x E, then per expert w1 and w3 (D x ffn) and w2 (ffn x D), no biases.
  EXPECT_EQ(moe.cost.params, kFeatures * kExperts + kExperts * 3 * kFeatures * kFfn);
  EXPECT_EQ(moe.cost.params, 18'560);
  ASSERT_TRUE(moe.needs_input_gradient);
  const ExpectedFlops expected = expected_flops(kTokens * kTopK);  // no capacity: every routed row
  EXPECT_DOUBLE_EQ(moe.cost.forward_flops, expected.forward);
  EXPECT_DOUBLE_EQ(moe.cost.backward_input_flops, expected.backward_input);
  EXPECT_DOUBLE_EQ(moe.cost.backward_weight_flops, expected.backward_weight);
  // Backward does about twice the forward's products (the elementwise terms are a few percent here).
  const double backward = moe.cost.backward_input_flops + moe.cost.backward_weight_flops;
  EXPECT_NEAR(backward / moe.cost.forward_flops, 2.0, 0.1);
  // Kept: x, the router's T x E probabilities, each routed row's gate and up.
  EXPECT_EQ(moe.cost.saved.inputs, std::vector<int>{0});
  EXPECT_FALSE(moe.cost.saved.output);
  EXPECT_EQ(moe.cost.saved.extra_elements, kTokens * kExperts + kTokens * kTopK * 2 * kFfn);
  EXPECT_EQ(moe.cost.saved.extra_bytes, 0);

  const OpUnit& unit = op_unit(OpKind::moe);
  EXPECT_EQ(unit.arithmetic, ArithmeticPattern::matrix_product);
  ASSERT_NE(unit.parameter_init, nullptr);
  EXPECT_DOUBLE_EQ(unit.parameter_init(moe, 0).uniform_bound, 1.0 / std::sqrt(32.0));  // router: in = D
  EXPECT_DOUBLE_EQ(unit.parameter_init(moe, 1).uniform_bound, 1.0 / std::sqrt(32.0));  // w1
  EXPECT_DOUBLE_EQ(unit.parameter_init(moe, 3).uniform_bound, 1.0 / std::sqrt(48.0));  // w2: in = ffn
}

TEST(Moe, SavedBytesScaleWithTheBatchAndDtype) {
  const Model net = moe_model(R"("experts": 4, "top_k": 2, "ffn": 48)");
  const int index = net.find("experts");
  const ModelStatistics fp32 = compute_statistics(net, 8, DType::fp32);
  const ModelStatistics bf16 = compute_statistics(net, 8, DType::bf16);
  const int64_t extras = kTokens * kExperts + kTokens * kTopK * 2 * kFfn;
  // The layer's own output is read by no backward (the residual add keeps nothing): only extras.
  EXPECT_EQ(fp32.layers[static_cast<size_t>(index)].saved_bytes, 8 * extras * 4);
  EXPECT_EQ(bf16.layers[static_cast<size_t>(index)].saved_bytes, 8 * extras * 2);
  EXPECT_EQ(fp32.layers[static_cast<size_t>(index)].params, 18'560);
}

TEST(Moe, CapacityCapsTheRoutedRows) {
  // 32 rows routed over 4 experts, 8 each when balanced. Capacity ceil(0.3 x 8) = 3 an expert: 12.
  const Layer tight = moe_model(R"("experts": 4, "top_k": 2, "ffn": 48, "capacity_factor": 0.3)").layer(2);
  EXPECT_DOUBLE_EQ(tight.cost.forward_flops, expected_flops(12).forward);
  EXPECT_DOUBLE_EQ(tight.cost.backward_input_flops, expected_flops(12).backward_input);
  EXPECT_DOUBLE_EQ(tight.cost.backward_weight_flops, expected_flops(12).backward_weight);
  EXPECT_EQ(tight.cost.saved.extra_elements, kTokens * kExperts + 12 * 2 * kFfn);
  // ceil(1.25 x 8) = 10 an expert is more than the balanced load: every routed row is computed.
  const Layer loose = moe_model(R"("experts": 4, "top_k": 2, "ffn": 48, "capacity_factor": 1.25)").layer(2);
  EXPECT_DOUBLE_EQ(loose.cost.forward_flops, expected_flops(32).forward);
  EXPECT_EQ(loose.cost.params, 18'560);  // a capacity changes no parameter
}

TEST(Moe, RoundTripsThroughModelJson) {
  const Model net = moe_model(R"("experts": 4, "top_k": 2, "ffn": 48, "capacity_factor": 1.5)");
  const nlohmann::json written = model_to_json(net);
  const nlohmann::json& layer = written.at("layers").at(2);
  EXPECT_EQ(layer.at("op"), "moe");
  EXPECT_EQ(layer.at("experts"), 4);
  EXPECT_EQ(layer.at("top_k"), 2);
  EXPECT_EQ(layer.at("ffn"), 48);
  EXPECT_EQ(layer.at("capacity_factor"), 1.5);
  const Model reloaded = model_from_json(nlohmann::json::parse(written.dump()), "roundtrip.json");
  ASSERT_EQ(reloaded.size(), net.size());
  for (int i = 0; i < net.size(); ++i) {
    SCOPED_TRACE(net.layer(i).name);
    EXPECT_EQ(reloaded.layer(i).kind, net.layer(i).kind);
    EXPECT_EQ(reloaded.layer(i).attrs, net.layer(i).attrs);
    EXPECT_EQ(reloaded.layer(i).output_shape, net.layer(i).output_shape);
    EXPECT_EQ(reloaded.layer(i).cost, net.layer(i).cost);
  }
  // Without the field, no capacity.
  EXPECT_EQ(moe_model(R"("experts": 4, "top_k": 2, "ffn": 48)").layer(2).attr<MoeAttrs>().capacity_factor, 0.0);
}

// The message of loading a model whose layer "m" reads `input_shape` with `fields`, or "".
std::string load_error(const std::string& fields, const std::string& input = R"("shape": [16, 32])") {
  const std::string text = R"({"format": "splitbrain-model", "version": 1, "name": "bad", "layers": [)"
                           R"({"name": "data", "op": "input", )" +
                           input + R"(}, {"name": "m", "op": "moe", )" + fields + "}]}";
  try {
    model_from_json(nlohmann::json::parse(text), "bad.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Moe, RefusalsNameTheLayerAndTheField) {
  struct Case {
    const char* fields;
    const char* message;
  };
  for (const Case& c : {
           Case{R"("experts": 4, "top_k": 5, "ffn": 48)", "layer 'm': top_k: must be from 1 to the 4 experts, got 5"},
           Case{R"("experts": 4, "top_k": 0, "ffn": 48)", "layer 'm': top_k: must be from 1 to the 4 experts, got 0"},
           Case{R"("experts": 0, "top_k": 1, "ffn": 48)", "layer 'm': experts: must be positive, got 0"},
           Case{R"("experts": 4, "top_k": 2, "ffn": 0)", "layer 'm': ffn: must be positive, got 0"},
           Case{R"("experts": 4, "top_k": 2, "ffn": -3)", "layer 'm': ffn: must be positive, got -3"},
           Case{R"("experts": 4, "top_k": 2, "ffn": 48, "capacity_factor": -0.5)",
                "layer 'm': capacity_factor: must be 0 (no capacity limit) or positive, got -0.5"},
           Case{R"("top_k": 2, "ffn": 48)", "experts"},
           Case{R"("experts": 4, "top_k": 2, "ffn": 48, "gate_bias": true)", "gate_bias"},
       }) {
    const std::string message = load_error(c.fields);
    EXPECT_NE(message.find("bad.json"), std::string::npos) << c.fields << ": " << message;
    EXPECT_NE(message.find(c.message), std::string::npos) << c.fields << ": " << message;
  }
  // An image, a flat vector and token ids are no [T, D] values.
  const std::string fields = R"("experts": 4, "top_k": 2, "ffn": 48)";
  EXPECT_NE(load_error(fields, R"("shape": [3, 8, 8])")
                .find("layer 'm': inputs: needs a [T, D] input per sample (positions, features), but 'data' gives "
                      "[3, 8, 8]"),
            std::string::npos);
  EXPECT_NE(load_error(fields, R"("shape": [32])").find("layer 'm': inputs: needs a [T, D] input"), std::string::npos);
  EXPECT_NE(load_error(fields, R"("shape": [16], "tokens": true)").find("layer 'm': inputs: 'data' holds token ids"),
            std::string::npos);
  // Counts beyond 64 bits are refused, not wrapped: 2^40 tokens each routed to 2^40 experts.
  EXPECT_NE(
      load_error(R"("experts": 1099511627776, "top_k": 1099511627776, "ffn": 1)", R"("shape": [1099511627776, 8])")
          .find("layer 'm': size: routed rows: 1099511627776 x 1099511627776 does not fit in 64 bits"),
      std::string::npos);
}

}  // namespace
}  // namespace splitbrain::model
