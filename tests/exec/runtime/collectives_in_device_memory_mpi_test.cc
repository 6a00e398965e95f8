// The plan's collectives and redistributions in a device's memory (collectives_in_device_memory.h)
// against the host path (comm::run_redistribution, Communicator::run): every pair of layouts of a
// 2-d and a 4-d tensor on every mesh that fits the world, the same values to the bit and the same
// bytes counted; a chain of collectives; and a device whose result arrays start as NaNs
// (HostDevice's unwritten arrays), so an element the path forgets to write fails the comparison.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "exec/comm/communicator.h"
#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_collectives.h"
#include "exec/comm/redistribution_runner.h"
#include "exec/runtime/collectives_in_device_memory.h"
#include "exec/runtime/host_device.h"
#include "plans/redistribution.h"
#include "tests/exec/comm/test_tensors.h"

namespace splitbrain::exec {
namespace {

using comm::testing::all_layouts;
using comm::testing::meshes_with;
using comm::testing::shard;
using comm::testing::world_rank;
using comm::testing::world_size;

constexpr int64_t kFloatBytes = 4;

std::unique_ptr<DeviceArray> on_device(HostDevice& device, const comm::LocalArray& values) {
  std::unique_ptr<DeviceArray> array = device.memory().allocate(values.shape, false);
  device.host_link().upload(values.values, *array);
  return array;
}

void check_layout_pairs(const std::vector<int64_t>& shape) {
  const int rank = world_rank();
  HostDevice device;
  for (const plans::Mesh& mesh : meshes_with(world_size())) {
    comm::MeshCommunicators comms(mesh);
    comm::MpiCollectives engine(comms);
    comm::Communicator on_host(engine);
    comm::Communicator in_device_memory(engine);
    for (const plans::TensorLayout& from : all_layouts(mesh, shape)) {
      for (const plans::TensorLayout& to : all_layouts(mesh, shape)) {
        const std::string label = plans::to_string(from, mesh) + " -> " + plans::to_string(to, mesh);
        SCOPED_TRACE(mesh.to_string() + " " + label);
        const auto steps = plans::plan_redistribution(from, to, mesh, shape, kFloatBytes);
        const comm::LocalArray input = shard(shape, from, mesh, rank);
        const comm::LocalArray expected = comm::run_redistribution(on_host, steps, shape, input, label);
        const std::unique_ptr<DeviceArray> source = on_device(device, input);
        const std::unique_ptr<DeviceArray> result =
            device.memory().allocate(plans::local_shape(to, mesh, shape), false);
        redistribute_in_device_memory(device, in_device_memory, steps, shape, *source, *result, label);
        EXPECT_EQ(host_copy(device.host_link(), *result), expected.values);
        EXPECT_EQ(host_copy(device.host_link(), *source), input.values) << "the input was changed";
        const comm::ByteCount counted = in_device_memory.counter().label_total(label);
        EXPECT_EQ(counted.bytes, on_host.counter().label_total(label).bytes);
        EXPECT_EQ(counted.calls, on_host.counter().label_total(label).calls);
      }
    }
    // Every layout-changing kind, along inner dimensions too, ran wherever an axis has two ranks.
    if (mesh.rank_count() > 1) {
      for (auto kind : {plans::CollectiveKind::all_gather, plans::CollectiveKind::reduce_scatter,
                        plans::CollectiveKind::all_reduce, plans::CollectiveKind::all_to_all}) {
        EXPECT_GT(in_device_memory.counter().kind_total(kind).calls, 0)
            << mesh.to_string() << " " << plans::collective_name(kind);
      }
    }
  }
}

TEST(CollectivesInDeviceMemory, EveryLayoutPairOfA2dTensor) { check_layout_pairs({8, 12}); }

TEST(CollectivesInDeviceMemory, EveryLayoutPairOfA4dTensor) { check_layout_pairs({2, 8, 4, 12}); }

// A reduce-scatter along an inner dimension, then a gather along another: each link's result is
// the next one's input, held by the device between them.
TEST(CollectivesInDeviceMemory, AChainOfCollectives) {
  const int n = world_size();
  const plans::Mesh mesh({{"data", n}});
  comm::MeshCommunicators comms(mesh);
  comm::MpiCollectives engine(comms);
  comm::Communicator on_host(engine);
  comm::Communicator in_device_memory(engine);
  const std::vector<int64_t> shape = {3, 4 * n, 5};
  plans::Collective scatter;
  scatter.kind = plans::CollectiveKind::reduce_scatter;
  scatter.axes = {0};
  scatter.group_size = n;
  scatter.dim = 1;
  scatter.buffer_bytes = 3 * 4 * n * 5 * kFloatBytes;
  scatter.element_bytes = kFloatBytes;
  plans::Collective gather = scatter;
  gather.kind = plans::CollectiveKind::all_gather;
  gather.dim = 2;
  gather.buffer_bytes = 3 * 4 * 5 * n * kFloatBytes;
  const std::vector<plans::Collective> chain = {scatter, gather};

  comm::LocalArray input{shape, {}};
  for (int64_t i = 0; i < comm::element_count(shape); ++i) {
    input.values.push_back(static_cast<float>((i * 7 + world_rank() * 3) % 23));
  }
  const comm::LocalArray expected = on_host.run(gather, on_host.run(scatter, input, "chain"), "chain");
  HostDevice device;
  const std::unique_ptr<DeviceArray> source = on_device(device, input);
  const std::unique_ptr<DeviceArray> result = device.memory().allocate(expected.shape, false);
  run_collectives_in_device_memory(device, in_device_memory, chain, *source, *result, "chain");
  EXPECT_EQ(host_copy(device.host_link(), *result), expected.values);
  EXPECT_EQ(in_device_memory.counter().label_total("chain").bytes, on_host.counter().label_total("chain").bytes);
  EXPECT_EQ(in_device_memory.counter().label_total("chain").calls, 2);
}

// What runs on the host only is refused, not run some other way.
TEST(CollectivesInDeviceMemory, RefusesAHaloExchange) {
  const plans::Mesh mesh({{"data", world_size()}});
  comm::MeshCommunicators comms(mesh);
  comm::MpiCollectives engine(comms);
  comm::Communicator communicator(engine);
  plans::Collective halo;
  halo.kind = plans::CollectiveKind::halo_exchange;
  halo.axes = {0};
  halo.group_size = world_size();
  halo.dim = 0;
  halo.halo_rows = 1;
  HostDevice device;
  const std::unique_ptr<DeviceArray> array = device.memory().allocate({4, 2}, true);
  const std::unique_ptr<DeviceArray> result = device.memory().allocate({6, 2}, false);
  EXPECT_THROW(run_collectives_in_device_memory(device, communicator, std::vector{halo}, *array, *result, "halo"),
               std::logic_error);
}

}  // namespace
}  // namespace splitbrain::exec
