// input: the training data fed to the network, per sample; token inputs hold integer ids.

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

OpAttrs read(JsonObjectReader& fields) {
  return InputAttrs{fields.required_int_list("shape"), fields.optional_bool("tokens", false)};
}

void write(const OpAttrs& attrs, nlohmann::json& out) {
  const auto& a = std::get<InputAttrs>(attrs);
  out["shape"] = a.shape;
  out["tokens"] = a.tokens;
}

void infer(Layer& layer, std::span<const Layer* const>, const ErrorSite& site) {
  const auto& a = layer.attr<InputAttrs>();
  if (a.shape.empty()) site.fail("shape", "must list the per-sample dimensions, e.g. [3, 224, 224]");
  for (int64_t d : a.shape) require_positive(site, "shape", d);
  if (a.tokens && a.shape.size() != 1) site.fail("shape", "a token input is a sequence: [T]");
  layer.output_shape = a.shape;
  layer.output_is_tokens = a.tokens;
}

void cost(const Layer&, std::span<const Layer* const>, LayerCost&) {}

}  // namespace

const OpUnit input_unit = {
    .kind = OpKind::input,
    .name = "input",
    .min_inputs = 0,
    .max_inputs = 0,
    .default_attrs = []() -> OpAttrs { return InputAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = cost,
};

}  // namespace splitbrain::model::ops
