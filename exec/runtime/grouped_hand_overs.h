#pragma once
// Pipeline hand-overs for a transport whose messages are matched in order and complete only
// together with their match (NCCL's point-to-point calls: each one blocks the GPU's stream until
// the peer's matching call runs, and the n-th send to a peer matches the peer's n-th receive from
// this rank; tags mean nothing). Issued one by one in the step program's order, two stages that
// each send before they receive what the other sends (1F1B's steady state: a forward's activation
// out, the gradient of an earlier micro-batch in) would each wait for the other's receive. So a send
// is held back and posted together with the next receive, in one group whose calls progress
// together (Megatron-LM's send-forward-receive-backward); a send that the program waits for before
// any receive is posted alone. Receives the program posts together (a pass's, before it:
// StepInstruction::posted_with_next) are held back too and go in the group of the last of them.
//
// The CPU checks this rule under the same semantics: the scrambled test device posts its groups as
// MPI synchronous sends and receives with one tag (tests/exec/equivalence/scrambled_device.h), so a
// program that would hang or mismatch on NCCL hangs or fails every pipeline family's equivalence
// run; the GPU posts them as ncclGroupStart / ncclSend / ncclRecv / ncclGroupEnd.

#include <memory>
#include <span>
#include <vector>

#include "exec/comm/collective_engine.h"
#include "exec/runtime/device_array.h"

namespace splitbrain::exec {

// One message of a group: `send` goes to member `peer`, or `receive` comes from it.
struct HandOver {
  const DeviceArray* send = nullptr;
  DeviceArray* receive = nullptr;
  int peer = -1;
};

// Posts a group of hand-overs whose calls progress together; the returned operation completes
// when all of them have (their arrays stay alive until then).
class HandOverTransport {
 public:
  virtual ~HandOverTransport() = default;
  virtual std::unique_ptr<comm::PendingCollective> post(comm::CollectiveEngine& engine, const std::vector<int>& axes,
                                                        std::span<const HandOver> group) = 0;
};

class GroupedHandOvers {
 public:
  explicit GroupedHandOvers(HandOverTransport& transport) : transport_(transport) {}

  // Holds back a send of `array` to member `peer` of the group over `axes`; the returned operation
  // posts it (with whatever else is held back) when waited for before the next receive, and is
  // complete once its group is.
  std::unique_ptr<comm::PendingCollective> start_send(comm::CollectiveEngine& engine, const std::vector<int>& axes,
                                                      int peer, const DeviceArray& array);
  // Posts the held-back messages and this receive as one group and waits for it.
  void receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int peer, DeviceArray& into);
  // Holds back a receive, to be posted with the next (a step program posts a pass's receives
  // together: StepInstruction::posted_with_next); `into` is written once that group completes.
  void hold_receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int peer, DeviceArray& into);
  // Posts whatever is held back (a group of sends).
  void flush();

 private:
  struct Group;
  class HeldSend;

  // Adds a message to the held-back group (posting what is held first when it is for another
  // group of ranks).
  void hold(comm::CollectiveEngine& engine, const std::vector<int>& axes, HandOver message);

  HandOverTransport& transport_;
  comm::CollectiveEngine* engine_ = nullptr;  // of the held-back sends
  std::vector<int> axes_;
  std::vector<HandOver> held_;   // sends not yet posted, in program order
  std::shared_ptr<Group> open_;  // the group they will be posted in
};

}  // namespace splitbrain::exec
