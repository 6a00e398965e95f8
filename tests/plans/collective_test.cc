#include "plans/collective.h"

#include <gtest/gtest.h>

#include "tests/plans/reference_ranks.h"

namespace splitbrain::plans {
namespace {

Collective make(CollectiveKind kind, int n, int64_t buffer_bytes) {
  Collective c;
  c.kind = kind;
  c.axes = {0};
  c.group_size = n;
  c.dim = 0;
  c.other_dim = 1;
  c.buffer_bytes = buffer_bytes;
  return c;
}

// nccl-tests' bus-bandwidth factors: 2(n-1)/n for all-reduce, (n-1)/n for the others.
TEST(BytesSent, BandwidthOptimalFactors) {
  // S = 4096 B on 4 ranks: all_reduce 2*3/4*4096 = 6144; the rest 3/4*4096 = 3072.
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(bytes_sent(make(CollectiveKind::all_reduce, 4, 4096), i), 6144);
    EXPECT_EQ(bytes_sent(make(CollectiveKind::all_gather, 4, 4096), i), 3072);
    EXPECT_EQ(bytes_sent(make(CollectiveKind::reduce_scatter, 4, 4096), i), 3072);
    EXPECT_EQ(bytes_sent(make(CollectiveKind::all_to_all, 4, 4096), i), 3072);
  }
  EXPECT_EQ(group_bytes_sent(make(CollectiveKind::all_gather, 4, 4096)), 4 * 3072);
  // A group of one sends nothing.
  EXPECT_EQ(bytes_sent(make(CollectiveKind::all_reduce, 1, 4096), 0), 0);
  EXPECT_EQ(bytes_sent(make(CollectiveKind::all_gather, 1, 4096), 0), 0);
  EXPECT_THROW((void)bytes_sent(make(CollectiveKind::all_gather, 4, 4096), 4), std::out_of_range);
}

TEST(BytesSent, HaloAndSendRecv) {
  Collective halo = make(CollectiveKind::halo_exchange, 4, 1000);
  halo.halo_rows = 2;
  halo.row_bytes = 100;
  EXPECT_EQ(bytes_sent(halo, 0), 200);  // edge: one neighbour
  EXPECT_EQ(bytes_sent(halo, 1), 400);
  EXPECT_EQ(bytes_sent(halo, 3), 200);
  halo.group_size = 1;
  EXPECT_EQ(bytes_sent(halo, 0), 0);
  Collective send = make(CollectiveKind::send_recv, 3, 512);
  send.source_index = 1;
  send.destination_index = 2;
  EXPECT_EQ(bytes_sent(send, 0), 0);
  EXPECT_EQ(bytes_sent(send, 1), 512);
  EXPECT_EQ(bytes_sent(send, 2), 0);  // the receiver sends nothing
}

// An all_reduce whose element count the group does not divide: the ring's chunks are uneven,
// and the reference's actual ring must agree with bytes_sent on every rank.
TEST(BytesSent, UnevenAllReduceMatchesTheRing) {
  for (int n : {2, 3, 4, 5}) {
    for (int64_t elements : {1, 7, 10, 13}) {
      const Mesh mesh({{"x", n}});
      Collective c = make(CollectiveKind::all_reduce, n, elements * 4);
      c.element_bytes = 4;
      std::vector<testing::Array> arrays;
      for (int r = 0; r < n; ++r) {
        testing::Array a = testing::make_global({elements});
        for (double& v : a.values) v += r;
        arrays.push_back(a);
      }
      std::vector<int64_t> counted(static_cast<std::size_t>(n), 0);
      testing::apply(c, mesh, arrays, counted);
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(counted[static_cast<std::size_t>(r)], bytes_sent(c, r))
            << "n=" << n << " elements=" << elements << " rank " << r;
        testing::Array expected = testing::make_global({elements});
        for (double& v : expected.values) v = v * n + n * (n - 1) / 2;
        EXPECT_EQ(arrays[static_cast<std::size_t>(r)], expected);
      }
    }
  }
}

TEST(Collective, ToString) {
  const Mesh mesh({{"data", 2}, {"model", 4}});
  Collective c = make(CollectiveKind::all_to_all, 4, 4096);
  c.axes = {1};
  EXPECT_EQ(to_string(c, mesh), "all_to_all(dim 0 -> dim 1, over [model], n=4, 4096 B)");
  c.kind = CollectiveKind::all_reduce;
  c.axes = {0, 1};
  c.group_size = 8;
  EXPECT_EQ(to_string(c, mesh), "all_reduce(over [data, model], n=8, 4096 B)");
}

}  // namespace
}  // namespace splitbrain::plans
