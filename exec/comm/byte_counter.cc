#include "exec/comm/byte_counter.h"

namespace splitbrain::exec::comm {

void ByteCounter::add(std::string_view label, plans::CollectiveKind kind, int64_t bytes) {
  ByteCount& count = entries_[Key{std::string(label), kind}];
  count.bytes += bytes;
  count.calls += 1;
}

ByteCount ByteCounter::total() const {
  ByteCount sum;
  for (const auto& [key, count] : entries_) {
    sum.bytes += count.bytes;
    sum.calls += count.calls;
  }
  return sum;
}

ByteCount ByteCounter::label_total(std::string_view label) const {
  ByteCount sum;
  for (const auto& [key, count] : entries_) {
    if (key.first != label) continue;
    sum.bytes += count.bytes;
    sum.calls += count.calls;
  }
  return sum;
}

ByteCount ByteCounter::kind_total(plans::CollectiveKind kind) const {
  ByteCount sum;
  for (const auto& [key, count] : entries_) {
    if (key.second != kind) continue;
    sum.bytes += count.bytes;
    sum.calls += count.calls;
  }
  return sum;
}

std::map<std::string, ByteCount> ByteCounter::by_label() const {
  std::map<std::string, ByteCount> out;
  for (const auto& [key, count] : entries_) {
    ByteCount& sum = out[key.first];
    sum.bytes += count.bytes;
    sum.calls += count.calls;
  }
  return out;
}

}  // namespace splitbrain::exec::comm
