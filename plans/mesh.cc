#include "plans/mesh.h"

#include <fmt/format.h>

#include <climits>
#include <stdexcept>

#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

Mesh::Mesh(std::vector<MeshAxis> axes) : axes_(std::move(axes)) {
  if (axes_.empty()) throw PlanError("mesh: needs at least one axis");
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const MeshAxis& a = axes_[i];
    if (a.name.empty()) throw PlanError(fmt::format("mesh axis {}: name is empty", i));
    for (char c : a.name) {
      if (!is_name_char(c)) {
        throw PlanError(fmt::format("mesh axis {} ('{}'): name may only hold letters, digits and '_'", i, a.name));
      }
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (axes_[j].name == a.name) {
        throw PlanError(fmt::format("mesh axis {} ('{}'): name already used by axis {}", i, a.name, j));
      }
    }
    if (a.size < 1) {
      throw PlanError(fmt::format("mesh axis {} ('{}'): size must be >= 1, got {}", i, a.name, a.size));
    }
    if (rank_count_ > INT_MAX / a.size) {
      throw PlanError(fmt::format("mesh axis {} ('{}'): the mesh has more ranks than fit in an int", i, a.name));
    }
    rank_count_ *= a.size;
  }
  strides_.assign(axes_.size(), 1);
  for (std::size_t i = axes_.size() - 1; i > 0; --i) {
    strides_[i - 1] = strides_[i] * axes_[i].size;
  }
}

const MeshAxis& Mesh::axis(int i) const {
  if (i < 0 || i >= axis_count()) {
    throw std::out_of_range(fmt::format("mesh {}: no axis {}", to_string(), i));
  }
  return axes_[static_cast<std::size_t>(i)];
}

int Mesh::axis_index(std::string_view name) const {
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<int> Mesh::coordinates(int rank) const {
  if (rank < 0 || rank >= rank_count_) {
    throw std::out_of_range(fmt::format("mesh {}: rank {} out of range", to_string(), rank));
  }
  std::vector<int> coords(axes_.size());
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    coords[i] = (rank / strides_[i]) % axes_[i].size;
  }
  return coords;
}

int Mesh::coordinate(int rank, int axis_index) const {
  if (rank < 0 || rank >= rank_count_) {
    throw std::out_of_range(fmt::format("mesh {}: rank {} out of range", to_string(), rank));
  }
  const int size = axis(axis_index).size;  // range-checks axis_index
  return (rank / strides_[static_cast<std::size_t>(axis_index)]) % size;
}

int Mesh::rank_of(const std::vector<int>& coords) const {
  if (coords.size() != axes_.size()) {
    throw std::out_of_range(
        fmt::format("mesh {}: {} coordinates given, need {}", to_string(), coords.size(), axes_.size()));
  }
  int rank = 0;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    if (coords[i] < 0 || coords[i] >= axes_[i].size) {
      throw std::out_of_range(
          fmt::format("mesh {}: coordinate {} on axis '{}' out of range", to_string(), coords[i], axes_[i].name));
    }
    rank += coords[i] * strides_[i];
  }
  return rank;
}

void Mesh::check_axes(const std::vector<int>& axes) const {
  for (std::size_t k = 0; k < axes.size(); ++k) {
    if (axes[k] < 0 || axes[k] >= axis_count()) {
      throw PlanError(fmt::format("mesh {}: axis index {} out of range", to_string(), axes[k]));
    }
    for (std::size_t j = 0; j < k; ++j) {
      if (axes[j] == axes[k]) {
        throw PlanError(fmt::format("mesh {}: axis '{}' listed twice in a group", to_string(),
                                    axes_[static_cast<std::size_t>(axes[k])].name));
      }
    }
  }
}

int Mesh::group_size(const std::vector<int>& axes) const {
  check_axes(axes);
  int n = 1;
  for (int a : axes) n *= axes_[static_cast<std::size_t>(a)].size;
  return n;
}

std::vector<int> Mesh::group(int rank, const std::vector<int>& axes) const {
  const int n = group_size(axes);
  std::vector<int> coords = coordinates(rank);
  std::vector<int> members(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    // Decompose k row-major over `axes` (last listed fastest) and overwrite those coordinates.
    int rest = k;
    for (std::size_t j = axes.size(); j-- > 0;) {
      const auto a = static_cast<std::size_t>(axes[j]);
      coords[a] = rest % axes_[a].size;
      rest /= axes_[a].size;
    }
    members[static_cast<std::size_t>(k)] = rank_of(coords);
  }
  return members;
}

int Mesh::index_in_group(int rank, const std::vector<int>& axes) const {
  check_axes(axes);
  const std::vector<int> coords = coordinates(rank);
  int index = 0;
  for (int a : axes) {
    const auto i = static_cast<std::size_t>(a);
    index = index * axes_[i].size + coords[i];
  }
  return index;
}

std::string Mesh::to_string() const {
  std::string out = "{";
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    if (i > 0) out += ", ";
    out += fmt::format("{}: {}", axes_[i].name, axes_[i].size);
  }
  return out + "}";
}

}  // namespace splitbrain::plans
