// Add of n inputs, concat along each dimension, and the split that is concat's backward.

#include <gtest/gtest.h>

#include <array>

#include "exec/cpu/concat.h"
#include "exec/cpu/elementwise_add.h"
#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::Dims;
using kernels::KernelArgumentError;
using testing::random_floats;

TEST(Add, ThreeInputsAndInPlace) {
  CpuContext context;
  const int64_t n = 257;
  AddKernel kernel(context, 3, n);
  const auto a = random_floats(static_cast<std::size_t>(n), 111), b = random_floats(static_cast<std::size_t>(n), 112),
             c = random_floats(static_cast<std::size_t>(n), 113);
  std::vector<float> y(a.size());
  const std::array<const float*, 3> xs{a.data(), b.data(), c.data()};
  kernel.forward(xs, y.data());
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], static_cast<double>(a[i]) + b[i] + c[i], 1e-6);
  std::vector<float> acc = a;  // y over an input
  const std::array<const float*, 3> again{acc.data(), b.data(), c.data()};
  kernel.forward(again, acc.data());
  EXPECT_EQ(acc, y);
  const std::array<const float*, 2> too_few{a.data(), b.data()};
  EXPECT_THROW(kernel.forward(too_few, y.data()), KernelArgumentError);
}

TEST(Concat, EachAxisForwardAndSplitBack) {
  CpuContext context;
  const Dims a_dims{2, 3, 4, 5};
  for (int axis = 0; axis < 4; ++axis) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    Dims b_dims = a_dims;
    b_dims[static_cast<std::size_t>(axis)] = 3;  // an odd second size
    ConcatKernel kernel(context, {a_dims, b_dims}, axis);
    const auto a = random_floats(120, 121);
    const auto b = random_floats(static_cast<std::size_t>(120 / a_dims[static_cast<std::size_t>(axis)] * 3), 122);
    std::vector<float> y(a.size() + b.size());
    const std::array<const float*, 2> xs{a.data(), b.data()};
    kernel.forward(xs, y.data());
    // Row-major reference: at each outer index, a's run then b's run.
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= a_dims[static_cast<std::size_t>(d)];
    for (int d = axis + 1; d < 4; ++d) inner *= a_dims[static_cast<std::size_t>(d)];
    const int64_t run_a = a_dims[static_cast<std::size_t>(axis)] * inner, run_b = 3 * inner;
    std::vector<float> expected;
    for (int64_t o = 0; o < outer; ++o) {
      expected.insert(expected.end(), a.begin() + o * run_a, a.begin() + (o + 1) * run_a);
      expected.insert(expected.end(), b.begin() + o * run_b, b.begin() + (o + 1) * run_b);
    }
    EXPECT_EQ(y, expected);
    std::vector<float> da(a.size()), db(b.size());
    const std::array<float*, 2> dxs{da.data(), db.data()};
    kernel.backward(y.data(), dxs);
    EXPECT_EQ(da, a);
    EXPECT_EQ(db, b);
  }
}

TEST(Concat, RejectsMismatchedDims) {
  CpuContext context;
  EXPECT_THROW(ConcatKernel(context, {{2, 3}, {3, 3}}, 1), KernelArgumentError);
  EXPECT_THROW(ConcatKernel(context, {{2, 3}}, 2), KernelArgumentError);
}

}  // namespace
}  // namespace splitbrain::exec::cpu
