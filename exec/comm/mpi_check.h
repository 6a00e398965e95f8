#pragma once
// Error handling around MPI (llm.c's habit: one macro per library call). Our communicators use
// MPI_ERRORS_RETURN, so a failing call returns a code instead of killing the job silently;
// SB_MPI_CHECK turns that code into an MpiError naming the call, file:line, the world rank and
// MPI's own error string, e.g.
//   "MPI_Allgather(...) failed at exec/comm/collective_ops.cc:40 on rank 3: MPI_ERR_COUNT: ..."
// A library never decides to end a job; abort_job is for the runtime's top level, where one rank's
// exception must end every rank (a rank that just returned would leave the others waiting in a
// collective forever).

#include <stdexcept>
#include <string>

namespace splitbrain::exec::comm {

class MpiError : public std::runtime_error {
 public:
  MpiError(const char* call, const char* file, int line, int error_code);
  int error_code() const { return error_code_; }

 private:
  int error_code_;
};

// This process's rank in MPI_COMM_WORLD, or -1 before MPI_Init / after MPI_Finalize (so error
// messages can always be built).
int world_rank();

// Prints "splitbrain: rank R: <message>" to stderr and calls MPI_Abort(MPI_COMM_WORLD, code),
// which ends every rank of the job. Without an active MPI it just exits the process with `code`.
[[noreturn]] void abort_job(const std::string& message, int code = 1);

}  // namespace splitbrain::exec::comm

// Evaluates an MPI call once; throws MpiError when it returns anything but MPI_SUCCESS.
#define SB_MPI_CHECK(...)                                                                       \
  do {                                                                                          \
    const int sb_mpi_code_ = (__VA_ARGS__);                                                     \
    if (sb_mpi_code_ != MPI_SUCCESS) {                                                          \
      throw ::splitbrain::exec::comm::MpiError(#__VA_ARGS__, __FILE__, __LINE__, sb_mpi_code_); \
    }                                                                                           \
  } while (false)
