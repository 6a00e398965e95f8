// matmul: the batched product of two computed inputs, [..., M, K] x [..., K, N] (or [..., N, K]
// with transpose_b).

#include <fmt/format.h>

#include <algorithm>

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

OpAttrs read(JsonObjectReader& fields) { return MatMulAttrs{fields.optional_bool("transpose_b", false)}; }

void write(const OpAttrs& attrs, nlohmann::json& out) { out["transpose_b"] = std::get<MatMulAttrs>(attrs).transpose_b; }

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  const auto& a = layer.attr<MatMulAttrs>();
  require_values(site, *producers[0]);
  require_values(site, *producers[1]);
  const Shape& lhs = producers[0]->output_shape;
  const Shape& rhs = producers[1]->output_shape;
  if (lhs.size() < 2 || lhs.size() != rhs.size() || !std::equal(lhs.begin(), lhs.end() - 2, rhs.begin())) {
    site.fail("inputs", fmt::format("needs two inputs of rank >= 2 with the same leading dimensions, got {} and {}",
                                    shape_to_string(lhs), shape_to_string(rhs)));
  }
  const size_t r = rhs.size();
  const int64_t rhs_k = a.transpose_b ? rhs[r - 1] : rhs[r - 2];
  const int64_t rhs_n = a.transpose_b ? rhs[r - 2] : rhs[r - 1];
  if (lhs.back() != rhs_k) {
    site.fail("inputs", fmt::format("inner dimensions differ: {} x {}{}", shape_to_string(lhs), shape_to_string(rhs),
                                    a.transpose_b ? " (second transposed)" : ""));
  }
  layer.output_shape = lhs;
  layer.output_shape.back() = rhs_n;
}

void cost(const Layer& layer, std::span<const Layer* const> producers, LayerCost& cost) {
  const Shape& lhs = producers[0]->output_shape;
  product_flops(cost, elements(layer.output_shape) * static_cast<double>(lhs.back()), 0.0);
  cost.backward_input_flops = 2 * cost.forward_flops;  // gradients of both operands
  cost.backward_weight_flops = 0;
  cost.saved.inputs = {0, 1};
}

}  // namespace

const OpUnit matmul_unit = {
    .kind = OpKind::matmul,
    .name = "matmul",
    .min_inputs = 2,
    .max_inputs = 2,
    .default_attrs = []() -> OpAttrs { return MatMulAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = cost,
    .arithmetic = ArithmeticPattern::matrix_product,
};

}  // namespace splitbrain::model::ops
