#pragma once
// The collectives a backend provides: the six plans::Collective kinds over this rank's group of a
// set of mesh axes (plans::Mesh::group; member k = member k of that group), plus the
// non-blocking reductions the runtime starts for gradient buckets. The runtime and Communicator
// (plan checks, byte counting) talk to this interface only, so a backend swaps its engine in:
// MpiCollectives (mpi_collectives.h) on host memory, the NCCL engine of exec/cuda on GPUs.
//
// An engine moves data and nothing else: arguments are assumed checked (Communicator checks them
// against the plan) and no bytes are counted here. Every operation is collective over the group
// (send_recv: over its two members; the others return their input), and the members call them
// in the same order. A group of one never communicates.

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "exec/comm/local_array.h"
#include "exec/comm/mesh_communicators.h"

namespace splitbrain::exec::comm {

// A started non-blocking collective. Its buffers belong to the caller and must stay alive and
// untouched until test() has returned true or wait() has returned.
class PendingCollective {
 public:
  virtual ~PendingCollective() = default;
  // Lets the operation progress (MPI moves large messages only inside its calls); true once it
  // is complete and the output buffer holds the result.
  virtual bool test() = 0;
  // Blocks until the operation is complete.
  virtual void wait() = 0;
};

class CollectiveEngine {
 public:
  // `communicators` must outlive the engine; every engine keeps MPI for creating its groups
  // (and the runtime for host-side bookkeeping).
  explicit CollectiveEngine(MeshCommunicators& communicators) : communicators_(communicators) {}
  virtual ~CollectiveEngine() = default;
  CollectiveEngine(const CollectiveEngine&) = delete;
  CollectiveEngine& operator=(const CollectiveEngine&) = delete;

  // Creates what the groups over these axis sets need (MPI communicators; NCCL communicators).
  // Collective over ALL ranks, which list the same sets in the same order: call it once at
  // start-up with every axis set of the plan, so no collective creates anything later.
  virtual void prepare(const std::vector<std::vector<int>>& axis_sets) { communicators_.create(axis_sets); }

  // Concatenation along `dim` of the members' arrays, member 0 first.
  virtual LocalBytes all_gather(const std::vector<int>& axes, const LocalBytes& input, int dim) = 0;
  // The same on fp32 arrays (a layout redistribution's gather): by default through bytes; an
  // engine that can gather into the result's storage saves the two copies.
  virtual LocalArray all_gather_floats(const std::vector<int>& axes, const LocalArray& input, int dim) {
    return to_floats(all_gather(axes, to_bytes(input), dim));
  }
  // Block `me` along `dim` of the element-wise sum of the members' arrays.
  virtual LocalArray reduce_scatter(const std::vector<int>& axes, const LocalArray& input, int dim) = 0;
  // Element-wise sum of the members' arrays.
  virtual LocalArray all_reduce(const std::vector<int>& axes, const LocalArray& input) = 0;
  // The same in fp64 and in place: batchnorm's statistics over a split batch, which the plan
  // sums in double precision (its internal all_reduce).
  virtual void all_reduce_statistics(const std::vector<int>& axes, std::span<double> values) = 0;
  // The two reductions on bf16 data (LocalBytes of 16-bit words, bf16.h), each partial sum
  // rounded to bf16 as a bf16 reduction rounds: a bf16 plan's activation partial sums and
  // gradients (without fp32 main gradients). By default refused: the GPU's NCCL engine has no
  // bf16 path built (exec/README.md).
  virtual LocalBytes all_reduce_bf16(const std::vector<int>& /*axes*/, const LocalBytes& /*input*/) {
    throw std::invalid_argument("this collective engine has no bf16 reductions (bf16 runs on the CPU backend only)");
  }
  virtual LocalBytes reduce_scatter_bf16(const std::vector<int>& /*axes*/, const LocalBytes& /*input*/, int /*dim*/) {
    throw std::invalid_argument("this collective engine has no bf16 reductions (bf16 runs on the CPU backend only)");
  }
  // Block j along `other_dim` goes to member j; the output concatenates what arrives along `dim`,
  // in sender order.
  virtual LocalBytes all_to_all(const std::vector<int>& axes, const LocalBytes& input, int dim, int other_dim) = 0;
  // The input extended by halo_rows rows on both sides of `dim`: the neighbours' boundary rows,
  // or zeros where there is no neighbour (the tensor's edges).
  virtual LocalBytes halo_exchange(const std::vector<int>& axes, const LocalBytes& input, int dim,
                                   int64_t halo_rows) = 0;
  // Member `source` sends its array to member `destination`, whose output is that array (of its
  // own input's shape); everyone else, the source included, returns its input.
  virtual LocalBytes send_recv(const std::vector<int>& axes, const LocalBytes& input, int source, int destination) = 0;

  // Non-blocking sum of the members' `buffer`s, in place: a gradient bucket's all-reduce.
  virtual std::unique_ptr<PendingCollective> start_all_reduce(const std::vector<int>& axes,
                                                              std::span<float> buffer) = 0;
  // Non-blocking reduce-scatter of a flat buffer: member i receives the i-th of n contiguous
  // pieces of the sum (`output` holds input.size() / n floats): ZeRO's bucket reduction.
  virtual std::unique_ptr<PendingCollective> start_reduce_scatter(const std::vector<int>& axes,
                                                                  std::span<const float> input,
                                                                  std::span<float> output) = 0;

  MeshCommunicators& communicators() { return communicators_; }
  const plans::Mesh& mesh() const { return communicators_.mesh(); }
  int group_size(const std::vector<int>& axes) const { return mesh().group_size(axes); }
  // This rank's member index in its group over `axes`.
  int member(const std::vector<int>& axes) const { return mesh().index_in_group(communicators_.rank(), axes); }

 private:
  MeshCommunicators& communicators_;
};

}  // namespace splitbrain::exec::comm
