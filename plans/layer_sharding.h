#pragma once
// How one layer is split over the mesh, in the vocabulary every op shares: which mesh axes split
// each *role* of the layer. The op's sharding rule (plans/op_sharding.h) turns roles into the
// layouts of its input, weight and output tensors.
//
//   batch     the samples (dimension 0 of activations): data parallelism.
//   out       the output features / channels (weight rows): model parallelism, Gholami's Pr.
//             Also the channel dimension of channel-preserving ops, and attention heads.
//   in        the contraction dimension (input features / channels): each rank holds a slice of
//             the weight's columns and produces a partial sum of the output (SoyBean's third
//             aligned tiling).
//   spatial   the height of an image (with halo exchange for convolutions) or the positions of
//             a sequence: domain parallelism.
// A mesh axis used by no role replicates the layer: its ranks compute the same thing.

#include <string>
#include <vector>

namespace splitbrain::plans {

enum class ShardRole { batch, out, in, spatial };
constexpr int kShardRoleCount = 4;

struct LayerSharding {
  std::vector<int> batch;  // mesh axis indices, outermost first
  std::vector<int> out;
  std::vector<int> in;
  std::vector<int> spatial;

  const std::vector<int>& axes(ShardRole role) const;
  std::vector<int>& axes(ShardRole role);
  bool uses(int axis) const;
  friend bool operator==(const LayerSharding&, const LayerSharding&) = default;
};

std::string_view role_name(ShardRole role);  // "batch", "out", "in", "spatial"

}  // namespace splitbrain::plans
