#include "exec/runtime/device.h"

#include <fmt/format.h>

#include <stdexcept>

namespace splitbrain::exec {
namespace {

void check_host_size(const DeviceArray& array, size_t host_elements, const char* what) {
  if (static_cast<int64_t>(host_elements) != array.elements()) {
    throw std::logic_error(
        fmt::format("Device::{}: {} host elements for an array of {}", what, host_elements, array.elements()));
  }
}

}  // namespace

void Device::upload(std::span<const float> host, DeviceArray& into) {
  check_host_size(into, host.size(), "upload");
  upload_values(host, into);
  transfers_.add(HostTransferPurpose::other, into.bytes());
}

void Device::upload_queued(std::span<const float> host, DeviceArray& into) {
  check_host_size(into, host.size(), "upload_queued");
  upload_values_queued(host, into);
  transfers_.add(HostTransferPurpose::input, into.bytes());
}

void Device::download(const DeviceArray& from, std::span<float> host) {
  check_host_size(from, host.size(), "download");
  download_values(from, host);
  transfers_.add(HostTransferPurpose::other, from.bytes());
}

void Device::pack(std::span<const DeviceArray* const> parts, DeviceArray& flat) {
  int64_t at = 0;
  for (const DeviceArray* part : parts) {
    copy(*part, 0, flat, at, part->elements());
    at += part->elements();
  }
  fill(flat, at, flat.elements() - at, 0.0f);
}

void Device::unpack(const DeviceArray& flat, std::span<DeviceArray* const> parts) {
  int64_t at = 0;
  for (DeviceArray* part : parts) {
    copy(flat, at, *part, 0, part->elements());
    at += part->elements();
  }
}

void Device::update_all(const plans::OptimizerConfig& config, int64_t step, std::span<DeviceArray* const> parameters,
                        std::span<const DeviceArray* const> gradients, std::span<DeviceArray* const> first_moments,
                        std::span<DeviceArray* const> second_moments) {
  check_update_lists(parameters, gradients, first_moments, second_moments);
  for (size_t i = 0; i < parameters.size(); ++i) {
    update(config, step, *parameters[i], *gradients[i], *first_moments[i],
           second_moments.empty() ? nullptr : second_moments[i]);
  }
}

void Device::zero_all(std::span<DeviceArray* const> arrays) {
  for (DeviceArray* array : arrays) fill(*array, 0, array->elements(), 0.0f);
}

void check_update_lists(std::span<DeviceArray* const> parameters, std::span<const DeviceArray* const> gradients,
                        std::span<DeviceArray* const> first_moments, std::span<DeviceArray* const> second_moments) {
  const size_t n = parameters.size();
  if (gradients.size() != n || first_moments.size() != n || (!second_moments.empty() && second_moments.size() != n)) {
    throw std::logic_error(
        fmt::format("Device::update_all: {} parameters, {} gradients, {} first and {} second moments", n,
                    gradients.size(), first_moments.size(), second_moments.size()));
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t elements = parameters[i]->elements();
    if (gradients[i]->elements() != elements || first_moments[i]->elements() != elements ||
        (!second_moments.empty() && second_moments[i]->elements() != elements)) {
      throw std::logic_error(fmt::format("Device::update_all: parameter {}'s arrays differ in size", i));
    }
  }
}

void check_element_range(const DeviceArray& array, int64_t first, int64_t count, const char* what) {
  if (first < 0 || count < 0 || first + count > array.elements()) {
    throw std::logic_error(fmt::format("Device::{}: elements [{}, {}) outside an array of {}", what, first,
                                       first + count, array.elements()));
  }
}

void check_rows_inside(const DeviceArray& from, int64_t from_first, const DeviceArray& into, int64_t into_first,
                       const kernels::RowCopy& c) {
  const bool rows_fit = c.planes >= 0 && c.rows >= 0 && c.row_elements >= 0 && c.from_first_row >= 0 &&
                        c.into_first_row >= 0 && c.from_first_row + c.rows <= c.from_plane_rows &&
                        c.into_first_row + c.rows <= c.into_plane_rows;
  if (!rows_fit) {
    throw std::logic_error(fmt::format(
        "Device::copy_rows: rows [{}, {}) into [{}, {}) outside planes of {} and {} rows", c.from_first_row,
        c.from_first_row + c.rows, c.into_first_row, c.into_first_row + c.rows, c.from_plane_rows, c.into_plane_rows));
  }
  check_element_range(from, from_first, kernels::row_copy_from_elements(c), "copy_rows");
  check_element_range(into, into_first, kernels::row_copy_into_elements(c), "copy_rows");
}

void check_block_inside(const DeviceArray& block, const DeviceArray& whole, std::span<const int64_t> offset,
                        const char* what) {
  const auto& b = block.shape();
  const auto& w = whole.shape();
  if (b.size() != 2 || w.size() != 2 || offset.size() != 2 || offset[0] < 0 || offset[1] < 0 ||
      offset[0] + b[0] > w[0] || offset[1] + b[1] > w[1]) {
    throw std::logic_error(fmt::format("Device::{}: a 2-d block outside its array", what));
  }
}

std::shared_ptr<std::pmr::memory_resource> Device::upload_memory() const {
  // The process's heap lives as long as the process: a pointer that owns nothing.
  return {std::shared_ptr<void>(), std::pmr::new_delete_resource()};
}

std::unique_ptr<StepClock> Device::make_step_clock() const { return std::make_unique<HostStepClock>(); }

std::vector<float> host_copy(Device& device, const DeviceArray& array) {
  std::vector<float> host(static_cast<size_t>(array.elements()));
  device.download(array, host);
  return host;
}

}  // namespace splitbrain::exec
