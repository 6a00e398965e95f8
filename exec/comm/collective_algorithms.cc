#include "exec/comm/collective_algorithms.h"

#include <cstdlib>

namespace splitbrain::exec::comm {

const std::vector<MpiParameterDefault>& mpi_parameter_defaults() {
  static const std::vector<MpiParameterDefault> defaults = {
      // Rabenseifner's all-reduce for the gradient buckets (libnbc's numbering, `ompi_info --param
      // coll libnbc --level 9`: 1 ring, 2 binomial, 3 rabenseifner, 4 recursive doubling).
      {"coll_libnbc_iallreduce_algorithm", "3"},
  };
  return defaults;
}

std::vector<std::string> choose_collective_algorithms() {
  std::vector<std::string> set;
  for (const MpiParameterDefault& parameter : mpi_parameter_defaults()) {
    const std::string variable = "OMPI_MCA_" + parameter.name;
    if (std::getenv(variable.c_str()) != nullptr) continue;
    // setenv copies both strings; overwrite = 0 keeps a value set since the check.
    if (setenv(variable.c_str(), parameter.value.c_str(), 0) == 0) set.push_back(parameter.name);
  }
  return set;
}

}  // namespace splitbrain::exec::comm
