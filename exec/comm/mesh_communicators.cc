#include "exec/comm/mesh_communicators.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <utility>

#include "exec/comm/mpi_check.h"
#include "model/errors.h"

namespace splitbrain::exec::comm {

MeshCommunicators::MeshCommunicators(plans::Mesh mesh) : mesh_(std::move(mesh)) {
  int world_size = 0;
  SB_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
  if (world_size != mesh_.rank_count()) {
    throw InputError(fmt::format("the plan's mesh {} has {} ranks but mpirun started {}", mesh_.to_string(),
                                 mesh_.rank_count(), world_size));
  }
  SB_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  SB_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &world_));
  SB_MPI_CHECK(MPI_Comm_set_errhandler(world_, MPI_ERRORS_RETURN));
}

MeshCommunicators::~MeshCommunicators() {
  // Freeing after MPI_Finalize is itself an error, so an object that outlives MPI leaks instead.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return;
  // Return codes are ignored: a destructor cannot throw.
  for (auto& entry : by_axes_) MPI_Comm_free(&entry.second);
  if (world_ != MPI_COMM_NULL) MPI_Comm_free(&world_);
}

MPI_Comm MeshCommunicators::get(const std::vector<int>& axes) {
  if (auto found = by_axes_.find(axes); found != by_axes_.end()) return found->second;
  // index_in_group validates the axes (PlanError) before any collective call, identically on
  // every rank, so a bad axis set fails everywhere instead of hanging the split.
  const int key = mesh_.index_in_group(rank_, axes);
  // Color: the rank with our coordinates on the other axes and 0 on `axes` - the same number for
  // exactly the members of our group, and non-negative as MPI_Comm_split requires.
  std::vector<int> coords = mesh_.coordinates(rank_);
  for (int axis : axes) coords[static_cast<std::size_t>(axis)] = 0;
  const int color = mesh_.rank_of(coords);

  MPI_Comm comm = MPI_COMM_NULL;
  SB_MPI_CHECK(MPI_Comm_split(world_, color, key, &comm));
  // Insert at once so the destructor frees it even if a check below throws.
  by_axes_.emplace(axes, comm);
  SB_MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  int comm_rank = -1;
  int comm_size = 0;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &comm_rank));
  SB_MPI_CHECK(MPI_Comm_size(comm, &comm_size));
  if (comm_rank != key || comm_size != mesh_.group_size(axes)) {
    throw std::logic_error(fmt::format("MeshCommunicators: rank {} got member {} of {} for axes {}, expected {} of {}",
                                       rank_, comm_rank, comm_size, fmt::join(axes, ","), key, mesh_.group_size(axes)));
  }
  return comm;
}

void MeshCommunicators::create(const std::vector<std::vector<int>>& axis_sets) {
  for (const auto& axes : axis_sets) get(axes);
}

}  // namespace splitbrain::exec::comm
