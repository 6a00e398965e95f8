// adaptive_avgpool: PyTorch's AdaptiveAvgPool2d (output_size 1: global average pooling).

#include <fmt/format.h>

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

OpAttrs read(JsonObjectReader& fields) { return AdaptiveAvgPoolAttrs{read_size2(fields, "output_size", Size2{1, 1})}; }

void write(const OpAttrs& attrs, nlohmann::json& out) {
  out["output_size"] = size2_to_json(std::get<AdaptiveAvgPoolAttrs>(attrs).output_size);
}

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  const auto& a = layer.attr<AdaptiveAvgPoolAttrs>();
  const Shape& in = require_image(site, producers);
  require_positive(site, "output_size", a.output_size);
  if (a.output_size.h > in[1] || a.output_size.w > in[2]) {
    site.fail("output_size", fmt::format("[{}, {}] is larger than the input {}", a.output_size.h, a.output_size.w,
                                         shape_to_string(in)));
  }
  layer.output_shape = {in[0], a.output_size.h, a.output_size.w};
}

// Every input element is summed into one output (windows of equal-sized bins), then divided.
void cost(const Layer& layer, std::span<const Layer* const> producers, LayerCost& cost) {
  const double in = elements(producers[0]->output_shape);
  cost.forward_flops = in + elements(layer.output_shape);
  cost.backward_input_flops = in;
}

}  // namespace

const OpUnit adaptive_avgpool_unit = {
    .kind = OpKind::adaptive_avgpool,
    .name = "adaptive_avgpool",
    .default_attrs = []() -> OpAttrs { return AdaptiveAvgPoolAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = cost,
};

}  // namespace splitbrain::model::ops
