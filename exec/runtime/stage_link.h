#pragma once
// Point-to-point hand-overs between pipeline stages: activations forward, gradients back, one
// message per edge of the model that crosses stages (exactly the plan's send_recv collectives,
// counted the same way). Sends are non-blocking and their buffers are kept until the end of the
// step, so two stages that send to each other (1F1B) never wait on one another. These stay MPI
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
  void send(std::shared_ptr<const comm::LocalArray> array, const plans::Collective& transfer, int tag,
            std::string_view label);
  comm::LocalArray receive(std::vector<int64_t> shape, const plans::Collective& transfer, int tag);
  // Completes every send of the step (their buffers may then be freed).
  void finish_sends();
  // Lets MPI move the pending sends along. Open MPI progresses a large (rendezvous) send only
  // inside MPI calls of the sender: without a nudge between layers the next stage would wait
  // for the whole pass. The sends stay held until finish_sends, as the memory model counts.
  void progress();

 private:
  comm::Communicator& communicator_;
  int pipe_axis_;
  int micro_batches_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  struct PendingSend {
    std::shared_ptr<const comm::LocalArray> array;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::vector<PendingSend> pending_;
};

}  // namespace splitbrain::exec
