#pragma once
// NCCL's point-to-point semantics on MPI, for the CPU's check of exec/runtime/grouped_hand_overs.h:
// a group's sends are synchronous (MPI_Issend: complete only once the peer's receive has matched)
// and every hand-over carries one tag, so messages between two ranks match in the order they were
// posted, as NCCL matches them. A step program whose hand-overs would hang or cross on NCCL hangs
// (the test's timeout) or computes with the wrong arrays here.

#include <memory>
#include <span>
#include <vector>

#include "exec/runtime/grouped_hand_overs.h"

namespace splitbrain::equivalence {

class SynchronousMpiHandOvers final : public exec::HandOverTransport {
 public:
  // Arrays are HostArrays (their host storage is read and written).
  std::unique_ptr<exec::comm::PendingCollective> post(exec::comm::CollectiveEngine& engine,
                                                      const std::vector<int>& axes,
                                                      std::span<const exec::HandOver> group) override;
};

}  // namespace splitbrain::equivalence
