#pragma once
// The command line of exec_equivalence_tests (see equivalence_main.cc).

#include <string>

namespace splitbrain::equivalence {

struct Options {
  std::string write_reference_path;  // 1-rank mode: where to write the reference
  std::string reference_path;        // compare mode: the reference to read
};

Options& options();

}  // namespace splitbrain::equivalence
