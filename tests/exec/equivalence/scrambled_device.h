#pragma once
// A backend double for issue 14's must-show 4: a Device of host arrays whose memory is scrambled
// (each 32-bit word XORed with the array's own key) whenever no Device call is using them. A
// Device call unscrambles the arrays it is handed for its duration (a non-blocking one until it
// completes), so a run through the Device's contracts trains exactly like HostDevice; a runtime
// that read or wrote an array's values any other way (a host round trip behind the Device's
// back, an op reading an array it was not handed) would compute with garbage, and the
// equivalence checks against the 1-rank reference would fail. Its concerns are HostDevice's, each
// holding its arrays plain during a call: ScrambledMemory (scrambled_memory.h), ScrambledLink
// (scrambled_link.h), ScrambledKernels (scrambled_kernels.h) and ScrambledCollectives
// (scrambled_collectives.h: collectives in the device's memory and NCCL-like hand-overs, so every
// family checks those paths too); the arrays and the guard are in scrambled_array.h.

#include "exec/runtime/device.h"

namespace splitbrain::equivalence {

class ScrambledDevice final : public exec::Device {
 public:
  ScrambledDevice();

  // Whether the plan let the pipeline hand-overs go as NCCL's
  // (DeviceCollectives::allow_grouped_hand_overs).
  bool grouped_hand_overs() const;
  // Whether `array` holds scrambled values now (it is not in use by a Device call).
  static bool scrambled(const exec::DeviceArray& array);
};

}  // namespace splitbrain::equivalence
