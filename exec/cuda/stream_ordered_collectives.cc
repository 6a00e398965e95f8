#include "exec/cuda/stream_ordered_collectives.h"

#include <vector>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/recorded_event.h"
#include "exec/cuda/release_in_destructor.h"

namespace splitbrain::exec::cuda {
namespace {

// An operation queued on the communication stream, known by the event recorded after it.
class StreamOrderedPending final : public comm::PendingCollective {
 public:
  StreamOrderedPending(cudaEvent_t done, cudaStream_t compute) : done_(done), compute_(compute) {}
  StreamOrderedPending(const StreamOrderedPending&) = delete;
  StreamOrderedPending& operator=(const StreamOrderedPending&) = delete;
  ~StreamOrderedPending() override {
    if (!ordered_) release_in_destructor([&] { SB_CUDA_CHECK(cudaEventSynchronize(done_)); });
    release_in_destructor([&] { SB_CUDA_CHECK(cudaEventDestroy(done_)); });
  }

  bool test() override {
    if (finished_) return true;
    if (!event_reached(done_)) return false;
    finished_ = ordered_ = true;  // what the compute stream queues next runs after it anyway
    return true;
  }
  void wait() override {
    if (ordered_) return;
    SB_CUDA_CHECK(cudaStreamWaitEvent(compute_, done_, 0));
    ordered_ = true;
  }

 private:
  cudaEvent_t done_;
  cudaStream_t compute_;
  bool ordered_ = false;   // the compute stream's later work follows the operation
  bool finished_ = false;  // the GPU has run it
};

// The communication stream waits for the compute stream's queue so far.
void follow_compute(const OrderedStreams& streams) {
  const cudaEvent_t written = recorded_event(streams.compute);
  SB_CUDA_CHECK(cudaStreamWaitEvent(streams.communication, written, 0));
  SB_CUDA_CHECK(cudaEventDestroy(written));  // released once the wait has used it
}

std::unique_ptr<comm::PendingCollective> pending_after_queued(const OrderedStreams& streams) {
  const cudaEvent_t done = recorded_event(streams.communication);
  return std::make_unique<StreamOrderedPending>(done, streams.compute);
}

}  // namespace

std::unique_ptr<comm::PendingCollective> start_all_reduce(const OrderedStreams& streams, ncclComm_t communicator,
                                                          float* buffer, size_t count) {
  follow_compute(streams);
  SB_NCCL_CHECK(ncclAllReduce(buffer, buffer, count, ncclFloat, ncclSum, communicator, streams.communication));
  return pending_after_queued(streams);
}

std::unique_ptr<comm::PendingCollective> start_reduce_scatter(const OrderedStreams& streams, ncclComm_t communicator,
                                                              const float* input, float* output, size_t output_count) {
  follow_compute(streams);
  SB_NCCL_CHECK(
      ncclReduceScatter(input, output, output_count, ncclFloat, ncclSum, communicator, streams.communication));
  return pending_after_queued(streams);
}

std::unique_ptr<comm::PendingCollective> start_all_gather(const OrderedStreams& streams, ncclComm_t communicator,
                                                          const float* input, float* output, size_t input_count) {
  follow_compute(streams);
  SB_NCCL_CHECK(ncclAllGather(input, output, input_count, ncclFloat, communicator, streams.communication));
  return pending_after_queued(streams);
}

std::unique_ptr<comm::PendingCollective> start_point_to_point(const OrderedStreams& streams, ncclComm_t communicator,
                                                              std::span<const PointToPoint> messages) {
  follow_compute(streams);
  SB_NCCL_CHECK(ncclGroupStart());
  for (const PointToPoint& m : messages) {
    if (m.send != nullptr) {
      SB_NCCL_CHECK(ncclSend(m.send, m.count, ncclFloat, m.peer, communicator, streams.communication));
    } else {
      SB_NCCL_CHECK(ncclRecv(m.receive, m.count, ncclFloat, m.peer, communicator, streams.communication));
    }
  }
  SB_NCCL_CHECK(ncclGroupEnd());
  return pending_after_queued(streams);
}

std::unique_ptr<comm::PendingCollective> start_all_to_all(const OrderedStreams& streams, ncclComm_t communicator,
                                                          const float* input, float* output, size_t piece_count) {
  int members = 0;
  SB_NCCL_CHECK(ncclCommCount(communicator, &members));
  std::vector<PointToPoint> messages;
  for (int j = 0; j < members; ++j) {
    const size_t at = piece_count * static_cast<size_t>(j);
    messages.push_back({.send = input + at, .receive = nullptr, .count = piece_count, .peer = j});
    messages.push_back({.send = nullptr, .receive = output + at, .count = piece_count, .peer = j});
  }
  return start_point_to_point(streams, communicator, messages);
}

}  // namespace splitbrain::exec::cuda
