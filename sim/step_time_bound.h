#pragma once
// A lower bound on simulate()'s iteration time, from the passes' work alone, without compiling a
// step program: what lets the planner skip timing a plan that cannot beat one it already has.
//
// It counts only what the timeline (program_timeline.h) must spend on a stage's host: every
// forward, recompute and backward instruction of the stage's program costs its layer's compute
// and the collectives inside the op (simulation.cc's pricing), and runs after the stage has
// received its first micro-batch. Stage s of a pipeline (1F1B or GPipe: both start with the
// forward of micro-batch 0 and end with the backward of the last) then needs at least
//
//   start(s) + M x (forward + recompute + backward of s) + after(s)
//
// and, where the last micro-batch's gradient walks from s down to stage t, the same with tail(s)
// and after(t) in place of after(s). start(s) is the forward of micro-batch 0 on the stages that
// feed it (up to the layer that sends it) and the transfers of those messages; tail(s) the
// backward of the last micro-batch on those stages after its gradient arrives (from the layer
// that receives it down), with the gradients' transfers; after(s) what the host runs once its
// passes are done: ZeRO 1-2's gathers of the updated parameters. The chain follows the message of
// the first input of each stage's first layer; where the step compiler's order does not give
// such a chain (an input layer first on a stage, a message that skips a stage's send) that
// stage's term is left out, so the bound only gets weaker, never wrong. Hand-overs past the
// chain, gradient reductions and the update are left out too. ZeRO 3's parameter gathers are
// posted a block ahead on the communication stream, where they may hide under compute: they
// bound a stage apart, M x (every layer's forward and backward gathers) in turn on that stream.
//
// A pipeline is also bounded pass by pass, in the schedule's order (plans::pass_order): a stage
// runs its passes one after another, each taking at least its layers' work, and a pass starts no
// earlier than the messages it receives have arrived (and, where the stage receives them a pass
// ahead, plans::receives_next_pass_ahead, those of the pass after it): a message leaves once its
// producer has run in its own pass (the work of the producing pass up to the producer, forward;
// from its last layer down to the sender, backward) and the one before it on the same edge has
// arrived, the sender waiting for that, and takes its transfer. The latest stage's last pass,
// plus its after(s), bounds the step too. This follows every hand-over, not one chain: the stages
// of an interleaved pipeline wait inside its steady state for the gradients of their next
// backward, and the chain alone misses that by several percent. Recompute's work counts in its
// pass, not before its sends. Both bounds count a sequence-parallel plan's gathers of kept inputs
// again before the backward (Plan::regathers_input).
//
// Cluster files with measured kernels (calibrate) are priced by how busy the node's neighbours
// are, which the simulator settles by iteration: for them the bound is 0.

#include <vector>

#include "plans/compiled_plan.h"
#include "plans/pipeline_order.h"
#include "plans/plan.h"
#include "sim/cluster.h"
#include "sim/collective_prices.h"

namespace splitbrain::sim {

// The bound's terms for one compilation of a plan (compile_plan reads the ZeRO stage, not the
// recompute settings), priced once: the planner weighs each plan with several recompute settings.
class StepTimeBound {
 public:
  StepTimeBound(const plans::Plan& plan, const plans::CompiledPlan& compiled, const Cluster& cluster);

  // The bound for `variant`: the plan this was built from, with any recompute settings (full,
  // block or selective); everything else as it was.
  double seconds(const plans::Plan& variant) const;

 private:
  // One micro-batch's host seconds of a layer's instructions, as simulation.cc prices them.
  struct LayerWork {
    int stage = 0;
    bool computes = false;  // not an input layer
    double forward = 0.0;   // a forward (or recompute) instruction: compute and the op's collectives
    double backward = 0.0;  // a backward instruction
    // The redistributions before each forward (its inputs' layout changes) and before or after
    // each backward (its input gradients' layout changes): a stage's timeline spends them in turn between its kernels
    // (program_timeline.cc), and a full recompute's forward runs them again (a selective one reuses the kept inputs).
    double forward_moves = 0.0;
    double backward_moves = 0.0;
    // Inputs gathered for the forward that a sequence-parallel plan may keep split and gather
    // again before the backward (Plan::regathers_input decides, per variant).
    struct Regather {
      size_t position = 0;
      std::vector<plans::Collective> gathers;
      double seconds = 0.0;
    };
    std::vector<Regather> regathers;
  };
  // One micro-batch's work of a layer in its forward and its backward pass under `variant` (a
  // recompute's forward again belongs to the backward).
  struct PassWork {
    double forward = 0.0;
    double backward = 0.0;
  };
  std::vector<PassWork> pass_work(const plans::Plan& variant) const;
  // A pipeline message (one edge: a consumer's input, forward or its gradient back), sent by the
  // pass of one chunk to the pass of the same kind and micro-batch of another: its send follows
  // `offset_seconds` of the sending pass's work at the earliest and takes `transfer_seconds`.
  struct Message {
    int from_chunk = 0;
    int to_chunk = 0;
    plans::PassKind kind = plans::PassKind::forward;
    double offset_seconds = 0.0;
    double transfer_seconds = 0.0;
  };
  // Fills chunk_of_layer_ and the messages (a pipeline's).
  void bound_messages(const plans::Plan& plan, const plans::CompiledPlan& compiled, CollectivePrices& prices,
                      const std::vector<int>& first_rank);
  // The schedule's bound (the header's pass-by-pass one) for `variant`; 0 when unpipelined.
  double pass_by_pass_seconds(const plans::Plan& variant) const;

  bool bounded_ = true;  // false: kernels priced by measurement (the bound is 0)
  std::vector<LayerWork> layers_;
  std::vector<double> start_;  // per stage
  std::vector<double> after_;  // per stage
  // Per stage: one micro-batch's ZeRO-3 parameter gathers, forward and backward, which the stage's
  // communication stream runs one after another.
  std::vector<double> gathers_;
  std::vector<double> tail_;   // per stage: the last gradient's walk down the chain
  std::vector<int> tail_end_;  // per stage: the stage where that walk ends
  std::vector<int> chunk_of_layer_;
  std::vector<Message> messages_;
  // Per pass kind (forward, backward) and chunk: the messages its passes receive, and send.
  std::vector<std::vector<int>> received_by_;
  std::vector<std::vector<int>> sent_by_;
};

// StepTimeBound(plan, compiled, cluster).seconds(plan).
double iteration_seconds_lower_bound(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                     const Cluster& cluster);

}  // namespace splitbrain::sim
