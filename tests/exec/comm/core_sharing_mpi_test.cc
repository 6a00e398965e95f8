// split_by_shared_cores: the communicator holds exactly the ranks of this host whose CPUs join
// this rank's by core_sharing_groups, whatever the launcher's binding (mpirun binds jobs of up to
// 2 ranks to cores and leaves oversubscribed ones unbound, so the suite sees both).

#include <gtest/gtest.h>
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <vector>

#include "exec/comm/rank_placement.h"

namespace splitbrain::exec::comm {
namespace {

TEST(SplitBySharedCores, HoldsTheRanksWhoseCpusJoinThisRanks) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // The tests run on one host: every rank's CPUs, by world rank.
  cpu_set_t mine;
  CPU_ZERO(&mine);
  for (int cpu : allowed_cpus()) CPU_SET(cpu, &mine);
  std::vector<cpu_set_t> masks(static_cast<size_t>(size));
  MPI_Allgather(&mine, sizeof(cpu_set_t), MPI_BYTE, masks.data(), sizeof(cpu_set_t), MPI_BYTE, MPI_COMM_WORLD);
  std::vector<std::vector<int>> cpus(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &masks[static_cast<size_t>(r)])) cpus[static_cast<size_t>(r)].push_back(cpu);
    }
  }
  const std::vector<int> groups = core_sharing_groups(cpus);
  std::vector<int> expected;
  for (int r = 0; r < size; ++r) {
    if (groups[static_cast<size_t>(r)] == groups[static_cast<size_t>(rank)]) expected.push_back(r);
  }

  MPI_Comm sharers = split_by_shared_cores(MPI_COMM_WORLD);
  int sharers_size = 0;
  MPI_Comm_size(sharers, &sharers_size);
  std::vector<int> members(static_cast<size_t>(sharers_size));
  MPI_Allgather(&rank, 1, MPI_INT, members.data(), 1, MPI_INT, sharers);
  MPI_Comm_free(&sharers);
  std::sort(members.begin(), members.end());
  EXPECT_EQ(members, expected);
}

}  // namespace
}  // namespace splitbrain::exec::comm
