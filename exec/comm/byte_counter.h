#pragma once
// The bytes this rank sends, as the plan counts them: every executed collective adds
// plans::bytes_sent(collective, this rank's index in the group), keyed by a caller-given label
// (layer and phase, say "fc6/forward") and by kind. We do not measure what MPI moves inside its
// own algorithms: that depends on the library's algorithm choice, while the plan's count is what
// the simulator predicted, so the two must agree to the byte (DESIGN.md, "Redistribution"), and a
// difference is a bookkeeping bug, never a model error.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "plans/collective_kind.h"

namespace splitbrain::exec::comm {

struct ByteCount {
  int64_t bytes = 0;  // bytes sent by this rank
  int64_t calls = 0;  // collectives executed (including those that send nothing here)
  bool operator==(const ByteCount&) const = default;
};

class ByteCounter {
 public:
  using Key = std::pair<std::string, plans::CollectiveKind>;

  void add(std::string_view label, plans::CollectiveKind kind, int64_t bytes);

  const std::map<Key, ByteCount>& entries() const { return entries_; }
  ByteCount total() const;
  ByteCount label_total(std::string_view label) const;
  ByteCount kind_total(plans::CollectiveKind kind) const;
  std::map<std::string, ByteCount> by_label() const;

  void clear() { entries_.clear(); }

 private:
  std::map<Key, ByteCount> entries_;
};

}  // namespace splitbrain::exec::comm
