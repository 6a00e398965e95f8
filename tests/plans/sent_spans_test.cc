#include "plans/sent_spans.h"

#include <gtest/gtest.h>

#include <numeric>

namespace splitbrain::plans {
namespace {

// {data: 2, model: 2}: ranks 0 and 1 differ in model, ranks 0 and 2 in data.
const Mesh kGrid({{"data", 2}, {"model", 2}});

Collective make(CollectiveKind kind, std::vector<int> axes, int group_size, int64_t buffer_bytes) {
  Collective c;
  c.kind = kind;
  c.axes = std::move(axes);
  c.group_size = group_size;
  c.dim = 0;
  c.other_dim = 1;
  c.buffer_bytes = buffer_bytes;
  c.element_bytes = 4;
  return c;
}

int64_t span_total(const std::vector<SentSpan>& spans) {
  return std::accumulate(spans.begin(), spans.end(), int64_t{0},
                         [](int64_t sum, const SentSpan& s) { return sum + s.bytes; });
}

TEST(SentSpans, GroupCollectivesSpanTheWholeGroup) {
  const Collective over_data = make(CollectiveKind::all_reduce, {0}, 2, 4096);
  const std::vector<SentSpan> spans = sent_spans(kGrid, over_data, 1);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].ranks, (std::vector<int>{1, 3}));
  EXPECT_EQ(spans[0].bytes, bytes_sent(over_data, 0));
  const Collective over_both = make(CollectiveKind::all_gather, {0, 1}, 4, 4096);
  EXPECT_EQ(sent_spans(kGrid, over_both, 2).at(0).ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(sent_spans(kGrid, over_both, 2).at(0).bytes, 3072);
}

TEST(SentSpans, SendRecvIsThePairAndOnlyTheSourceSends) {
  Collective hand_over = make(CollectiveKind::send_recv, {0}, 2, 600);
  hand_over.source_index = 0;
  hand_over.destination_index = 1;
  const std::vector<SentSpan> spans = sent_spans(kGrid, hand_over, 1);  // data coordinate 0: the source
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].ranks, (std::vector<int>{1, 3}));
  EXPECT_EQ(spans[0].bytes, 600);
  EXPECT_TRUE(sent_spans(kGrid, hand_over, 3).empty());  // the destination sends nothing
}

TEST(SentSpans, HaloSendsToEachNeighbourOverItsOwnPair) {
  Collective halo = make(CollectiveKind::halo_exchange, {0, 1}, 4, 4000);
  halo.halo_rows = 2;
  halo.row_bytes = 100;
  const std::vector<SentSpan> inner = sent_spans(kGrid, halo, 1);
  ASSERT_EQ(inner.size(), 2u);
  EXPECT_EQ(inner[0].ranks, (std::vector<int>{1, 0}));
  EXPECT_EQ(inner[1].ranks, (std::vector<int>{1, 2}));
  EXPECT_EQ(inner[0].bytes, 200);
  EXPECT_EQ(inner[1].bytes, 200);
  const std::vector<SentSpan> edge = sent_spans(kGrid, halo, 3);
  ASSERT_EQ(edge.size(), 1u);
  EXPECT_EQ(edge[0].ranks, (std::vector<int>{3, 2}));
}

TEST(SentSpans, BytesSumToBytesSentOnEveryRank) {
  Collective halo = make(CollectiveKind::halo_exchange, {0, 1}, 4, 4000);
  halo.halo_rows = 3;
  halo.row_bytes = 10;
  const std::vector<Collective> all = {make(CollectiveKind::all_reduce, {1}, 2, 4100),
                                       make(CollectiveKind::reduce_scatter, {0, 1}, 4, 4096),
                                       make(CollectiveKind::all_to_all, {0}, 2, 64), halo};
  for (const Collective& c : all) {
    for (int rank = 0; rank < kGrid.rank_count(); ++rank) {
      EXPECT_EQ(span_total(sent_spans(kGrid, c, rank)), bytes_sent(c, kGrid.index_in_group(rank, c.axes)))
          << collective_name(c.kind) << " rank " << rank;
    }
  }
  // A group of one sends nothing, so it has no span.
  EXPECT_TRUE(sent_spans(kGrid, make(CollectiveKind::all_reduce, {}, 1, 4096), 0).empty());
}

}  // namespace
}  // namespace splitbrain::plans
