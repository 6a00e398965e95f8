#pragma once
// An array the backend owns (device memory on a GPU, its own host memory on the CPU). The
// runtime holds arrays, knows their shapes and hands them to the backend's Device (device.h),
// which is the only code that reads or writes their values: the type has no accessor for them.
// Host transfers are explicit Device calls (HostLink::upload / download), so they can be counted.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace splitbrain::exec {

class DeviceArray {
 public:
  virtual ~DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t elements() const { return elements_; }
  int64_t bytes() const { return elements_ * static_cast<int64_t>(sizeof(float)); }

 protected:
  explicit DeviceArray(std::vector<int64_t> shape);

 private:
  std::vector<int64_t> shape_;
  int64_t elements_ = 0;
};

// The shape of a tensor that is gone (released after its forward): a backward that needs only
// its shape gets this; a backend that tried to read it fails loudly.
class ReleasedArray final : public DeviceArray {
 public:
  explicit ReleasedArray(std::vector<int64_t> shape) : DeviceArray(std::move(shape)) {}
};

// Product of the extents (1 for a 0-d shape); throws std::invalid_argument on a negative one.
int64_t shape_elements(std::span<const int64_t> shape);

}  // namespace splitbrain::exec
