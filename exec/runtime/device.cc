#include "exec/runtime/device.h"

#include <fmt/format.h>

#include <stdexcept>

namespace splitbrain::exec {
namespace {

void check_host_size(const DeviceArray& array, size_t host_elements, const char* what) {
  if (static_cast<int64_t>(host_elements) != array.elements()) {
    throw std::logic_error(fmt::format("Device::{}: {} host elements for an array of {}", what, host_elements,
                                       array.elements()));
  }
}

}  // namespace

void Device::upload(std::span<const float> host, DeviceArray& into) {
  check_host_size(into, host.size(), "upload");
  upload_values(host, into);
  ++transfers_.count;
  transfers_.bytes += into.bytes();
}

void Device::download(const DeviceArray& from, std::span<float> host) {
  check_host_size(from, host.size(), "download");
  download_values(from, host);
  ++transfers_.count;
  transfers_.bytes += from.bytes();
}

std::vector<float> host_copy(Device& device, const DeviceArray& array) {
  std::vector<float> host(static_cast<size_t>(array.elements()));
  device.download(array, host);
  return host;
}

}  // namespace splitbrain::exec
