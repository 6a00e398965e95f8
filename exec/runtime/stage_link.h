#pragma once
// Point-to-point hand-overs between pipeline stages: activations forward, gradients back, one
// message per edge of the model that crosses stages (exactly the plan's send_recv collectives,
// counted the same way). Sends are non-blocking and waited for where the step program says
// (plans/step_compiler.h: before the next send on the same edge, or at the end of the passes);
// the caller keeps a send's buffer alive until then. Since every stage receives an edge's
// micro-batches in order, those waits never deadlock. The messages are the Device's
// (start_send / receive): MPI on host arrays, the GPU's own transport on device arrays; one
// message per edge needs no group collective.

#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "exec/comm/communicator.h"
#include "exec/runtime/device_collectives.h"
#include "plans/collective.h"

namespace splitbrain::exec {

class StageLink {
 public:
  StageLink(comm::Communicator& communicator, DeviceCollectives& device, int pipe_axis, int micro_batches);

  // The message tag of input `position` of `consumer` for `micro`, forward or backward.
  int tag(int consumer, int position, int micro, bool backward) const;
  // Starts sending `array`, which must stay alive and unchanged until wait(returned id).
  int send(const DeviceArray& array, const plans::Collective& transfer, int tag, std::string_view label);
  void wait(int send_id);
  // Receives into `into` (already shaped); `posted_with_next`: in one group with the next
  // receive, `into` written by the time that one returns (DeviceCollectives::hold_receive).
  void receive(DeviceArray& into, const plans::Collective& transfer, int tag, bool posted_with_next = false);
  // Lets MPI move the pending sends along. Open MPI progresses a large (rendezvous) send only
  // inside MPI calls of the sender: without a nudge between layers the next stage would wait
  // for the whole pass.
  void progress();
  // Sends not yet waited for (a step program waits for all of its own).
  size_t pending_sends() const { return pending_.size(); }

 private:
  comm::Communicator& communicator_;
  DeviceCollectives& device_;
  std::vector<int> pipe_axes_;  // {pipe axis}, or none
  int micro_batches_;
  int next_id_ = 0;
  std::map<int, std::unique_ptr<comm::PendingCollective>> pending_;  // by send id
};

}  // namespace splitbrain::exec
