// How `calibrate` groups ranks by host for a two-level cluster: per host for the node level, per
// position on the host for the cluster level; uneven hosts are refused.

#include "tools/calibration/host_layout.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "model/errors.h"

namespace splitbrain::tools {
namespace {

TEST(HostLayout, GroupsRanksByHostAndByPositionOnTheirHost) {
  const HostLayout layout = host_layout({"node0", "node0", "node1", "node1"});
  EXPECT_EQ(layout.hosts, (std::vector<std::string>{"node0", "node1"}));
  EXPECT_EQ(layout.ranks_per_host, 2);
  EXPECT_EQ(layout.host_of_rank, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(layout.position_on_host, (std::vector<int>{0, 1, 0, 1}));
}

TEST(HostLayout, RanksNeedNotBeContiguousOnAHost) {
  // A round-robin launch (mpirun --map-by node): hosts in the order of their lowest rank.
  const HostLayout layout = host_layout({"b", "a", "b", "a", "b", "a"});
  EXPECT_EQ(layout.hosts, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(layout.ranks_per_host, 3);
  EXPECT_EQ(layout.host_of_rank, (std::vector<int>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(layout.position_on_host, (std::vector<int>{0, 0, 1, 1, 2, 2}));
}

TEST(HostLayout, OneHostIsOneLevel) {
  const HostLayout layout = host_layout({"h", "h", "h"});
  EXPECT_EQ(layout.hosts.size(), 1u);
  EXPECT_EQ(layout.ranks_per_host, 3);
}

TEST(HostLayout, RefusesHostsWithDifferentRankCounts) {
  try {
    host_layout({"node0", "node0", "node1"});
    FAIL() << "uneven hosts accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("2 on 'node0'"), std::string::npos) << message;
    EXPECT_NE(message.find("1 on 'node1'"), std::string::npos) << message;
  }
  EXPECT_THROW(host_layout({}), std::invalid_argument);
}

}  // namespace
}  // namespace splitbrain::tools
