#pragma once
// The model-level facts of one op kind, in one place: its name in model files, its inputs, its
// attributes and their JSON names, its shape inference and attribute checks, its parameters,
// FLOPs and what backward keeps, the kind of arithmetic it is, and how its parameters start.
// Each kind's unit lives in model/ops/<op>.cc; the model library dispatches through op_unit()
// and never switches on the kind. plans/op_rules.h holds the same kind's sharding rules and
// kernel problem, exec/ops its LayerOp.

#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string_view>

#include "model/error_site.h"
#include "model/layer.h"
#include "model/op.h"

namespace splitbrain {
class JsonObjectReader;
}  // namespace splitbrain

namespace splitbrain::model {

// The shape of an op's arithmetic, which is what prices it: a convolution, a matrix product
// (linear, matmul, attention's products), or a pass over its elements.
enum class ArithmeticPattern { convolution, matrix_product, elementwise };

// How one parameter tensor starts: uniform in [-uniform_bound, uniform_bound] when the bound is
// positive, else every element `constant`.
struct ParameterInit {
  double uniform_bound = 0.0;
  double constant = 0.0;
};

struct OpUnit {
  OpKind kind;
  std::string_view name;  // in model files and tables, e.g. "conv2d"
  int min_inputs = 1;
  int max_inputs = 1;  // -1: any number from min_inputs up

  // The attributes with their defaults.
  OpAttrs (*default_attrs)();
  // The attributes from a layer's JSON object (the reader names the layer and the field in errors).
  OpAttrs (*read_attrs)(JsonObjectReader& fields);
  // Writes every attribute under its JSON name (what read_attrs reads back).
  void (*write_attrs)(const OpAttrs& attrs, nlohmann::json& out);

  // Checks the attributes against the producers' shapes, sets layer.output_shape (and
  // output_is_tokens for inputs), and completes attributes derived from the input. Throws
  // ModelError through `site`.
  void (*infer_shape)(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site);
  // Parameters, FLOPs and saved-for-backward tensors per sample (model/layer_cost.h's
  // conventions); the input-gradient FLOPs are cleared afterwards for a layer that needs none.
  void (*cost)(const Layer& layer, std::span<const Layer* const> producers, LayerCost& cost);

  ArithmeticPattern arithmetic = ArithmeticPattern::elementwise;
  // Whether the input gradient reads the tensors forward kept (conv2d's and linear's read only
  // the weight and the output gradient).
  bool input_gradient_reads_saved = true;
  // How parameter tensor `parameter` of the layer starts (nullptr: the op has no parameters).
  ParameterInit (*parameter_init)(const Layer& layer, int parameter) = nullptr;
};

// The unit of a kind; every kind has one.
const OpUnit& op_unit(OpKind kind);

// The units, one per kind, defined in model/ops/.
namespace ops {
#define SPLITBRAIN_DECLARE_MODEL_OP_UNIT(name) extern const OpUnit name##_unit;
SPLITBRAIN_OP_KINDS(SPLITBRAIN_DECLARE_MODEL_OP_UNIT)
#undef SPLITBRAIN_DECLARE_MODEL_OP_UNIT
}  // namespace ops

}  // namespace splitbrain::model
