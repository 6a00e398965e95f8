#include "tools/delay_line/wire_schedule.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <vector>

namespace splitbrain::tools {
namespace {

constexpr double kDelaySeconds = 100e-6;
constexpr double kBytesPerSecond = 125e6;  // 1 Gb/s

// The contract over random traffic from several senders: nothing arrives before the delay has
// passed, each destination's deliveries keep their order, and its port never takes bytes faster
// than the link's rate.
TEST(WireSchedule, NeverEarlyInOrderAndNeverFasterThanTheRate) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 50; ++trial) {
    const int nodes = 2 + trial % 4;
    WireSchedule wire(nodes, kDelaySeconds, kBytesPerSecond);
    std::vector<double> last_delivery(nodes, -1.0);
    std::vector<double> last_bytes(nodes, 0.0);
    double sent = 0.0;
    for (int packet = 0; packet < 500; ++packet) {
      sent += std::uniform_real_distribution<double>(0.0, 200e-6)(random);
      const int to = std::uniform_int_distribution<int>(0, nodes - 1)(random);
      const int64_t bytes = std::uniform_int_distribution<int64_t>(40, 65535)(random);
      const double delivered = wire.deliver_at(to, sent, bytes);
      EXPECT_GE(delivered, sent + kDelaySeconds);
      if (last_delivery[to] >= 0) EXPECT_GE(delivered, last_delivery[to] + last_bytes[to] / kBytesPerSecond - 1e-15);
      last_delivery[to] = delivered;
      last_bytes[to] = static_cast<double>(bytes);
    }
  }
}

// A flow the sender already paced at the link's rate is delayed by the delay alone: its
// serialisation is not charged a second time at the receiving port.
TEST(WireSchedule, APacedFlowIsDelayedByTheDelayAlone) {
  WireSchedule wire(2, kDelaySeconds, kBytesPerSecond);
  double sent = 1.0;
  for (int packet = 0; packet < 100; ++packet) {
    const int64_t bytes = packet % 3 == 0 ? 65535 : 1500;
    EXPECT_DOUBLE_EQ(wire.deliver_at(1, sent, bytes), sent + kDelaySeconds);
    sent += static_cast<double>(bytes) / kBytesPerSecond;
  }
}

// Two nodes sending to a third at once share its port: the second packet waits for the first.
TEST(WireSchedule, SendersToOneNodeShareItsPort) {
  WireSchedule wire(3, kDelaySeconds, kBytesPerSecond);
  const double first = wire.deliver_at(2, 0.0, 12500);
  const double second = wire.deliver_at(2, 0.0, 12500);
  EXPECT_DOUBLE_EQ(first, kDelaySeconds);
  EXPECT_DOUBLE_EQ(second, kDelaySeconds + 100e-6);
  // Another destination's port is free all the same.
  EXPECT_DOUBLE_EQ(wire.deliver_at(0, 0.0, 12500), kDelaySeconds);
}

TEST(WireSchedule, RefusesALinkThatCannotExist) {
  EXPECT_THROW(WireSchedule(0, kDelaySeconds, kBytesPerSecond), std::invalid_argument);
  EXPECT_THROW(WireSchedule(2, -1e-6, kBytesPerSecond), std::invalid_argument);
  EXPECT_THROW(WireSchedule(2, kDelaySeconds, 0.0), std::invalid_argument);
}

}  // namespace
}  // namespace splitbrain::tools
