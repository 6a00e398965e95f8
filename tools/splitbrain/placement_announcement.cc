#include "tools/splitbrain/placement_announcement.h"

#include <fmt/format.h>
#include <mpi.h>

#include <iostream>

#include "exec/comm/mpi_check.h"

namespace splitbrain::tools {

exec::comm::JobPlacement place_and_announce(bool pin, const std::string& tag) {
  exec::comm::JobPlacement placement = exec::comm::place_ranks(MPI_COMM_WORLD, pin);
  // Every rank holds the same summary and warnings; one copy is enough.
  if (exec::comm::world_rank() == 0) {
    std::cout << fmt::format("[{}] placement: {}\n", tag, exec::comm::placement_summary(placement));
    std::cout << std::flush;
    for (const std::string& warning : placement.warnings) std::cerr << fmt::format("[{}] warning: {}\n", tag, warning);
  }
  return placement;
}

}  // namespace splitbrain::tools
