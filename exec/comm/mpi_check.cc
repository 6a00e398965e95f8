#include "exec/comm/mpi_check.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

namespace splitbrain::exec::comm {
namespace {

bool mpi_active() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

std::string error_string(int error_code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(error_code, text, &length) != MPI_SUCCESS) {
    return "unknown MPI error code " + std::to_string(error_code);
  }
  return std::string(text, static_cast<std::size_t>(length));
}

}  // namespace

MpiError::MpiError(const char* call, const char* file, int line, int error_code)
    : std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) + " on rank " +
                         std::to_string(world_rank()) + ": " + error_string(error_code)),
      error_code_(error_code) {}

int world_rank() {
  if (!mpi_active()) return -1;
  int rank = -1;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) return -1;
  return rank;
}

void abort_job(const std::string& message, int code) {
  // One fprintf call, so lines from different ranks do not interleave mid-line.
  std::fprintf(stderr, "splitbrain: rank %d: %s\n", world_rank(), message.c_str());
  std::fflush(stderr);
  if (mpi_active()) MPI_Abort(MPI_COMM_WORLD, code);
  // MPI_Abort does not return; this is for a process that never started MPI.
  std::_Exit(code);
}

}  // namespace splitbrain::exec::comm
