#pragma once
// HostArrayLink: HostDevice's transfers to and from the host (HostLink, host_link.h): copies
// between host spans and HostArrays, done when they return, so a queued upload is a plain one.

#include <span>

#include "exec/runtime/host_array.h"
#include "exec/runtime/host_link.h"

namespace splitbrain::exec {

class HostArrayLink : public HostLink {
 protected:
  void upload_values(std::span<const float> host, DeviceArray& into) override;
  void download_values(const DeviceArray& from, std::span<float> host) override;
};

}  // namespace splitbrain::exec
