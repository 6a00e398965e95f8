#pragma once
// A height split's halo exchange around a block that stays in the backend's memory: the block is
// copied into its extended array (and the extended gradient's own rows out of it) by rows
// (ArrayKernel::copy_rows), and only its boundary rows go through the host, to and from the
// collective engine (comm::exchange_boundary_rows), which works on host arrays. On a GPU that is
// 2 x halo_rows rows down and up per pass, not the whole block both ways.
//
// The simulator prices these copies (sim/compute_cost.cc, halo_copy_bytes): with b the block's
// bytes and h one side's halo rows' bytes, forward 2b + 18h, backward 2b + 10h + 12h for each
// side with a neighbour.

#include <cstdint>
#include <string_view>
#include <vector>

#include "exec/comm/communicator.h"
#include "exec/kernels/array_kernel.h"
#include "exec/kernels/kernel_factory.h"
#include "plans/collective.h"

namespace splitbrain::exec::ops {

class HaloInBackend {
 public:
  // `block_shape`: the rank's block; `halo`: the layer's halo_exchange collective (its dim and
  // halo rows). The factory and communicator must outlive this.
  HaloInBackend(kernels::KernelFactory& factory, comm::Communicator& communicator, plans::Collective halo,
                const std::vector<int64_t>& block_shape);

  // Elements of the extended block: halo_rows more rows on both sides of the split dimension.
  int64_t extended_elements() const { return planes_ * (rows_ + 2 * halo_rows_) * row_elements_; }

  // `extended` = the upper neighbour's last halo rows, `block`, the lower neighbour's first halo
  // rows (zeros at the group's edges). Counts the exchange under `label`.
  void extend(const float* block, float* extended, std::string_view label);
  // `block_gradient` = the extended gradient's own rows, with what the neighbours computed for
  // this block's boundary rows (the gradient of their halo rows) added in. Counts the exchange.
  void reduce(const float* extended_gradient, float* block_gradient, std::string_view label);

 private:
  // `count` rows of every plane between arrays of `from_rows` and `into_rows` rows per plane.
  kernels::RowCopy rows(int64_t count, int64_t from_rows, int64_t from_first, int64_t into_rows,
                        int64_t into_first) const {
    return {planes_, row_elements_, count, from_rows, from_first, into_rows, into_first};
  }
  // The boundary of an array of `plane_rows` rows per plane, as the engine's exchange takes it:
  // rows [first_top, + halo) then rows [first_bottom, + halo) of every plane, on the host.
  comm::LocalArray boundary_on_host(const float* array, int64_t plane_rows, int64_t first_top, int64_t first_bottom);
  // The neighbours' rows into `extended`'s halo rows, from `block`'s boundary rows.
  void exchange_into(const float* block, float* extended);
  // Adds `part` (halo rows per plane, on the host) into rows [first, + halo) of `block`.
  void add_rows(const comm::LocalArray& part, float* block, int64_t first);
  // A host array of the block's shape with `rows_along_dim` rows along the split dimension.
  comm::LocalArray host_rows(int64_t rows_along_dim) const;

  kernels::KernelFactory& factory_;
  std::unique_ptr<kernels::ArrayKernel> array_;
  comm::Communicator& communicator_;
  plans::Collective halo_;
  std::vector<int64_t> block_shape_;
  int64_t planes_ = 1;        // the dimensions before the split one, together
  int64_t rows_ = 0;          // the block's rows along it
  int64_t row_elements_ = 1;  // the dimensions after it, together
  int64_t halo_rows_ = 0;
};

}  // namespace splitbrain::exec::ops
