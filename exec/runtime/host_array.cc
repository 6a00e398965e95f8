#include "exec/runtime/host_array.h"

#include <limits>
#include <stdexcept>
#include <utility>

namespace splitbrain::exec {

HostArray::HostArray(std::vector<int64_t> shape, bool zeroed) : DeviceArray(shape) {
  array.shape = std::move(shape);
  if (zeroed) array.values.assign(static_cast<size_t>(elements()), 0.0f);
}

comm::LocalArray& HostArray::storage(DeviceArray& array) {
  auto* host = dynamic_cast<HostArray*>(&array);
  if (host == nullptr) throw std::logic_error("HostDevice: an array of another device, or a released tensor, is used");
  if (host->array.values.empty() && host->elements() > 0) {
    host->array.values.assign(static_cast<size_t>(host->elements()), std::numeric_limits<float>::quiet_NaN());
  }
  return host->array;
}

const comm::LocalArray& HostArray::storage(const DeviceArray& array) {
  const auto* host = dynamic_cast<const HostArray*>(&array);
  if (host == nullptr) throw std::logic_error("HostDevice: an array of another device, or a released tensor, is read");
  if (host->array.values.empty() && host->elements() > 0) {
    throw std::logic_error("HostDevice: an array allocated without zeroing is read before anything wrote it");
  }
  return host->array;
}

}  // namespace splitbrain::exec
