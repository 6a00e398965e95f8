#include "sim/kernel_problem.h"

#include <fmt/format.h>

#include <algorithm>

#include "plans/tensor_layout.h"

namespace splitbrain::sim {

std::optional<ConvProblem> conv_problem(const model::Model& model, int index, const plans::LayerLayouts& layouts,
                                        const plans::Mesh& mesh, int64_t micro_batch) {
  const model::Layer& layer = model.layer(index);
  if (layer.kind != model::OpKind::conv2d || layouts.inputs.empty() || layouts.parameters.empty() || micro_batch <= 0 ||
      layouts.work_fraction <= 0.0) {
    return std::nullopt;
  }
  const auto& attrs = layer.attr<model::Conv2dAttrs>();
  const model::Layer& producer = model.layer(layer.inputs.at(0));
  const std::vector<int64_t> x = plans::local_shape(layouts.inputs[0], mesh, plans::activation_shape(producer, micro_batch));
  const plans::ParameterShard& weight = layouts.parameters[0];
  const std::vector<int64_t> w = plans::local_shape(weight.layout, mesh, weight.global_shape);
  // A height split receives its neighbours' boundary rows (zeros at the image's edges), so its
  // kernel reads the extended block and pads only the width: the executor's Conv2dOp.
  const int64_t halo_rows = layouts.forward_internal.empty() ? 0 : layouts.forward_internal.front().halo_rows;
  ConvProblem problem;
  problem.batch = x.at(0);
  problem.in_channels = x.at(1);
  problem.height = x.at(2) + 2 * halo_rows;
  problem.width = x.at(3);
  problem.out_channels = w.at(0);
  problem.kernel_h = attrs.kernel.h;
  problem.kernel_w = attrs.kernel.w;
  problem.stride_h = attrs.stride.h;
  problem.stride_w = attrs.stride.w;
  problem.pad_top = problem.pad_bottom = halo_rows > 0 ? 0 : attrs.padding.h;
  problem.pad_left = problem.pad_right = attrs.padding.w;
  problem.dilation_h = attrs.dilation.h;
  problem.dilation_w = attrs.dilation.w;
  problem.groups = attrs.groups;
  problem.bias = attrs.bias;
  return problem;
}

int busy_ranks_per_node(const Cluster& cluster, const plans::Mesh& mesh) {
  const int per_node = cluster.levels.empty() ? 1 : cluster.levels.front().fan_out;
  return std::max(1, std::min(mesh.rank_count(), per_node));
}

std::string kernel_key(const ConvProblem& p, int busy_ranks) {
  return fmt::format("conv2d n{} c{} h{} w{} k{} r{}x{} s{}x{} p{},{},{},{} d{}x{} g{}{}, {} busy", p.batch, p.in_channels,
                     p.height, p.width, p.out_channels, p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_top,
                     p.pad_bottom, p.pad_left, p.pad_right, p.dilation_h, p.dilation_w, p.groups, p.bias ? " bias" : "",
                     busy_ranks);
}

}  // namespace splitbrain::sim
