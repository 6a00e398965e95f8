#include "exec/cuda/nccl_collectives.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/nccl_communicator.h"
#include "exec/cuda/recorded_event.h"
#include "exec/cuda/release_in_destructor.h"

namespace splitbrain::exec::cuda {
namespace {

using comm::LocalArray;
using comm::LocalBytes;

// A reduction started on the comm stream: its result lands in the lease's pinned buffer, and is
// copied into the caller's output once the event recorded after it has completed.
class NcclPending final : public comm::PendingCollective {
 public:
  NcclPending(StagingPool::Lease lease, cudaEvent_t done_event, const std::byte* result, std::span<std::byte> output)
      : lease_(std::move(lease)), event_(done_event), result_(result), output_(output) {}
  NcclPending(const NcclPending&) = delete;
  NcclPending& operator=(const NcclPending&) = delete;
  ~NcclPending() override {
    if (!complete_) lease_.abandon();  // unwinding: the GPU may still write into the buffers
    release_in_destructor([&] { SB_CUDA_CHECK(cudaEventDestroy(event_)); });
  }

  bool test() override {
    if (complete_) return true;
    if (!event_reached(event_)) return false;
    finish();
    return true;
  }
  void wait() override {
    if (complete_) return;
    SB_CUDA_CHECK(cudaEventSynchronize(event_));
    finish();
  }

 private:
  void finish() {
    std::memcpy(output_.data(), result_, output_.size());
    complete_ = true;
  }

  StagingPool::Lease lease_;
  cudaEvent_t event_;
  const std::byte* result_;  // in the lease's pinned buffer
  std::span<std::byte> output_;
  bool complete_ = false;
};

// A group of one has nothing to reduce: the output already is the result.
class NothingPending final : public comm::PendingCollective {
 public:
  bool test() override { return true; }
  void wait() override {}
};

std::span<const std::byte> bytes_of(const std::vector<float>& values) { return std::as_bytes(std::span(values)); }

std::vector<float> floats_of(const std::vector<std::byte>& bytes) {
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

}  // namespace

NcclCollectives::NcclCollectives(comm::MeshCommunicators& communicators) : CollectiveEngine(communicators) {
  // Non-blocking with respect to the legacy default stream, where compute may run.
  SB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

NcclCollectives::~NcclCollectives() {
  for (auto& entry : comms_) release_in_destructor([&] { SB_NCCL_CHECK(ncclCommDestroy(entry.second)); });
  release_in_destructor([&] { SB_CUDA_CHECK(cudaStreamDestroy(stream_)); });
}

void NcclCollectives::prepare(const std::vector<std::vector<int>>& axis_sets) {
  CollectiveEngine::prepare(axis_sets);
  // Every rank walks the same list in the same order, so the groups' initialisations (each
  // collective over its own members) cannot wait on each other in a cycle.
  for (const auto& axes : axis_sets) {
    if (group_size(axes) > 1) communicator_for(axes);
  }
}

ncclComm_t NcclCollectives::communicator_for(const std::vector<int>& axes) {
  if (auto found = comms_.find(axes); found != comms_.end()) return found->second;
  const ncclComm_t comm = nccl_communicator_over(communicators().get(axes));
  comms_.emplace(axes, comm);
  return comm;
}

std::vector<std::byte> NcclCollectives::staged(std::span<const std::byte> send, size_t receive_bytes,
                                               const Issue& issue) {
  StagingPool::Lease lease = staging_.acquire(send.size() + receive_bytes);
  std::byte* device_receive = lease.device() + send.size();
  std::byte* host_receive = lease.host() + send.size();
  queue_on_lease(lease, [&] {
    if (!send.empty()) {
      std::memcpy(lease.host(), send.data(), send.size());
      SB_CUDA_CHECK(cudaMemcpyAsync(lease.device(), lease.host(), send.size(), cudaMemcpyDefault, stream_));
    }
    issue(lease.device(), device_receive);
    if (receive_bytes > 0) {
      SB_CUDA_CHECK(cudaMemcpyAsync(host_receive, device_receive, receive_bytes, cudaMemcpyDefault, stream_));
    }
    SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  });
  return {host_receive, host_receive + receive_bytes};
}

LocalBytes NcclCollectives::all_gather(const std::vector<int>& axes, const LocalBytes& input, int dim) {
  const int n = group_size(axes);
  if (n == 1) return input;
  const ncclComm_t comm = communicator_for(axes);
  const size_t bytes = input.bytes.size();
  const std::vector<std::byte> gathered =
      staged(input.bytes, bytes * static_cast<size_t>(n), [&](const std::byte* send, std::byte* receive) {
        SB_NCCL_CHECK(ncclAllGather(send, receive, bytes, ncclUint8, comm, stream_));
      });
  // Members one after another, as MPI_Allgather lays them: reorder into the concatenation.
  return comm::concat_blocks(gathered, input.shape, input.element_bytes, dim, n);
}

LocalArray NcclCollectives::reduce_scatter(const std::vector<int>& axes, const LocalArray& input, int dim) {
  const int n = group_size(axes);
  if (n == 1) return input;
  const ncclComm_t comm = communicator_for(axes);
  // ncclReduceScatter hands member i the i-th contiguous piece: lay the blocks along dim out
  // one after another first.
  const std::vector<std::byte> packed = comm::pack_blocks(comm::to_bytes(input), dim, n);
  const size_t count = input.values.size() / static_cast<size_t>(n);
  LocalArray out{input.shape, {}};
  out.shape[static_cast<size_t>(dim)] /= n;
  out.values = floats_of(staged(packed, count * sizeof(float), [&](const std::byte* send, std::byte* receive) {
    SB_NCCL_CHECK(ncclReduceScatter(send, receive, count, ncclFloat, ncclSum, comm, stream_));
  }));
  return out;
}

LocalArray NcclCollectives::all_reduce(const std::vector<int>& axes, const LocalArray& input) {
  if (group_size(axes) == 1) return input;
  const ncclComm_t comm = communicator_for(axes);
  const size_t count = input.values.size();
  return {
      input.shape,
      floats_of(staged(bytes_of(input.values), count * sizeof(float), [&](const std::byte* send, std::byte* receive) {
        SB_NCCL_CHECK(ncclAllReduce(send, receive, count, ncclFloat, ncclSum, comm, stream_));
      }))};
}

void NcclCollectives::all_reduce_statistics(const std::vector<int>& axes, std::span<double> values) {
  if (group_size(axes) == 1) return;
  const ncclComm_t comm = communicator_for(axes);
  const std::vector<std::byte> sums =
      staged(std::as_bytes(values), values.size_bytes(), [&](const std::byte* send, std::byte* receive) {
        SB_NCCL_CHECK(ncclAllReduce(send, receive, values.size(), ncclDouble, ncclSum, comm, stream_));
      });
  std::memcpy(values.data(), sums.data(), values.size_bytes());
}

LocalBytes NcclCollectives::all_to_all(const std::vector<int>& axes, const LocalBytes& input, int dim, int other_dim) {
  const int n = group_size(axes);
  // Block j along other_dim is for member j.
  const std::vector<std::byte> packed = comm::pack_blocks(input, other_dim, n);
  if (n == 1) return input;
  const ncclComm_t comm = communicator_for(axes);
  const size_t block = packed.size() / static_cast<size_t>(n);
  const std::vector<std::byte> received = staged(packed, packed.size(), [&](const std::byte* send, std::byte* receive) {
    SB_NCCL_CHECK(ncclGroupStart());
    for (int j = 0; j < n; ++j) {
      const size_t at = block * static_cast<size_t>(j);
      SB_NCCL_CHECK(ncclSend(send + at, block, ncclUint8, j, comm, stream_));
      SB_NCCL_CHECK(ncclRecv(receive + at, block, ncclUint8, j, comm, stream_));
    }
    SB_NCCL_CHECK(ncclGroupEnd());
  });
  std::vector<int64_t> block_shape = input.shape;
  block_shape[static_cast<size_t>(other_dim)] /= n;
  return comm::concat_blocks(received, block_shape, input.element_bytes, dim, n);
}

LocalBytes NcclCollectives::halo_exchange(const std::vector<int>& axes, const LocalBytes& input, int dim,
                                          int64_t halo_rows) {
  const int n = group_size(axes);
  const auto d = static_cast<size_t>(dim);
  // Zero-filled halos: what stays where there is no neighbour.
  LocalBytes before{input.shape, input.element_bytes, {}};
  before.shape[d] = halo_rows;
  before.bytes.assign(static_cast<size_t>(comm::element_count(before.shape) * input.element_bytes), std::byte{0});
  LocalBytes after = before;
  if (n > 1 && halo_rows > 0) {
    const int me = member(axes);
    const ncclComm_t comm = communicator_for(axes);
    std::vector<int64_t> offset(input.shape.size(), 0);
    const LocalBytes first = comm::sub_array(input, offset, before.shape);
    offset[d] = input.shape[d] - halo_rows;
    const LocalBytes last = comm::sub_array(input, offset, before.shape);
    // Sent: [first rows | last rows]; received: [left neighbour's last rows | right's first].
    const size_t h = first.bytes.size();
    std::vector<std::byte> send = first.bytes;
    send.insert(send.end(), last.bytes.begin(), last.bytes.end());
    const std::vector<std::byte> received = staged(send, 2 * h, [&](const std::byte* device_send, std::byte* receive) {
      SB_NCCL_CHECK(ncclGroupStart());
      if (me > 0) {
        SB_NCCL_CHECK(ncclSend(device_send, h, ncclUint8, me - 1, comm, stream_));
        SB_NCCL_CHECK(ncclRecv(receive, h, ncclUint8, me - 1, comm, stream_));
      }
      if (me < n - 1) {
        SB_NCCL_CHECK(ncclSend(device_send + h, h, ncclUint8, me + 1, comm, stream_));
        SB_NCCL_CHECK(ncclRecv(receive + h, h, ncclUint8, me + 1, comm, stream_));
      }
      SB_NCCL_CHECK(ncclGroupEnd());
    });
    if (me > 0) std::copy_n(received.begin(), h, before.bytes.begin());
    if (me < n - 1) std::copy_n(received.begin() + static_cast<std::ptrdiff_t>(h), h, after.bytes.begin());
  }
  return comm::concat({&before, &input, &after}, dim);
}

LocalBytes NcclCollectives::send_recv(const std::vector<int>& axes, const LocalBytes& input, int source,
                                      int destination) {
  const int me = member(axes);
  if (me != source && me != destination) return input;
  const ncclComm_t comm = communicator_for(axes);
  const size_t bytes = input.bytes.size();
  if (me == source) {
    staged(input.bytes, 0, [&](const std::byte* send, std::byte*) {
      SB_NCCL_CHECK(ncclSend(send, bytes, ncclUint8, destination, comm, stream_));
    });
    return input;
  }
  return {input.shape, input.element_bytes, staged({}, bytes, [&](const std::byte*, std::byte* receive) {
            SB_NCCL_CHECK(ncclRecv(receive, bytes, ncclUint8, source, comm, stream_));
          })};
}

std::unique_ptr<comm::PendingCollective> NcclCollectives::start_all_reduce(const std::vector<int>& axes,
                                                                           std::span<float> buffer) {
  if (group_size(axes) == 1) return std::make_unique<NothingPending>();
  const ncclComm_t comm = communicator_for(axes);
  const size_t bytes = buffer.size_bytes();
  StagingPool::Lease lease = staging_.acquire(bytes);
  cudaEvent_t done = nullptr;
  queue_on_lease(lease, [&] {
    std::memcpy(lease.host(), buffer.data(), bytes);
    SB_CUDA_CHECK(cudaMemcpyAsync(lease.device(), lease.host(), bytes, cudaMemcpyDefault, stream_));
    auto* device = reinterpret_cast<float*>(lease.device());
    SB_NCCL_CHECK(ncclAllReduce(device, device, buffer.size(), ncclFloat, ncclSum, comm, stream_));  // in place
    SB_CUDA_CHECK(cudaMemcpyAsync(lease.host(), lease.device(), bytes, cudaMemcpyDefault, stream_));
    done = recorded_event(stream_);
  });
  const std::byte* result = lease.host();
  return std::make_unique<NcclPending>(std::move(lease), done, result, std::as_writable_bytes(buffer));
}

std::unique_ptr<comm::PendingCollective> NcclCollectives::start_reduce_scatter(const std::vector<int>& axes,
                                                                               std::span<const float> input,
                                                                               std::span<float> output) {
  if (group_size(axes) == 1) {
    std::copy(input.begin(), input.end(), output.begin());
    return std::make_unique<NothingPending>();
  }
  const ncclComm_t comm = communicator_for(axes);
  const size_t in_bytes = input.size_bytes();
  const size_t out_bytes = output.size_bytes();
  StagingPool::Lease lease = staging_.acquire(in_bytes + out_bytes);
  cudaEvent_t done = nullptr;
  queue_on_lease(lease, [&] {
    std::memcpy(lease.host(), input.data(), in_bytes);
    SB_CUDA_CHECK(cudaMemcpyAsync(lease.device(), lease.host(), in_bytes, cudaMemcpyDefault, stream_));
    SB_NCCL_CHECK(
        ncclReduceScatter(lease.device(), lease.device() + in_bytes, output.size(), ncclFloat, ncclSum, comm, stream_));
    SB_CUDA_CHECK(
        cudaMemcpyAsync(lease.host() + in_bytes, lease.device() + in_bytes, out_bytes, cudaMemcpyDefault, stream_));
    done = recorded_event(stream_);
  });
  const std::byte* result = lease.host() + in_bytes;
  return std::make_unique<NcclPending>(std::move(lease), done, result, std::as_writable_bytes(output));
}

}  // namespace splitbrain::exec::cuda
