#include "exec/runtime/host_link.h"

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

void HostLink::upload(std::span<const float> host, DeviceArray& into) {
  check_host_size(into, host.size(), "upload");
  upload_values(host, into);
  transfers_.add(HostTransferPurpose::other, into.bytes());
}

void HostLink::upload_queued(std::span<const float> host, DeviceArray& into) {
  check_host_size(into, host.size(), "upload_queued");
  upload_values_queued(host, into);
  transfers_.add(HostTransferPurpose::input, into.bytes());
}

void HostLink::download(const DeviceArray& from, std::span<float> host) {
  check_host_size(from, host.size(), "download");
  download_values(from, host);
  transfers_.add(HostTransferPurpose::other, from.bytes());
}

std::shared_ptr<std::pmr::memory_resource> HostLink::upload_memory() const {
  // The process's heap lives as long as the process: a pointer that owns nothing.
  return {std::shared_ptr<void>(), std::pmr::new_delete_resource()};
}

std::vector<float> host_copy(HostLink& link, const DeviceArray& array) {
  std::vector<float> host(static_cast<size_t>(array.elements()));
  link.download(array, host);
  return host;
}

}  // namespace splitbrain::exec
