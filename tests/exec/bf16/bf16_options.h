#pragma once
// The command line of exec_bf16_tests (bf16_main.cc).

#include <string>

namespace splitbrain::equivalence {

struct Bf16Options {
  std::string write_reference_path;  // 1-rank mode: where to write the 1-rank losses
  std::string reference_path;        // compare mode: the losses to compare with
};

Bf16Options& bf16_options();

}  // namespace splitbrain::equivalence
