#include "model/op.h"

#include <array>
#include <stdexcept>

namespace splitbrain::model {
namespace {

struct OpInfo {
  OpKind kind;
  std::string_view name;
  int min_inputs;
  int max_inputs;
};

constexpr std::array kOps = {
    OpInfo{OpKind::input, "input", 0, 0},
    OpInfo{OpKind::conv2d, "conv2d", 1, 1},
    OpInfo{OpKind::linear, "linear", 1, 1},
    OpInfo{OpKind::maxpool, "maxpool", 1, 1},
    OpInfo{OpKind::avgpool, "avgpool", 1, 1},
    OpInfo{OpKind::adaptive_avgpool, "adaptive_avgpool", 1, 1},
    OpInfo{OpKind::relu, "relu", 1, 1},
    OpInfo{OpKind::gelu, "gelu", 1, 1},
    OpInfo{OpKind::dropout, "dropout", 1, 1},
    OpInfo{OpKind::flatten, "flatten", 1, 1},
    OpInfo{OpKind::batchnorm, "batchnorm", 1, 1},
    OpInfo{OpKind::layernorm, "layernorm", 1, 1},
    OpInfo{OpKind::add, "add", 2, -1},
    OpInfo{OpKind::concat, "concat", 2, -1},
    OpInfo{OpKind::embedding, "embedding", 1, 1},
    OpInfo{OpKind::matmul, "matmul", 2, 2},
    OpInfo{OpKind::self_attention, "self_attention", 1, 1},
    OpInfo{OpKind::softmax_cross_entropy, "softmax_cross_entropy", 1, 1},
};

const OpInfo& info(OpKind kind) {
  for (const OpInfo& op : kOps) {
    if (op.kind == kind) return op;
  }
  throw std::logic_error("OpKind missing from the op table");
}

constexpr std::array<OpKind, kOps.size()> kinds_of_table() {
  std::array<OpKind, kOps.size()> kinds{};
  for (size_t i = 0; i < kOps.size(); ++i) kinds[i] = kOps[i].kind;
  return kinds;
}
constexpr auto kKinds = kinds_of_table();

}  // namespace

std::string_view op_name(OpKind kind) { return info(kind).name; }

std::optional<OpKind> op_kind_from_name(std::string_view name) {
  for (const OpInfo& op : kOps) {
    if (op.name == name) return op.kind;
  }
  return std::nullopt;
}

std::span<const OpKind> all_op_kinds() { return kKinds; }

std::pair<int, int> input_arity(OpKind kind) { return {info(kind).min_inputs, info(kind).max_inputs}; }

OpAttrs default_attrs(OpKind kind) {
  switch (kind) {
    case OpKind::input:
      return InputAttrs{};
    case OpKind::conv2d:
      return Conv2dAttrs{};
    case OpKind::linear:
      return LinearAttrs{};
    case OpKind::maxpool:
    case OpKind::avgpool:
      return Pool2dAttrs{};
    case OpKind::adaptive_avgpool:
      return AdaptiveAvgPoolAttrs{};
    case OpKind::dropout:
      return DropoutAttrs{};
    case OpKind::batchnorm:
    case OpKind::layernorm:
      return NormAttrs{};
    case OpKind::concat:
      return ConcatAttrs{};
    case OpKind::embedding:
      return EmbeddingAttrs{};
    case OpKind::matmul:
      return MatMulAttrs{};
    case OpKind::self_attention:
      return SelfAttentionAttrs{};
    case OpKind::relu:
    case OpKind::gelu:
    case OpKind::flatten:
    case OpKind::add:
    case OpKind::softmax_cross_entropy:
      return NoAttrs{};
  }
  throw std::logic_error("unhandled OpKind");
}

}  // namespace splitbrain::model
