#include "exec/runtime/shared_time_axis.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>

namespace splitbrain::exec {

std::string steady_clock_domain() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!(in >> id)) return "";
  return id;
}

std::vector<double> shared_axis_offsets_seconds(const std::vector<std::string>& domains,
                                                const std::vector<double>& started_at_seconds) {
  if (domains.size() != started_at_seconds.size()) {
    throw std::invalid_argument("shared_axis_offsets_seconds: one domain and one start per rank");
  }
  std::map<std::string, double> earliest;
  for (size_t r = 0; r < domains.size(); ++r) {
    if (domains[r].empty()) continue;
    const auto [it, inserted] = earliest.emplace(domains[r], started_at_seconds[r]);
    if (!inserted && started_at_seconds[r] < it->second) it->second = started_at_seconds[r];
  }
  std::vector<double> offsets(domains.size(), 0.0);
  for (size_t r = 0; r < domains.size(); ++r) {
    if (!domains[r].empty()) offsets[r] = started_at_seconds[r] - earliest.at(domains[r]);
  }
  return offsets;
}

double step_span_seconds(const std::vector<std::string>& domains, const std::vector<double>& started_at_seconds,
                         const std::vector<double>& seconds) {
  if (seconds.size() != domains.size()) {
    throw std::invalid_argument("step_span_seconds: one domain, one start and one duration per rank");
  }
  const std::vector<double> offsets = shared_axis_offsets_seconds(domains, started_at_seconds);
  double span = 0.0;
  for (size_t r = 0; r < seconds.size(); ++r) span = std::max(span, offsets[r] + seconds[r]);
  return span;
}

}  // namespace splitbrain::exec
