#include "exec/ops/halo_in_backend.h"

#include <stdexcept>
#include <utility>

#include "exec/comm/halo_rows.h"

namespace splitbrain::exec::ops {

HaloInBackend::HaloInBackend(kernels::KernelFactory& factory, comm::Communicator& communicator, plans::Collective halo,
                             const std::vector<int64_t>& block_shape)
    : factory_(factory),
      array_(factory.make_array_kernel()),
      communicator_(communicator),
      halo_(std::move(halo)),
      block_shape_(block_shape),
      halo_rows_(halo_.halo_rows) {
  const auto dim = static_cast<size_t>(halo_.dim);
  if (halo_.kind != plans::CollectiveKind::halo_exchange || dim >= block_shape.size()) {
    throw std::logic_error("HaloInBackend: not a halo exchange along one of the block's dimensions");
  }
  for (size_t d = 0; d < dim; ++d) planes_ *= block_shape[d];
  rows_ = block_shape[dim];
  for (size_t d = dim + 1; d < block_shape.size(); ++d) row_elements_ *= block_shape[d];
  if (halo_rows_ < 0 || halo_rows_ > rows_) {
    throw std::logic_error("HaloInBackend: more halo rows than the block has");
  }
}

comm::LocalArray HaloInBackend::host_rows(int64_t rows_along_dim) const {
  comm::LocalArray array{block_shape_, {}};
  array.shape[static_cast<size_t>(halo_.dim)] = rows_along_dim;
  array.values.resize(static_cast<size_t>(planes_ * rows_along_dim * row_elements_));
  return array;
}

comm::LocalArray HaloInBackend::boundary_on_host(const float* array, int64_t plane_rows, int64_t first_top,
                                                 int64_t first_bottom) {
  const int64_t h = halo_rows_;
  const auto thin = factory_.make_kept_buffer(planes_ * 2 * h * row_elements_ * static_cast<int64_t>(sizeof(float)));
  array_->copy_rows(array, thin->as<float>(), rows(h, plane_rows, first_top, 2 * h, 0));
  array_->copy_rows(array, thin->as<float>(), rows(h, plane_rows, first_bottom, 2 * h, h));
  comm::LocalArray boundary = host_rows(2 * h);
  array_->download(thin->as<float>(), boundary.values);
  return boundary;
}

void HaloInBackend::extend(const float* block, float* extended, std::string_view label) {
  communicator_.check_fp32(halo_, block_shape_);
  const int64_t h = halo_rows_;
  array_->copy_rows(block, extended, rows(rows_, rows_, 0, rows_ + 2 * h, h));
  if (h > 0) exchange_into(block, extended);
  communicator_.count(label, halo_);
}

void HaloInBackend::exchange_into(const float* block, float* extended) {
  const int64_t h = halo_rows_;
  const comm::NeighbourRows neighbours = comm::exchange_boundary_rows(
      communicator_.engine(), halo_.axes, boundary_on_host(block, rows_, 0, rows_ - h), halo_.dim, h);
  // Each side's rows up and into place (zeros at the group's edges, as the exchange gives them).
  const auto side = factory_.make_kept_buffer(planes_ * h * row_elements_ * static_cast<int64_t>(sizeof(float)));
  array_->upload(neighbours.upper.values, side->as<float>());
  array_->copy_rows(side->as<float>(), extended, rows(h, h, 0, rows_ + 2 * h, 0));
  array_->upload(neighbours.lower.values, side->as<float>());
  array_->copy_rows(side->as<float>(), extended, rows(h, h, 0, rows_ + 2 * h, rows_ + h));
}

void HaloInBackend::add_rows(const comm::LocalArray& part, float* block, int64_t first) {
  const int64_t h = halo_rows_;
  const auto side = factory_.make_kept_buffer(planes_ * h * row_elements_ * static_cast<int64_t>(sizeof(float)));
  array_->copy_rows(block, side->as<float>(), rows(h, rows_, first, h, 0));
  comm::LocalArray sum = host_rows(h);
  array_->download(side->as<float>(), sum.values);
  for (size_t i = 0; i < sum.values.size(); ++i) sum.values[i] += part.values[i];
  array_->upload(sum.values, side->as<float>());
  array_->copy_rows(side->as<float>(), block, rows(h, h, 0, rows_, first));
}

void HaloInBackend::reduce(const float* extended_gradient, float* block_gradient, std::string_view label) {
  communicator_.check_fp32(halo_, block_shape_);
  const int64_t h = halo_rows_;
  array_->copy_rows(extended_gradient, block_gradient, rows(rows_, rows_ + 2 * h, h, rows_, 0));
  const int n = halo_.group_size;
  if (n <= 1 || h == 0) return;
  // The extended gradient's first rows belong to the upper neighbour's last rows, its last rows
  // to the lower neighbour's first: sent there, while theirs for this block's arrive.
  const comm::NeighbourRows from =
      comm::exchange_boundary_rows(communicator_.engine(), halo_.axes,
                                   boundary_on_host(extended_gradient, rows_ + 2 * h, 0, rows_ + h), halo_.dim, h);
  // One side after the other, so a block of fewer than 2 x halo rows gets both sums.
  const int me = communicator_.index_in_group(halo_);
  if (me > 0) add_rows(from.upper, block_gradient, 0);
  if (me < n - 1) add_rows(from.lower, block_gradient, rows_ - h);
  communicator_.count(label, halo_);
}

}  // namespace splitbrain::exec::ops
