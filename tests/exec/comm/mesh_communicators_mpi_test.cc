// Communicators per axis set number their members like plans::Mesh::group; a mesh that does not
// fit the world is an InputError; MPI errors and collectives that do not describe their array
// become exceptions that name what went wrong.

#include <mpi.h>

#include <gtest/gtest.h>

#include <string>

#include "exec/comm/communicator.h"
#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_collectives.h"
#include "exec/comm/mpi_check.h"
#include "model/errors.h"
#include "test_tensors.h"

namespace splitbrain::exec::comm {
namespace {

using testing::meshes_with;
using testing::world_rank;
using testing::world_size;

TEST(MeshCommunicatorsMpi, MeshOfAnotherSizeIsAnInputError) {
  const int w = world_size();
  try {
    MeshCommunicators comms(plans::Mesh({{"data", w + 1}}));
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "the plan's mesh {data: " + std::to_string(w + 1) + "} has " +
                                         std::to_string(w + 1) + " ranks but mpirun started " + std::to_string(w));
  }
}

// For every ordered set of axes: MPI's member k is Mesh::group's member k.
TEST(MeshCommunicatorsMpi, MembersAreNumberedLikeMeshGroup) {
  const int rank = world_rank();
  for (const plans::Mesh& mesh : meshes_with(world_size())) {
    MeshCommunicators comms(mesh);
    std::vector<std::vector<int>> axis_sets = {{}};
    for (int a = 0; a < mesh.axis_count(); ++a) {
      axis_sets.push_back({a});
      for (int b = 0; b < mesh.axis_count(); ++b) {
        if (b != a) axis_sets.push_back({a, b});
      }
    }
    comms.create(axis_sets);
    for (const auto& axes : axis_sets) {
      MPI_Comm comm = comms.get(axes);  // cached now: no collective call
      int size = 0;
      MPI_Comm_size(comm, &size);
      std::vector<int> members(static_cast<std::size_t>(size));
      MPI_Allgather(&rank, 1, MPI_INT, members.data(), 1, MPI_INT, comm);
      EXPECT_EQ(members, mesh.group(rank, axes)) << mesh.to_string() << " axes " << axes.size();
    }
  }
}

TEST(MeshCommunicatorsMpi, FailedMpiCallNamesCallFileRankAndError) {
  MeshCommunicators comms(plans::Mesh({{"data", world_size()}}));
  try {
    // A negative count is refused by the argument check, on this rank alone (no hang).
    SB_MPI_CHECK(MPI_Send(nullptr, -1, MPI_BYTE, 0, 0, comms.world()));
    ADD_FAILURE() << "no MpiError";
  } catch (const MpiError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("MPI_Send(nullptr, -1"), std::string::npos) << message;
    EXPECT_NE(message.find("mesh_communicators_mpi_test.cc:"), std::string::npos) << message;
    EXPECT_NE(message.find("on rank " + std::to_string(world_rank())), std::string::npos) << message;
    EXPECT_NE(message.find("MPI_ERR_COUNT"), std::string::npos) << message;
  }
}

TEST(CommunicatorMpi, CollectiveThatDoesNotDescribeTheArrayIsRefused) {
  MeshCommunicators comms(plans::Mesh({{"data", world_size()}}));
  MpiCollectives engine(comms);
  Communicator communicator(engine);
  plans::Collective c;
  c.kind = plans::CollectiveKind::all_reduce;
  c.axes = {0};
  c.group_size = world_size();
  c.element_bytes = 4;
  c.buffer_bytes = 4 * 6;  // the array below has 8 elements
  const LocalArray array{{2, 4}, std::vector<float>(8, 1.0f)};
  EXPECT_THROW(communicator.run(c, array, "bad"), std::invalid_argument);
  c.buffer_bytes = 4 * 8;
  c.element_bytes = 2;  // fp16 bytes for an fp32 array
  EXPECT_THROW(communicator.run(c, array, "bad"), std::invalid_argument);
  c.element_bytes = 4;
  // A reduction of raw bytes has no element type to add.
  EXPECT_THROW(communicator.run(c, to_bytes(array), "bad"), std::invalid_argument);
  EXPECT_EQ(communicator.counter().total().calls, 0);
  // The valid one runs and sums.
  const LocalArray sum = communicator.run(c, array, "good");
  EXPECT_EQ(sum.values, std::vector<float>(8, static_cast<float>(world_size())));
  EXPECT_EQ(communicator.counter().total().calls, 1);
}

}  // namespace
}  // namespace splitbrain::exec::comm
