#pragma once
// The kinds of communication a plan can need. Shared by the simulator (which costs them) and the
// executor (which runs them); redistribution (plans/redistribution.h) produces lists of them.

#include <string_view>

namespace splitbrain::plans {

enum class CollectiveKind {
  all_gather,      // every rank ends with the concatenation of all ranks' pieces
  reduce_scatter,  // every rank ends with its piece of the element-wise sum
  all_reduce,      // every rank ends with the element-wise sum
  all_to_all,      // rank i sends its j-th piece to rank j
  halo_exchange,   // neighbours along a spatially split dimension swap boundary rows
  send_recv,       // point to point, e.g. activations between pipeline stages
};

std::string_view collective_name(CollectiveKind kind);  // "all_gather", ...

}  // namespace splitbrain::plans
