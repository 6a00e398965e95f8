// The executor's blocking reduce-scatter runs recursive halving at every size (Open MPI's own
// decision runs the basic linear algorithm for large blocks), unless the user chose.

#include "exec/comm/reduce_scatter_algorithm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "tests/exec/comm/mpi_tool_variable.h"

namespace splitbrain::exec::comm {
namespace {

constexpr const char* kAlgorithm = "OMPI_MCA_coll_tuned_reduce_scatter_block_algorithm";
constexpr const char* kDynamicRules = "OMPI_MCA_coll_tuned_use_dynamic_rules";

// The process's environment for the two variables, put back when the test ends.
class SavedEnvironment {
 public:
  SavedEnvironment() : algorithm_(read(kAlgorithm)), dynamic_rules_(read(kDynamicRules)) {}
  ~SavedEnvironment() {
    put(kAlgorithm, algorithm_);
    put(kDynamicRules, dynamic_rules_);
  }
  SavedEnvironment(const SavedEnvironment&) = delete;
  SavedEnvironment& operator=(const SavedEnvironment&) = delete;

  static std::optional<std::string> read(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? std::nullopt : std::optional<std::string>(value);
  }
  static void put(const char* name, const std::optional<std::string>& value) {
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }

 private:
  std::optional<std::string> algorithm_;
  std::optional<std::string> dynamic_rules_;
};

// MpiProcess (mpi_test_main.cc) chose before MPI_Init, and Open MPI took it: the variable holds
// recursive halving, and dynamic rules are on, without which the tuned component ignores it.
TEST(ReduceScatterAlgorithm, OpenMpiRunsRecursiveHalving) {
  const std::optional<int> algorithm = testing::mpi_tool_int_variable("coll_tuned_reduce_scatter_block_algorithm");
  if (!algorithm) GTEST_SKIP() << "this MPI has no coll_tuned_reduce_scatter_block_algorithm";
  EXPECT_EQ(*algorithm, std::stoi(kRecursiveHalving));
  EXPECT_EQ(testing::mpi_tool_int_variable("coll_tuned_use_dynamic_rules"), 1);
}

TEST(ReduceScatterAlgorithm, SetsBothVariablesWhereTheUserSetNeither) {
  const SavedEnvironment saved;
  unsetenv(kAlgorithm);
  unsetenv(kDynamicRules);
  choose_reduce_scatter_algorithm();
  EXPECT_EQ(SavedEnvironment::read(kAlgorithm), std::string(kRecursiveHalving));
  EXPECT_EQ(SavedEnvironment::read(kDynamicRules), std::string("1"));
}

TEST(ReduceScatterAlgorithm, KeepsTheUsersChoice) {
  const SavedEnvironment saved;
  setenv(kAlgorithm, "1", 1);  // basic linear, chosen by the user
  unsetenv(kDynamicRules);
  choose_reduce_scatter_algorithm();
  EXPECT_EQ(SavedEnvironment::read(kAlgorithm), std::string("1"));
  EXPECT_EQ(SavedEnvironment::read(kDynamicRules), std::nullopt);
  // Dynamic rules turned off: Open MPI's fixed decision, as the user asked.
  unsetenv(kAlgorithm);
  setenv(kDynamicRules, "0", 1);
  choose_reduce_scatter_algorithm();
  EXPECT_EQ(SavedEnvironment::read(kAlgorithm), std::nullopt);
  EXPECT_EQ(SavedEnvironment::read(kDynamicRules), std::string("0"));
}

}  // namespace
}  // namespace splitbrain::exec::comm
