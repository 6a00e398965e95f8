#pragma once
// The backward of a halo exchange. A height-split convolution computes on its block extended by
// the neighbours' boundary rows; the gradient of those halo rows belongs to the neighbours. This
// sends them back, adds what arrives into the block's own boundary rows, and returns the
// gradient of the block alone. It moves the same bytes as the forward exchange (the plan lists
// it as the layer's backward halo_exchange) and counts them the same way.

#include <string_view>

#include "exec/comm/communicator.h"
#include "exec/comm/local_array.h"
#include "plans/collective.h"

namespace splitbrain::exec::comm {

LocalArray halo_reduce(Communicator& communicator, const plans::Collective& halo, const LocalArray& extended_gradient,
                       std::string_view label);

}  // namespace splitbrain::exec::comm
