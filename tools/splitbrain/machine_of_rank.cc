#include "tools/splitbrain/machine_of_rank.h"

#include <algorithm>
#include <array>
#include <fstream>

#include "exec/comm/mpi_check.h"

namespace splitbrain::tools {

std::vector<std::string> machine_of_rank(MPI_Comm comm, const std::vector<std::string>& host_of_rank) {
  int rank = 0;
  int ranks = 1;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  SB_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  std::string boot_id;
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::getline(file, boot_id);
  // A boot id is 36 characters; a host's fallback name is kept apart from any of them.
  constexpr size_t kWidth = 64;
  const std::string mine = boot_id.empty() ? "host " + host_of_rank.at(static_cast<size_t>(rank)) : boot_id;
  std::array<char, kWidth> sent{};
  std::copy_n(mine.begin(), std::min(mine.size(), kWidth - 1), sent.begin());
  std::vector<char> all(kWidth * static_cast<size_t>(ranks));
  SB_MPI_CHECK(MPI_Allgather(sent.data(), kWidth, MPI_CHAR, all.data(), kWidth, MPI_CHAR, comm));
  std::vector<std::string> machines;
  for (int r = 0; r < ranks; ++r) machines.emplace_back(all.data() + kWidth * static_cast<size_t>(r));
  return machines;
}

}  // namespace splitbrain::tools
