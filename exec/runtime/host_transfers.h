#pragma once
// Copies between the host's memory and a device's, counted by what they carry, so a step's
// report can show that a GPU step moves its input batch, its labels and its loss and nothing
// else (`other`: a value read back, a collective or a halo staged through the host, a checkpoint).

#include <array>
#include <cstdint>
#include <string_view>

namespace splitbrain::exec {

enum class HostTransferPurpose { input, labels, loss, other };
inline constexpr std::array<HostTransferPurpose, 4> kHostTransferPurposes = {
    HostTransferPurpose::input, HostTransferPurpose::labels, HostTransferPurpose::loss, HostTransferPurpose::other};

constexpr std::string_view host_transfer_purpose_name(HostTransferPurpose purpose) {
  switch (purpose) {
    case HostTransferPurpose::input:
      return "input";
    case HostTransferPurpose::labels:
      return "labels";
    case HostTransferPurpose::loss:
      return "loss";
    case HostTransferPurpose::other:
      break;
  }
  return "other";
}

struct HostTransfers {
  int64_t bytes = 0;
  std::array<int64_t, kHostTransferPurposes.size()> count_by_purpose{};  // indexed by HostTransferPurpose

  void add(HostTransferPurpose purpose, int64_t transfer_bytes) {
    bytes += transfer_bytes;
    ++count_by_purpose[static_cast<size_t>(purpose)];
  }
  int64_t count_of(HostTransferPurpose purpose) const { return count_by_purpose[static_cast<size_t>(purpose)]; }
  int64_t count() const {
    int64_t all = 0;
    for (const int64_t n : count_by_purpose) all += n;
    return all;
  }
  HostTransfers& operator+=(const HostTransfers& more) {
    bytes += more.bytes;
    for (size_t p = 0; p < count_by_purpose.size(); ++p) count_by_purpose[p] += more.count_by_purpose[p];
    return *this;
  }
  // What was moved between two readings of the counts.
  friend HostTransfers operator-(HostTransfers after, const HostTransfers& before) {
    after.bytes -= before.bytes;
    for (size_t p = 0; p < after.count_by_purpose.size(); ++p) after.count_by_purpose[p] -= before.count_by_purpose[p];
    return after;
  }
};

}  // namespace splitbrain::exec
