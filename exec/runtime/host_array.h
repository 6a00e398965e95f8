#pragma once
// HostArray: a DeviceArray in host memory as a comm::LocalArray, the arrays of HostDevice
// (host_device.h) and of the host copies a GPU device stages communication through.

#include <cstdint>
#include <vector>

#include "exec/comm/local_array.h"
#include "exec/runtime/device_array.h"

namespace splitbrain::exec {

class HostArray : public DeviceArray {
 public:
  // `zeroed` false: no storage yet; whatever writes the array whole moves its own in.
  HostArray(std::vector<int64_t> shape, bool zeroed);

  // The array's host storage, given its values. An array allocated without zeroing gets storage
  // of NaNs at its first use: on a GPU its memory holds whatever was there before, so a pass that
  // reads what nothing wrote must fail the CPU's equivalence tests rather than read zeros (and
  // reading such an array whole before any write throws std::logic_error, as does an array of
  // another device or a released tensor).
  static comm::LocalArray& storage(DeviceArray& array);
  static const comm::LocalArray& storage(const DeviceArray& array);

  comm::LocalArray array;
};

}  // namespace splitbrain::exec
