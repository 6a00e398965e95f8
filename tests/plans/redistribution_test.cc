// Golden cases for redistribute(): the conversion table of SoyBean / Tofu (REFERENCES.md) on a
// SplitBrain-style mesh {data: 2, model: 4}, with the bytes worked out in comments.
#include "plans/redistribution.h"

#include <gtest/gtest.h>

#include <string>

#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

constexpr int kData = 0;
constexpr int kModel = 1;

const Mesh& mesh() {
  static const Mesh m({{"data", 2}, {"model", 4}});
  return m;
}

// A batch x features activation, fp32: 8 * 16 * 4 B = 512 B whole.
const std::vector<int64_t> kShape = {8, 16};

std::vector<Collective> plan(const TensorLayout& from, const TensorLayout& to) {
  return redistribute(from, to, mesh(), kShape, 4);
}

void expect_one(const std::vector<Collective>& got, CollectiveKind kind, std::vector<int> axes, int64_t buffer_bytes,
                int64_t bytes_each) {
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, kind) << collective_name(got[0].kind);
  EXPECT_EQ(got[0].axes, axes);
  EXPECT_EQ(got[0].group_size, mesh().group_size(axes));
  EXPECT_EQ(got[0].buffer_bytes, buffer_bytes);
  EXPECT_EQ(got[0].element_bytes, 4);
  for (int i = 0; i < got[0].group_size; ++i) EXPECT_EQ(bytes_sent(got[0], i), bytes_each);
}

TEST(Redistribute, PartialToSplitIsReduceScatter) {
  // Input is the whole 512 B partial array; each rank sends 3/4 * 512 = 384 B.
  const auto got = plan({{{}, {}}, {kModel}}, {{{}, {kModel}}, {}});
  expect_one(got, CollectiveKind::reduce_scatter, {kModel}, 512, 384);
  EXPECT_EQ(got[0].dim, 1);
}

TEST(Redistribute, PartialToReplicatedIsAllReduce) {
  // 2 * 3/4 * 512 = 768 B.
  expect_one(plan({{{}, {}}, {kModel}}, replicated(2)), CollectiveKind::all_reduce, {kModel}, 512, 768);
}

TEST(Redistribute, SplitToReplicatedIsAllGather) {
  // Output 512 B; each rank sends its 128 B piece around the ring 3 times: 384 B.
  const auto got = plan({{{}, {kModel}}, {}}, replicated(2));
  expect_one(got, CollectiveKind::all_gather, {kModel}, 512, 384);
  EXPECT_EQ(got[0].dim, 1);
}

TEST(Redistribute, SplitToOtherDimIsAllToAll) {
  // Local buffer 128 B; 3 of its 4 blocks leave: 96 B.
  const auto got = plan({{{kModel}, {}}, {}}, {{{}, {kModel}}, {}});
  expect_one(got, CollectiveKind::all_to_all, {kModel}, 128, 96);
  EXPECT_EQ(got[0].dim, 0);
  EXPECT_EQ(got[0].other_dim, 1);
}

TEST(Redistribute, ReplicatedToSplitOrPartialIsLocal) {
  EXPECT_TRUE(plan(replicated(2), {{{kModel}, {kData}}, {}}).empty());
  EXPECT_TRUE(plan(replicated(2), {{{}, {}}, {kModel, kData}}).empty());
  const auto steps = plan_redistribution(replicated(2), {{{kModel}, {}}, {kData}}, mesh(), kShape, 4);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_FALSE(steps[0].collective.has_value());
  // Rank 5 = (data 1, model 1): its rows 2..3, zeroed because it is off data coordinate 0.
  const LocalReslice cut = local_reslice(steps[0].before, steps[0].after, mesh(), kShape, 5);
  EXPECT_EQ(cut.offset, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(cut.shape, (std::vector<int64_t>{2, 16}));
  EXPECT_TRUE(cut.zero);
}

// The whole single-axis table: replicated, partial, split dim 0, split dim 1.
TEST(Redistribute, SingleAxisTable) {
  const Mesh one({{"x", 4}});
  const std::vector<TensorLayout> layouts = {replicated(2), {{{}, {}}, {0}}, {{{0}, {}}, {}}, {{{}, {0}}, {}}};
  using K = CollectiveKind;
  const std::vector<std::vector<std::vector<K>>> want = {
      {{}, {}, {}, {}},                                                 // from replicated
      {{K::all_reduce}, {}, {K::reduce_scatter}, {K::reduce_scatter}},  // from partial
      {{K::all_gather}, {K::all_gather}, {}, {K::all_to_all}},          // from split dim 0
      {{K::all_gather}, {K::all_gather}, {K::all_to_all}, {}},          // from split dim 1
  };
  for (std::size_t f = 0; f < layouts.size(); ++f) {
    for (std::size_t t = 0; t < layouts.size(); ++t) {
      std::vector<K> kinds;
      for (const Collective& c : redistribute(layouts[f], layouts[t], one, kShape, 4)) {
        kinds.push_back(c.kind);
      }
      EXPECT_EQ(kinds, want[f][t]) << to_string(layouts[f], one) << " -> " << to_string(layouts[t], one);
    }
  }
}

TEST(Redistribute, SameLayoutIsNothing) {
  const TensorLayout layout{{{kData}, {kModel}}, {}};
  EXPECT_TRUE(plan_redistribution(layout, layout, mesh(), kShape, 4).empty());
}

// SplitBrain: conv activations batch-split over every rank go to the sharded FC layers batch-split
// over `data` only: an all-gather inside each model group.
TEST(Redistribute, SplitBrainGroupGather) {
  const auto got = plan({{{kData, kModel}, {}}, {}}, {{{kData}, {}}, {}});
  // Output 4 rows * 16 * 4 B = 256 B; each rank sends 3/4 of it.
  expect_one(got, CollectiveKind::all_gather, {kModel}, 256, 192);
}

TEST(Redistribute, GathersOfOneDimMerge) {
  // One ring over all 8 ranks: 7/8 * 512 = 448 B each.
  expect_one(plan({{{kData, kModel}, {}}, {}}, replicated(2)), CollectiveKind::all_gather, {kData, kModel}, 512, 448);
}

TEST(Redistribute, MultiAxisPartialReduceScattersOnce) {
  // 7/8 * 512 = 448 B each.
  expect_one(plan({{{}, {}}, {kData, kModel}}, {{{kData, kModel}, {}}, {}}), CollectiveKind::reduce_scatter,
             {kData, kModel}, 512, 448);
}

TEST(Redistribute, ReduceScatterBeforeAllReduce) {
  // partial over both -> features split on model: reduce-scatter the whole array over model
  // (3/4 * 512 = 384 B), then all-reduce the 128 B piece over data (2 * 1/2 * 128 = 128 B).
  const auto got = plan({{{}, {}}, {kData, kModel}}, {{{}, {kModel}}, {}});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].kind, CollectiveKind::reduce_scatter);
  EXPECT_EQ(got[0].axes, std::vector<int>{kModel});
  EXPECT_EQ(bytes_sent(got[0], 0), 384);
  EXPECT_EQ(got[1].kind, CollectiveKind::all_reduce);
  EXPECT_EQ(got[1].axes, std::vector<int>{kData});
  EXPECT_EQ(bytes_sent(got[1], 0), 128);
}

TEST(Redistribute, AxisOrderChangeGathersThenReslices) {
  const auto steps = plan_redistribution({{{kData, kModel}, {}}, {}}, {{{kModel, kData}, {}}, {}}, mesh(), kShape, 4);
  ASSERT_EQ(steps.size(), 2u);
  ASSERT_TRUE(steps[0].collective.has_value());
  EXPECT_EQ(steps[0].collective->kind, CollectiveKind::all_gather);
  EXPECT_FALSE(steps[1].collective.has_value());
}

// A scalar (the loss) partial over data: one element, so the ring's chunks are 1 and 0 elements
// and each rank sends 2*4 - 4 - 0 = 4 B.
TEST(Redistribute, ScalarAllReduce) {
  const std::vector<int64_t> scalar;
  const auto got = redistribute({{}, {kData}}, TensorLayout{}, mesh(), scalar, 4);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, CollectiveKind::all_reduce);
  EXPECT_EQ(got[0].buffer_bytes, 4);
  EXPECT_EQ(bytes_sent(got[0], 0), 4);
  EXPECT_EQ(bytes_sent(got[0], 1), 4);
}

TEST(Redistribute, InvalidLayoutsAreNamed) {
  try {
    (void)plan(replicated(2), {{{}, {kData, kData}}, {}});
    ADD_FAILURE() << "no PlanError";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("redistribute to: layout dim 1: axis 'data'"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)plan({{{}}, {}}, replicated(2)), PlanError);
  EXPECT_THROW((void)redistribute(replicated(2), replicated(2), mesh(), kShape, 0), PlanError);
}

}  // namespace
}  // namespace splitbrain::plans
