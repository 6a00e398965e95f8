#pragma once
// NCCL collectives on device memory, ordered against the compute stream by events rather than by
// the host. Each operation first makes the communication stream wait for what the compute stream
// has queued so far (the kernels that wrote its input), then queues the NCCL call on the
// communication stream; its PendingCollective's wait() makes the compute stream wait for the
// operation (the kernels queued after it read its output). The host never blocks, so a bucket's
// reduction runs beside the backward kernels queued after it, as the step program orders them.
//
// For the runtime, whose arrays the host never reads, "complete" is therefore "ordered": after
// wait() every kernel queued on the compute stream sees the result; test() says whether the GPU
// has finished it. A pending operation dropped without wait() (unwinding) waits on the host, since
// its buffers may be freed and reused next.
//
// Counts are fp32 elements. NCCL's collectives lay the members' pieces one after another, which is
// the runtime's layout for flat buffers and for splits along the first dimension.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <memory>
#include <span>

#include "exec/comm/collective_engine.h"

namespace splitbrain::exec::cuda {

struct OrderedStreams {
  cudaStream_t compute = nullptr;
  cudaStream_t communication = nullptr;
};

// The element-wise sum over the communicator, in place.
std::unique_ptr<comm::PendingCollective> start_all_reduce(const OrderedStreams& streams, ncclComm_t communicator,
                                                          float* buffer, size_t count);
// Member i receives the i-th of the communicator's size contiguous pieces of the sum
// (`output_count` elements each).
std::unique_ptr<comm::PendingCollective> start_reduce_scatter(const OrderedStreams& streams, ncclComm_t communicator,
                                                              const float* input, float* output, size_t output_count);
// The members' inputs (`input_count` elements each) one after another, member 0 first.
std::unique_ptr<comm::PendingCollective> start_all_gather(const OrderedStreams& streams, ncclComm_t communicator,
                                                          const float* input, float* output, size_t input_count);

// Point-to-point messages that progress together (one NCCL group): `send` (count elements) to
// member `peer`, or into `receive` from it. Messages to one peer match the peer's in order.
struct PointToPoint {
  const float* send = nullptr;
  float* receive = nullptr;
  size_t count = 0;
  int peer = -1;
};
std::unique_ptr<comm::PendingCollective> start_point_to_point(const OrderedStreams& streams, ncclComm_t communicator,
                                                              std::span<const PointToPoint> messages);

// Member j's piece of `input` (the j-th of the communicator's size, `piece_count` elements each)
// to member j; `output` holds the pieces received one after another, member 0's first (NCCL's
// point-to-point calls, grouped).
std::unique_ptr<comm::PendingCollective> start_all_to_all(const OrderedStreams& streams, ncclComm_t communicator,
                                                          const float* input, float* output, size_t piece_count);

}  // namespace splitbrain::exec::cuda
