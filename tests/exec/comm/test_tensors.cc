#include "test_tensors.h"

#include <mpi.h>

#include <algorithm>

#include "plans/plan_error.h"

namespace splitbrain::exec::comm::testing {

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

float global_value(const std::vector<int64_t>& global_shape, const std::vector<int64_t>& index) {
  int64_t linear = 0;
  for (std::size_t d = 0; d < global_shape.size(); ++d) linear = linear * global_shape[d] + index[d];
  // A permutation-like pattern in [-100, 110]: neighbouring elements differ, so a block copied
  // from the wrong place or a sum over the wrong group gives a different number.
  return static_cast<float>((linear * 37) % 211 - 100);
}

LocalArray global_block(const std::vector<int64_t>& global_shape, const std::vector<int64_t>& offset,
                        const std::vector<int64_t>& extent) {
  LocalArray out{extent, {}};
  int64_t count = 1;
  for (int64_t e : extent) count *= e;
  out.values.reserve(static_cast<std::size_t>(count));
  std::vector<int64_t> local(extent.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    // Odometer decode of `flat` into the local multi-index, last dim fastest.
    int64_t rest = flat;
    for (std::size_t d = extent.size(); d-- > 0;) {
      local[d] = rest % extent[d];
      rest /= extent[d];
    }
    std::vector<int64_t> global(extent.size());
    bool inside = true;
    for (std::size_t d = 0; d < extent.size(); ++d) {
      global[d] = offset[d] + local[d];
      inside = inside && global[d] >= 0 && global[d] < global_shape[d];
    }
    out.values.push_back(inside ? global_value(global_shape, global) : 0.0f);
  }
  return out;
}

LocalArray shard(const std::vector<int64_t>& global_shape, const plans::TensorLayout& layout, const plans::Mesh& mesh,
                 int rank) {
  LocalArray block = global_block(global_shape, plans::local_offset(layout, mesh, global_shape, rank),
                                  plans::local_shape(layout, mesh, global_shape));
  if (layout.partial_axes.empty()) return block;
  const int m = mesh.group_size(layout.partial_axes);
  const int p = mesh.index_in_group(rank, layout.partial_axes);
  for (std::size_t e = 0; e < block.values.size(); ++e) {
    // Member q > 0 holds q * (1 + e % 4); member 0 holds the rest, so the parts sum to the value.
    const auto part = [&](int q) { return static_cast<float>(q * (1 + static_cast<int>(e % 4))); };
    float rest = block.values[e];
    for (int q = 1; q < m; ++q) rest -= part(q);
    block.values[e] = p == 0 ? rest : part(p);
  }
  return block;
}

std::vector<plans::TensorLayout> all_layouts(const plans::Mesh& mesh, const std::vector<int64_t>& global_shape) {
  const int dims = static_cast<int>(global_shape.size());
  const int axes = mesh.axis_count();
  const int roles = dims + 2;  // 0 replicated, 1 partial, 2 + d splits dim d
  int combos = 1;
  for (int a = 0; a < axes; ++a) combos *= roles;
  std::vector<plans::TensorLayout> layouts;
  for (int combo = 0; combo < combos; ++combo) {
    plans::TensorLayout base;
    base.dim_axes.resize(static_cast<std::size_t>(dims));
    int rest = combo;
    for (int a = 0; a < axes; ++a, rest /= roles) {
      const int role = rest % roles;
      if (role == 1) base.partial_axes.push_back(a);
      if (role >= 2) base.dim_axes[static_cast<std::size_t>(role - 2)].push_back(a);
    }
    // Every order of the axes within each dim (axes are listed ascending, so next_permutation
    // starts from the first order).
    std::vector<plans::TensorLayout> expanded{base};
    for (int d = 0; d < dims; ++d) {
      std::vector<plans::TensorLayout> next;
      for (const plans::TensorLayout& layout : expanded) {
        plans::TensorLayout variant = layout;
        auto& list = variant.dim_axes[static_cast<std::size_t>(d)];
        do {
          next.push_back(variant);
        } while (std::next_permutation(list.begin(), list.end()));
      }
      expanded = std::move(next);
    }
    for (const plans::TensorLayout& layout : expanded) {
      try {
        plans::validate(layout, mesh, global_shape);
        layouts.push_back(layout);
      } catch (const plans::PlanError&) {
        // An extent the axes do not divide: not a layout of this tensor.
      }
    }
  }
  return layouts;
}

std::vector<plans::Mesh> meshes_with(int ranks) {
  const std::vector<std::vector<plans::MeshAxis>> candidates = {
      {{"data", 1}},
      {{"data", 1}, {"model", 1}},
      {{"data", 2}},
      {{"data", 1}, {"model", 2}},
      {{"data", 2}, {"model", 2}},
      {{"data", 1}, {"model", 4}},
      {{"data", 4}},
      {{"data", 4}, {"model", 1}},
  };
  std::vector<plans::Mesh> meshes;
  for (const auto& axes : candidates) {
    plans::Mesh mesh(axes);
    if (mesh.rank_count() == ranks) meshes.push_back(mesh);
  }
  return meshes;
}

}  // namespace splitbrain::exec::comm::testing
