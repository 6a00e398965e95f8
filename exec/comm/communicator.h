#pragma once
// Runs one plans::Collective on this rank's local array, exactly as plans/collective.h defines it,
// and counts the bytes the plan says this rank sends (byte_counter.h). Before any MPI call it
// checks that the collective describes the array it is given (buffer_bytes, row_bytes,
// element_bytes, divisibility), so the counted bytes are the bytes really moved; a mismatch is a
// bug in the caller and throws std::invalid_argument naming the collective. The data moves
// through the backend's CollectiveEngine (MPI or NCCL); the checks and counts are the same for
// every engine.
//
// Every member of the collective's group must call run() with the same collective (send_recv:
// every member may call it; only the source and destination communicate).

#include <string>
#include <string_view>
#include <vector>

#include "exec/comm/byte_counter.h"
#include "exec/comm/collective_engine.h"
#include "exec/comm/local_array.h"
#include "exec/comm/mesh_communicators.h"
#include "plans/collective.h"

namespace splitbrain::exec::comm {

class Communicator {
 public:
  // `engine` must outlive this object.
  explicit Communicator(CollectiveEngine& engine) : engine_(engine) {}

  // fp32 data: every kind. Label keys the byte count ("conv3/forward", say). A collective of
  // 2-byte elements (a bf16 plan's) moves the values as bf16 words (bf16.h: rounded, packed,
  // unpacked after) and reduces them in bf16, so what crosses MPI is what the plan counts.
  LocalArray run(const plans::Collective& collective, const LocalArray& input, std::string_view label);
  // Raw elements of any width (int32 token ids, say): every kind that only moves data
  // (all_gather, all_to_all, halo_exchange, send_recv); the reductions throw
  // std::invalid_argument since summing needs the element type.
  LocalBytes run(const plans::Collective& collective, const LocalBytes& input, std::string_view label);

  // run()'s checks of an fp32 input of `shape`, for a backend that moves the data itself (a GPU's
  // collectives on device memory) and then counts it with count().
  void check_fp32(const plans::Collective& collective, const std::vector<int64_t>& shape) const {
    check(collective, shape, static_cast<int64_t>(sizeof(float)));
  }
  // Counts the bytes this rank sends in one run of `collective` under `label` (ByteCounter), split
  // within this rank's host / across hosts once set_rank_hosts was called (host_level.h). Every
  // executed collective is counted through here, whichever path moved its data.
  void count(std::string_view label, const plans::Collective& collective);
  // host_of_rank[r]: world rank r's host name (comm::place_ranks gathers them); one per rank.
  void set_rank_hosts(std::vector<std::string> host_of_rank);

  // This rank's member index in the collective's group.
  int index_in_group(const plans::Collective& collective) const;

  const plans::Mesh& mesh() const { return engine_.mesh(); }
  int rank() const { return engine_.communicators().rank(); }
  MeshCommunicators& communicators() { return engine_.communicators(); }
  CollectiveEngine& engine() { return engine_; }
  ByteCounter& counter() { return counter_; }
  const ByteCounter& counter() const { return counter_; }

 private:
  // run() of a collective of 2-byte elements (communicator_bf16.cc).
  LocalArray run_bf16(const plans::Collective& collective, const LocalArray& input, std::string_view label);
  // Checks `collective` against an input of `shape` and `element_bytes`; returns the member index.
  int check(const plans::Collective& collective, const std::vector<int64_t>& shape, int64_t element_bytes) const;

  CollectiveEngine& engine_;
  ByteCounter counter_;
  std::vector<std::string> host_of_rank_;  // empty: hosts unknown, counts not split
};

}  // namespace splitbrain::exec::comm
