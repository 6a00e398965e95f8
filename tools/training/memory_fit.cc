#include "tools/training/memory_fit.h"

#include <fmt/format.h>
#include <mpi.h>

#include <fstream>
#include <sstream>

#include "exec/comm/mpi_check.h"
#include "model/errors.h"
#include "plans/compiled_plan.h"
#include "plans/step_compiler.h"

namespace splitbrain::tools {

int64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t kibibytes = 0;
    if (fields >> key >> kibibytes && key == "MemAvailable:") return kibibytes * 1024;
  }
  return -1;
}

void check_plan_fits_memory(const plans::Plan& plan, exec::comm::MeshCommunicators& communicators,
                            const std::string& override_flag) {
  const int rank = communicators.rank();
  const int64_t mine = plans::step_memory(plan, plans::compile_plan(plan), rank).total;
  MPI_Comm node = MPI_COMM_NULL;
  SB_MPI_CHECK(MPI_Comm_split_type(communicators.world(), MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  int64_t on_node = 0;
  int local_ranks = 0;
  SB_MPI_CHECK(MPI_Allreduce(&mine, &on_node, 1, MPI_INT64_T, MPI_SUM, node));
  SB_MPI_CHECK(MPI_Comm_size(node, &local_ranks));
  SB_MPI_CHECK(MPI_Comm_free(&node));
  const int64_t available = available_memory_bytes();
  int fits = available < 0 || on_node <= available ? 1 : 0;
  int all_fit = 0;
  SB_MPI_CHECK(MPI_Allreduce(&fits, &all_fit, 1, MPI_INT, MPI_MIN, communicators.world()));
  if (all_fit == 1) return;
  if (fits == 0) {
    throw InputError(fmt::format(
        "the plan needs {:.2f} GB on the {} ranks of this node (predicted peak of their step "
        "programs), and the node has {:.2f} GB available; choose a plan that fits (splitbrain "
        "plan --memory-limit) or pass {} to run anyway",
        static_cast<double>(on_node) / 1e9, local_ranks, static_cast<double>(available) / 1e9, override_flag));
  }
  throw InputError(
      fmt::format("the plan does not fit the memory of another node (its rank says by how much); "
                  "pass {} to run anyway",
                  override_flag));
}

}  // namespace splitbrain::tools
