#pragma once
// The logical device mesh: N ranks arranged as a row-major grid of named axes, e.g.
// {pipe: 2, data: 2, model: 2}. Rank r has one coordinate per axis; the LAST axis varies fastest,
// so with the mesh above ranks 0 and 1 differ only in `model`. Every collective in a plan runs over
// the "group" of some axes: the ranks that agree with r on every other axis.

#include <string>
#include <string_view>
#include <vector>

namespace splitbrain::plans {

struct MeshAxis {
  std::string name;  // letters, digits and '_' (names appear in layout strings like `data+model`)
  int size = 1;      // number of ranks along the axis, >= 1
  bool operator==(const MeshAxis&) const = default;
};

class Mesh {
 public:
  // Throws PlanError (naming the axis) unless: at least one axis, names non-empty, made of
  // [A-Za-z0-9_] and unique, sizes >= 1, and the product of sizes fits in an int.
  explicit Mesh(std::vector<MeshAxis> axes);

  int rank_count() const { return rank_count_; }
  int axis_count() const { return static_cast<int>(axes_.size()); }
  const MeshAxis& axis(int i) const;  // throws std::out_of_range
  const std::vector<MeshAxis>& axes() const { return axes_; }
  int axis_index(std::string_view name) const;  // -1 when there is no such axis

  // Row-major coordinates of `rank` (one per axis); throws std::out_of_range for a bad rank.
  std::vector<int> coordinates(int rank) const;
  int coordinate(int rank, int axis_index) const;
  // Inverse of coordinates(); throws std::out_of_range when a coordinate is outside its axis.
  int rank_of(const std::vector<int>& coords) const;

  // The ranks that share `rank`'s coordinates on every axis NOT in `axes`, ordered row-major by
  // their coordinates on `axes` taken in the order given (the first listed axis is slowest).
  // Member k of the group therefore has index_in_group == k. `axes` must be distinct, in range
  // (PlanError otherwise); an empty list gives the group {rank}.
  std::vector<int> group(int rank, const std::vector<int>& axes) const;
  int group_size(const std::vector<int>& axes) const;  // product of the axes' sizes
  int index_in_group(int rank, const std::vector<int>& axes) const;

  std::string to_string() const;  // "{pipe: 2, data: 2, model: 2}"
  bool operator==(const Mesh&) const = default;

 private:
  void check_axes(const std::vector<int>& axes) const;

  std::vector<MeshAxis> axes_;
  std::vector<int> strides_;  // strides_[i] = product of the sizes of the axes after i
  int rank_count_ = 1;
};

}  // namespace splitbrain::plans
