#include "tools/calibration/host_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "model/errors.h"

namespace splitbrain::tools {

HostLayout host_layout(const std::vector<std::string>& host_name_of_rank) {
  if (host_name_of_rank.empty()) throw std::invalid_argument("host_layout: no ranks");
  HostLayout layout;
  std::vector<int> ranks_on_host;
  for (const std::string& name : host_name_of_rank) {
    const auto found = std::find(layout.hosts.begin(), layout.hosts.end(), name);
    const int host = static_cast<int>(found - layout.hosts.begin());
    if (found == layout.hosts.end()) {
      layout.hosts.push_back(name);
      ranks_on_host.push_back(0);
    }
    layout.host_of_rank.push_back(host);
    layout.position_on_host.push_back(ranks_on_host[static_cast<size_t>(host)]++);
  }
  for (size_t h = 1; h < layout.hosts.size(); ++h) {
    if (ranks_on_host[h] != ranks_on_host[0]) {
      throw InputError(fmt::format(
          "the ranks are spread unevenly over the hosts ({} on '{}', {} on '{}'): a cluster level has one fan-out, so "
          "start as many ranks on every host",
          ranks_on_host[0], layout.hosts[0], ranks_on_host[h], layout.hosts[h]));
    }
  }
  layout.ranks_per_host = ranks_on_host[0];
  return layout;
}

}  // namespace splitbrain::tools
