#include "model/ops/unit_helpers.h"

#include <fmt/format.h>

namespace splitbrain::model::ops {

void require_positive(const ErrorSite& site, std::string_view field, int64_t value) {
  if (value <= 0) site.fail(field, fmt::format("must be positive, got {}", value));
}

void require_positive(const ErrorSite& site, std::string_view field, Size2 value) {
  if (value.h <= 0 || value.w <= 0) site.fail(field, fmt::format("must be positive, got [{}, {}]", value.h, value.w));
}

void require_non_negative(const ErrorSite& site, std::string_view field, Size2 value) {
  if (value.h < 0 || value.w < 0) site.fail(field, fmt::format("must not be negative, got [{}, {}]", value.h, value.w));
}

void require_values(const ErrorSite& site, const Layer& producer) {
  if (producer.output_is_tokens) {
    site.fail("inputs", fmt::format("'{}' holds token ids; only embedding can read them", producer.name));
  }
}

const Shape& require_image(const ErrorSite& site, std::span<const Layer* const> producers) {
  require_values(site, *producers[0]);
  const Shape& in = producers[0]->output_shape;
  if (in.size() != 3) {
    site.fail("inputs", fmt::format("needs a [C, H, W] input per sample, but '{}' gives {}", producers[0]->name,
                                    shape_to_string(in)));
  }
  return in;
}

int64_t window_output(const ErrorSite& site, std::string_view axis, int64_t input, int64_t kernel, int64_t stride,
                      int64_t padding, int64_t dilation, bool ceil_mode) {
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t padded = input + 2 * padding;
  if (span > padded) {
    site.fail("kernel",
              fmt::format("window of {} does not fit the input {} of {} (padding {})", span, axis, input, padding));
  }
  int64_t out = (padded - span) / stride + 1;
  // With ceil_mode a last partial window counts, unless it would start inside the right padding.
  if (ceil_mode && (padded - span) % stride != 0 && (out * stride) < input + padding) ++out;
  return out;
}

void infer_same_shape(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  require_values(site, *producers[0]);
  layer.output_shape = producers[0]->output_shape;
}

void product_flops(LayerCost& cost, double macs, double bias_outputs) {
  cost.forward_flops = 2 * macs + bias_outputs;
  cost.backward_input_flops = 2 * macs;
  cost.backward_weight_flops = 2 * macs + bias_outputs;
}

void elementwise_flops(LayerCost& cost, double count, double forward_per_element, double backward_per_element) {
  cost.forward_flops = forward_per_element * count;
  cost.backward_input_flops = backward_per_element * count;
}

Size2 read_size2(JsonObjectReader& fields, std::string_view key, std::optional<Size2> fallback) {
  const nlohmann::json* value = fields.optional(key);
  if (value == nullptr) {
    if (!fallback) fields.required(key);  // throws "missing required field"
    return *fallback;
  }
  if (value->is_number()) {
    const int64_t n = fields.required_int(key);
    return {n, n};
  }
  if (value->is_array() && value->size() == 2) {
    const JsonArrayReader pair = fields.array(key);
    return {pair.int_at(0), pair.int_at(1)};
  }
  fields.fail(key, fmt::format("expected an integer or [height, width], got {}", describe_json(*value)));
}

nlohmann::json size2_to_json(Size2 size) { return nlohmann::json::array({size.h, size.w}); }

OpAttrs no_attrs() { return NoAttrs{}; }
OpAttrs read_no_attrs(JsonObjectReader&) { return NoAttrs{}; }
void write_no_attrs(const OpAttrs&, nlohmann::json&) {}

}  // namespace splitbrain::model::ops
