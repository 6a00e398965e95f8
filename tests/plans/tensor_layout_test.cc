#include "plans/tensor_layout.h"

#include <gtest/gtest.h>

#include <string>

#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

const Mesh& mesh3() {
  static const Mesh mesh({{"pipe", 2}, {"data", 2}, {"model", 3}});
  return mesh;
}

TEST(TensorLayout, ToString) {
  TensorLayout layout{{{1}, {}, {2, 0}}, {}};
  EXPECT_EQ(to_string(layout, mesh3()), "[data, -, model+pipe]");
  layout = TensorLayout{{{1}, {}}, {2, 0}};
  EXPECT_EQ(to_string(layout, mesh3()), "[data, -] partial{model, pipe}");
  EXPECT_EQ(to_string(replicated(2), mesh3()), "[-, -]");
}

TEST(TensorLayout, EqualityIgnoresPartialOrder) {
  EXPECT_EQ((TensorLayout{{{1}, {}}, {2, 0}}), (TensorLayout{{{1}, {}}, {0, 2}}));
  EXPECT_NE((TensorLayout{{{1, 2}, {}}, {}}), (TensorLayout{{{2, 1}, {}}, {}}));
  EXPECT_NE((TensorLayout{{{1}, {}}, {}}), (TensorLayout{{{}, {1}}, {}}));
}

TEST(TensorLayout, LocalShapeAndOffset) {
  const std::vector<int64_t> shape = {12, 5, 6};
  // dim 0 split on {model, pipe}: 6 blocks of 2, block = model * 2 + pipe.
  const TensorLayout layout{{{2, 0}, {}, {1}}, {}};
  EXPECT_EQ(local_shape(layout, mesh3(), shape), (std::vector<int64_t>{2, 5, 3}));
  EXPECT_EQ(local_element_count(layout, mesh3(), shape), 30);
  // Rank 11 = (pipe 1, data 1, model 2): block 2*2+1 = 5 of dim 0, block 1 of dim 2.
  EXPECT_EQ(local_offset(layout, mesh3(), shape, 11), (std::vector<int64_t>{10, 0, 3}));
  // Rank 4 = (pipe 0, data 1, model 1): block 1*2+0 = 2.
  EXPECT_EQ(local_offset(layout, mesh3(), shape, 4), (std::vector<int64_t>{4, 0, 3}));
  EXPECT_EQ(split_factor(layout, mesh3(), 0), 6);
}

TEST(TensorLayout, AxisUse) {
  const TensorLayout layout{{{}, {2, 0}}, {1}};
  EXPECT_EQ(axis_use(layout, 0).role, AxisUse::Role::split);
  EXPECT_EQ(axis_use(layout, 0).dim, 1);
  EXPECT_EQ(axis_use(layout, 0).position, 1);
  EXPECT_EQ(axis_use(layout, 1).role, AxisUse::Role::partial);
  EXPECT_EQ(axis_use(replicated(2), 1).role, AxisUse::Role::replicated);
}

void expect_invalid(const TensorLayout& layout, const std::vector<int64_t>& shape, const std::string& needle) {
  try {
    validate(layout, mesh3(), shape);
    ADD_FAILURE() << "no PlanError for " << to_string(layout, mesh3());
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(TensorLayout, ValidationNamesTheDimOrAxis) {
  const std::vector<int64_t> shape = {12, 10};
  EXPECT_NO_THROW(validate(TensorLayout{{{0, 1}, {}}, {2}}, mesh3(), shape));
  expect_invalid(TensorLayout{{{0}}, {}}, shape, "dim_axes has 1 entries but the tensor has 2");
  expect_invalid(TensorLayout{{{0}, {3}}, {}}, shape, "dim 1: axis index 3");
  expect_invalid(TensorLayout{{{0}, {0}}, {}}, shape, "dim 1: axis 'pipe' is already used by dim 0");
  expect_invalid(TensorLayout{{{1}, {}}, {1}}, shape, "partial_axes: axis 'data' is already used by dim 0");
  expect_invalid(TensorLayout{{{0}, {}}, {2, 2}}, shape, "partial_axes: axis 'model'");
  expect_invalid(TensorLayout{{{}, {2}}, {}}, shape,
                 "dim 1: split by [model] (3 ways) but extent 10 is not divisible by 3");
  expect_invalid(TensorLayout{{{}, {}}, {-1}}, shape, "partial_axes: axis index -1");
  EXPECT_THROW((void)local_shape(TensorLayout{{{}, {2}}, {}}, mesh3(), shape), PlanError);
}

}  // namespace
}  // namespace splitbrain::plans
