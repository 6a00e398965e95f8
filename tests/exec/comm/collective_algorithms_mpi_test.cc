// The executor's collective algorithms: set before MPI_Init (mpi_test_main.cc does, as `run`
// does), honoured by Open MPI, and never over a value the user gave.

#include "exec/comm/collective_algorithms.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

namespace splitbrain::exec::comm {
namespace {

// The value Open MPI holds for an integer control variable, read through the MPI tool
// interface; nullopt when this MPI has no such variable.
std::optional<int> open_mpi_int_parameter(const std::string& name) {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return std::nullopt;
  std::optional<int> value;
  int index = 0;
  if (MPI_T_cvar_get_index(name.c_str(), &index) == MPI_SUCCESS) {
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

TEST(CollectiveAlgorithms, OpenMpiRunsTheChosenAlgorithms) {
  for (const MpiParameterDefault& parameter : mpi_parameter_defaults()) {
    // Set by main() before MPI_Init, by the executor or by whoever launched the test.
    const char* environment = std::getenv(("OMPI_MCA_" + parameter.name).c_str());
    ASSERT_NE(environment, nullptr) << parameter.name;
    const std::optional<int> held = open_mpi_int_parameter(parameter.name);
    ASSERT_TRUE(held.has_value()) << parameter.name << ": Open MPI has no such parameter";
    EXPECT_EQ(*held, std::stoi(environment)) << parameter.name;
  }
}

TEST(CollectiveAlgorithms, KeepsTheUsersValue) {
  const MpiParameterDefault& parameter = mpi_parameter_defaults().front();
  const std::string variable = "OMPI_MCA_" + parameter.name;
  const char* before = std::getenv(variable.c_str());
  const std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;

  unsetenv(variable.c_str());
  std::vector<std::string> set = choose_collective_algorithms();
  EXPECT_NE(std::find(set.begin(), set.end(), parameter.name), set.end());
  EXPECT_EQ(std::string(std::getenv(variable.c_str())), parameter.value);

  const std::string users = parameter.value == "1" ? "2" : "1";
  setenv(variable.c_str(), users.c_str(), 1);
  set = choose_collective_algorithms();
  EXPECT_EQ(std::find(set.begin(), set.end(), parameter.name), set.end());
  EXPECT_EQ(std::string(std::getenv(variable.c_str())), users);

  if (saved) {
    setenv(variable.c_str(), saved->c_str(), 1);
  } else {
    unsetenv(variable.c_str());
  }
}

}  // namespace
}  // namespace splitbrain::exec::comm
