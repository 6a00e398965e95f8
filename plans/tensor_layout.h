#pragma once
// How one tensor is spread over the mesh. For each tensor dimension: the mesh axes that split it
// (outermost first); the axes over which each rank's values are unreduced partial sums; every
// other axis replicates the tensor.
//
// Block numbering: a dim split on axes {a, b} is cut into size(a)*size(b) equal blocks and a rank
// holds block coord_a*size(b) + coord_b, i.e. Mesh::index_in_group(rank, {a, b}). So gathering the
// group of {a, b} in Mesh::group order concatenates the blocks in order, and appending an axis at
// the END of a dim's list (innermost) only sub-divides the block a rank already holds (a local
// slice, no communication).
//
// Partial sums: with partial_axes = {x}, the true value of the rank's block is the element-wise
// sum of the arrays held by the ranks of Mesh::group(rank, {x}).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "plans/mesh.h"

namespace splitbrain::plans {

struct TensorLayout {
  std::vector<std::vector<int>> dim_axes;  // one entry per tensor dim; mesh axis indices
  std::vector<int> partial_axes;           // order is not significant

  // Equal when every dim has the same axes in the same order and the partial axes are the same
  // set (their listed order carries no meaning).
  friend bool operator==(const TensorLayout& a, const TensorLayout& b);
};

// The fully replicated layout of a tensor with `tensor_rank` dimensions.
TensorLayout replicated(int tensor_rank);

// The layout of the gradient of a tensor held in `layout`: the same splits, but whole where the
// tensor is a partial sum (every partial term's gradient is the gradient of the sum).
TensorLayout gradient_layout(const TensorLayout& layout);

// Throws PlanError naming the dim or axis unless: one dim_axes entry per dim of global_shape;
// axis indices in range; each axis used at most once over all dims and partial_axes; every
// extent >= 0 and divisible by the product of the sizes of the axes splitting it.
void validate(const TensorLayout& layout, const Mesh& mesh, std::span<const int64_t> global_shape);

// Which role an axis plays in a layout.
struct AxisUse {
  enum class Role { replicated, split, partial } role = Role::replicated;
  int dim = -1;       // for split: the tensor dim it splits
  int position = -1;  // for split: its index in dim_axes[dim] (0 = outermost)
};
AxisUse axis_use(const TensorLayout& layout, int axis);

// Number of blocks dim `dim` is cut into (product of the sizes of its axes).
int64_t split_factor(const TensorLayout& layout, const Mesh& mesh, int dim);

// Each rank's local block: same on every rank. These validate the layout first.
std::vector<int64_t> local_shape(const TensorLayout& layout, const Mesh& mesh, std::span<const int64_t> global_shape);
int64_t local_element_count(const TensorLayout& layout, const Mesh& mesh, std::span<const int64_t> global_shape);
// Where `rank`'s block starts in the global tensor, per dim.
std::vector<int64_t> local_offset(const TensorLayout& layout, const Mesh& mesh, std::span<const int64_t> global_shape,
                                  int rank);

// "[data, -, model+pipe] partial{x}": one entry per dim ('-' = not split), axes joined by '+'
// outermost first; the partial part is left out when there are no partial axes.
std::string to_string(const TensorLayout& layout, const Mesh& mesh);

}  // namespace splitbrain::plans
