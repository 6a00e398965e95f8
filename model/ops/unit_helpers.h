#pragma once
// What several op units share: attribute checks, PyTorch's sliding-window formula, the FLOP
// conventions of products and elementwise passes, and 2-D sizes in JSON.

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string_view>

#include "model/error_site.h"
#include "model/json_object_reader.h"
#include "model/layer.h"
#include "model/op.h"

namespace splitbrain::model::ops {

void require_positive(const ErrorSite& site, std::string_view field, int64_t value);
void require_positive(const ErrorSite& site, std::string_view field, Size2 value);
void require_non_negative(const ErrorSite& site, std::string_view field, Size2 value);

// The producer holds values of the model's dtype, not token ids (only embedding reads those).
void require_values(const ErrorSite& site, const Layer& producer);
// The only input, a [C, H, W] image of values.
const Shape& require_image(const ErrorSite& site, std::span<const Layer* const> producers);

// Output length of a sliding window: PyTorch's formula for conv and pooling.
int64_t window_output(const ErrorSite& site, std::string_view axis, int64_t input, int64_t kernel, int64_t stride,
                      int64_t padding, int64_t dilation, bool ceil_mode);

// The output has the shape of the only input (which holds values).
void infer_same_shape(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site);

inline double elements(const Shape& shape) { return static_cast<double>(num_elements(shape)); }

// Sets the FLOPs of a product with `macs` multiply-adds and an optional bias on `outputs`.
void product_flops(LayerCost& cost, double macs, double bias_outputs);
void elementwise_flops(LayerCost& cost, double count, double forward_per_element, double backward_per_element);

// A 2-D size is written [h, w]; a single integer n means [n, n]. Without `fallback` it is required.
Size2 read_size2(JsonObjectReader& fields, std::string_view key, std::optional<Size2> fallback);
nlohmann::json size2_to_json(Size2 size);

// For units of ops without attributes.
OpAttrs no_attrs();
OpAttrs read_no_attrs(JsonObjectReader& fields);
void write_no_attrs(const OpAttrs& attrs, nlohmann::json& out);

}  // namespace splitbrain::model::ops
