#pragma once
// A training step's timeline, priced from the ranks' step programs (plans/step_program.h): one
// program per pipeline stage (its first rank's), run instruction by instruction as the executor
// runs it. Each stage has a host, which runs its instructions one after another (an op's
// kernels, blocking collectives, copies), and a communication stream for the gradient
// reductions the program overlaps with the backward and the parameter gathers it posts ahead
// (a redistribution a later wait completes: ZeRO 3's prefetch). Where the device runs behind a queue (a
// GPU), the host queues each instruction first (InstructionCost::host_seconds) and the device
// runs it once it is queued and the instruction before is done: a host slower than the kernels
// paces the step, and one ahead of them is caught up with where it waits for the device. A pipeline receive waits for
// its message: the matching send on the other stage plus the transfer. The pipeline schedule, the bubble, the overlap
// of the gradient buckets and what each costs follow from the program's order, which is the executor's: nothing here
// decides an order. Where ranks share a node's cores (NodeSharing), their compute is scheduled on the cores in time
// order, so co-located ranks that wait lend their core to the others (one stage's bubble is another's compute).

#include <functional>
#include <span>
#include <vector>

#include "plans/pipeline_order.h"
#include "plans/step_program.h"

namespace splitbrain::sim {

// What an instruction costs on its stage, as the pricing of simulation.cc says.
struct InstructionCost {
  double compute_seconds = 0.0;        // on the host: kernels, copies, the update (every rank of the node busy)
  double communication_seconds = 0.0;  // its collectives (a send's: the transfer)
  // The kernels and the update as a rank alone on its node runs them; where the node is shared
  // (NodeSharing) they run from this, slowed by the ranks computing beside them.
  double alone_compute_seconds = 0.0;
  // Where a device runs behind a queue (a GPU): the host's seconds to queue the instruction's
  // work, and whether the host then waits for the device (a result read on the host, a copy
  // from pageable memory, a collective staged through the host). Zero and false where the host
  // computes (CPUs): its queuing is its compute.
  double host_seconds = 0.0;
  bool host_waits = false;
  // A pipeline message's overhead on this rank's host (Level::send_overhead, receive_overhead):
  // a send's call before the message leaves, a receive's handling once it has arrived.
  double message_host_seconds = 0.0;
};
using InstructionPricer = std::function<InstructionCost(int stage, const plans::StepInstruction&)>;

using plans::PassKind;

// One layer's op in a pass as the timeline ran it: its kernels from compute_start (a wait for a
// core of a shared node included) to compute_end, then the collectives inside it to end. Where
// ranks share a node this differs from the op's price: faster while a core-mate waits, slower
// while they take turns.
struct LayerSpan {
  int layer = 0;
  bool recomputed = false;  // a forward run again inside its backward pass
  double compute_start_seconds = 0.0;
  double compute_end_seconds = 0.0;
  double end_seconds = 0.0;
  // Where the host queues ahead of the device (InstructionCost::host_seconds): when it queued
  // the op's kernels; equal where there was nothing to queue.
  double host_queue_start_seconds = 0.0;
  double host_queue_end_seconds = 0.0;
};

struct ScheduledPass {
  int stage = 0;
  int micro_batch = 0;
  int chunk = 0;                      // the model chunk (virtual stage) it runs: the stage itself but interleaved
  PassKind kind = PassKind::forward;  // a backward pass includes its recomputed forward
  double start_seconds = 0.0;
  double end_seconds = 0.0;
  std::vector<LayerSpan> layers;  // in the order they ran
};

struct SyncInterval {  // one gradient bucket's reduction on a stage's communication stream
  int stage = 0;
  int bucket = 0;
  double start_seconds = 0.0;
  double end_seconds = 0.0;
};

// An instruction other than a layer's pass, the update and a bucket's reduction (SyncInterval)
// where its stage's host spent time: a redistribution, a copy, the input, the loss, a receive's
// or a reduction's wait, a parameter gather. What the trace shows besides the passes.
struct InstructionSpan {
  int stage = 0;
  plans::StepOp op = plans::StepOp::wait;
  int layer = -1;
  int bucket = -1;
  int micro_batch = -1;
  double start_seconds = 0.0;
  double end_seconds = 0.0;
};

// Where a stage's time goes; they add up to its end.
struct StagePhases {
  double compute_forward = 0.0;
  double compute_backward = 0.0;  // recomputed forwards included
  double comm_exposed = 0.0;      // blocking collectives, copies, waits for gradient reductions
  double optimizer = 0.0;
  double waiting = 0.0;  // for messages from other stages (the pipeline bubble)
};

struct StageTimeline {
  double backward_end_seconds = 0.0;  // its passes done (and their sends waited for)
  double sync_end_seconds = 0.0;      // its gradient reductions done, before the update
  double optimizer_seconds = 0.0;
  double end_seconds = 0.0;
  StagePhases phases;
  std::vector<int> host_wait_instructions;  // those whose price says the host waits (InstructionCost)
};

struct ProgramTimeline {
  std::vector<ScheduledPass> passes;  // stage by stage, in the order each runs them
  std::vector<SyncInterval> gradient_sync;
  std::vector<InstructionSpan> other_instructions;  // stage by stage, in order
  std::vector<StageTimeline> stages;
};

// How the ranks on a node share its cores (sim/neighbour_speed.h derives it from a calibrated
// cluster). With it, an instruction's compute waits for a free core and runs from its seconds
// alone, slowed by the other cores computing (its seconds with all N ranks busy tell how much):
// ranks beyond the node's cores take turns, each at its share of the busy seconds, so one rank's
// wait (a bubble, a message, a collective) is another's turn. Without it, every stage computes at
// its priced busy rate.
struct NodeSharing {
  std::vector<int> node_of_stage;  // the node of each stage's first rank
  int replicas = 1;                // ranks of each stage on that node: each runs the stage's program
  int ranks_per_node = 1;          // N, the ranks whose busy seconds compute_seconds are
  int cores = 1;                   // per node
  double turn_seconds = 0.0;       // how long a rank keeps a core while another waits for one
};

// `programs[s]` is stage s's. `communication_overlap`: the share of an overlapped reduction that
// the backward hides (cluster.communication_overlap, -1 to 1): the reduction takes its whole time
// on the stage's communication stream, and the host is charged (1 - overlap) x its seconds: the
// reduction's own seconds at most as exposed communication, the rest (an overlap below 0) as the
// backward's.
// Where `sharing` is given, each stage is its `replicas` ranks on its node, the stage's timeline
// the one of them that ends last. Throws std::logic_error if the programs' messages cannot all be
// delivered (a deadlock).
ProgramTimeline run_program_timeline(std::span<const plans::StepProgram> programs, const InstructionPricer& price,
                                     double communication_overlap, const NodeSharing* sharing = nullptr);

}  // namespace splitbrain::sim
