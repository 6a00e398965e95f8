#pragma once
// A single-process reference that plays every rank of a mesh: it holds one dense array per rank,
// runs each collective the way a real library does (rings for gathers and reductions, direct
// sends for all-to-all, halo and pipeline), and counts the bytes each rank sends by adding up the
// messages it actually passes. Values are integer-valued doubles, so every sum is exact and a
// reduction in the wrong order or over the wrong group shows up as a wrong number.

#include <cstdint>
#include <span>
#include <vector>

#include "plans/collective.h"
#include "plans/mesh.h"
#include "plans/redistribution.h"
#include "plans/tensor_layout.h"

namespace splitbrain::plans::testing {

// A dense row-major array.
struct Array {
  std::vector<int64_t> shape;
  std::vector<double> values;
  bool operator==(const Array&) const = default;
};

int64_t element_count(std::span<const int64_t> shape);

// A global tensor of the given shape holding distinct-looking integer values.
Array make_global(std::vector<int64_t> shape);

// The sub-array of `extent` starting at `offset`.
Array sub_array(const Array& a, std::span<const int64_t> offset, std::span<const int64_t> extent);
// Concatenation along `dim` (all other extents equal).
Array concat(const std::vector<Array>& parts, int dim);
// `n` equal blocks along `dim`.
std::vector<Array> split(const Array& a, int dim, int n);

// Rank `rank`'s local array for `layout`: its block of `global`; for partial axes, the block's
// values cut into integer parts that depend on the rank's index in the partial group and sum
// exactly to the value over the group.
Array shard(const Array& global, const TensorLayout& layout, const Mesh& mesh, int rank);
std::vector<Array> shard_all(const Array& global, const TensorLayout& layout, const Mesh& mesh);

// What `rank` holds in `layout`: the sum of its partial group's arrays (its own array when the
// layout has no partial axes).
Array represented_value(const std::vector<Array>& arrays, const TensorLayout& layout, const Mesh& mesh, int rank);

// Runs `c` on every group of the mesh, replacing arrays[r] by rank r's output and adding the
// bytes r sends (elements * c.element_bytes per message) to bytes_sent[r]. Throws
// std::runtime_error when the inputs do not fit the collective (shapes differ within a group,
// a dim does not divide, buffer_bytes disagrees with the arrays).
void apply(const Collective& c, const Mesh& mesh, std::vector<Array>& arrays, std::vector<int64_t>& bytes_sent);

// Runs a local redistribution step (one with no collective) on every rank.
void apply_local(const RedistributionStep& step, const Mesh& mesh, std::span<const int64_t> global_shape,
                 std::vector<Array>& arrays);

}  // namespace splitbrain::plans::testing
