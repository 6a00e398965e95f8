#include "exec/comm/communicator.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "exec/comm/halo_rows.h"

namespace splitbrain::exec::comm {
namespace {

using plans::CollectiveKind;

bool dim_in_range(int dim, const std::vector<int64_t>& shape) {
  return dim >= 0 && dim < static_cast<int>(shape.size());
}

}  // namespace

void Communicator::count(std::string_view label, const plans::Collective& c) {
  const int64_t sent = plans::bytes_sent(c, index_in_group(c));
  if (host_of_rank_.empty()) {
    counter_.add(label, c.kind, sent);
  } else {
    counter_.add(label, c.kind, sent, bytes_by_host_level(mesh(), c, rank(), host_of_rank_));
  }
}

void Communicator::set_rank_hosts(std::vector<std::string> host_of_rank) {
  if (static_cast<int>(host_of_rank.size()) != mesh().rank_count()) {
    throw std::invalid_argument(fmt::format("Communicator::set_rank_hosts: {} host names for {} ranks",
                                            host_of_rank.size(), mesh().rank_count()));
  }
  host_of_rank_ = std::move(host_of_rank);
}

int Communicator::index_in_group(const plans::Collective& collective) const {
  return mesh().index_in_group(rank(), collective.axes);
}

int Communicator::check(const plans::Collective& c, const std::vector<int64_t>& shape, int64_t element_bytes) const {
  const auto fail = [&](const std::string& why) {
    return std::invalid_argument(fmt::format("{} on rank {}: {}", plans::to_string(c, mesh()), rank(), why));
  };
  const int me = index_in_group(c);  // PlanError for bad axes
  const int n = mesh().group_size(c.axes);
  if (c.group_size != n) {
    throw fail(fmt::format("group_size {} but the axes hold {} ranks", c.group_size, n));
  }
  if (c.element_bytes != element_bytes) {
    throw fail(fmt::format("element_bytes {} but the array has {}-byte elements", c.element_bytes, element_bytes));
  }
  const int64_t local_bytes = element_count(shape) * element_bytes;
  // buffer_bytes per kind, as plans/collective.h defines it.
  const int64_t expected_buffer = c.kind == CollectiveKind::all_gather ? local_bytes * n : local_bytes;
  if (c.buffer_bytes != expected_buffer) {
    throw fail(fmt::format("buffer_bytes {} but the local array makes it {}", c.buffer_bytes, expected_buffer));
  }
  switch (c.kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::halo_exchange:
      if (!dim_in_range(c.dim, shape)) throw fail(fmt::format("dim {} out of range", c.dim));
      break;
    case CollectiveKind::all_to_all:
      if (!dim_in_range(c.dim, shape) || !dim_in_range(c.other_dim, shape) || c.dim == c.other_dim) {
        throw fail(fmt::format("bad dims {} and {}", c.dim, c.other_dim));
      }
      if (shape[static_cast<std::size_t>(c.other_dim)] % n != 0) {
        throw fail(fmt::format("dim {} of extent {} is not {} blocks", c.other_dim,
                               shape[static_cast<std::size_t>(c.other_dim)], n));
      }
      break;
    case CollectiveKind::send_recv:
      if (c.source_index < 0 || c.source_index >= n || c.destination_index < 0 || c.destination_index >= n ||
          c.source_index == c.destination_index) {
        throw fail(fmt::format("bad stages {} -> {}", c.source_index, c.destination_index));
      }
      break;
    case CollectiveKind::all_reduce:
      break;
  }
  if (c.kind == CollectiveKind::reduce_scatter && shape[static_cast<std::size_t>(c.dim)] % n != 0) {
    throw fail(fmt::format("dim {} of extent {} is not {} blocks", c.dim, shape[static_cast<std::size_t>(c.dim)], n));
  }
  if (c.kind == CollectiveKind::halo_exchange) {
    const RowView v = row_view(shape, element_bytes, c.dim);
    // row_bytes counts one index along dim over the whole local array (all outer indices).
    if (c.row_bytes != v.outer * v.row_bytes) {
      throw fail(
          fmt::format("row_bytes {} but a row of the local array is {} bytes", c.row_bytes, v.outer * v.row_bytes));
    }
    if (c.halo_rows < 0 || (n > 1 && c.halo_rows > v.rows)) {
      throw fail(fmt::format("{} halo rows from a block of {} rows", c.halo_rows, v.rows));
    }
  }
  return me;
}

LocalBytes Communicator::run(const plans::Collective& c, const LocalBytes& input, std::string_view label) {
  check_size(input, "Communicator::run");
  check(c, input.shape, input.element_bytes);
  LocalBytes out;
  switch (c.kind) {
    case CollectiveKind::all_gather:
      out = engine_.all_gather(c.axes, input, c.dim);
      break;
    case CollectiveKind::all_to_all:
      out = engine_.all_to_all(c.axes, input, c.dim, c.other_dim);
      break;
    case CollectiveKind::halo_exchange:
      out = engine_.halo_exchange(c.axes, input, c.dim, c.halo_rows);
      break;
    case CollectiveKind::send_recv:
      out = engine_.send_recv(c.axes, input, c.source_index, c.destination_index);
      break;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_reduce:
      throw std::invalid_argument(fmt::format(
          "{}: a reduction needs fp32 data (the LocalArray overload), not raw bytes", plans::to_string(c, mesh())));
  }
  // Counted only once the data has moved, so a failed call leaves the totals as they were.
  count(label, c);
  return out;
}

LocalArray Communicator::run(const plans::Collective& c, const LocalArray& input, std::string_view label) {
  check_size(input, "Communicator::run");
  if (c.element_bytes == 2) return run_bf16(c, input, label);
  if (c.kind == CollectiveKind::reduce_scatter || c.kind == CollectiveKind::all_reduce) {
    check(c, input.shape, static_cast<int64_t>(sizeof(float)));
    LocalArray out = c.kind == CollectiveKind::all_reduce ? engine_.all_reduce(c.axes, input)
                                                          : engine_.reduce_scatter(c.axes, input, c.dim);
    count(label, c);
    return out;
  }
  if (c.kind == CollectiveKind::all_gather) {
    check(c, input.shape, static_cast<int64_t>(sizeof(float)));
    LocalArray out = engine_.all_gather_floats(c.axes, input, c.dim);
    count(label, c);
    return out;
  }
  if (c.kind == CollectiveKind::halo_exchange) {
    // The fp32 fast path: only the boundary rows travel, the block is copied once (halo_rows.h).
    check(c, input.shape, static_cast<int64_t>(sizeof(float)));
    LocalArray out = halo_extend(engine_, c.axes, input, c.dim, c.halo_rows);
    count(label, c);
    return out;
  }
  return to_floats(run(c, to_bytes(input), label));
}

}  // namespace splitbrain::exec::comm
