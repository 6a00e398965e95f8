// rms_norm's model unit: shape, parameters, FLOPs and saved bytes of a layer, its "eps" attribute
// in model files (default, round trip, refusal), and its weight starting at 1.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "model/errors.h"
#include "model/model_json.h"
#include "model/op_unit.h"
#include "model/statistics.h"

namespace splitbrain::model {
namespace {

const std::string kModel = std::string(SPLITBRAIN_SOURCE_DIR) + "/tests/exec/equivalence/rms_norm.json";

TEST(RmsNorm, ShapeParametersFlopsAndSavedBytes) {
  const Model net = load_model_file(kModel);
  const Layer& norm = net.layer(net.find("norm1"));  // on the embedding's [8 positions, 16 features]
  EXPECT_EQ(norm.kind, OpKind::rms_norm);
  EXPECT_EQ(norm.output_shape, (Shape{8, 16}));
  EXPECT_EQ(norm.attr<RmsNormAttrs>().epsilon, 1e-5);  // the default
  EXPECT_EQ(norm.cost.params, 16);                     // the weight only: no shift
  EXPECT_TRUE(norm.needs_input_gradient);              // the embedding upstream has parameters
  EXPECT_EQ(norm.cost.forward_flops, 4.0 * 128);
  EXPECT_EQ(norm.cost.backward_input_flops, 6.0 * 128);
  EXPECT_EQ(norm.cost.backward_weight_flops, 3.0 * 128);
  EXPECT_EQ(norm.cost.saved.inputs, std::vector<int>{0});
  EXPECT_EQ(norm.cost.saved.extra_bytes, 8 * 4);  // one fp32 1/rms per position
  EXPECT_EQ(op_unit(OpKind::rms_norm).arithmetic, ArithmeticPattern::elementwise);
  EXPECT_EQ(net.layer(net.find("norm2")).attr<RmsNormAttrs>().epsilon, 1e-6);

  // 16 x 16 table, two 16-wide norms, 16->32->16 with biases, a 16->16 head with bias.
  const ModelStatistics stats = compute_statistics(net, 4, DType::fp32);
  EXPECT_EQ(stats.params, 256 + 16 + (16 * 32 + 32) + (32 * 16 + 16) + 16 + (16 * 16 + 16));
}

TEST(RmsNorm, RoundTripsThroughModelJsonWithEps) {
  const Model net = load_model_file(kModel);
  const nlohmann::json written = model_to_json(net);
  for (const nlohmann::json& layer : written.at("layers")) {
    if (layer.at("op") != "rms_norm") continue;
    EXPECT_TRUE(layer.contains("eps")) << layer.dump();
    EXPECT_FALSE(layer.contains("epsilon")) << layer.dump();
  }
  const Model reloaded = model_from_json(nlohmann::json::parse(written.dump()), "roundtrip.json");
  ASSERT_EQ(reloaded.size(), net.size());
  for (int i = 0; i < net.size(); ++i) {
    SCOPED_TRACE(net.layer(i).name);
    EXPECT_EQ(reloaded.layer(i).kind, net.layer(i).kind);
    EXPECT_EQ(reloaded.layer(i).attrs, net.layer(i).attrs);
    EXPECT_EQ(reloaded.layer(i).output_shape, net.layer(i).output_shape);
    EXPECT_EQ(reloaded.layer(i).cost, net.layer(i).cost);
  }
}

TEST(RmsNorm, RefusesEpsThatIsNotPositive) {
  const std::string text =
      R"({"format": "splitbrain-model", "version": 1, "name": "bad", "layers": [)"
      R"({"name": "data", "op": "input", "shape": [4, 8]}, {"name": "n", "op": "rms_norm", "eps": 0}]})";
  try {
    model_from_json(nlohmann::json::parse(text), "bad.json");
    FAIL() << "eps 0 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'n': eps: must be positive"), std::string::npos) << e.what();
  }
}

TEST(RmsNorm, WeightStartsAtOne) {
  Layer norm;
  norm.kind = OpKind::rms_norm;
  norm.attrs = RmsNormAttrs{};
  ASSERT_NE(op_unit(OpKind::rms_norm).parameter_init, nullptr);
  EXPECT_EQ(op_unit(OpKind::rms_norm).parameter_init(norm, 0).uniform_bound, 0.0);
  EXPECT_EQ(op_unit(OpKind::rms_norm).parameter_init(norm, 0).constant, 1.0);
}

}  // namespace
}  // namespace splitbrain::model
