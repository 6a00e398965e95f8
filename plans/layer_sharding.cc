#include "plans/layer_sharding.h"

#include <algorithm>

namespace splitbrain::plans {

namespace {
// One mapping from role to member for both the const and the mutable accessor.
template <class Sharding>
auto& role_axes(Sharding& sharding, ShardRole role) {
  switch (role) {
    case ShardRole::batch:
      return sharding.batch;
    case ShardRole::out:
      return sharding.out;
    case ShardRole::in:
      return sharding.in;
    case ShardRole::spatial:
      return sharding.spatial;
  }
  return sharding.batch;
}
}  // namespace

const std::vector<int>& LayerSharding::axes(ShardRole role) const { return role_axes(*this, role); }
std::vector<int>& LayerSharding::axes(ShardRole role) { return role_axes(*this, role); }

bool LayerSharding::uses(int axis) const {
  for (const std::vector<int>* list : {&batch, &out, &in, &spatial}) {
    if (std::find(list->begin(), list->end(), axis) != list->end()) return true;
  }
  return false;
}

std::string_view role_name(ShardRole role) {
  switch (role) {
    case ShardRole::batch:
      return "batch";
    case ShardRole::out:
      return "out";
    case ShardRole::in:
      return "in";
    case ShardRole::spatial:
      return "spatial";
  }
  return "unknown";
}

}  // namespace splitbrain::plans
