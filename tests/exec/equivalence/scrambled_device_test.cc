// The double of scrambled_device.h hides what it claims to: outside its calls an array's memory
// is not its values, inside them it is, and the values survive any number of round trips.

#include <gtest/gtest.h>

#include <vector>

#include "exec/runtime/host_array.h"
#include "tests/exec/equivalence/scrambled_device.h"

namespace splitbrain::equivalence {
namespace {

TEST(Equivalence, ScrambledDeviceHidesValuesOutsideItsCalls) {
  ScrambledDevice device;
  const std::vector<float> values = {0.0f, 1.0f, -2.5f, 3e-8f};
  const auto array = device.memory().allocate({2, 2}, true);
  EXPECT_TRUE(ScrambledDevice::scrambled(*array));
  EXPECT_NE(exec::HostArray::storage(static_cast<const exec::DeviceArray&>(*array)).values,
            std::vector<float>(4, 0.0f));  // zeros, scrambled
  device.host_link().upload(values, *array);
  const std::vector<float>& raw = exec::HostArray::storage(static_cast<const exec::DeviceArray&>(*array)).values;
  for (size_t i = 0; i < values.size(); ++i) EXPECT_NE(raw[i], values[i]) << "element " << i << " is readable";
  // Through the device's calls the values are intact.
  const auto other = device.memory().allocate({2, 2}, true);
  device.memory().add(*array, *other);
  device.memory().add(*array, *other);
  device.memory().fill(*array, 0, 1, 7.0f);
  EXPECT_EQ(exec::host_copy(device.host_link(), *array), (std::vector<float>{7.0f, 1.0f, -2.5f, 3e-8f}));
  EXPECT_EQ(exec::host_copy(device.host_link(), *other), (std::vector<float>{0.0f, 2.0f, -5.0f, 6e-8f}));
  EXPECT_TRUE(ScrambledDevice::scrambled(*array));
  EXPECT_EQ(device.host_link().host_transfers().count(), 3);
}

}  // namespace
}  // namespace splitbrain::equivalence
