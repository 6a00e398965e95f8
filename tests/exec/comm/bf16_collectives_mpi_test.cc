// A bf16 plan's collectives through the Communicator (communicator_bf16.cc): the values travel as
// 16-bit words and reduce in bf16, the gather returns the members' (rounded) blocks exactly, the
// sum is each partial sum rounded to bf16, and the bytes counted are the plan's 2 per element.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "exec/comm/bf16.h"
#include "exec/comm/communicator.h"
#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_collectives.h"
#include "test_tensors.h"

namespace splitbrain::exec::comm {
namespace {

using testing::world_rank;
using testing::world_size;

plans::Collective bf16_collective(plans::CollectiveKind kind, int n, int64_t elements) {
  plans::Collective c;
  c.kind = kind;
  c.axes = {0};
  c.group_size = n;
  c.dim = 0;
  c.element_bytes = 2;
  c.buffer_bytes = (kind == plans::CollectiveKind::all_gather ? n : 1) * elements * 2;
  return c;
}

// Member r's values: r-dependent, not representable in bf16 before rounding.
LocalArray block_of(int member, int64_t elements) {
  LocalArray a{{elements}, {}};
  for (int64_t i = 0; i < elements; ++i)
    a.values.push_back(0.1f * static_cast<float>(member + 1) + 0.01f * static_cast<float>(i));
  return a;
}

TEST(Bf16Collectives, MoveTwoByteWordsAndSumInBf16) {
  const int n = world_size();
  MeshCommunicators comms(plans::Mesh({{"data", n}}));
  MpiCollectives engine(comms);
  engine.prepare({{0}});
  Communicator communicator(engine);
  const int64_t elements = 8 * n;
  const LocalArray mine = block_of(world_rank(), elements);

  const LocalArray gathered =
      communicator.run(bf16_collective(plans::CollectiveKind::all_gather, n, elements), mine, "gather");
  ASSERT_EQ(gathered.values.size(), static_cast<size_t>(elements * n));
  for (int member = 0; member < n; ++member) {
    const LocalArray theirs = block_of(member, elements);
    for (int64_t i = 0; i < elements; ++i) {
      EXPECT_EQ(gathered.values[static_cast<size_t>(member * elements + i)], round_to_bf16(theirs.values[i]));
    }
  }

  const LocalArray sum = communicator.run(bf16_collective(plans::CollectiveKind::all_reduce, n, elements), mine, "sum");
  const LocalArray slice =
      communicator.run(bf16_collective(plans::CollectiveKind::reduce_scatter, n, elements), mine, "slice");
  ASSERT_EQ(slice.values.size(), 8u);
  for (int64_t i = 0; i < elements; ++i) {
    double exact = 0.0;
    float in_order = 0.0f;  // the members' rounded values added in member order, each sum rounded
    for (int member = 0; member < n; ++member) {
      const float v = round_to_bf16(block_of(member, elements).values[i]);
      exact += v;
      in_order = member == 0 ? v : round_to_bf16(in_order + v);
    }
    const float got = sum.values[static_cast<size_t>(i)];
    EXPECT_EQ(got, round_to_bf16(got)) << "a bf16 value";
    if (n <= 2) {
      EXPECT_EQ(got, in_order) << i;  // one addition: the order cannot matter
    } else {
      EXPECT_NEAR(got, exact, std::abs(exact) * n * 0x1p-8) << i;  // n - 1 roundings of 2^-9
    }
    if (i / 8 == world_rank()) {
      const float tolerance = std::abs(got) * static_cast<float>(n) * 0x1p-8f;
      EXPECT_NEAR(slice.values[static_cast<size_t>(i % 8)], got, tolerance) << i;
    }
  }
  // Counted as the plan says: 2-byte elements.
  const int64_t block_bytes = elements * 2;
  EXPECT_EQ(communicator.counter().label_total("gather").bytes, (n - 1) * block_bytes);
  EXPECT_EQ(communicator.counter().label_total("sum").bytes, 2 * (n - 1) * block_bytes / n);
  EXPECT_EQ(communicator.counter().label_total("slice").bytes, (n - 1) * block_bytes / n);
}

}  // namespace
}  // namespace splitbrain::exec::comm
