#include "exec/comm/byte_counter.h"

#include <fmt/format.h>

#include <numeric>
#include <stdexcept>

namespace splitbrain::exec::comm {

namespace {

void add_to(ByteCount& sum, const ByteCount& count) {
  sum.bytes += count.bytes;
  sum.calls += count.calls;
  for (size_t i = 0; i < sum.bytes_by_host_level.size(); ++i)
    sum.bytes_by_host_level[i] += count.bytes_by_host_level[i];
}

}  // namespace

void ByteCounter::add(std::string_view label, plans::CollectiveKind kind, int64_t bytes,
                      std::optional<HostLevelBytes> by_host_level) {
  if (by_host_level && std::accumulate(by_host_level->begin(), by_host_level->end(), int64_t{0}) != bytes) {
    throw std::invalid_argument(fmt::format("ByteCounter: {} ({}): the host-level split does not sum to {} bytes",
                                            label, plans::collective_name(kind), bytes));
  }
  ByteCount& count = entries_[Key{std::string(label), kind}];
  count.bytes += bytes;
  count.calls += 1;
  if (by_host_level) {
    for (size_t i = 0; i < count.bytes_by_host_level.size(); ++i) count.bytes_by_host_level[i] += (*by_host_level)[i];
  } else if (bytes != 0) {
    split_by_host_level_ = false;
  }
}

ByteCount ByteCounter::total() const {
  ByteCount sum;
  for (const auto& [key, count] : entries_) {
    add_to(sum, count);
  }
  return sum;
}

ByteCount ByteCounter::label_total(std::string_view label) const {
  ByteCount sum;
  for (const auto& [key, count] : entries_) {
    if (key.first != label) continue;
    add_to(sum, count);
  }
  return sum;
}

ByteCount ByteCounter::kind_total(plans::CollectiveKind kind) const {
  ByteCount sum;
  for (const auto& [key, count] : entries_) {
    if (key.second != kind) continue;
    add_to(sum, count);
  }
  return sum;
}

std::map<std::string, ByteCount> ByteCounter::by_label() const {
  std::map<std::string, ByteCount> out;
  for (const auto& [key, count] : entries_) {
    add_to(out[key.first], count);
  }
  return out;
}

}  // namespace splitbrain::exec::comm
