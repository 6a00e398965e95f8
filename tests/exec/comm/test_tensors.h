#pragma once
// Test data for the MPI tests, computed from index arithmetic alone (none of the code under
// test): a deterministic global tensor of integer-valued floats, each rank's shard of it in a
// layout (partial axes split each value into integer parts that sum exactly to it), and the
// meshes that fit the number of ranks mpirun started.

#include <cstdint>
#include <vector>

#include "exec/comm/local_array.h"
#include "plans/mesh.h"
#include "plans/tensor_layout.h"

namespace splitbrain::exec::comm::testing {

int world_size();
int world_rank();

// Value of the global tensor at a global multi-index: small distinct-looking integers.
float global_value(const std::vector<int64_t>& global_shape, const std::vector<int64_t>& index);

// The block of `extent` starting at `offset` of the global tensor; indices outside the tensor
// (a halo past its edge) read as 0.
LocalArray global_block(const std::vector<int64_t>& global_shape, const std::vector<int64_t>& offset,
                        const std::vector<int64_t>& extent);

// What `rank` holds in `layout`: its block, cut into its part when the layout has partial axes.
LocalArray shard(const std::vector<int64_t>& global_shape, const plans::TensorLayout& layout, const plans::Mesh& mesh,
                 int rank);

// Every valid layout of a tensor of `global_shape` on `mesh`: each axis replicates, is partial or
// splits one dim, in every order within a dim.
std::vector<plans::TensorLayout> all_layouts(const plans::Mesh& mesh, const std::vector<int64_t>& global_shape);

// Meshes with `ranks` ranks among a fixed list of one- and two-axis meshes.
std::vector<plans::Mesh> meshes_with(int ranks);

}  // namespace splitbrain::exec::comm::testing
