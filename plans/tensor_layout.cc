#include "plans/tensor_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/container/small_vector.hpp>

#include "plans/plan_error.h"

namespace splitbrain::plans {

bool operator==(const TensorLayout& a, const TensorLayout& b) {
  if (a.dim_axes != b.dim_axes) return false;
  std::vector<int> pa = a.partial_axes;
  std::vector<int> pb = b.partial_axes;
  std::sort(pa.begin(), pa.end());
  std::sort(pb.begin(), pb.end());
  return pa == pb;
}

TensorLayout replicated(int tensor_rank) {
  TensorLayout layout;
  layout.dim_axes.resize(static_cast<std::size_t>(std::max(tensor_rank, 0)));
  return layout;
}

TensorLayout gradient_layout(const TensorLayout& layout) {
  TensorLayout gradient = layout;
  gradient.partial_axes.clear();
  return gradient;
}

void validate(const TensorLayout& layout, const Mesh& mesh, std::span<const int64_t> global_shape) {
  if (layout.dim_axes.size() != global_shape.size()) {
    throw PlanError(fmt::format("layout: dim_axes has {} entries but the tensor has {} dims", layout.dim_axes.size(),
                                global_shape.size()));
  }
  // Who uses each axis so far (a dim index, kPartial, or kUnused), to name both places on a
  // clash. Strings are only built on error, and a mesh's few axes fit on the stack: validate()
  // runs for every local_shape() call, millions of times in a large search.
  constexpr int kUnused = -1;
  constexpr int kPartial = -2;
  auto place = [](int owner) { return owner == kPartial ? std::string("partial_axes") : fmt::format("dim {}", owner); };
  boost::container::small_vector<int, 8> used_by(static_cast<std::size_t>(mesh.axis_count()), kUnused);
  auto claim = [&](int axis, int owner) {
    if (axis < 0 || axis >= mesh.axis_count()) {
      throw PlanError(
          fmt::format("layout {}: axis index {} is not an axis of mesh {}", place(owner), axis, mesh.to_string()));
    }
    int& previous = used_by[static_cast<std::size_t>(axis)];
    if (previous != kUnused) {
      throw PlanError(fmt::format("layout {}: axis '{}' is already used by {}", place(owner), mesh.axis(axis).name,
                                  place(previous)));
    }
    previous = owner;
  };
  for (std::size_t d = 0; d < layout.dim_axes.size(); ++d) {
    int64_t factor = 1;
    for (int axis : layout.dim_axes[d]) {
      claim(axis, static_cast<int>(d));
      factor *= mesh.axis(axis).size;
    }
    const int64_t extent = global_shape[d];
    if (extent < 0) throw PlanError(fmt::format("layout dim {}: extent {} is negative", d, extent));
    if (extent % factor != 0) {
      std::string names;
      for (int axis : layout.dim_axes[d]) {
        names += (names.empty() ? "" : ", ") + mesh.axis(axis).name;
      }
      throw PlanError(
          fmt::format("layout dim {}: split by [{}] ({} ways) but extent {} is not "
                      "divisible by {}",
                      d, names, factor, extent, factor));
    }
  }
  for (int axis : layout.partial_axes) claim(axis, kPartial);
}

AxisUse axis_use(const TensorLayout& layout, int axis) {
  for (std::size_t d = 0; d < layout.dim_axes.size(); ++d) {
    const auto& axes = layout.dim_axes[d];
    for (std::size_t p = 0; p < axes.size(); ++p) {
      if (axes[p] == axis) {
        return {AxisUse::Role::split, static_cast<int>(d), static_cast<int>(p)};
      }
    }
  }
  if (std::find(layout.partial_axes.begin(), layout.partial_axes.end(), axis) != layout.partial_axes.end()) {
    return {AxisUse::Role::partial, -1, -1};
  }
  return {};
}

int64_t split_factor(const TensorLayout& layout, const Mesh& mesh, int dim) {
  int64_t factor = 1;
  for (int axis : layout.dim_axes.at(static_cast<std::size_t>(dim))) factor *= mesh.axis(axis).size;
  return factor;
}

std::vector<int64_t> local_shape(const TensorLayout& layout, const Mesh& mesh, std::span<const int64_t> global_shape) {
  validate(layout, mesh, global_shape);
  std::vector<int64_t> shape(global_shape.begin(), global_shape.end());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    shape[d] /= split_factor(layout, mesh, static_cast<int>(d));
  }
  return shape;
}

int64_t local_element_count(const TensorLayout& layout, const Mesh& mesh, std::span<const int64_t> global_shape) {
  int64_t count = 1;
  for (int64_t extent : local_shape(layout, mesh, global_shape)) count *= extent;
  return count;
}

std::vector<int64_t> local_offset(const TensorLayout& layout, const Mesh& mesh, std::span<const int64_t> global_shape,
                                  int rank) {
  std::vector<int64_t> offset = local_shape(layout, mesh, global_shape);
  for (std::size_t d = 0; d < offset.size(); ++d) {
    // Block index = row-major index over the dim's axes = index_in_group (see the header).
    offset[d] *= mesh.index_in_group(rank, layout.dim_axes[d]);
  }
  return offset;
}

std::string to_string(const TensorLayout& layout, const Mesh& mesh) {
  auto name = [&](int axis) {
    return axis >= 0 && axis < mesh.axis_count() ? mesh.axis(axis).name : fmt::format("?{}", axis);
  };
  std::string out = "[";
  for (std::size_t d = 0; d < layout.dim_axes.size(); ++d) {
    if (d > 0) out += ", ";
    if (layout.dim_axes[d].empty()) out += "-";
    for (std::size_t p = 0; p < layout.dim_axes[d].size(); ++p) {
      if (p > 0) out += "+";
      out += name(layout.dim_axes[d][p]);
    }
  }
  out += "]";
  if (!layout.partial_axes.empty()) {
    out += " partial{";
    for (std::size_t p = 0; p < layout.partial_axes.size(); ++p) {
      if (p > 0) out += ", ";
      out += name(layout.partial_axes[p]);
    }
    out += "}";
  }
  return out;
}

}  // namespace splitbrain::plans
