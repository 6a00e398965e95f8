#include "exec/comm/gather_texts.h"

#include "exec/comm/mpi_check.h"

namespace splitbrain::exec::comm {

std::vector<std::string> gather_texts(const std::string& mine, MPI_Comm communicator) {
  int ranks = 0;
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_size(communicator, &ranks));
  SB_MPI_CHECK(MPI_Comm_rank(communicator, &rank));
  const auto length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<size_t>(ranks));
  SB_MPI_CHECK(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, communicator));
  std::vector<int> offsets(static_cast<size_t>(ranks), 0);
  for (size_t r = 1; r < offsets.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string all(rank == 0 ? static_cast<size_t>(offsets.back() + lengths.back()) : 0, '\0');
  SB_MPI_CHECK(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                           communicator));
  std::vector<std::string> texts;
  if (rank != 0) return texts;
  for (size_t r = 0; r < lengths.size(); ++r)
    texts.push_back(all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lengths[r])));
  return texts;
}

}  // namespace splitbrain::exec::comm
