// The block helpers every collective is built from, on hand-written arrays (no MPI involved).

#include "exec/comm/local_array.h"

#include <gtest/gtest.h>

namespace splitbrain::exec::comm {
namespace {

// Floats 0..n-1 of `shape` as bytes.
LocalBytes iota(std::vector<int64_t> shape) {
  LocalArray a{std::move(shape), {}};
  for (int64_t i = 0; i < element_count(a.shape); ++i) a.values.push_back(static_cast<float>(i));
  return to_bytes(a);
}

std::vector<float> floats(const LocalBytes& b) { return to_floats(b).values; }

TEST(LocalArray, SubArrayOfA3dArray) {
  // [2,3,4]: element (i,j,k) = 12i + 4j + k.
  const LocalBytes a = iota({2, 3, 4});
  const std::vector<int64_t> offset = {1, 1, 2};
  const std::vector<int64_t> extent = {1, 2, 2};
  const LocalBytes s = sub_array(a, offset, extent);
  EXPECT_EQ(s.shape, extent);
  EXPECT_EQ(floats(s), (std::vector<float>{18, 19, 22, 23}));
  const std::vector<int64_t> too_far = {2, 1, 2};
  EXPECT_THROW(sub_array(a, offset, too_far), std::out_of_range);
  // The fp32 overload cuts the same block straight from the floats.
  const LocalArray f = sub_array(to_floats(a), offset, extent);
  EXPECT_EQ(f.shape, extent);
  EXPECT_EQ(f.values, (std::vector<float>{18, 19, 22, 23}));
  EXPECT_THROW(sub_array(to_floats(a), offset, too_far), std::out_of_range);
  const std::vector<int64_t> negative = {1, -1, 2};
  EXPECT_THROW(sub_array(to_floats(a), offset, negative), std::out_of_range);
}

TEST(LocalArray, PackBlocksAlongAnInnerDimAndBack) {
  // [2,4] rows {0 1 2 3} {4 5 6 7}; two blocks along dim 1: [[0,1],[4,5]] then [[2,3],[6,7]].
  const LocalBytes a = iota({2, 4});
  const std::vector<std::byte> packed = pack_blocks(a, 1, 2);
  const std::vector<int64_t> block_shape = {2, 2};
  const LocalBytes blocks{block_shape, 4, packed};
  const LocalBytes both{{4, 2}, 4, packed};
  EXPECT_EQ(floats(both), (std::vector<float>{0, 1, 4, 5, 2, 3, 6, 7}));
  EXPECT_EQ(concat_blocks(packed, block_shape, 4, 1, 2), a);
  EXPECT_THROW(pack_blocks(a, 1, 3), std::invalid_argument);
}

TEST(LocalArray, ConcatOfUnequalRows) {
  const LocalBytes left = iota({2, 1});   // {0} {1}
  const LocalBytes right = iota({2, 2});  // {0 1} {2 3}
  const LocalBytes c = concat({&left, &right, &left}, 1);
  EXPECT_EQ(c.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(floats(c), (std::vector<float>{0, 0, 1, 0, 1, 2, 3, 1}));
}

}  // namespace
}  // namespace splitbrain::exec::comm
