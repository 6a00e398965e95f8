#include "exec/runtime/host_array_link.h"

#include <algorithm>

namespace splitbrain::exec {

void HostArrayLink::upload_values(std::span<const float> host, DeviceArray& into) {
  comm::LocalArray& array = HostArray::storage(into);
  std::copy(host.begin(), host.end(), array.values.begin());
}

void HostArrayLink::download_values(const DeviceArray& from, std::span<float> host) {
  const comm::LocalArray& array = HostArray::storage(from);
  std::copy(array.values.begin(), array.values.end(), host.begin());
}

}  // namespace splitbrain::exec
