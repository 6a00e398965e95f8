#include "tests/exec/equivalence/scrambled_device.h"

#include <memory>
#include <utility>

#include "tests/exec/equivalence/scrambled_array.h"
#include "tests/exec/equivalence/scrambled_collectives.h"
#include "tests/exec/equivalence/scrambled_kernels.h"
#include "tests/exec/equivalence/scrambled_link.h"
#include "tests/exec/equivalence/scrambled_memory.h"

namespace splitbrain::equivalence {
namespace {

exec::Device::Concerns scrambled_concerns() {
  auto memory = std::make_unique<ScrambledMemory>();
  auto collectives = std::make_unique<ScrambledCollectives>(*memory);
  return {.shared_state = nullptr,
          .memory = std::move(memory),
          .host_link = std::make_unique<ScrambledLink>(),
          .kernels = std::make_unique<ScrambledKernels>(),
          .collectives = std::move(collectives),
          .clock = std::make_unique<exec::DeviceClock>()};
}

}  // namespace

ScrambledDevice::ScrambledDevice() : Device(scrambled_concerns()) {}

bool ScrambledDevice::grouped_hand_overs() const {
  // The collectives concern is the one scrambled_concerns made.
  return static_cast<const ScrambledCollectives&>(collectives()).grouped_hand_overs();
}

bool ScrambledDevice::scrambled(const exec::DeviceArray& array) { return ScrambledArray::scrambled(array); }

}  // namespace splitbrain::equivalence
