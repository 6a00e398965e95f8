// Dropout: the mask depends on global positions only, so a tensor computed whole and the same
// tensor computed as row blocks or column blocks (each with its offset) drop the same elements;
// the keep rate is about 1 - p; scaling and backward follow the mask.

#include "exec/cpu/dropout.h"

#include <gtest/gtest.h>

#include "exec/kernels/dropout_mask.h"
#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::dropout_keeps;
using kernels::DropoutBlock;
using kernels::DropoutKey;
using kernels::KernelArgumentError;
using testing::random_floats;

constexpr DropoutKey kKey{1234, 7, 3};

std::vector<uint8_t> block_mask(const DropoutBlock& block, double p) {
  const auto n = static_cast<std::size_t>(block.local_elements());
  const std::vector<float> x(n, 1.0f);
  std::vector<float> y(n);
  std::vector<uint8_t> mask(n);
  DropoutKernel(p).forward(kKey, block, x.data(), y.data(), mask.data());
  return mask;
}

TEST(Dropout, MaskIsIndependentOfTheSplit) {
  const int64_t rows = 8, cols = 21;  // a [2, 4, 21] tensor seen as 8 rows of 21
  const double p = 0.3;
  const auto whole = block_mask({{2, 4, cols}, {0, 0, 0}, {2, 4, cols}}, p);
  auto at = [&](int64_t r, int64_t c) { return whole[static_cast<std::size_t>(r * cols + c)]; };
  // Row blocks: 4 ranks splitting dims 0 and 1 (2 of the 8 rows each).
  for (int64_t r0 = 0; r0 < rows; r0 += 2) {
    const auto part = block_mask({{2, 4, cols}, {r0 / 4, r0 % 4, 0}, {1, 2, cols}}, p);
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < cols; ++c) ASSERT_EQ(part[static_cast<std::size_t>(r * cols + c)], at(r0 + r, c));
  }
  // Column blocks of uneven widths, 21 = 10 + 11: all rows, a range of the last dim.
  for (const auto& [c0, width] : {std::pair<int64_t, int64_t>{0, 10}, {10, 11}}) {
    const auto part = block_mask({{2, 4, cols}, {0, 0, c0}, {2, 4, width}}, p);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < width; ++c) ASSERT_EQ(part[static_cast<std::size_t>(r * width + c)], at(r, c0 + c));
  }
  // A different step or layer gives a different mask.
  const DropoutBlock block{{2, 4, cols}, {0, 0, 0}, {2, 4, cols}};
  std::vector<float> x(whole.size(), 1.0f), y(whole.size());
  std::vector<uint8_t> other(whole.size());
  DropoutKernel(p).forward(DropoutKey{1234, 8, 3}, block, x.data(), y.data(), other.data());
  EXPECT_NE(other, whole);
  DropoutKernel(p).forward(DropoutKey{1234, 7, 4}, block, x.data(), y.data(), other.data());
  EXPECT_NE(other, whole);
}

TEST(Dropout, KeepRateScalingAndBackward) {
  const double p = 0.25;
  const int64_t n = 100000;
  const DropoutBlock block{{n}, {0}, {n}};
  const auto x = random_floats(static_cast<std::size_t>(n), 81);
  const auto dy = random_floats(static_cast<std::size_t>(n), 82);
  std::vector<float> y(x.size()), dx(x.size());
  std::vector<uint8_t> mask(x.size());
  DropoutKernel(p).forward(kKey, block, x.data(), y.data(), mask.data());
  DropoutKernel(p).backward(n, mask.data(), dy.data(), dx.data());
  int64_t kept = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    kept += mask[i];
    EXPECT_EQ(mask[i] != 0, dropout_keeps(kKey, p, i));
    EXPECT_FLOAT_EQ(y[i], mask[i] ? x[i] / 0.75f : 0.0f);
    EXPECT_FLOAT_EQ(dx[i], mask[i] ? dy[i] / 0.75f : 0.0f);
  }
  EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(n), 0.75, 0.01);
}

TEST(Dropout, EdgeProbabilitiesAndBadBlocks) {
  const DropoutBlock block{{4, 5}, {0, 0}, {4, 5}};
  std::vector<float> x(20, 2.0f), y(20);
  std::vector<uint8_t> mask(20);
  DropoutKernel(0.0).forward(kKey, block, x.data(), y.data(), mask.data());
  EXPECT_EQ(y, x);
  DropoutKernel(1.0).forward(kKey, block, x.data(), y.data(), mask.data());
  EXPECT_EQ(y, std::vector<float>(20, 0.0f));
  EXPECT_THROW(DropoutKernel(1.5), KernelArgumentError);
  const DropoutBlock outside{{4, 5}, {2, 0}, {3, 5}};
  EXPECT_THROW(DropoutKernel(0.5).forward(kKey, outside, x.data(), y.data(), mask.data()), KernelArgumentError);
}

}  // namespace
}  // namespace splitbrain::exec::cpu
