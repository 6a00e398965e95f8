#pragma once
// The 1-rank run every other run is compared with, as a JSON file: the ctest entry
// exec_equivalence_reference writes it into the build tree (a ctest fixture), the entries for
// 1, 2 and 4 ranks read it. Floats are stored as JSON numbers and read back exactly.

#include <string>
#include <vector>

#include "tests/exec/equivalence/plan_run.h"

namespace splitbrain::equivalence {

struct Reference {
  std::string model_spec;
  int64_t global_batch = 0;
  std::vector<double> losses;
  std::vector<GlobalParameter> parameters;
  double accuracy = 0.0;  // of the trained weights (Trainer::evaluate), the same for every plan
  double evaluation_loss = 0.0;
};

// Writes through a temporary name and a rename, so a failed run never leaves half a file.
void write_reference(const std::string& path, const Reference& reference);
// Throws std::runtime_error naming the file when it is missing or malformed.
Reference read_reference(const std::string& path);

}  // namespace splitbrain::equivalence
