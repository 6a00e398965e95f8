#include "exec/comm/host_level.h"

#include <fmt/format.h>

#include <stdexcept>

#include "plans/sent_spans.h"

namespace splitbrain::exec::comm {
namespace {

const std::string& host_of(int rank, const std::vector<std::string>& host_of_rank) {
  if (rank < 0 || rank >= static_cast<int>(host_of_rank.size())) {
    throw std::out_of_range(
        fmt::format("host_level: rank {} has no host (hosts known for {} ranks)", rank, host_of_rank.size()));
  }
  return host_of_rank[static_cast<size_t>(rank)];
}

}  // namespace

const char* host_level_name(HostLevel level) {
  return level == HostLevel::within_host ? "within_host" : "across_hosts";
}

HostLevel host_level(std::span<const int> ranks, const std::vector<std::string>& host_of_rank) {
  if (ranks.empty()) return HostLevel::within_host;
  const std::string& first = host_of(ranks.front(), host_of_rank);
  for (const int rank : ranks) {
    if (host_of(rank, host_of_rank) != first) return HostLevel::across_hosts;
  }
  return HostLevel::within_host;
}

HostLevelBytes bytes_by_host_level(const plans::Mesh& mesh, const plans::Collective& collective, int rank,
                                   const std::vector<std::string>& host_of_rank) {
  HostLevelBytes bytes{};
  for (const plans::SentSpan& span : plans::sent_spans(mesh, collective, rank)) {
    bytes[static_cast<size_t>(host_level(span.ranks, host_of_rank))] += span.bytes;
  }
  return bytes;
}

}  // namespace splitbrain::exec::comm
