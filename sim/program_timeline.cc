#include "sim/program_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace splitbrain::sim {
namespace {

using plans::StepInstruction;
using plans::StepOp;
using plans::StepProgram;

// A pipeline message: the consumer layer, its input position, the micro-batch, and whether it
// carries the gradient back. Send and receive name it alike.
using MessageKey = std::tuple<int, int, int, bool>;

MessageKey message_of(const StepProgram& program, const StepInstruction& instruction) {
  return {instruction.layer, instruction.index, instruction.micro_batch, plans::moves_gradient(program, instruction)};
}

class StageRun {
 public:
  StageRun(int stage, const StepProgram& program, const InstructionPricer& price, double overlap,
           std::map<MessageKey, double>& arrivals, ProgramTimeline& out)
      : stage_(stage), program_(program), price_(price), overlap_(overlap), arrivals_(arrivals), out_(out) {
    completes_.assign(program.instructions.size(), 0.0);
  }

  bool done() const { return next_ >= program_.instructions.size(); }

  // Runs instructions until the stage waits for a message not sent yet; true if it ran any.
  bool advance() {
    const size_t first = next_;
    while (!done()) {
      const StepInstruction& instruction = program_.instructions[next_];
      if (static_cast<int>(next_) == program_.passes_end) timeline_.backward_end_seconds = host_;
      if (instruction.op == StepOp::recv) {
        const auto arrival = arrivals_.find(message_of(program_, instruction));
        if (arrival == arrivals_.end()) break;
        wait_until(arrival->second, timeline_.phases.waiting);
      } else {
        run(static_cast<int>(next_), instruction);
      }
      ++next_;
    }
    if (done() && !finished_) finish();
    return next_ > first;
  }

 private:
  void wait_until(double seconds, double& phase) {
    if (seconds > host_) {
      phase += seconds - host_;
      host_ = seconds;
    }
  }

  void spend(double seconds, double& phase) {
    host_ += seconds;
    phase += seconds;
  }

  void run(int index, const StepInstruction& instruction) {
    const InstructionCost cost = price_(stage_, instruction);
    StagePhases& phases = timeline_.phases;
    const double start = host_;
    switch (instruction.op) {
      case StepOp::forward:
      case StepOp::recompute:
      case StepOp::backward: {
        // A recomputed forward belongs to the backward pass it precedes.
        const bool forward = instruction.op == StepOp::forward;
        spend(cost.compute_seconds, forward ? phases.compute_forward : phases.compute_backward);
        spend(cost.communication_seconds, phases.comm_exposed);
        note_pass(forward ? PassKind::forward : PassKind::backward, instruction.micro_batch,
                  program_.chunk_of_layer.at(static_cast<size_t>(instruction.layer)), start);
        return;
      }
      case StepOp::send:
        // Non-blocking: the message leaves now and arrives after the transfer.
        completes_[static_cast<size_t>(index)] = host_ + cost.communication_seconds;
        arrivals_[message_of(program_, instruction)] = completes_[static_cast<size_t>(index)];
        return;
      case StepOp::wait: {
        const auto target = static_cast<size_t>(instruction.waits_for);
        const bool reduction = program_.instructions.at(target).op == StepOp::reduce;
        wait_until(completes_[target], reduction ? phases.comm_exposed : phases.waiting);
        return;
      }
      case StepOp::reduce:
        reduce(index, instruction, cost.communication_seconds);
        return;
      case StepOp::optimizer:
        timeline_.sync_end_seconds = host_;
        spend(cost.compute_seconds, phases.optimizer);
        timeline_.optimizer_seconds += cost.compute_seconds;
        return;
      case StepOp::gather_params:
        spend(cost.communication_seconds, phases.comm_exposed);
        timeline_.gather_seconds += cost.communication_seconds;
        return;
      default:  // redistributions, copies, the input and the loss
        spend(cost.compute_seconds + cost.communication_seconds, phases.comm_exposed);
        return;
    }
  }

  // A gradient bucket's reduction: blocking where the program waits for it right away; else on
  // the communication stream, behind the reductions started before it, while the host goes on
  // (less the share of the reduction the backward does not hide).
  void reduce(int index, const StepInstruction& instruction, double seconds) {
    if (plans::waited_at_once(program_, index)) {
      out_.gradient_sync.push_back({stage_, instruction.bucket, host_, host_ + seconds});
      spend(seconds, timeline_.phases.comm_exposed);
      completes_[static_cast<size_t>(index)] = host_;
      return;
    }
    const double start = std::max(host_, stream_free_);
    stream_free_ = start + overlap_ * seconds;
    completes_[static_cast<size_t>(index)] = stream_free_;
    out_.gradient_sync.push_back({stage_, instruction.bucket, start, stream_free_});
    spend((1.0 - overlap_) * seconds, timeline_.phases.comm_exposed);
  }

  void note_pass(PassKind kind, int micro, int chunk, double start) {
    const auto key = std::make_tuple(kind, micro, chunk);
    auto it = pass_index_.find(key);
    if (it == pass_index_.end()) {
      it = pass_index_.emplace(key, passes_.size()).first;
      passes_.push_back({stage_, micro, chunk, kind, start, host_});
    }
    passes_[it->second].end_seconds = host_;
  }

  void finish() {
    finished_ = true;
    if (program_.passes_end >= static_cast<int>(program_.instructions.size())) timeline_.backward_end_seconds = host_;
    if (timeline_.optimizer_seconds == 0.0 && timeline_.sync_end_seconds == 0.0) timeline_.sync_end_seconds = host_;
    timeline_.end_seconds = host_;
    out_.passes.insert(out_.passes.end(), passes_.begin(), passes_.end());
    out_.stages[static_cast<size_t>(stage_)] = timeline_;
  }

  int stage_;
  const StepProgram& program_;
  const InstructionPricer& price_;
  double overlap_;
  std::map<MessageKey, double>& arrivals_;
  ProgramTimeline& out_;
  size_t next_ = 0;
  bool finished_ = false;
  double host_ = 0.0;
  double stream_free_ = 0.0;
  std::vector<double> completes_;  // per send or reduce: when it completes
  StageTimeline timeline_;
  std::vector<ScheduledPass> passes_;
  std::map<std::tuple<PassKind, int, int>, size_t> pass_index_;  // (kind, micro-batch, chunk)
};

}  // namespace

ProgramTimeline run_program_timeline(std::span<const plans::StepProgram> programs, const InstructionPricer& price,
                                     double communication_overlap) {
  ProgramTimeline out;
  out.stages.resize(programs.size());
  std::map<MessageKey, double> arrivals;
  std::vector<StageRun> runs;
  runs.reserve(programs.size());
  for (size_t s = 0; s < programs.size(); ++s) {
    runs.emplace_back(static_cast<int>(s), programs[s], price, communication_overlap, arrivals, out);
  }
  // Stages run in turn, each until it waits for a message another has yet to send.
  for (;;) {
    bool progressed = false;
    bool all_done = true;
    for (StageRun& run : runs) {
      progressed = run.advance() || progressed;
      all_done = all_done && run.done();
    }
    if (all_done) break;
    if (!progressed) throw std::logic_error("program timeline: the stages' programs wait for messages none sends");
  }
  // Stage by stage, as the per-stage runs recorded them.
  std::stable_sort(out.passes.begin(), out.passes.end(),
                   [](const ScheduledPass& a, const ScheduledPass& b) { return a.stage < b.stage; });
  return out;
}

}  // namespace splitbrain::sim
