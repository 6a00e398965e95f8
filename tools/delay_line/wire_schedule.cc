#include "tools/delay_line/wire_schedule.h"

#include <algorithm>
#include <stdexcept>

namespace splitbrain::tools {

WireSchedule::WireSchedule(int nodes, double delay_seconds, double bytes_per_second)
    : delay_seconds_(delay_seconds),
      bytes_per_second_(bytes_per_second),
      port_free_at_seconds_(static_cast<size_t>(std::max(nodes, 0)), 0.0) {
  if (nodes < 1) throw std::invalid_argument("a link needs at least one node");
  if (!(delay_seconds >= 0.0)) throw std::invalid_argument("the delay must be zero or more seconds");
  if (!(bytes_per_second > 0.0)) throw std::invalid_argument("the rate must be more than zero bytes per second");
}

double WireSchedule::deliver_at(int destination, double sent_seconds, int64_t bytes) {
  double& port_free = port_free_at_seconds_.at(static_cast<size_t>(destination));
  const double delivered = std::max(sent_seconds + delay_seconds_, port_free);
  port_free = delivered + static_cast<double>(bytes) / bytes_per_second_;
  return delivered;
}

}  // namespace splitbrain::tools
