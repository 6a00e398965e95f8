// main() of the equivalence tests, run under mpirun. Two modes, chosen by one flag:
//   --write-reference FILE   (1 rank) trains the replicated 1-rank plan and writes FILE;
//   --reference FILE         (any ranks) trains every plan the planner emits for the world size
//                            and compares it with FILE.
//   --model SPEC --batch N   the model (a zoo spec or model file, default fashion-vgg) and global batch (16).
//   --scrambled-device       trains through the backend double of scrambled_device.h.
// Every rank runs every test (they are collective); rank 0 prints GoogleTest's report, the other
// ranks print their own failures prefixed with their rank, and the exit code is non-zero on every
// rank when any rank failed.

#include <mpi.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/exec/equivalence/equivalence_options.h"
#include "exec/comm/mpi_process.h"
#include "tests/exec/mpi_gtest.h"

namespace splitbrain::equivalence {

Options& options() {
  static Options instance;
  return instance;
}

}  // namespace splitbrain::equivalence

namespace {

// Reads our flags (GoogleTest has removed its own); false with a message on anything else.
bool parse_flags(int argc, char** argv, splitbrain::equivalence::Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if ((flag == "--write-reference" || flag == "--reference") && i + 1 < argc) {
      (flag == "--reference" ? options.reference_path : options.write_reference_path) = argv[++i];
    } else if (flag == "--scrambled-device") {
      options.scrambled_device = true;
    } else if (flag == "--model" && i + 1 < argc) {
      options.model_spec = argv[++i];
    } else if (flag == "--batch" && i + 1 < argc) {
      options.batch = std::atoll(argv[++i]);
      if (options.batch < 1) {
        std::fprintf(stderr, "exec_equivalence_tests: --batch must be a positive number\n");
        return false;
      }
    } else {
      std::fprintf(stderr, "exec_equivalence_tests: unknown or incomplete argument '%s'\n", flag.c_str());
      return false;
    }
  }
  if (options.reference_path.empty() == options.write_reference_path.empty()) {
    std::fprintf(stderr,
                 "usage: exec_equivalence_tests (--write-reference FILE | --reference FILE) [--model SPEC] "
                 "[--batch N] [--scrambled-device] [gtest flags]\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // MPI as `run` starts it (its progress pump), so the tests check that.
  const splitbrain::exec::comm::MpiProcess mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  splitbrain::equivalence::Options& options = splitbrain::equivalence::options();
  if (!parse_flags(argc, argv, options)) {
    return 2;
  }
  // The two modes are two test suites; the flag picks one.
  GTEST_FLAG_SET(filter, options.write_reference_path.empty() ? "Equivalence.*" : "Reference.*");
  const int worst = splitbrain::testing_support::run_tests_on_all_ranks();
  return worst;
}
