// Device's concerns (memory, host link, kernels, clock), each reached through its own interface
// as the runtime reaches it, on HostDevice: the defaults each concern gives a device that does not
// override them.

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "exec/runtime/host_device.h"

namespace splitbrain::exec {
namespace {

TEST(DeviceConcerns, MemoryPacksPartsWithZerosAfterThemAndUnpacksThemBack) {
  HostDevice host;
  Device& device = host;
  DeviceMemory& memory = device.memory();
  HostLink& link = device.host_link();
  const auto a = memory.allocate({2}, false);
  const auto b = memory.allocate({1}, false);
  link.upload(std::vector<float>{1.0f, 2.0f}, *a);
  link.upload(std::vector<float>{3.0f}, *b);
  const auto flat = memory.allocate({5}, false);
  const std::vector<const DeviceArray*> parts{a.get(), b.get()};
  memory.pack(parts, *flat);
  EXPECT_EQ(host_copy(link, *flat), (std::vector<float>{1.0f, 2.0f, 3.0f, 0.0f, 0.0f}));

  const auto a_back = memory.allocate({2}, true);
  const auto b_back = memory.allocate({1}, true);
  const std::vector<DeviceArray*> back{a_back.get(), b_back.get()};
  memory.unpack(*flat, back);
  EXPECT_EQ(host_copy(link, *a_back), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(host_copy(link, *b_back), (std::vector<float>{3.0f}));

  const std::vector<DeviceArray*> zeroed{a_back.get(), flat.get()};
  memory.zero_all(zeroed);
  EXPECT_EQ(host_copy(link, *a_back), std::vector<float>(2, 0.0f));
  EXPECT_EQ(host_copy(link, *flat), std::vector<float>(5, 0.0f));
  EXPECT_FALSE(memory.memory_use().has_value());  // host memory: no allocator of its own
}

TEST(DeviceConcerns, HostLinkCountsEachTransferByPurposeAndRefusesAHostSpanOfAnotherSize) {
  HostDevice host;
  HostLink& link = static_cast<Device&>(host).host_link();
  const auto array = host.memory().allocate({3}, true);
  link.upload(std::vector<float>{1.0f, 2.0f, 3.0f}, *array);
  link.upload_queued(std::vector<float>{4.0f, 5.0f, 6.0f}, *array);
  std::vector<float> back(3);
  link.download(*array, back);
  EXPECT_EQ(back, (std::vector<float>{4.0f, 5.0f, 6.0f}));
  const HostTransfers transfers = link.host_transfers();
  EXPECT_EQ(transfers.count_of(HostTransferPurpose::other), 2);
  EXPECT_EQ(transfers.count_of(HostTransferPurpose::input), 1);
  EXPECT_EQ(transfers.bytes, 3 * 3 * static_cast<int64_t>(sizeof(float)));
  std::vector<float> too_short(2);
  EXPECT_THROW(link.download(*array, too_short), std::logic_error);
  EXPECT_NE(link.upload_memory(), nullptr);
}

TEST(DeviceConcerns, KernelsUpdateEveryParameterOneAtATimeAndRefuseListsOfDifferentLengths) {
  HostDevice host;
  Device& device = host;
  DeviceKernels& kernels = device.kernels();
  const auto parameter = device.memory().allocate({1}, false);
  const auto gradient = device.memory().allocate({1}, false);
  const auto moment = device.memory().allocate({1}, true);
  device.host_link().upload(std::vector<float>{1.0f}, *parameter);
  device.host_link().upload(std::vector<float>{0.5f}, *gradient);
  plans::OptimizerConfig sgd;
  sgd.learning_rate = 0.1;
  const std::vector<DeviceArray*> parameters{parameter.get()};
  const std::vector<const DeviceArray*> gradients{gradient.get()};
  const std::vector<DeviceArray*> moments{moment.get()};
  kernels.update_all(sgd, 1, parameters, gradients, moments, {});
  EXPECT_FLOAT_EQ(host_copy(device.host_link(), *parameter)[0], 0.95f);
  EXPECT_THROW(kernels.update_all(sgd, 2, parameters, gradients, {}, {}), std::logic_error);
  EXPECT_EQ(kernels.arrays_per_update_pass(), 1);
  EXPECT_FALSE(kernels.recorded_calls().has_value());
}

TEST(DeviceConcerns, ClockIsTheHostsAndTheHostNeverWaitsForADeviceThatQueuesNothing) {
  HostDevice host;
  const DeviceClock& clock = static_cast<const Device&>(host).clock();
  EXPECT_NE(clock.make_step_clock(), nullptr);
  EXPECT_FALSE(clock.host_waits().has_value());
}

}  // namespace
}  // namespace splitbrain::exec
