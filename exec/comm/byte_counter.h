#pragma once
// The bytes this rank sends, as the plan counts them: every executed collective adds
// plans::bytes_sent(collective, this rank's index in the group), keyed by a caller-given label
// (layer and phase, say "fc6/forward") and by kind. We do not measure what MPI moves inside its
// own algorithms: that depends on the library's algorithm choice, while the plan's count is what
// the simulator predicted, so the two must agree to the byte (DESIGN.md, "Redistribution"), and a
// difference is a bookkeeping bug, never a model error. Where the ranks' hosts are known, each
// count is also split by host level (host_level.h: within this rank's host or across hosts).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "exec/comm/host_level.h"
#include "plans/collective_kind.h"

namespace splitbrain::exec::comm {

struct ByteCount {
  int64_t bytes = 0;                     // bytes sent by this rank
  int64_t calls = 0;                     // collectives executed (including those that send nothing here)
  HostLevelBytes bytes_by_host_level{};  // `bytes` split by HostLevel, where the split was given
  bool operator==(const ByteCount&) const = default;
};

class ByteCounter {
 public:
  using Key = std::pair<std::string, plans::CollectiveKind>;

  // `by_host_level`, when given, splits `bytes` (its entries sum to `bytes`; std::invalid_argument
  // otherwise).
  void add(std::string_view label, plans::CollectiveKind kind, int64_t bytes,
           std::optional<HostLevelBytes> by_host_level = std::nullopt);

  // True when every count that sent bytes came with its host-level split (so the totals'
  // bytes_by_host_level are complete); false as soon as one did not.
  bool split_by_host_level() const { return split_by_host_level_; }

  const std::map<Key, ByteCount>& entries() const { return entries_; }
  ByteCount total() const;
  ByteCount label_total(std::string_view label) const;
  ByteCount kind_total(plans::CollectiveKind kind) const;
  std::map<std::string, ByteCount> by_label() const;

  void clear() {
    entries_.clear();
    split_by_host_level_ = true;
  }

 private:
  std::map<Key, ByteCount> entries_;
  bool split_by_host_level_ = true;
};

}  // namespace splitbrain::exec::comm
