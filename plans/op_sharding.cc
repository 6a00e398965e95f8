#include "plans/op_sharding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "plans/plan_error.h"
#include "plans/transfers.h"

namespace splitbrain::plans {
namespace {

using model::Layer;
using model::OpKind;

constexpr std::array kAllRoles = {ShardRole::batch, ShardRole::out, ShardRole::in, ShardRole::spatial};
constexpr int64_t kStatisticBytes = 8;  // batchnorm statistics are summed in fp64 (E[x^2] - E[x]^2 cancels)

// Which dimension of an activation each role splits. Images [N, C, H, W]: channels 1, height 2.
// Flat [N, F]: features 1. Sequences [N, T, D]: features 2, positions 1. Tokens [N, T]: positions 1.
struct RoleDims {
  int channel = -1;
  int spatial = -1;
};

RoleDims role_dims(const std::vector<int64_t>& shape, bool tokens) {
  switch (shape.size()) {
    case 4:
      return {1, 2};
    case 3:
      return {2, 1};
    case 2:
      return tokens ? RoleDims{-1, 1} : RoleDims{1, -1};
    default:
      return {};
  }
}

// Builds layouts and reports errors for one layer.
class RuleContext {
 public:
  RuleContext(const Layer& layer, const LayerSharding& sharding, const Mesh& mesh)
      : layer_(layer), sharding_(sharding), mesh_(mesh) {}

  [[noreturn]] void fail(ShardRole role, std::string_view problem) const {
    throw PlanError(fmt::format("layer '{}': role '{}': {}", layer_.name, role_name(role), problem));
  }

  const std::vector<int>& axes(ShardRole role) const { return sharding_.axes(role); }
  int ways(ShardRole role) const { return mesh_.group_size(axes(role)); }

  // Requires that `extent` (named `what`) divides evenly among the ranks of the role's axes.
  void require_divisible(ShardRole role, std::string_view what, int64_t extent) const {
    const int n = ways(role);
    if (extent % n != 0) {
      fail(role, fmt::format("{} {} cannot be split evenly over {} ranks ({})", extent, what, n, axis_names(role)));
    }
  }

  // A layout of a tensor of `shape` where each role in `placement` splits the given dim.
  TensorLayout layout(const std::vector<int64_t>& shape, std::initializer_list<std::pair<ShardRole, int>> placement,
                      std::initializer_list<ShardRole> partial = {}) const {
    TensorLayout result = replicated(static_cast<int>(shape.size()));
    for (const auto& [role, dim] : placement) {
      if (axes(role).empty()) continue;
      if (dim < 0 || dim >= static_cast<int>(shape.size())) {
        fail(role, fmt::format("the tensor {} has no dimension for it", shape_text(shape)));
      }
      require_divisible(role, fmt::format("elements of dimension {} of {}", dim, shape_text(shape)),
                        shape[static_cast<size_t>(dim)]);
      auto& list = result.dim_axes[static_cast<size_t>(dim)];
      list.insert(list.end(), axes(role).begin(), axes(role).end());
    }
    for (ShardRole role : partial) {
      result.partial_axes.insert(result.partial_axes.end(), axes(role).begin(), axes(role).end());
    }
    validate(result, mesh_, shape);
    return result;
  }

  ParameterShard parameter(std::vector<int64_t> shape,
                           std::initializer_list<std::pair<ShardRole, int>> placement) const {
    ParameterShard shard;
    shard.layout = layout(shape, placement);
    shard.local_elements = local_element_count(shard.layout, mesh_, shape);
    shard.global_shape = std::move(shape);
    return shard;
  }

  std::vector<int> axes_of(std::initializer_list<ShardRole> roles) const {
    std::vector<int> result;
    for (ShardRole role : roles) result.insert(result.end(), axes(role).begin(), axes(role).end());
    return result;
  }

  double work_fraction() const {
    return 1.0 / mesh_.group_size(axes_of({ShardRole::batch, ShardRole::out, ShardRole::in, ShardRole::spatial}));
  }

  const Mesh& mesh() const { return mesh_; }
  const Layer& layer() const { return layer_; }

 private:
  std::string axis_names(ShardRole role) const {
    std::vector<std::string> names;
    for (int axis : axes(role)) names.push_back(mesh_.axis(axis).name);
    return fmt::format("{}", fmt::join(names, "+"));
  }
  static std::string shape_text(const std::vector<int64_t>& shape) {
    return fmt::format("[{}]", fmt::join(shape, ", "));
  }

  const Layer& layer_;
  const LayerSharding& sharding_;
  const Mesh& mesh_;
};

void check_axes(const Layer& layer, const LayerSharding& sharding, const Mesh& mesh) {
  std::vector<int> seen;
  for (ShardRole role : kAllRoles) {
    for (int axis : sharding.axes(role)) {
      if (axis < 0 || axis >= mesh.axis_count()) {
        throw PlanError(
            fmt::format("layer '{}': role '{}': mesh axis {} does not exist", layer.name, role_name(role), axis));
      }
      if (std::find(seen.begin(), seen.end(), axis) != seen.end()) {
        throw PlanError(fmt::format("layer '{}': role '{}': mesh axis '{}' is already used by another role", layer.name,
                                    role_name(role), mesh.axis(axis).name));
      }
      seen.push_back(axis);
    }
    if (!sharding.axes(role).empty() && !role_allowed(layer, role)) {
      throw PlanError(fmt::format("layer '{}': role '{}': a {} layer cannot be split this way", layer.name,
                                  role_name(role), model::op_name(layer.kind)));
    }
  }
}

// Batchnorm over a split batch or height needs the statistics of all samples: two all-reduces
// of 2 fp64 values per local channel (sum and sum of squares forward; the two gradient sums
// backward).
void add_batchnorm_statistics(const RuleContext& rule, int64_t local_channels, LayerLayouts& out) {
  const std::vector<int> axes = rule.axes_of({ShardRole::batch, ShardRole::spatial});
  if (rule.mesh().group_size(axes) == 1) return;
  Collective statistics;
  statistics.kind = CollectiveKind::all_reduce;
  statistics.axes = axes;
  statistics.group_size = rule.mesh().group_size(axes);
  statistics.buffer_bytes = 2 * local_channels * kStatisticBytes;
  statistics.element_bytes = kStatisticBytes;
  out.forward_internal.push_back(statistics);
  // Backward sums are needed for the input gradient only (parameter gradients use local sums).
  if (rule.layer().needs_input_gradient) out.backward_internal.push_back(statistics);
}

}  // namespace

bool role_allowed(const Layer& layer, ShardRole role) {
  switch (layer.kind) {
    case OpKind::conv2d:
    case OpKind::linear:
    case OpKind::embedding:
      return true;
    case OpKind::input:
    case OpKind::maxpool:
    case OpKind::avgpool:
    case OpKind::relu:
    case OpKind::gelu:
    case OpKind::dropout:
    case OpKind::batchnorm:
    case OpKind::add:
    case OpKind::concat:
      return role != ShardRole::in;
    case OpKind::adaptive_avgpool:
    case OpKind::flatten:
    case OpKind::self_attention:
      return role == ShardRole::batch || role == ShardRole::out;
    case OpKind::layernorm:
    case OpKind::softmax_cross_entropy:
      return role == ShardRole::batch || role == ShardRole::spatial;
    case OpKind::matmul:
      return role == ShardRole::batch;
  }
  return false;
}

bool chooses_own_sharding(const Layer& layer) {
  if (layer.kind == OpKind::input || layer.inputs.empty() || layer.cost.params > 0) return true;
  return layer.kind == OpKind::linear && !layer.attr<model::LinearAttrs>().tied_to.empty();
}

LayerSharding inherited_sharding(const Layer& layer, const LayerSharding& producer) {
  LayerSharding inherited = producer;
  for (ShardRole role : kAllRoles) {
    if (!role_allowed(layer, role)) inherited.axes(role).clear();
  }
  return inherited;
}

std::vector<int64_t> activation_shape(const Layer& layer, int64_t batch) {
  return model::with_batch(layer.output_shape, batch);
}

LayerLayouts layer_layouts(const model::Model& model, int index, const LayerSharding& sharding, const Mesh& mesh,
                           int64_t batch, model::DType dtype, bool holds_tied_copy) {
  const Layer& layer = model.layer(index);
  check_axes(layer, sharding, mesh);
  const RuleContext rule(layer, sharding, mesh);
  using R = ShardRole;

  const std::vector<int64_t> y_shape = activation_shape(layer, batch);
  const RoleDims y_dims = role_dims(y_shape, layer.output_is_tokens);
  std::vector<std::vector<int64_t>> x_shapes;
  for (int producer : layer.inputs) x_shapes.push_back(activation_shape(model.layer(producer), batch));

  LayerLayouts out;
  out.work_fraction = rule.work_fraction();
  // The common case: inputs and output split alike (batch, channels, height or positions).
  auto same_layout_everywhere = [&] {
    out.output = rule.layout(y_shape, {{R::batch, 0}, {R::out, y_dims.channel}, {R::spatial, y_dims.spatial}});
    for (const auto& x_shape : x_shapes) {
      const RoleDims d = role_dims(x_shape, false);
      out.inputs.push_back(rule.layout(x_shape, {{R::batch, 0}, {R::out, d.channel}, {R::spatial, d.spatial}}));
    }
  };

  switch (layer.kind) {
    case OpKind::input:
      out.output = rule.layout(y_shape, {{R::batch, 0}, {R::out, y_dims.channel}, {R::spatial, y_dims.spatial}});
      break;

    case OpKind::conv2d: {
      const auto& a = layer.attr<model::Conv2dAttrs>();
      const auto& x = x_shapes[0];
      if (!sharding.in.empty() && a.groups != 1)
        rule.fail(R::in, "grouped convolutions cannot split their input channels");
      if (!sharding.spatial.empty()) {
        const bool same_size = a.stride == model::Size2{1, 1} && a.dilation == model::Size2{1, 1} &&
                               a.kernel.h % 2 == 1 && a.padding.h == a.kernel.h / 2;
        if (!same_size) rule.fail(R::spatial, "only stride-1, odd-kernel, same-padded convolutions split their height");
      }
      out.inputs.push_back(rule.layout(x, {{R::batch, 0}, {R::in, 1}, {R::spatial, 2}}));
      out.output = rule.layout(y_shape, {{R::batch, 0}, {R::out, 1}, {R::spatial, 2}}, {R::in});
      out.input_gradients.push_back(rule.layout(x, {{R::batch, 0}, {R::in, 1}, {R::spatial, 2}}, {R::out}));
      out.parameters.push_back(
          rule.parameter({a.out_channels, x[1] / a.groups, a.kernel.h, a.kernel.w}, {{R::out, 0}, {R::in, 1}}));
      if (a.bias) out.parameters.push_back(rule.parameter({a.out_channels}, {{R::out, 0}}));
      if (!sharding.spatial.empty() && a.kernel.h > 1) {
        const Collective halo =
            halo_exchange(out.inputs[0], mesh, x, model::bytes_per_element(dtype), 2, a.kernel.h / 2);
        out.forward_internal.push_back(halo);
        // The halo rows' gradients go back to their owners: only when an input gradient is made.
        if (layer.needs_input_gradient) out.backward_internal.push_back(halo);
      }
      break;
    }

    case OpKind::linear: {
      const auto& a = layer.attr<model::LinearAttrs>();
      const auto& x = x_shapes[0];
      const int features = static_cast<int>(x.size()) - 1;
      const int positions = x.size() == 3 ? 1 : -1;
      out.inputs.push_back(rule.layout(x, {{R::batch, 0}, {R::in, features}, {R::spatial, positions}}));
      out.output = rule.layout(y_shape, {{R::batch, 0}, {R::out, features}, {R::spatial, positions}}, {R::in});
      out.input_gradients.push_back(
          rule.layout(x, {{R::batch, 0}, {R::in, features}, {R::spatial, positions}}, {R::out}));
      // A tied weight belongs to its embedding, which holds (and synchronises) the shard.
      if (a.tied_to.empty() || holds_tied_copy)
        out.parameters.push_back(rule.parameter({a.out_features, a.in_features}, {{R::out, 0}, {R::in, 1}}));
      if (a.bias) out.parameters.push_back(rule.parameter({a.out_features}, {{R::out, 0}}));
      break;
    }

    case OpKind::embedding: {
      const auto& a = layer.attr<model::EmbeddingAttrs>();
      out.inputs.push_back(rule.layout(x_shapes[0], {{R::batch, 0}, {R::spatial, 1}}));
      out.output = rule.layout(y_shape, {{R::batch, 0}, {R::out, 2}, {R::spatial, 1}}, {R::in});
      out.input_gradients.push_back(out.inputs[0]);  // token ids have no gradient; kept for symmetry
      out.parameters.push_back(rule.parameter({a.num_embeddings, a.embedding_dim}, {{R::in, 0}, {R::out, 1}}));
      break;
    }

    case OpKind::maxpool:
    case OpKind::avgpool: {
      const auto& a = layer.attr<model::Pool2dAttrs>();
      if (!sharding.spatial.empty()) {
        const bool tiles = a.kernel == a.stride && a.padding == model::Size2{0, 0} && !a.ceil_mode;
        if (!tiles)
          rule.fail(R::spatial,
                    "only pooling whose windows tile the input (kernel = stride, no padding) splits its height");
      }
      same_layout_everywhere();
      break;
    }

    case OpKind::batchnorm: {
      same_layout_everywhere();
      const int64_t channels = y_shape[static_cast<size_t>(y_dims.channel)];
      out.parameters.push_back(rule.parameter({channels}, {{R::out, 0}}));
      out.parameters.push_back(rule.parameter({channels}, {{R::out, 0}}));
      add_batchnorm_statistics(rule, channels / rule.ways(R::out), out);
      break;
    }

    case OpKind::layernorm: {
      same_layout_everywhere();
      const int64_t features = y_shape.back();
      out.parameters.push_back(rule.parameter({features}, {}));
      out.parameters.push_back(rule.parameter({features}, {}));
      break;
    }

    case OpKind::concat: {
      const int axis = static_cast<int>(layer.attr<model::ConcatAttrs>().axis) + 1;
      if (axis == y_dims.channel && !sharding.out.empty())
        rule.fail(R::out, "the channels are the concatenated dimension");
      if (axis == y_dims.spatial && !sharding.spatial.empty())
        rule.fail(R::spatial, "the height is the concatenated dimension");
      same_layout_everywhere();
      break;
    }

    case OpKind::flatten: {
      const auto& x = x_shapes[0];
      if (!sharding.out.empty() && role_dims(x, false).channel != 1) {
        rule.fail(R::out, "only the leading feature dimension stays contiguous when flattened");
      }
      out.inputs.push_back(rule.layout(x, {{R::batch, 0}, {R::out, 1}}));
      out.output = rule.layout(y_shape, {{R::batch, 0}, {R::out, 1}});
      break;
    }

    case OpKind::self_attention: {
      // The fused input is head-major ([head][q|k|v][head_dim]), so contiguous blocks of the
      // features are whole heads: splitting `out` splits the heads.
      rule.require_divisible(R::out, "attention heads", layer.attr<model::SelfAttentionAttrs>().heads);
      out.inputs.push_back(rule.layout(x_shapes[0], {{R::batch, 0}, {R::out, 2}}));
      out.output = rule.layout(y_shape, {{R::batch, 0}, {R::out, 2}});
      break;
    }

    case OpKind::softmax_cross_entropy: {
      const auto& x = x_shapes[0];
      const int positions = x.size() == 3 ? 1 : -1;
      out.inputs.push_back(rule.layout(x, {{R::batch, 0}, {R::spatial, positions}}));
      // With the positions split, each rank holds its positions' share of the per-sample loss.
      out.output = rule.layout(y_shape, {{R::batch, 0}}, {R::spatial});
      break;
    }

    case OpKind::matmul:
    case OpKind::adaptive_avgpool:
    case OpKind::relu:
    case OpKind::gelu:
    case OpKind::dropout:
    case OpKind::add:
      same_layout_everywhere();
      break;
  }

  if (out.input_gradients.empty()) out.input_gradients = out.inputs;
  if (!out.parameters.empty()) out.gradient_sync_axes = rule.axes_of({R::batch, R::spatial});
  return out;
}

}  // namespace splitbrain::plans
