// The property that holds the project together (DESIGN.md, "layouts and redistribution"): for
// EVERY pair of valid layouts, running the steps plan_redistribution() returns on the shards of
// `from` gives exactly the shards of `to` on every rank, and the bytes each rank actually sends
// equal bytes_sent() of the returned collectives. The reference plays all ranks in one process.
#include <gtest/gtest.h>

#include <string>

#include "plans/redistribution.h"
#include "tests/plans/reference_ranks.h"

namespace splitbrain::plans {
namespace {

using testing::Array;

// Every layout of a tensor with `dims` dims: each axis replicates, is partial, or splits one dim
// at any position among that dim's axes. Inserting axis k at every position of every dim's list
// produces each ordering exactly once.
void enumerate(const Mesh& mesh, int axis, TensorLayout& layout, std::vector<TensorLayout>& out) {
  if (axis == mesh.axis_count()) {
    out.push_back(layout);
    return;
  }
  enumerate(mesh, axis + 1, layout, out);  // replicated
  layout.partial_axes.push_back(axis);
  enumerate(mesh, axis + 1, layout, out);
  layout.partial_axes.pop_back();
  for (auto& axes : layout.dim_axes) {
    for (std::size_t pos = 0; pos <= axes.size(); ++pos) {
      axes.insert(axes.begin() + static_cast<std::ptrdiff_t>(pos), axis);
      enumerate(mesh, axis + 1, layout, out);
      axes.erase(axes.begin() + static_cast<std::ptrdiff_t>(pos));
    }
  }
}

std::vector<TensorLayout> all_layouts(const Mesh& mesh, int dims) {
  std::vector<TensorLayout> out;
  TensorLayout layout = replicated(dims);
  enumerate(mesh, 0, layout, out);
  return out;
}

// Checks one pair; returns an empty string when it holds, else what went wrong.
std::string check_pair(const TensorLayout& from, const TensorLayout& to, const Mesh& mesh,
                       const std::vector<int64_t>& shape, int64_t element_bytes, const std::vector<Array>& from_shards,
                       const std::vector<Array>& want) {
  const std::vector<RedistributionStep> steps = plan_redistribution(from, to, mesh, shape, element_bytes);
  // The steps chain from `from` to `to`, and redistribute() lists exactly their collectives.
  TensorLayout at = from;
  std::vector<Collective> collectives;
  for (const RedistributionStep& step : steps) {
    if (!(step.before == at)) return "steps do not chain";
    at = step.after;
    if (step.collective) {
      collectives.push_back(*step.collective);
      if (step.collective->group_size < 2) return "collective over a group of one";
    } else if (!is_local_transition(step.before, step.after, mesh, shape)) {
      return "local step needs communication";
    }
  }
  if (!(at == to)) return "steps end at " + to_string(at, mesh);
  if (redistribute(from, to, mesh, shape, element_bytes) != collectives) {
    return "redistribute() differs from plan_redistribution()";
  }
  // Minimal-ish: never more bytes on any rank than the naive route, which makes the tensor
  // whole and replicated (reduce every partial axis, gather every split) and slices `to` locally.
  const std::vector<Collective> naive =
      redistribute(from, replicated(static_cast<int>(shape.size())), mesh, shape, element_bytes);
  for (int r = 0; r < mesh.rank_count(); ++r) {
    int64_t ours = 0;
    int64_t theirs = 0;
    for (const Collective& c : collectives) ours += bytes_sent(c, mesh.index_in_group(r, c.axes));
    for (const Collective& c : naive) theirs += bytes_sent(c, mesh.index_in_group(r, c.axes));
    if (ours > theirs) {
      return "rank " + std::to_string(r) + " sends " + std::to_string(ours) + " B, more than the naive " +
             std::to_string(theirs) + " B";
    }
  }

  std::vector<Array> arrays = from_shards;
  const auto ranks = static_cast<std::size_t>(mesh.rank_count());
  std::vector<int64_t> counted(ranks, 0);
  std::vector<int64_t> predicted(ranks, 0);
  for (const RedistributionStep& step : steps) {
    if (!step.collective) {
      testing::apply_local(step, mesh, shape, arrays);
      continue;
    }
    const Collective& c = *step.collective;
    testing::apply(c, mesh, arrays, counted);
    for (int r = 0; r < mesh.rank_count(); ++r) {
      predicted[static_cast<std::size_t>(r)] += bytes_sent(c, mesh.index_in_group(r, c.axes));
    }
  }
  const std::vector<int64_t> want_shape = local_shape(to, mesh, shape);
  for (int r = 0; r < mesh.rank_count(); ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (arrays[i].shape != want_shape) return "wrong local shape on rank " + std::to_string(r);
    const bool match =
        to.partial_axes.empty() ? arrays[i] == want[i] : testing::represented_value(arrays, to, mesh, r) == want[i];
    if (!match) {
      return "wrong values on rank " + std::to_string(r);
    }
    if (counted[i] != predicted[i]) {
      return "rank " + std::to_string(r) + " sent " + std::to_string(counted[i]) + " B, bytes_sent says " +
             std::to_string(predicted[i]);
    }
  }
  return {};
}

void check_every_pair(const Mesh& mesh, const std::vector<int64_t>& shape, int64_t element_bytes,
                      std::size_t expected_layouts) {
  const std::vector<TensorLayout> layouts = all_layouts(mesh, static_cast<int>(shape.size()));
  ASSERT_EQ(layouts.size(), expected_layouts);
  for (const TensorLayout& layout : layouts) ASSERT_NO_THROW(validate(layout, mesh, shape));
  const Array global = testing::make_global(shape);
  // What each rank must represent in each layout: its block of the global tensor.
  std::vector<std::vector<Array>> wanted;
  for (const TensorLayout& to : layouts) {
    TensorLayout unreduced = to;
    unreduced.partial_axes.clear();
    wanted.push_back(testing::shard_all(global, unreduced, mesh));
  }
  int failures = 0;
  for (const TensorLayout& from : layouts) {
    const std::vector<Array> from_shards = testing::shard_all(global, from, mesh);
    for (std::size_t t = 0; t < layouts.size(); ++t) {
      const TensorLayout& to = layouts[t];
      std::string problem;
      try {
        problem = check_pair(from, to, mesh, shape, element_bytes, from_shards, wanted[t]);
      } catch (const std::exception& e) {
        problem = std::string("threw: ") + e.what();
      }
      if (!problem.empty() && ++failures <= 5) {
        ADD_FAILURE() << mesh.to_string() << ": " << to_string(from, mesh) << " -> " << to_string(to, mesh) << ": "
                      << problem;
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

// Layout counts: with m axes and D dims, sum over k split axes of C(m,k) * 2^(m-k) *
// D(D+1)...(D+k-1). One axis: 2 + D. Two axes, D=2: 4 + 8 + 6 = 18; D=4: 4 + 16 + 20 = 40.
// Three axes, D=2: 8 + 24 + 36 + 24 = 92; D=4: 8 + 48 + 120 + 120 = 296.
TEST(RedistributeEveryPair, Matrix1Axis) { check_every_pair(Mesh({{"x", 2}}), {4, 6}, 4, 4); }
TEST(RedistributeEveryPair, Matrix2Axes) { check_every_pair(Mesh({{"x", 2}, {"y", 3}}), {6, 12}, 4, 18); }
TEST(RedistributeEveryPair, Matrix3Axes) { check_every_pair(Mesh({{"x", 2}, {"y", 2}, {"z", 2}}), {8, 16}, 2, 92); }
TEST(RedistributeEveryPair, Matrix3UnequalAxes) {
  check_every_pair(Mesh({{"x", 2}, {"y", 3}, {"z", 2}}), {12, 24}, 4, 92);
}
TEST(RedistributeEveryPair, Matrix3AxesWithSizeOne) {
  check_every_pair(Mesh({{"x", 3}, {"y", 1}, {"z", 2}}), {6, 12}, 4, 92);
}
TEST(RedistributeEveryPair, Rank4Tensor1Axis) { check_every_pair(Mesh({{"x", 2}}), {2, 4, 2, 6}, 2, 6); }
TEST(RedistributeEveryPair, Rank4Tensor2Axes) { check_every_pair(Mesh({{"x", 2}, {"y", 3}}), {6, 6, 6, 6}, 4, 40); }
TEST(RedistributeEveryPair, Rank4Tensor3Axes) {
  check_every_pair(Mesh({{"x", 2}, {"y", 2}, {"z", 2}}), {8, 8, 8, 8}, 2, 296);
}

}  // namespace
}  // namespace splitbrain::plans
