#include "sim/kernel_problem.h"

#include <fmt/format.h>

#include <algorithm>

namespace splitbrain::sim {

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
  // Planned pooling pads both sides alike (a height split needs windows that tile, unpadded).
  return fmt::format("{} n{} c{} h{} w{} r{}x{} s{}x{} p{},{}{}", p.max ? "maxpool" : "avgpool", p.batch, p.channels,
                     p.height, p.width, p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_top, p.pad_left,
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
  // A multi-head problem (kv_heads 0) without rotation, fused memory or a share of the queries
  // keeps the key it had before any of them existed.
  return fmt::format("attention n{} t{} heads{} d{}{}{}{}{}{}", p.batch, p.seq, p.heads, p.head_dim,
                     p.causal ? " causal" : "", p.kv_heads > 0 ? fmt::format(" kv{}", p.kv_heads) : "",
                     p.rope ? " rope" : "", p.fused ? " fused" : "",
                     p.queries > 0 ? fmt::format(" queries{}", p.queries) : "");
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
