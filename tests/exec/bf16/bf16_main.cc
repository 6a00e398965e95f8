// main() of the bf16 training tests, run under mpirun, in one of two modes:
//   --write-reference FILE   (1 rank) trains the 1-rank bf16 plan and writes its losses to FILE;
//   --reference FILE         (any ranks) trains every plan for the world size and compares.
// The shared run_plan (tests/exec/equivalence/plan_run.h) reads the equivalence suite's options,
// which stay at their defaults here (no scrambled device).

#include <mpi.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "exec/comm/mpi_process.h"
#include "tests/exec/bf16/bf16_options.h"
#include "tests/exec/equivalence/equivalence_options.h"
#include "tests/exec/mpi_gtest.h"

namespace splitbrain::equivalence {

Options& options() {
  static Options instance;
  return instance;
}

Bf16Options& bf16_options() {
  static Bf16Options instance;
  return instance;
}

}  // namespace splitbrain::equivalence

int main(int argc, char** argv) {
  const splitbrain::exec::comm::MpiProcess mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  splitbrain::equivalence::Bf16Options& options = splitbrain::equivalence::bf16_options();
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if ((flag == "--write-reference" || flag == "--reference") && i + 1 < argc) {
      (flag == "--reference" ? options.reference_path : options.write_reference_path) = argv[++i];
    } else {
      std::fprintf(stderr, "exec_bf16_tests: unknown or incomplete argument '%s'\n", flag.c_str());
      return 2;
    }
  }
  if (options.reference_path.empty() == options.write_reference_path.empty()) {
    std::fprintf(stderr, "usage: exec_bf16_tests (--write-reference FILE | --reference FILE) [gtest flags]\n");
    return 2;
  }
  GTEST_FLAG_SET(filter, options.write_reference_path.empty() ? "Bf16.*" : "Bf16Reference.*");
  return splitbrain::testing_support::run_tests_on_all_ranks();
}
