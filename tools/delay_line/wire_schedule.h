#pragma once

#include <cstdint>
#include <vector>

namespace splitbrain::tools {

// When a packet that a node hands to an emulated link reaches the other end: after the link's
// one-way delay, and no sooner than the receiving node's port can take it at the link's rate.
//
// The sender side is paced by the kernel (a token bucket on the node's interface), so a single
// flow arrives already spaced by size / rate and is delayed by exactly `delay_seconds`; only
// where several nodes send to one at once does the receiver's port make them queue, as a
// full-duplex NIC would. A packet is delivered at the start of its slot on the port (the port
// then stays busy for size / rate), so a paced flow is not charged its serialisation twice.
class WireSchedule {
 public:
  WireSchedule(int nodes, double delay_seconds, double bytes_per_second);

  // The time (same clock as `sent_seconds`) at which a packet of `bytes` handed over at
  // `sent_seconds` to go to node `destination` is delivered there. Calls for one destination must
  // come in the order the packets were handed over (`sent_seconds` not decreasing); the times
  // returned for it are then not decreasing either, so each destination's queue stays in order.
  double deliver_at(int destination, double sent_seconds, int64_t bytes);

 private:
  double delay_seconds_;
  double bytes_per_second_;
  std::vector<double> port_free_at_seconds_;  // per destination: when its port has taken all so far
};

}  // namespace splitbrain::tools
