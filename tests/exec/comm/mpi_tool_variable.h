#pragma once
// Tests read Open MPI's control variables the way the executor writes them: through the MPI tool
// interface.

#include <optional>

namespace splitbrain::exec::comm::testing {

// The value MPI holds for the integer control variable `name`, read through a handle of the
// caller's own; nullopt when this MPI has no such variable.
std::optional<int> mpi_tool_int_variable(const char* name);

}  // namespace splitbrain::exec::comm::testing
