// CudaArrayDevice's communication on device memory (NCCL on the arrays themselves, ordered by
// events) against HostDevice's over the MPI engine, the reference: a bucket's started sum and
// reduce-scatter, a checkpoint's gather, the plan's sums, gathers, scatters and all-to-alls along
// leading and inner dimensions, and layout redistributions with local steps. Each must give the
// same array, count the same bytes, and move nothing through the host. The inputs are small
// integers, so every sum is exact. Needs one GPU per rank (NCCL refuses two ranks on one device);
// skips otherwise.

#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "exec/comm/communicator.h"
#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_collectives.h"
#include "exec/cuda/cuda_array_device.h"
#include "exec/cuda/cuda_device.h"
#include "tests/exec/cuda/gpu_per_rank.h"
#include "exec/cuda/nccl_collectives.h"
#include "exec/runtime/host_device.h"
#include "plans/redistribution.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::every_rank_has_a_gpu;
using testing::world_size;

std::vector<float> rank_values(int64_t elements, int salt) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<float> values(static_cast<size_t>(elements));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(rank * 1000 + salt * 100 + static_cast<int>(i % 97));
  return values;
}

plans::Collective collective(plans::CollectiveKind kind, int n, int dim, int64_t local_elements) {
  plans::Collective c;
  c.kind = kind;
  c.axes = {0};
  c.group_size = n;
  c.dim = dim;
  c.element_bytes = sizeof(float);
  c.buffer_bytes = local_elements * c.element_bytes * (kind == plans::CollectiveKind::all_gather ? n : 1);
  return c;
}

// The same array on the host device and on the GPU.
struct Twin {
  std::unique_ptr<DeviceArray> host;
  std::unique_ptr<DeviceArray> cuda;
};

class DeviceCollectives {
 public:
  // On `device`, already the current one: the NCCL engine makes its stream on the current device.
  DeviceCollectives(comm::MeshCommunicators& communicators, int device)
      : mpi_(communicators),
        nccl_(communicators),
        host_communicator_(mpi_),
        cuda_communicator_(nccl_),
        cuda_(std::make_shared<CudaContext>(device)) {
    nccl_.prepare({{0}});
  }

  Twin twin(const std::vector<int64_t>& shape, const std::vector<float>& values) {
    Twin t{host_.memory().allocate(shape, false), cuda_.memory().allocate(shape, false)};
    host_.host_link().upload(values, *t.host);
    cuda_.host_link().upload(values, *t.cuda);
    return t;
  }
  Twin zeros(const std::vector<int64_t>& shape) {
    return {host_.memory().allocate(shape, true), cuda_.memory().allocate(shape, true)};
  }
  void expect_same(const Twin& t, const std::string& what) {
    EXPECT_EQ(host_copy(cuda_.host_link(), *t.cuda), host_copy(host_.host_link(), *t.host)) << what;
  }

  // One plan collective from `input` into `output` on both devices; the same bytes counted.
  void run(const plans::Collective& c, const Twin& input, Twin& output, const std::string& what) {
    host_.collectives().run_collectives(host_communicator_, std::span(&c, 1), *input.host, *output.host, what);
    const int64_t transfers = cuda_.host_link().host_transfers().count();
    cuda_.collectives().run_collectives(cuda_communicator_, std::span(&c, 1), *input.cuda, *output.cuda, what);
    EXPECT_EQ(cuda_.host_link().host_transfers().count(), transfers) << what << ": staged through the host";
    expect_same(output, what);
    EXPECT_TRUE(cuda_communicator_.counter().entries() == host_communicator_.counter().entries()) << what;
  }

  // A tensor of `global` from layout `from` into `to` on both devices; the same bytes counted.
  void redistribute(const std::vector<int64_t>& global, const plans::TensorLayout& from, const plans::TensorLayout& to,
                    const std::string& what) {
    const plans::Mesh& mesh = host_communicator_.mesh();
    const auto steps = plans::plan_redistribution(from, to, mesh, global, sizeof(float));
    const std::vector<int64_t> before = plans::local_shape(from, mesh, global);
    Twin input = twin(before, rank_values(comm::element_count(before), 4));
    Twin output = zeros(plans::local_shape(to, mesh, global));
    host_.collectives().redistribute(host_communicator_, steps, global, *input.host, *output.host, what);
    const int64_t transfers = cuda_.host_link().host_transfers().count();
    cuda_.collectives().redistribute(cuda_communicator_, steps, global, *input.cuda, *output.cuda, what);
    EXPECT_EQ(cuda_.host_link().host_transfers().count(), transfers) << what << ": staged through the host";
    expect_same(output, what);
    EXPECT_TRUE(cuda_communicator_.counter().entries() == host_communicator_.counter().entries()) << what;
  }

  comm::MpiCollectives mpi_;
  NcclCollectives nccl_;
  comm::Communicator host_communicator_;
  comm::Communicator cuda_communicator_;
  HostDevice host_;
  CudaArrayDevice cuda_;
};

TEST(CudaArrayDeviceCollectives, AgreeWithTheHostDeviceOverMpi) {
  if (world_size() < 2) GTEST_SKIP() << "needs at least 2 ranks";
  if (!every_rank_has_a_gpu()) GTEST_SKIP() << "needs one GPU per rank (NCCL refuses two ranks on one device)";
  const int device = select_device_for_this_rank();
  comm::MeshCommunicators communicators(plans::Mesh({{"data", world_size()}}));
  DeviceCollectives d(communicators, device);
  const int n = world_size();
  const std::vector<int> axes = {0};

  // A bucket's started reductions: in place, and into this member's piece.
  Twin bucket = d.twin({8 * n}, rank_values(8 * n, 1));
  Twin piece = d.zeros({8});
  auto host_scatter = d.host_.collectives().start_reduce_scatter(d.mpi_, axes, *bucket.host, *piece.host);
  auto cuda_scatter = d.cuda_.collectives().start_reduce_scatter(d.nccl_, axes, *bucket.cuda, *piece.cuda);
  host_scatter->wait();
  cuda_scatter->wait();
  d.expect_same(piece, "a bucket's reduce-scatter");
  auto host_sum = d.host_.collectives().start_all_reduce(d.mpi_, axes, *bucket.host);
  auto cuda_sum = d.cuda_.collectives().start_all_reduce(d.nccl_, axes, *bucket.cuda);
  cuda_sum->test();
  host_sum->wait();
  cuda_sum->wait();
  d.expect_same(bucket, "a bucket's all-reduce");

  // A checkpoint's gather of each member's slice.
  Twin slice = d.twin({5}, rank_values(5, 2));
  Twin whole = d.zeros({5 * n});
  d.host_.collectives().all_gather(d.mpi_, axes, *slice.host, *whole.host);
  d.cuda_.collectives().all_gather(d.nccl_, axes, *slice.cuda, *whole.cuda);
  d.expect_same(whole, "a checkpoint's gather");

  // The plan's collectives on device memory, along the leading dimension and an inner one.
  Twin rows = d.twin({2 * n, 3}, rank_values(6 * n, 3));
  Twin summed = d.zeros({2 * n, 3});
  d.run(collective(plans::CollectiveKind::all_reduce, n, -1, 6 * n), rows, summed, "all_reduce");
  Twin scattered = d.zeros({2, 3});
  d.run(collective(plans::CollectiveKind::reduce_scatter, n, 0, 6 * n), rows, scattered, "reduce_scatter dim 0");
  Twin gathered = d.zeros({2 * n * n, 3});
  d.run(collective(plans::CollectiveKind::all_gather, n, 0, 6 * n), rows, gathered, "all_gather dim 0");
  Twin inner = d.zeros({2 * n, 3 * n});
  d.run(collective(plans::CollectiveKind::all_gather, n, 1, 6 * n), rows, inner, "all_gather dim 1");
  Twin columns = d.twin({2, 3 * n}, rank_values(6 * n, 5));
  Twin inner_piece = d.zeros({2, 3});
  d.run(collective(plans::CollectiveKind::reduce_scatter, n, 1, 6 * n), columns, inner_piece, "reduce_scatter dim 1");
  plans::Collective exchange = collective(plans::CollectiveKind::all_to_all, n, 1, 3 * n);
  exchange.other_dim = 0;
  Twin tall = d.twin({n, 3}, rank_values(3 * n, 6));
  Twin wide = d.zeros({1, 3 * n});
  d.run(exchange, tall, wide, "all_to_all dim 0 -> dim 1");
  d.run(collective(plans::CollectiveKind::all_reduce, n, -1, 6 * n), summed, summed, "all_reduce in place");

  // Redistributions of a [2n, 4, 3n] tensor: a split moved to an inner dimension (all-to-all), a
  // partial sum scattered along an inner dimension, a replicated tensor sliced (a local step).
  const std::vector<int64_t> global = {2 * n, 4, 3 * n};
  const plans::TensorLayout replicated = plans::replicated(3);
  plans::TensorLayout rows_split = replicated;
  rows_split.dim_axes[0] = {0};
  plans::TensorLayout inner_split = replicated;
  inner_split.dim_axes[2] = {0};
  plans::TensorLayout partial = replicated;
  partial.partial_axes = {0};
  d.redistribute(global, rows_split, inner_split, "split dim 0 -> dim 2");
  d.redistribute(global, partial, inner_split, "partial -> split dim 2");
  d.redistribute(global, replicated, inner_split, "replicated -> split dim 2");
  d.redistribute(global, inner_split, replicated, "split dim 2 -> replicated");
}

// Pipeline hand-overs as NCCL groups (nccl_hand_overs.h): members 0 and 1 each send before they
// receive what the other sends (1F1B's crossing), which completes only because each send is held
// back and posted with the receive; then a send waited for alone; then two sends and two receives
// in one group (a pass's receives posted together, StepInstruction::posted_with_next), the n-th
// send meeting the n-th receive. Nothing goes through the host.
TEST(CudaArrayDeviceCollectives, GroupedHandOversCross) {
  if (world_size() < 2) GTEST_SKIP() << "needs at least 2 ranks";
  if (!every_rank_has_a_gpu()) GTEST_SKIP() << "needs one GPU per rank (NCCL refuses two ranks on one device)";
  const int device = select_device_for_this_rank();
  comm::MeshCommunicators communicators(plans::Mesh({{"pipe", world_size()}}));
  DeviceCollectives d(communicators, device);
  const int me = d.host_communicator_.rank();
  if (me > 1) return;
  const int peer = 1 - me;
  const std::vector<int> axes = {0};
  d.cuda_.collectives().allow_grouped_hand_overs(true);
  const std::vector<float> mine = rank_values(6 * 1024 * 1024, 7);  // 24 MB: past any eager buffer
  Twin sent = d.twin({static_cast<int64_t>(mine.size())}, mine);
  Twin received = d.zeros({static_cast<int64_t>(mine.size())});
  const std::vector<float> small = rank_values(1000, 3);
  Twin sent_small = d.twin({static_cast<int64_t>(small.size())}, small);
  Twin received_small = d.zeros({static_cast<int64_t>(small.size())});
  const int64_t transfers = d.cuda_.host_link().host_transfers().count();
  auto send = d.cuda_.collectives().start_send(d.nccl_, axes, peer, 0, *sent.cuda);
  d.cuda_.collectives().receive(d.nccl_, axes, peer, 0, *received.cuda);
  send->wait();
  std::vector<float> expected(mine.size());
  for (size_t i = 0; i < expected.size(); ++i)
    expected[i] = static_cast<float>(peer * 1000 + 7 * 100 + static_cast<int>(i % 97));
  EXPECT_EQ(host_copy(d.cuda_.host_link(), *received.cuda), expected) << "crossing hand-overs";
  // Member 1's send posted alone (waited for before any receive), member 0 receiving it.
  d.cuda_.memory().fill(*received.cuda, 0, received.cuda->elements(), 0.0f);
  if (me == 1) {
    d.cuda_.collectives().start_send(d.nccl_, axes, peer, 1, *sent.cuda)->wait();
  } else {
    d.cuda_.collectives().receive(d.nccl_, axes, peer, 1, *received.cuda);
    EXPECT_EQ(host_copy(d.cuda_.host_link(), *received.cuda), expected) << "a send posted alone";
  }
  // Two of each in one group: the large array first, then the small one, both ways.
  d.cuda_.memory().fill(*received.cuda, 0, received.cuda->elements(), 0.0f);
  auto large_out = d.cuda_.collectives().start_send(d.nccl_, axes, peer, 2, *sent.cuda);
  auto small_out = d.cuda_.collectives().start_send(d.nccl_, axes, peer, 3, *sent_small.cuda);
  d.cuda_.collectives().hold_receive(d.nccl_, axes, peer, 2, *received.cuda);
  d.cuda_.collectives().receive(d.nccl_, axes, peer, 3, *received_small.cuda);
  large_out->wait();
  small_out->wait();
  std::vector<float> expected_small(small.size());
  for (size_t i = 0; i < expected_small.size(); ++i)
    expected_small[i] = static_cast<float>(peer * 1000 + 3 * 100 + static_cast<int>(i % 97));
  EXPECT_EQ(host_copy(d.cuda_.host_link(), *received.cuda), expected) << "the first of two receives in a group";
  EXPECT_EQ(host_copy(d.cuda_.host_link(), *received_small.cuda), expected_small)
      << "the second of two receives in a group";
  EXPECT_EQ(d.cuda_.host_link().host_transfers().count() - (me == 0 ? 4 : 3), transfers)
      << "a hand-over staged through the host";
}

}  // namespace
}  // namespace splitbrain::exec::cuda
