#include "plans/transfers.h"

#include <gtest/gtest.h>

#include <string>

#include "plans/plan_error.h"
#include "tests/plans/reference_ranks.h"

namespace splitbrain::plans {
namespace {

using testing::Array;

// Runs `c` on the shards of a global tensor and checks every rank's bytes against bytes_sent.
std::vector<Array> run_and_count(const Collective& c, const Mesh& mesh, std::vector<Array> arrays) {
  std::vector<int64_t> counted(static_cast<std::size_t>(mesh.rank_count()), 0);
  testing::apply(c, mesh, arrays, counted);
  for (int r = 0; r < mesh.rank_count(); ++r) {
    EXPECT_EQ(counted[static_cast<std::size_t>(r)], bytes_sent(c, mesh.index_in_group(r, c.axes))) << "rank " << r;
  }
  return arrays;
}

// A "same" convolution's input split on H (dim 2 of NCHW) over {data, model}: after the
// exchange each rank holds its rows plus halo_rows from each neighbour block, zeros at the edges.
TEST(HaloExchange, MatchesTheGlobalTensorWithZeroPadding) {
  const Mesh mesh({{"data", 2}, {"model", 3}});
  const std::vector<int64_t> shape = {2, 3, 24, 5};
  const TensorLayout layout{{{}, {}, {0, 1}, {}}, {}};
  const Array global = testing::make_global(shape);
  for (int64_t halo_rows : {0, 1, 2, 4}) {
    const Collective c = halo_exchange(layout, mesh, shape, 4, 2, halo_rows);
    EXPECT_EQ(c.group_size, 6);
    EXPECT_EQ(c.row_bytes, 2 * 3 * 5 * 4);
    EXPECT_EQ(c.buffer_bytes, 2 * 3 * 4 * 5 * 4);
    const std::vector<Array> out = run_and_count(c, mesh, testing::shard_all(global, layout, mesh));
    for (int r = 0; r < mesh.rank_count(); ++r) {
      const std::vector<int64_t> offset = local_offset(layout, mesh, shape, r);
      const Array& got = out[static_cast<std::size_t>(r)];
      ASSERT_EQ(got.shape, (std::vector<int64_t>{2, 3, 4 + 2 * halo_rows, 5}));
      for (int64_t n = 0; n < 2; ++n) {
        for (int64_t ch = 0; ch < 3; ++ch) {
          for (int64_t h = 0; h < got.shape[2]; ++h) {
            for (int64_t w = 0; w < 5; ++w) {
              const int64_t gh = offset[2] - halo_rows + h;
              const double want =
                  gh < 0 || gh >= 24 ? 0.0 : global.values[static_cast<std::size_t>(((n * 3 + ch) * 24 + gh) * 5 + w)];
              ASSERT_EQ(got.values[static_cast<std::size_t>(((n * 3 + ch) * got.shape[2] + h) * 5 + w)], want)
                  << "rank " << r << " h " << h;
            }
          }
        }
      }
    }
  }
}

TEST(HaloExchange, Validation) {
  const Mesh mesh({{"data", 2}, {"model", 3}});
  const std::vector<int64_t> shape = {2, 12};
  const TensorLayout layout{{{}, {1}}, {}};
  auto expect = [&](auto make, const std::string& needle) {
    try {
      (void)make();
      ADD_FAILURE() << "no PlanError, wanted " << needle;
    } catch (const PlanError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect([&] { return halo_exchange(layout, mesh, shape, 4, 2, 1); }, "dim 2 out of range");
  expect([&] { return halo_exchange(layout, mesh, shape, 4, 1, 5); }, "halo_rows 5 must be in [0, 4]");
  expect([&] { return halo_exchange(layout, mesh, shape, 0, 1, 1); }, "element_bytes");
  // An unsplit dim: a group of one that sends nothing.
  const Collective none = halo_exchange(layout, mesh, shape, 4, 0, 1);
  EXPECT_EQ(none.group_size, 1);
  EXPECT_EQ(bytes_sent(none, 0), 0);
}

// Stage s hands its activation shard to stage s+1 (forward) or s-1 (backward); only the
// sender counts bytes, and ranks off the two stages keep what they had.
TEST(PipelineSend, MovesShardsBetweenStages) {
  const Mesh mesh({{"pipe", 3}, {"data", 2}});
  const std::vector<int64_t> shape = {4, 6};
  const TensorLayout layout{{{1}, {}}, {}};
  const Array global = testing::make_global(shape);
  for (auto [from, to] : {std::pair{0, 1}, std::pair{1, 2}, std::pair{2, 1}}) {
    const Collective c = pipeline_send(mesh, 0, from, to, layout, shape, 2);
    EXPECT_EQ(c.buffer_bytes, 2 * 6 * 2);
    std::vector<Array> in = testing::shard_all(global, layout, mesh);
    // Make every stage's data different so a wrong sender shows.
    for (int r = 0; r < mesh.rank_count(); ++r) {
      for (double& v : in[static_cast<std::size_t>(r)].values) v += 1000.0 * mesh.coordinate(r, 0);
    }
    const std::vector<Array> out = run_and_count(c, mesh, in);
    for (int r = 0; r < mesh.rank_count(); ++r) {
      std::vector<int> coords = mesh.coordinates(r);
      if (coords[0] == to) coords[0] = from;
      EXPECT_EQ(out[static_cast<std::size_t>(r)], in[static_cast<std::size_t>(mesh.rank_of(coords))]) << "rank " << r;
    }
  }
}

TEST(PipelineSend, Validation) {
  const Mesh mesh({{"pipe", 3}, {"data", 2}});
  const std::vector<int64_t> shape = {6, 6};
  EXPECT_THROW((void)pipeline_send(mesh, 2, 0, 1, 64), PlanError);
  EXPECT_THROW((void)pipeline_send(mesh, 0, 0, 3, 64), PlanError);
  EXPECT_THROW((void)pipeline_send(mesh, 0, 1, 1, 64), PlanError);
  EXPECT_THROW((void)pipeline_send(mesh, 0, 0, 1, -1), PlanError);
  try {
    (void)pipeline_send(mesh, 0, 0, 1, TensorLayout{{{0}, {}}, {}}, shape, 4);
    ADD_FAILURE() << "a layout split on the pipe axis was accepted";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("uses the pipe axis 'pipe'"), std::string::npos);
  }
  const Collective raw = pipeline_send(mesh, 0, 2, 1, 96);
  EXPECT_EQ(raw.group_size, 3);
  EXPECT_EQ(bytes_sent(raw, 2), 96);
  EXPECT_EQ(bytes_sent(raw, 1), 0);
}

}  // namespace
}  // namespace splitbrain::plans
