#include "exec/comm/reduce_scatter_algorithm.h"

#include <cstdlib>
#include <string_view>

namespace splitbrain::exec::comm {

void choose_reduce_scatter_algorithm() {
  constexpr const char* kAlgorithm = "OMPI_MCA_coll_tuned_reduce_scatter_block_algorithm";
  constexpr const char* kDynamicRules = "OMPI_MCA_coll_tuned_use_dynamic_rules";
  if (std::getenv(kAlgorithm) != nullptr) return;
  const char* dynamic_rules = std::getenv(kDynamicRules);
  if (dynamic_rules != nullptr && std::string_view(dynamic_rules) == "0") return;
  setenv(kDynamicRules, "1", /*overwrite=*/0);
  setenv(kAlgorithm, kRecursiveHalving, /*overwrite=*/1);
}

}  // namespace splitbrain::exec::comm
