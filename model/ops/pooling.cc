// maxpool and avgpool: PyTorch's MaxPool2d and AvgPool2d (padded zeros counted) on a [C, H, W] image.

#include "model/max_pool_index.h"
#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

OpAttrs read(JsonObjectReader& fields) {
  Pool2dAttrs a;
  a.kernel = read_size2(fields, "kernel", std::nullopt);
  a.stride = read_size2(fields, "stride", a.kernel);
  a.padding = read_size2(fields, "padding", Size2{0, 0});
  a.ceil_mode = fields.optional_bool("ceil_mode", false);
  return a;
}

void write(const OpAttrs& attrs, nlohmann::json& out) {
  const auto& a = std::get<Pool2dAttrs>(attrs);
  out["kernel"] = size2_to_json(a.kernel);
  out["stride"] = size2_to_json(a.stride);
  out["padding"] = size2_to_json(a.padding);
  out["ceil_mode"] = a.ceil_mode;
}

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  auto& a = std::get<Pool2dAttrs>(layer.attrs);
  const Shape& in = require_image(site, producers);
  require_positive(site, "kernel", a.kernel);
  if (a.stride.h == 0 && a.stride.w == 0) a.stride = a.kernel;
  require_positive(site, "stride", a.stride);
  require_non_negative(site, "padding", a.padding);
  if (2 * a.padding.h > a.kernel.h || 2 * a.padding.w > a.kernel.w) {
    site.fail("padding", "must be at most half the kernel size");
  }
  layer.output_shape = {in[0],
                        window_output(site, "height", in[1], a.kernel.h, a.stride.h, a.padding.h, 1, a.ceil_mode),
                        window_output(site, "width", in[2], a.kernel.w, a.stride.w, a.padding.w, 1, a.ceil_mode)};
}

// Backward routes each output gradient to its window's winner, kept as an index per output.
void max_cost(const Layer& layer, std::span<const Layer* const>, LayerCost& cost) {
  const auto& a = layer.attr<Pool2dAttrs>();
  elementwise_flops(cost, elements(layer.output_shape), static_cast<double>(a.kernel.h * a.kernel.w), 1);
  cost.saved.extra_bytes =
      checked_product(num_elements(layer.output_shape), max_pool_index_bytes(a.kernel.h * a.kernel.w), "bytes");
}

void average_cost(const Layer& layer, std::span<const Layer* const>, LayerCost& cost) {
  const auto& a = layer.attr<Pool2dAttrs>();
  const double window = static_cast<double>(a.kernel.h * a.kernel.w);
  elementwise_flops(cost, elements(layer.output_shape), window, window);
}

}  // namespace

const OpUnit maxpool_unit = {
    .kind = OpKind::maxpool,
    .name = "maxpool",
    .default_attrs = []() -> OpAttrs { return Pool2dAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = max_cost,
};

const OpUnit avgpool_unit = {
    .kind = OpKind::avgpool,
    .name = "avgpool",
    .default_attrs = []() -> OpAttrs { return Pool2dAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = average_cost,
};

}  // namespace splitbrain::model::ops
