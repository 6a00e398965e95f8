#pragma once
// Point-to-point hand-overs between pipeline stages: activations forward, gradients back, one
// message per edge of the model that crosses stages (exactly the plan's send_recv collectives,
// counted the same way). Sends are non-blocking; a send's buffer is kept until the next send on
// the same edge (the next micro-batch's) or the end of the step, as the step program says
// (plans/step_compiler.h): at most one message per edge is in flight, and since every stage
// receives an edge's micro-batches in order, waiting for the previous one never deadlocks. These stay MPI
// host messages for every backend (the collective engine carries the rest): the activations are
// host arrays, and one message per edge needs no group collective.

#include <mpi.h>

#include <memory>
#include <string_view>
#include <vector>

#include "exec/comm/communicator.h"
#include "exec/comm/local_array.h"
#include "plans/collective.h"

namespace splitbrain::exec {

class StageLink {
 public:
  StageLink(comm::Communicator& communicator, int pipe_axis, int micro_batches);

  // The message tag of input `position` of `consumer` for `micro`, forward or backward.
  int tag(int consumer, int position, int micro, bool backward) const;
  // Waits for the previous send on the same edge first, and lets go of its buffer.
  void send(std::shared_ptr<const comm::LocalArray> array, const plans::Collective& transfer, int tag,
            std::string_view label);
  comm::LocalArray receive(std::vector<int64_t> shape, const plans::Collective& transfer, int tag);
  // Completes every send of the step (their buffers may then be freed).
  void finish_sends();
  // Lets MPI move the pending sends along. Open MPI progresses a large (rendezvous) send only
  // inside MPI calls of the sender: without a nudge between layers the next stage would wait
  // for the whole pass. Buffers stay held until their wait, as the step program counts them.
  void progress();

 private:
  comm::Communicator& communicator_;
  int pipe_axis_;
  int micro_batches_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  // The edge of a tag: (consumer, position, direction) without the micro-batch.
  int edge_of(int tag) const { return tag / 2 / micro_batches_ * 2 + tag % 2; }
  struct PendingSend {
    std::shared_ptr<const comm::LocalArray> array;
    MPI_Request request = MPI_REQUEST_NULL;
    int edge = -1;
  };
  std::vector<PendingSend> pending_;
};

}  // namespace splitbrain::exec
