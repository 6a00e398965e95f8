#include "tests/exec/comm/mpi_tool_variable.h"

#include <mpi.h>

namespace splitbrain::exec::comm::testing {

std::optional<int> mpi_tool_int_variable(const char* name) {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return std::nullopt;
  std::optional<int> value;
  int index = 0;
  if (MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS) {
    MPI_T_cvar_handle handle = nullptr;
    int count = 0;
    if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
      int read = 0;
      if (count == 1 && MPI_T_cvar_read(handle, &read) == MPI_SUCCESS) value = read;
      MPI_T_cvar_handle_free(&handle);
    }
  }
  MPI_T_finalize();
  return value;
}

}  // namespace splitbrain::exec::comm::testing
