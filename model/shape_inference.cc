#include "model/shape_inference.h"

#include <fmt/format.h>

namespace splitbrain::model {
namespace {

void require_positive(const ErrorSite& site, std::string_view field, int64_t value) {
  if (value <= 0) site.fail(field, fmt::format("must be positive, got {}", value));
}

void require_positive(const ErrorSite& site, std::string_view field, Size2 value) {
  if (value.h <= 0 || value.w <= 0) site.fail(field, fmt::format("must be positive, got [{}, {}]", value.h, value.w));
}

void require_non_negative(const ErrorSite& site, std::string_view field, Size2 value) {
  if (value.h < 0 || value.w < 0) site.fail(field, fmt::format("must not be negative, got [{}, {}]", value.h, value.w));
}

const Shape& only_input(std::span<const Layer* const> producers) { return producers[0]->output_shape; }

void require_values(const ErrorSite& site, const Layer& producer) {
  if (producer.output_is_tokens) {
    site.fail("inputs", fmt::format("'{}' holds token ids; only embedding can read them", producer.name));
  }
}

const Shape& require_image(const ErrorSite& site, std::span<const Layer* const> producers) {
  require_values(site, *producers[0]);
  const Shape& in = only_input(producers);
  if (in.size() != 3) {
    site.fail("inputs", fmt::format("needs a [C, H, W] input per sample, but '{}' gives {}", producers[0]->name,
                                    shape_to_string(in)));
  }
  return in;
}

// Output length of a sliding window: PyTorch's formula for conv and pooling.
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

void infer_conv2d(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
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

void infer_pool(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
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

void infer_linear(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  auto& a = std::get<LinearAttrs>(layer.attrs);
  require_values(site, *producers[0]);
  const Shape& in = only_input(producers);
  require_positive(site, "out_features", a.out_features);
  if (a.in_features == 0) a.in_features = in.back();
  if (a.in_features != in.back()) {
    site.fail("in_features", fmt::format("is {} but the input '{}' has {} features (shape {}; flatten first?)",
                                         a.in_features, producers[0]->name, in.back(), shape_to_string(in)));
  }
  layer.output_shape = in;
  layer.output_shape.back() = a.out_features;
}

void infer_same_shape(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  require_values(site, *producers[0]);
  layer.output_shape = only_input(producers);
}

void infer_add(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  for (const Layer* producer : producers) {
    require_values(site, *producer);
    if (producer->output_shape != producers[0]->output_shape) {
      site.fail("inputs", fmt::format("all inputs must have one shape, but '{}' is {} and '{}' is {}",
                                      producers[0]->name, shape_to_string(producers[0]->output_shape), producer->name,
                                      shape_to_string(producer->output_shape)));
    }
  }
  layer.output_shape = producers[0]->output_shape;
}

void infer_concat(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  const auto& a = layer.attr<ConcatAttrs>();
  const Shape& first = producers[0]->output_shape;
  const auto rank = static_cast<int64_t>(first.size());
  if (a.axis < 0 || a.axis >= rank)
    site.fail("axis", fmt::format("must be in [0, {}) for inputs of rank {}", rank, rank));
  Shape out = first;
  out[static_cast<size_t>(a.axis)] = 0;
  for (const Layer* producer : producers) {
    require_values(site, *producer);
    Shape other = producer->output_shape;
    bool fits = other.size() == first.size();
    for (size_t d = 0; fits && d < other.size(); ++d) fits = d == static_cast<size_t>(a.axis) || other[d] == first[d];
    if (!fits) {
      site.fail("inputs", fmt::format("'{}' is {} and '{}' is {}: they differ outside axis {}", producers[0]->name,
                                      shape_to_string(first), producer->name, shape_to_string(other), a.axis));
    }
    out[static_cast<size_t>(a.axis)] += other[static_cast<size_t>(a.axis)];
  }
  layer.output_shape = out;
}

void infer_embedding(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  const auto& a = layer.attr<EmbeddingAttrs>();
  require_positive(site, "num_embeddings", a.num_embeddings);
  require_positive(site, "embedding_dim", a.embedding_dim);
  const Layer& in = *producers[0];
  if (!in.output_is_tokens || in.output_shape.size() != 1) {
    site.fail("inputs", fmt::format("needs a token input of shape [T], but '{}' gives {}{}", in.name,
                                    shape_to_string(in.output_shape), in.output_is_tokens ? "" : " values"));
  }
  if (a.positional && in.output_shape[0] > a.num_embeddings) {
    site.fail("num_embeddings",
              fmt::format("{} positions cannot cover a sequence of {}", a.num_embeddings, in.output_shape[0]));
  }
  layer.output_shape = {in.output_shape[0], a.embedding_dim};
}

void infer_matmul(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
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

void infer_self_attention(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  const auto& a = layer.attr<SelfAttentionAttrs>();
  require_values(site, *producers[0]);
  const Shape& in = only_input(producers);
  require_positive(site, "heads", a.heads);
  if (!(a.dropout >= 0.0 && a.dropout < 1.0)) site.fail("dropout", fmt::format("must be in [0, 1), got {}", a.dropout));
  if (in.size() != 2 || in[1] % 3 != 0) {
    site.fail("inputs", fmt::format("needs a fused q|k|v input [T, 3*D], got {}", shape_to_string(in)));
  }
  const int64_t hidden = in[1] / 3;
  if (hidden % a.heads != 0) site.fail("heads", fmt::format("{} heads do not divide the width {}", a.heads, hidden));
  layer.output_shape = {in[0], hidden};
}

}  // namespace

void infer_output_shape(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  layer.output_is_tokens = false;
  switch (layer.kind) {
    case OpKind::input: {
      const auto& a = layer.attr<InputAttrs>();
      if (a.shape.empty()) site.fail("shape", "must list the per-sample dimensions, e.g. [3, 224, 224]");
      for (int64_t d : a.shape) require_positive(site, "shape", d);
      if (a.tokens && a.shape.size() != 1) site.fail("shape", "a token input is a sequence: [T]");
      layer.output_shape = a.shape;
      layer.output_is_tokens = a.tokens;
      return;
    }
    case OpKind::conv2d:
      return infer_conv2d(layer, producers, site);
    case OpKind::maxpool:
    case OpKind::avgpool:
      return infer_pool(layer, producers, site);
    case OpKind::adaptive_avgpool: {
      const auto& a = layer.attr<AdaptiveAvgPoolAttrs>();
      const Shape& in = require_image(site, producers);
      require_positive(site, "output_size", a.output_size);
      if (a.output_size.h > in[1] || a.output_size.w > in[2]) {
        site.fail("output_size", fmt::format("[{}, {}] is larger than the input {}", a.output_size.h, a.output_size.w,
                                             shape_to_string(in)));
      }
      layer.output_shape = {in[0], a.output_size.h, a.output_size.w};
      return;
    }
    case OpKind::linear:
      return infer_linear(layer, producers, site);
    case OpKind::dropout: {
      const double p = layer.attr<DropoutAttrs>().probability;
      if (!(p >= 0.0 && p < 1.0)) site.fail("probability", fmt::format("must be in [0, 1), got {}", p));
      return infer_same_shape(layer, producers, site);
    }
    case OpKind::batchnorm:
    case OpKind::layernorm: {
      if (!(layer.attr<NormAttrs>().epsilon > 0.0)) site.fail("epsilon", "must be positive");
      return infer_same_shape(layer, producers, site);
    }
    case OpKind::relu:
    case OpKind::gelu:
      return infer_same_shape(layer, producers, site);
    case OpKind::flatten:
      require_values(site, *producers[0]);
      layer.output_shape = {num_elements(only_input(producers))};
      return;
    case OpKind::add:
      return infer_add(layer, producers, site);
    case OpKind::concat:
      return infer_concat(layer, producers, site);
    case OpKind::embedding:
      return infer_embedding(layer, producers, site);
    case OpKind::matmul:
      return infer_matmul(layer, producers, site);
    case OpKind::self_attention:
      return infer_self_attention(layer, producers, site);
    case OpKind::softmax_cross_entropy:
      require_values(site, *producers[0]);
      layer.output_shape = {1};  // the loss of the sample (averaged over its positions for sequences)
      return;
  }
  throw std::logic_error("unhandled OpKind in shape inference");
}

}  // namespace splitbrain::model
