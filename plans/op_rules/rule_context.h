#pragma once
// What every op's sharding rule builds with: the layer, its roles' mesh axes, layouts of tensors
// split by roles (checked to divide evenly), parameter shards, and errors naming the layer and role.

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/layer.h"
#include "plans/layer_sharding.h"
#include "plans/mesh.h"
#include "plans/op_sharding.h"
#include "plans/tensor_layout.h"

namespace splitbrain::plans {

// Which dimension of an activation each role splits. Images [N, C, H, W]: channels 1, height 2.
// Flat [N, F]: features 1. Sequences [N, T, D]: features 2, positions 1. Tokens [N, T]: positions 1.
struct RoleDims {
  int channel = -1;
  int spatial = -1;
};
RoleDims role_dims(const std::vector<int64_t>& shape, bool tokens);

class RuleContext {
 public:
  RuleContext(const model::Layer& layer, const LayerSharding& sharding, const Mesh& mesh)
      : layer_(layer), sharding_(sharding), mesh_(mesh) {}

  [[noreturn]] void fail(ShardRole role, std::string_view problem) const;

  const std::vector<int>& axes(ShardRole role) const { return sharding_.axes(role); }
  bool splits(ShardRole role) const { return !axes(role).empty(); }
  int ways(ShardRole role) const { return mesh_.group_size(axes(role)); }

  // Requires that `extent` (named `what`) divides evenly among the ranks of the role's axes.
  void require_divisible(ShardRole role, std::string_view what, int64_t extent) const;

  // A layout of a tensor of `shape` where each role in `placement` splits the given dim, and the
  // roles in `partial` leave partial sums.
  TensorLayout layout(const std::vector<int64_t>& shape, std::initializer_list<std::pair<ShardRole, int>> placement,
                      std::initializer_list<ShardRole> partial = {}) const;
  ParameterShard parameter(std::vector<int64_t> shape,
                           std::initializer_list<std::pair<ShardRole, int>> placement) const;

  std::vector<int> axes_of(std::initializer_list<ShardRole> roles) const;
  double work_fraction() const;

  const Mesh& mesh() const { return mesh_; }
  const model::Layer& layer() const { return layer_; }

 private:
  std::string axis_names(ShardRole role) const;

  const model::Layer& layer_;
  const LayerSharding& sharding_;
  const Mesh& mesh_;
};

struct LayoutRequest;

// The rows of a [..., features] tensor: every dim but the last.
inline int64_t rows_of(const std::vector<int64_t>& shape) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
  return rows;
}

// The role sets ops allow.
inline bool any_role(ShardRole) { return true; }
inline bool any_role_but_in(ShardRole role) { return role != ShardRole::in; }  // no partial inputs
inline bool batch_or_out(ShardRole role) { return role == ShardRole::batch || role == ShardRole::out; }
inline bool batch_or_spatial(ShardRole role) { return role == ShardRole::batch || role == ShardRole::spatial; }
inline bool batch_only(ShardRole role) { return role == ShardRole::batch; }

// The common case: every input and the output split alike (batch, channels, height or positions).
void same_layout_everywhere(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out);

}  // namespace splitbrain::plans
