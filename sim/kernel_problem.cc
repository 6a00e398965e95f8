#include "sim/kernel_problem.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "plans/tensor_layout.h"

namespace splitbrain::sim {

namespace {

ConvProblem conv_problem(const model::Layer& layer, const plans::LayerLayouts& layouts, const plans::Mesh& mesh,
                         const std::vector<int64_t>& x) {
  const auto& attrs = layer.attr<model::Conv2dAttrs>();
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

PoolProblem pool_problem(const model::Layer& layer, const std::vector<int64_t>& x) {
  const auto& attrs = layer.attr<model::Pool2dAttrs>();
  PoolProblem problem;
  problem.max = layer.kind == model::OpKind::maxpool;
  problem.batch = x.at(0);
  problem.channels = x.at(1);
  problem.height = x.at(2);
  problem.width = x.at(3);
  problem.kernel_h = attrs.kernel.h;
  problem.kernel_w = attrs.kernel.w;
  problem.stride_h = attrs.stride.h;
  problem.stride_w = attrs.stride.w;
  problem.pad_h = attrs.padding.h;
  problem.pad_w = attrs.padding.w;
  problem.ceil_mode = attrs.ceil_mode;
  return problem;
}

// The rows of a [..., features] tensor: every dim but the last.
int64_t rows_of(const std::vector<int64_t>& shape) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
  return rows;
}

}  // namespace

std::optional<KernelProblem> kernel_problem(const model::Model& model, int index, const plans::LayerLayouts& layouts,
                                            const plans::Mesh& mesh, int64_t micro_batch) {
  const model::Layer& layer = model.layer(index);
  if (layouts.inputs.empty() || micro_batch <= 0 || layouts.work_fraction <= 0.0) return std::nullopt;
  const model::Layer& producer = model.layer(layer.inputs.at(0));
  const std::vector<int64_t> x =
      plans::local_shape(layouts.inputs[0], mesh, plans::activation_shape(producer, micro_batch));
  switch (layer.kind) {
    case model::OpKind::conv2d:
      if (layouts.parameters.empty()) return std::nullopt;
      return conv_problem(layer, layouts, mesh, x);
    case model::OpKind::maxpool:
    case model::OpKind::avgpool:
      if (x.size() != 4) return std::nullopt;
      return pool_problem(layer, x);
    case model::OpKind::relu:
    case model::OpKind::gelu:
    case model::OpKind::dropout: {
      int64_t elements = 1;
      for (int64_t extent : x) elements *= extent;
      const double p = layer.kind == model::OpKind::dropout ? layer.attr<model::DropoutAttrs>().probability : 0.0;
      return ActivationProblem{layer.kind, elements, p};
    }
    case model::OpKind::linear: {
      const std::vector<int64_t> y =
          plans::local_shape(layouts.output, mesh, plans::activation_shape(layer, micro_batch));
      LinearProblem problem;
      problem.rows = rows_of(x);
      problem.in_features = x.back();
      problem.out_features = y.back();
      problem.bias = layer.attr<model::LinearAttrs>().bias;
      return problem;
    }
    case model::OpKind::self_attention: {
      const auto& attention = layer.attr<model::SelfAttentionAttrs>();
      const std::vector<int64_t> global = plans::activation_shape(layer, micro_batch);
      const std::vector<int64_t> y = plans::local_shape(layouts.output, mesh, global);
      if (attention.dropout > 0.0 || x.size() != 3 || y.size() != 3 || attention.heads <= 0) return std::nullopt;
      const int64_t head_dim = global.back() / attention.heads;
      if (head_dim <= 0 || y.back() % head_dim != 0) return std::nullopt;
      return AttentionProblem{x[0], x[1], y.back() / head_dim, head_dim, attention.causal};
    }
    case model::OpKind::layernorm:
      return LayerNormProblem{rows_of(x), x.back()};
    case model::OpKind::softmax_cross_entropy:
      return LossProblem{rows_of(x), x.back()};
    default:
      return std::nullopt;
  }
}

namespace {

// The field that holds a problem's work items (kernel_problem.h's work_items).
int64_t& work_field(ConvProblem& p) { return p.batch; }
int64_t& work_field(PoolProblem& p) { return p.batch; }
int64_t& work_field(ActivationProblem& p) { return p.elements; }
int64_t& work_field(LinearProblem& p) { return p.rows; }
int64_t& work_field(AttentionProblem& p) { return p.batch; }
int64_t& work_field(LayerNormProblem& p) { return p.rows; }
int64_t& work_field(LossProblem& p) { return p.rows; }

}  // namespace

int64_t work_items(const KernelProblem& problem) {
  return std::visit([](auto p) { return work_field(p); }, problem);
}

KernelProblem with_work_items(const KernelProblem& problem, int64_t items) {
  return std::visit(
      [items](auto p) -> KernelProblem {
        work_field(p) = items;
        return p;
      },
      problem);
}

int busy_ranks_per_node(const Cluster& cluster, const plans::Mesh& mesh) {
  const int per_node = cluster.levels.empty() ? 1 : cluster.levels.front().fan_out;
  return std::max(1, std::min(mesh.rank_count(), per_node));
}

namespace {

std::string problem_text(const ConvProblem& p) {
  return fmt::format("conv2d n{} c{} h{} w{} k{} r{}x{} s{}x{} p{},{},{},{} d{}x{} g{}{}", p.batch, p.in_channels,
                     p.height, p.width, p.out_channels, p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_top,
                     p.pad_bottom, p.pad_left, p.pad_right, p.dilation_h, p.dilation_w, p.groups,
                     p.bias ? " bias" : "");
}

std::string problem_text(const PoolProblem& p) {
  return fmt::format("{} n{} c{} h{} w{} r{}x{} s{}x{} p{},{}{}", p.max ? "maxpool" : "avgpool", p.batch, p.channels,
                     p.height, p.width, p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_h, p.pad_w,
                     p.ceil_mode ? " ceil" : "");
}

std::string problem_text(const ActivationProblem& p) {
  if (p.kind == model::OpKind::dropout) return fmt::format("dropout {} p{}", p.elements, p.drop_probability);
  return fmt::format("{} {}", model::op_name(p.kind), p.elements);
}

std::string problem_text(const LinearProblem& p) {
  return fmt::format("linear m{} k{} n{}{}", p.rows, p.in_features, p.out_features, p.bias ? " bias" : "");
}

std::string problem_text(const AttentionProblem& p) {
  return fmt::format("attention n{} t{} heads{} d{}{}", p.batch, p.seq, p.heads, p.head_dim, p.causal ? " causal" : "");
}

std::string problem_text(const LayerNormProblem& p) { return fmt::format("layernorm m{} k{}", p.rows, p.features); }

std::string problem_text(const LossProblem& p) {
  return fmt::format("softmax_cross_entropy m{} k{}", p.rows, p.classes);
}

}  // namespace

std::string kernel_key(const KernelProblem& problem, int busy_ranks, CacheState caches) {
  return fmt::format("{}, {} busy{}", std::visit([](const auto& p) { return problem_text(p); }, problem), busy_ranks,
                     caches == CacheState::warm ? ", caches warm" : "");
}

}  // namespace splitbrain::sim
