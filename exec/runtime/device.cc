#include "exec/runtime/device.h"

#include <stdexcept>
#include <utility>

namespace splitbrain::exec {

Device::Device(Concerns concerns) : concerns_(std::move(concerns)) {
  // The accessors hand out references: a missing concern would fail far from where it was left out.
  if (!concerns_.memory || !concerns_.host_link || !concerns_.kernels || !concerns_.collectives || !concerns_.clock) {
    throw std::invalid_argument("Device: a concern is missing (memory, host link, kernels, collectives or clock)");
  }
}

}  // namespace splitbrain::exec
