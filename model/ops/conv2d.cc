// conv2d: PyTorch's nn.Conv2d on a [C, H, W] image.

#include <fmt/format.h>

#include <cmath>

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

OpAttrs read(JsonObjectReader& fields) {
  Conv2dAttrs a;
  a.out_channels = fields.required_int("out_channels");
  a.kernel = read_size2(fields, "kernel", std::nullopt);
  a.stride = read_size2(fields, "stride", Size2{1, 1});
  a.padding = read_size2(fields, "padding", Size2{0, 0});
  a.dilation = read_size2(fields, "dilation", Size2{1, 1});
  a.groups = fields.optional_int("groups", 1);
  a.bias = fields.optional_bool("bias", true);
  return a;
}

void write(const OpAttrs& attrs, nlohmann::json& out) {
  const auto& a = std::get<Conv2dAttrs>(attrs);
  out["out_channels"] = a.out_channels;
  out["kernel"] = size2_to_json(a.kernel);
  out["stride"] = size2_to_json(a.stride);
  out["padding"] = size2_to_json(a.padding);
  out["dilation"] = size2_to_json(a.dilation);
  out["groups"] = a.groups;
  out["bias"] = a.bias;
}

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  const auto& a = layer.attr<Conv2dAttrs>();
  const Shape& in = require_image(site, producers);
  require_positive(site, "out_channels", a.out_channels);
  require_positive(site, "kernel", a.kernel);
  require_positive(site, "stride", a.stride);
  require_positive(site, "dilation", a.dilation);
  require_non_negative(site, "padding", a.padding);
  require_positive(site, "groups", a.groups);
  if (in[0] % a.groups != 0 || a.out_channels % a.groups != 0) {
    site.fail("groups", fmt::format("{} groups must divide the input channels ({}) and out_channels ({})", a.groups,
                                    in[0], a.out_channels));
  }
  layer.output_shape = {a.out_channels,
                        window_output(site, "height", in[1], a.kernel.h, a.stride.h, a.padding.h, a.dilation.h, false),
                        window_output(site, "width", in[2], a.kernel.w, a.stride.w, a.padding.w, a.dilation.w, false)};
}

void cost(const Layer& layer, std::span<const Layer* const> producers, LayerCost& cost) {
  const auto& a = layer.attr<Conv2dAttrs>();
  const Shape& in_shape = producers[0]->output_shape;
  const int64_t weights_per_output =
      checked_product(checked_product(in_shape[0] / a.groups, a.kernel.h, "weights"), a.kernel.w, "weights");
  cost.params = checked_product(a.out_channels, weights_per_output, "parameters") + (a.bias ? a.out_channels : 0);
  const double out = elements(layer.output_shape);
  product_flops(cost, out * static_cast<double>(weights_per_output), a.bias ? out : 0.0);
  cost.saved.inputs = {0};
}

// PyTorch's default: weight and bias uniform in +-1/sqrt(fan_in), the fan-in being a kernel's
// weights per output channel (in_channels / groups x kernel area).
ParameterInit init(const Layer& layer, int) {
  const auto& a = layer.attr<Conv2dAttrs>();
  const int64_t weights = layer.cost.params - (a.bias ? a.out_channels : 0);
  return {.uniform_bound = 1.0 / std::sqrt(static_cast<double>(weights / a.out_channels))};
}

}  // namespace

const OpUnit conv2d_unit = {
    .kind = OpKind::conv2d,
    .name = "conv2d",
    .default_attrs = []() -> OpAttrs { return Conv2dAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = cost,
    .arithmetic = ArithmeticPattern::convolution,
    .input_gradient_reads_saved = false,
    .parameter_init = init,
};

}  // namespace splitbrain::model::ops
