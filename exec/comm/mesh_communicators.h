#pragma once
// One MPI communicator per set of mesh axes, numbered exactly like plans::Mesh::group: member k of
// the communicator for `axes` is member k of Mesh::group(rank, axes). Everything a plan says about
// a collective (group, block order, who sends what) therefore holds unchanged on MPI.
//
// Creating a communicator (MPI_Comm_split) is collective over every rank of the job, so the first
// use of an axis set must happen on all ranks in the same order. The runtime should call
// create() with every axis set its plan uses before it starts, so that later calls (a pipeline
// send that only two stages take part in, say) never create anything.

#include <mpi.h>

#include <map>
#include <vector>

#include "plans/mesh.h"

namespace splitbrain::exec::comm {

class MeshCommunicators {
 public:
  // Duplicates MPI_COMM_WORLD (so our traffic never matches anyone else's messages, and errors
  // return instead of aborting). Throws splitbrain::InputError when the world's size is not
  // mesh.rank_count(): "the plan's mesh {data: 2} has 2 ranks but mpirun started 4".
  explicit MeshCommunicators(plans::Mesh mesh);
  ~MeshCommunicators();
  MeshCommunicators(const MeshCommunicators&) = delete;
  MeshCommunicators& operator=(const MeshCommunicators&) = delete;

  const plans::Mesh& mesh() const { return mesh_; }
  int rank() const { return rank_; }  // this process's rank in the mesh (= world rank)
  int size() const { return mesh_.rank_count(); }

  // The communicator of this rank's group over `axes` (order matters: the first axis is the
  // slowest-varying member index), created on first use (collective, see above) and cached.
  // Throws PlanError for bad axes.
  MPI_Comm get(const std::vector<int>& axes);
  // Creates every listed axis set now; collective over all ranks.
  void create(const std::vector<std::vector<int>>& axis_sets);

  // The world duplicate (all ranks, member k = mesh rank k).
  MPI_Comm world() const { return world_; }

 private:
  plans::Mesh mesh_;
  int rank_ = -1;
  MPI_Comm world_ = MPI_COMM_NULL;
  std::map<std::vector<int>, MPI_Comm> by_axes_;
};

}  // namespace splitbrain::exec::comm
