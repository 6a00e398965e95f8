// The op units: one per kind, found by kind and by name, and their attributes written under the
// JSON names they read back.

#include "model/op_unit.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/errors.h"
#include "model/json_object_reader.h"
#include "model/model_json.h"
#include "model/zoo.h"

namespace splitbrain::model {
namespace {

TEST(OpUnit, EveryKindHasItsOwnUnitFoundByName) {
  ASSERT_EQ(all_op_kinds().size(), static_cast<size_t>(kOpKindCount));
  for (OpKind kind : all_op_kinds()) {
    const OpUnit& unit = op_unit(kind);
    EXPECT_EQ(unit.kind, kind) << unit.name;
    EXPECT_EQ(op_kind_from_name(unit.name), kind) << unit.name;
    EXPECT_NE(unit.default_attrs, nullptr);
    EXPECT_NE(unit.read_attrs, nullptr);
    EXPECT_NE(unit.write_attrs, nullptr);
    EXPECT_NE(unit.infer_shape, nullptr);
    EXPECT_NE(unit.cost, nullptr);
  }
  EXPECT_FALSE(op_kind_from_name("conv3d").has_value());
}

TEST(OpUnit, AttributesWrittenAreReadBackEqual) {
  std::vector<bool> seen(static_cast<size_t>(kOpKindCount), false);
  for (const char* zoo : {"resnet18", "vgg11-cifar10", "gpt:layers=1", "alexnet"}) {
    const Model model = build_zoo_model(zoo);
    for (const Layer& layer : model.layers()) {
      const OpUnit& unit = op_unit(layer.kind);
      nlohmann::json fields = nlohmann::json::object();
      unit.write_attrs(layer.attrs, fields);
      JsonObjectReader reader(fields, layer.name, throwing<ModelError>);
      EXPECT_EQ(unit.read_attrs(reader), layer.attrs) << zoo << " " << layer.name;
      reader.reject_unknown_keys();
      seen[static_cast<size_t>(layer.kind)] = true;
    }
  }
  EXPECT_TRUE(seen[static_cast<size_t>(OpKind::conv2d)]);
  EXPECT_TRUE(seen[static_cast<size_t>(OpKind::self_attention)]);
  EXPECT_TRUE(seen[static_cast<size_t>(OpKind::embedding)]);
}

TEST(OpUnit, OnlyConvolutionAndProductsArePricedAsSuch) {
  EXPECT_EQ(op_unit(OpKind::conv2d).arithmetic, ArithmeticPattern::convolution);
  EXPECT_EQ(op_unit(OpKind::linear).arithmetic, ArithmeticPattern::matrix_product);
  EXPECT_EQ(op_unit(OpKind::matmul).arithmetic, ArithmeticPattern::matrix_product);
  EXPECT_EQ(op_unit(OpKind::self_attention).arithmetic, ArithmeticPattern::matrix_product);
  EXPECT_EQ(op_unit(OpKind::relu).arithmetic, ArithmeticPattern::elementwise);
  EXPECT_FALSE(op_unit(OpKind::conv2d).input_gradient_reads_saved);
  EXPECT_FALSE(op_unit(OpKind::linear).input_gradient_reads_saved);
  EXPECT_TRUE(op_unit(OpKind::gelu).input_gradient_reads_saved);
}

TEST(OpUnit, ParameterInitialisationFollowsPyTorch) {
  Layer norm;
  norm.kind = OpKind::layernorm;
  norm.attrs = NormAttrs{};
  EXPECT_EQ(op_unit(OpKind::layernorm).parameter_init(norm, 0).constant, 1.0);  // scale
  EXPECT_EQ(op_unit(OpKind::layernorm).parameter_init(norm, 1).constant, 0.0);  // shift
  Layer fc;
  fc.kind = OpKind::linear;
  LinearAttrs fc_attrs;
  fc_attrs.in_features = 64;
  fc_attrs.out_features = 10;
  fc.attrs = fc_attrs;
  EXPECT_DOUBLE_EQ(op_unit(OpKind::linear).parameter_init(fc, 0).uniform_bound, 1.0 / 8.0);
  EXPECT_EQ(op_unit(OpKind::relu).parameter_init, nullptr);
}

}  // namespace
}  // namespace splitbrain::model
