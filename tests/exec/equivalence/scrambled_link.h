#pragma once
// The scrambled test device's host transfers (scrambled_device.h): HostArrayLink's copies, with
// the array plain for their duration.

#include <span>

#include "exec/runtime/host_array_link.h"

namespace splitbrain::equivalence {

class ScrambledLink final : public exec::HostArrayLink {
 protected:
  void upload_values(std::span<const float> host, exec::DeviceArray& into) override;
  void download_values(const exec::DeviceArray& from, std::span<float> host) override;
};

}  // namespace splitbrain::equivalence
