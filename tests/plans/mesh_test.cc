#include "plans/mesh.h"

#include <gtest/gtest.h>

#include <string>

#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

Mesh three_axes() { return Mesh({{"pipe", 2}, {"data", 3}, {"model", 2}}); }

TEST(Mesh, SizesAndNames) {
  const Mesh mesh = three_axes();
  EXPECT_EQ(mesh.rank_count(), 12);
  EXPECT_EQ(mesh.axis_count(), 3);
  EXPECT_EQ(mesh.axis(1).name, "data");
  EXPECT_EQ(mesh.axis_index("model"), 2);
  EXPECT_EQ(mesh.axis_index("nope"), -1);
  EXPECT_EQ(mesh.to_string(), "{pipe: 2, data: 3, model: 2}");
}

TEST(Mesh, RowMajorLastAxisFastest) {
  const Mesh mesh = three_axes();
  // rank = pipe * 6 + data * 2 + model
  EXPECT_EQ(mesh.coordinates(0), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(mesh.coordinates(1), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(mesh.coordinates(7), (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(mesh.coordinates(11), (std::vector<int>{1, 2, 1}));
  for (int r = 0; r < mesh.rank_count(); ++r) {
    EXPECT_EQ(mesh.rank_of(mesh.coordinates(r)), r);
    EXPECT_EQ(mesh.coordinate(r, 1), mesh.coordinates(r)[1]);
  }
  EXPECT_THROW((void)mesh.coordinates(12), std::out_of_range);
  EXPECT_THROW((void)mesh.rank_of({0, 3, 0}), std::out_of_range);
}

TEST(Mesh, GroupsFollowTheGivenAxisOrder) {
  const Mesh mesh = three_axes();
  // Rank 7 = (pipe 1, data 0, model 1).
  EXPECT_EQ(mesh.group(7, {1}), (std::vector<int>{7, 9, 11}));
  EXPECT_EQ(mesh.group(7, {2}), (std::vector<int>{6, 7}));
  EXPECT_EQ(mesh.group(7, {1, 2}), (std::vector<int>{6, 7, 8, 9, 10, 11}));
  // model outermost: the members are ordered by model first, then data.
  EXPECT_EQ(mesh.group(7, {2, 1}), (std::vector<int>{6, 8, 10, 7, 9, 11}));
  EXPECT_EQ(mesh.group(7, {}), (std::vector<int>{7}));
  EXPECT_EQ(mesh.group_size({0, 2}), 4);
  EXPECT_EQ(mesh.group_size({}), 1);
  for (int r = 0; r < mesh.rank_count(); ++r) {
    for (const std::vector<int>& axes : {std::vector<int>{2, 1}, std::vector<int>{0, 2, 1}, std::vector<int>{1}}) {
      const std::vector<int> members = mesh.group(r, axes);
      ASSERT_EQ(static_cast<int>(members.size()), mesh.group_size(axes));
      // Every member is in the same group and sits at its own index.
      for (std::size_t k = 0; k < members.size(); ++k) {
        EXPECT_EQ(mesh.index_in_group(members[k], axes), static_cast<int>(k));
        EXPECT_EQ(mesh.group(members[k], axes), members);
      }
    }
  }
}

// The message must name the field at fault.
void expect_plan_error(const std::vector<MeshAxis>& axes, const std::string& needle) {
  try {
    Mesh mesh(axes);
    ADD_FAILURE() << "no PlanError for " << mesh.to_string();
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Mesh, ValidationNamesTheField) {
  expect_plan_error({}, "at least one axis");
  expect_plan_error({{"data", 2}, {"", 2}}, "mesh axis 1: name is empty");
  expect_plan_error({{"data", 2}, {"data", 2}}, "mesh axis 1 ('data'): name already used");
  expect_plan_error({{"data", 2}, {"model", 0}}, "mesh axis 1 ('model'): size must be >= 1");
  expect_plan_error({{"da ta", 2}}, "mesh axis 0 ('da ta'): name may only hold");
  expect_plan_error({{"a", 65536}, {"b", 65536}}, "mesh axis 1 ('b')");
  // PlanError is an InputError, which the command line turns into exit code 2.
  EXPECT_THROW(Mesh({{"x", -1}}), splitbrain::InputError);
}

TEST(Mesh, GroupAxesAreChecked) {
  const Mesh mesh = three_axes();
  EXPECT_THROW((void)mesh.group(0, {3}), PlanError);
  EXPECT_THROW((void)mesh.group_size({1, 1}), PlanError);
  EXPECT_THROW((void)mesh.index_in_group(0, {-1}), PlanError);
}

TEST(Mesh, SizeOneAxesAreAllowed) {
  const Mesh mesh({{"a", 1}, {"b", 3}});
  EXPECT_EQ(mesh.rank_count(), 3);
  EXPECT_EQ(mesh.group(2, {0}), (std::vector<int>{2}));
}

}  // namespace
}  // namespace splitbrain::plans
