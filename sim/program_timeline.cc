#include "sim/program_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace splitbrain::sim {
namespace {

using plans::StepInstruction;
using plans::StepOp;
using plans::StepProgram;

// A pipeline message: the consumer layer, its input position, the micro-batch, and whether it
// carries the gradient back. Send and receive name it alike.
using MessageKey = std::tuple<int, int, int, bool>;

constexpr const char* kDeadlock = "program timeline: the stages' programs wait for messages none sends";

MessageKey message_of(const StepProgram& program, const StepInstruction& instruction) {
  return {instruction.layer, instruction.index, instruction.micro_batch, plans::moves_gradient(program, instruction)};
}

class StageRun {
 public:
  // `computes_at_once`: the stage's compute takes its priced seconds the moment it starts (no
  // node sharing); else each compute waits in wants_core() for the node's scheduler.
  StageRun(int stage, const StepProgram& program, const InstructionPricer& price, double overlap,
           std::map<MessageKey, double>& arrivals, bool computes_at_once)
      : stage_(stage),
        program_(program),
        price_(price),
        overlap_(overlap),
        arrivals_(arrivals),
        computes_at_once_(computes_at_once) {
    completes_.assign(program.instructions.size(), 0.0);
    // A redistribution that a later wait completes is posted ahead (ZeRO 3's prefetched
    // parameter gathers): it runs on the communication stream while the host goes on.
    posted_ahead_.assign(program.instructions.size(), false);
    for (const StepInstruction& instruction : program.instructions) {
      if (instruction.op != StepOp::wait) continue;
      const auto target = static_cast<size_t>(instruction.waits_for);
      if (program.instructions.at(target).op == StepOp::redistribute) posted_ahead_[target] = true;
    }
  }

  bool done() const { return next_ >= program_.instructions.size() && !compute_; }
  double host_seconds() const { return host_; }
  bool wants_core() const { return compute_.has_value(); }
  double compute_left_seconds() const { return compute_ ? compute_->left_seconds : 0.0; }
  double busy_over_alone() const { return compute_ ? compute_->busy_over_alone : 1.0; }
  const StageTimeline& timeline() const { return timeline_; }
  const std::vector<ScheduledPass>& passes() const { return passes_; }
  const std::vector<SyncInterval>& gradient_sync() const { return gradient_sync_; }
  const std::vector<InstructionSpan>& other_instructions() const { return other_instructions_; }

  // Runs instructions from host time up to `now_seconds` until the stage waits for a message not
  // sent yet or for a core; true if it ran any.
  bool advance(double now_seconds) {
    const size_t first = next_;
    while (!done() && !compute_ && host_ <= now_seconds) {
      const StepInstruction& instruction = program_.instructions[next_];
      if (static_cast<int>(next_) == program_.passes_end) timeline_.backward_end_seconds = host_;
      if (instruction.op == StepOp::recv) {
        const auto arrival = arrivals_.find(message_of(program_, instruction));
        if (arrival == arrivals_.end()) break;
        const double start = host_;
        wait_until(arrival->second, timeline_.phases.waiting);
        // The message's handling on this host once it is here (the executor's MPI_Recv copies
        // it out of the transport; its arrival interrupted what ran here, charged now).
        spend(price_(stage_, instruction).message_host_seconds, timeline_.phases.waiting);
        note_other(instruction, start);
        issued_ = std::max(issued_, host_);  // the host waited for the message
      } else {
        run(static_cast<int>(next_), instruction);
      }
      ++next_;
    }
    if (done() && !finished_) finish();
    return next_ > first;
  }

  // The scheduler's side: `seconds` of the pending compute done (in seconds alone).
  void progress(double seconds) { compute_->left_seconds -= seconds; }
  // The pending compute ends at `now_seconds`, what follows it in its instruction after it.
  void end_compute(double now_seconds) {
    const PendingCompute compute = *compute_;
    compute_.reset();
    const double elapsed = now_seconds - compute.start_seconds;
    host_ = now_seconds;
    *compute.phase += elapsed;
    const StepInstruction& instruction = program_.instructions[static_cast<size_t>(compute.instruction)];
    if (instruction.op == StepOp::optimizer) {
      timeline_.optimizer_seconds += elapsed;
      return;
    }
    spend(compute.communication_seconds, timeline_.phases.comm_exposed);
    note_pass(instruction.op == StepOp::forward ? PassKind::forward : PassKind::backward, instruction.micro_batch,
              program_.chunk_of_layer.at(static_cast<size_t>(instruction.layer)),
              {instruction.layer, instruction.op == StepOp::recompute, compute.start_seconds, now_seconds, host_,
               compute.queued_from_seconds, compute.queued_to_seconds});
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

  // The host queues the instruction; the device idles until it is queued (that wait is the
  // instruction's, as the executor's marks time it). Returns when the device was free for it.
  double queue(const InstructionCost& cost) {
    const double free = host_;
    queued_from_ = issued_;
    issued_ += cost.host_seconds;
    host_ = std::max(host_, issued_);
    return free;
  }

  void run(int index, const StepInstruction& instruction) {
    InstructionCost cost = price_(stage_, instruction);
    if (instruction.op == StepOp::alloc || instruction.op == StepOp::free) {
      // The executor's clock marks neither: what they do (a zero-fill) counts in the time of
      // the instruction after them, as here.
      untimed_.compute_seconds += cost.compute_seconds;
      untimed_.alone_compute_seconds += cost.alone_compute_seconds;
      return;
    }
    cost.compute_seconds += std::exchange(untimed_.compute_seconds, 0.0);
    cost.alone_compute_seconds += std::exchange(untimed_.alone_compute_seconds, 0.0);
    const double start = host_;
    run_queued(index, instruction, cost);
    switch (instruction.op) {
      case StepOp::forward:  // passes and the update: note_pass, the timeline's optimizer
      case StepOp::recompute:
      case StepOp::backward:
      case StepOp::optimizer:
      case StepOp::reduce:  // its gradient_sync_ interval
        break;
      default:
        note_other(instruction, start);
    }
    if (cost.host_waits) {
      issued_ = std::max(issued_, host_);
      timeline_.host_wait_instructions.push_back(index);
    }
  }

  void run_queued(int index, const StepInstruction& instruction, const InstructionCost& cost) {
    StagePhases& phases = timeline_.phases;
    const double free = queue(cost);
    switch (instruction.op) {
      case StepOp::forward:
      case StepOp::recompute:
      case StepOp::backward: {
        // A recomputed forward belongs to the backward pass it precedes.
        const bool forward = instruction.op == StepOp::forward;
        start_compute(index, cost, forward ? phases.compute_forward : phases.compute_backward, free);
        return;
      }
      case StepOp::optimizer:
        timeline_.sync_end_seconds = free;
        start_compute(index, cost, phases.optimizer, free);
        return;
      default:
        break;
    }
    phases.comm_exposed += host_ - free;  // the device waited for the host to queue it
    // Copies' work, or the fill of an alloc before a transfer: on the host, before the rest.
    spend(cost.compute_seconds, phases.comm_exposed);
    switch (instruction.op) {
      case StepOp::send:
        // Non-blocking: the call hands the message to the transport (the executor counts it as
        // waiting for the stage, as the receive), then it arrives after the transfer.
        spend(cost.message_host_seconds, phases.waiting);
        completes_[static_cast<size_t>(index)] = host_ + cost.communication_seconds;
        arrivals_[message_of(program_, instruction)] = completes_[static_cast<size_t>(index)];
        return;
      case StepOp::wait: {
        // For a message: the pipeline's waiting; for a reduction or a gather: communication.
        const auto target = static_cast<size_t>(instruction.waits_for);
        const StepOp awaited = program_.instructions.at(target).op;
        const bool message = awaited == StepOp::send || awaited == StepOp::recv;
        wait_until(completes_[target], message ? phases.waiting : phases.comm_exposed);
        return;
      }
      case StepOp::reduce:
        reduce(index, instruction, cost.communication_seconds);
        return;
      case StepOp::redistribute:
        if (posted_ahead_[static_cast<size_t>(index)]) {
          post_on_stream(index, cost.communication_seconds);
          return;
        }
        spend(cost.communication_seconds, phases.comm_exposed);
        return;
      default:  // redistributions, copies, parameter gathers, the input and the loss
        spend(cost.communication_seconds, phases.comm_exposed);
        return;
    }
  }

  // A pass's kernels or the update from `free_seconds` (when the device was done with what came
  // before: a wait for the host to queue it is the instruction's): at once where the stage
  // computes alone, else once the node's scheduler has run it (end_compute).
  void start_compute(int index, const InstructionCost& cost, double& phase, double free_seconds) {
    if (computes_at_once_ || cost.compute_seconds <= 0.0) {
      compute_ =
          PendingCompute{index, free_seconds, 0.0, 1.0, cost.communication_seconds, &phase, queued_from_, issued_};
      end_compute(host_ + cost.compute_seconds);
      return;
    }
    // Where the node is shared the compute runs from its seconds alone (the busy ones where no
    // alone price is known), at most as slow as busy.
    const double alone = cost.alone_compute_seconds > 0.0 ? cost.alone_compute_seconds : cost.compute_seconds;
    compute_ = PendingCompute{index,  free_seconds, alone,  cost.compute_seconds / alone, cost.communication_seconds,
                              &phase, queued_from_, issued_};
  }

  // A gradient bucket's reduction: blocking where the program waits for it right away; else on
  // the communication stream, behind the reductions started before it, for its whole time (a
  // reduction overlapped with compute is no faster than alone), while the host goes on less the
  // share of it that the backward does not hide (the cores the reduction takes from it). Below
  // overlap 0 the reduction beside the compute costs the host more than its own time (CPU ranks
  // whose cores reduce while they compute, each evicting the other's data from the caches): that
  // excess is the compute's, slowed, and books as such.
  void reduce(int index, const StepInstruction& instruction, double seconds) {
    if (plans::waited_at_once(program_, index)) {
      gradient_sync_.push_back({stage_, instruction.bucket, host_, host_ + seconds});
      spend(seconds, timeline_.phases.comm_exposed);
      completes_[static_cast<size_t>(index)] = host_;
      return;
    }
    const double start = post_on_stream(index, seconds);
    gradient_sync_.push_back({stage_, instruction.bucket, start, stream_free_});
  }

  // Communication on the stage's communication stream, behind what was posted there before it,
  // for its whole time, completing at completes_[index]; the host goes on less the share the
  // compute does not hide (reduce()). Returns when it starts.
  double post_on_stream(int index, double seconds) {
    const double start = std::max(host_, stream_free_);
    stream_free_ = start + seconds;
    completes_[static_cast<size_t>(index)] = stream_free_;
    const double not_hidden = (1.0 - overlap_) * seconds;
    spend(std::min(not_hidden, seconds), timeline_.phases.comm_exposed);
    if (not_hidden > seconds) spend(not_hidden - seconds, timeline_.phases.compute_backward);
    return start;
  }

  void note_other(const StepInstruction& instruction, double start_seconds) {
    if (host_ <= start_seconds) return;
    other_instructions_.push_back(
        {stage_, instruction.op, instruction.layer, instruction.bucket, instruction.micro_batch, start_seconds, host_});
  }

  void note_pass(PassKind kind, int micro, int chunk, const LayerSpan& span) {
    const auto key = std::make_tuple(kind, micro, chunk);
    auto it = pass_index_.find(key);
    if (it == pass_index_.end()) {
      it = pass_index_.emplace(key, passes_.size()).first;
      passes_.push_back({stage_, micro, chunk, kind, span.compute_start_seconds, host_, {}});
    }
    passes_[it->second].end_seconds = host_;
    passes_[it->second].layers.push_back(span);
  }

  void finish() {
    finished_ = true;
    if (program_.passes_end >= static_cast<int>(program_.instructions.size())) timeline_.backward_end_seconds = host_;
    if (timeline_.optimizer_seconds == 0.0 && timeline_.sync_end_seconds == 0.0) timeline_.sync_end_seconds = host_;
    timeline_.end_seconds = host_;
  }

  struct PendingCompute {
    int instruction = 0;
    double start_seconds = 0.0;
    double left_seconds = 0.0;           // seconds alone still to run
    double busy_over_alone = 1.0;        // its seconds with the node's ranks all busy, over alone
    double communication_seconds = 0.0;  // the collectives inside the op, after its kernels
    double* phase = nullptr;
    double queued_from_seconds = 0.0;  // the host's queuing of it
    double queued_to_seconds = 0.0;
  };

  int stage_;
  const StepProgram& program_;
  const InstructionPricer& price_;
  double overlap_;
  std::map<MessageKey, double>& arrivals_;
  bool computes_at_once_;
  std::optional<PendingCompute> compute_;
  size_t next_ = 0;
  bool finished_ = false;
  double host_ = 0.0;
  double issued_ = 0.0;       // when the host has queued the instructions run so far (host_seconds)
  double queued_from_ = 0.0;  // when the host began to queue the last instruction
  double stream_free_ = 0.0;
  InstructionCost untimed_;         // of the allocs and frees since the last instruction run
  std::vector<double> completes_;   // per send, reduce or gather posted ahead: when it completes
  std::vector<bool> posted_ahead_;  // per instruction: a redistribution a later wait completes
  StageTimeline timeline_;
  std::vector<ScheduledPass> passes_;
  std::vector<SyncInterval> gradient_sync_;
  std::vector<InstructionSpan> other_instructions_;
  std::map<std::tuple<PassKind, int, int>, size_t> pass_index_;  // (kind, micro-batch, chunk)
};

// Lets each stage run in turn until it waits for a message another has yet to send: with no
// node shared, each stage's timeline is its own but for the messages.
void run_on_their_own(std::vector<StageRun>& runs) {
  for (;;) {
    bool progressed = false;
    bool all_done = true;
    for (StageRun& run : runs) {
      progressed = run.advance(std::numeric_limits<double>::infinity()) || progressed;
      all_done = all_done && run.done();
    }
    if (all_done) return;
    if (!progressed) throw std::logic_error(kDeadlock);
  }
}

// The ranks of shared nodes in time order: a rank that computes asks its node for a core, holds
// it for a turn while others wait (FIFO, as a time-sharing kernel's run queue), or until it
// stops computing (a wait, a message, a collective); its compute runs at the contention rate of
// the cores busy. Each event (a compute done, a turn over, a host free again) moves all ranks to
// its time, so a compute always knows who it shares the node with.
class NodeScheduler {
 public:
  NodeScheduler(std::vector<StageRun>& runs, std::vector<int> node_of_run, const NodeSharing& sharing)
      : runs_(runs), node_of_run_(std::move(node_of_run)), sharing_(sharing) {
    const int nodes = node_of_run_.empty() ? 0 : *std::max_element(node_of_run_.begin(), node_of_run_.end()) + 1;
    on_core_.resize(static_cast<size_t>(nodes));
    waiting_.resize(static_cast<size_t>(nodes));
    turn_left_.assign(runs.size(), 0.0);
  }

  void run() {
    double now = 0.0;
    for (;;) {
      // Until none moves: a message sent now may let a stage tried before it go on.
      bool progressed = true;
      while (progressed) {
        progressed = false;
        for (StageRun& run : runs_) progressed = run.advance(now) || progressed;
      }
      if (std::ranges::all_of(runs_, [](const StageRun& run) { return run.done(); })) return;
      hand_out_cores();
      const double next = next_event(now);
      if (next == std::numeric_limits<double>::infinity()) {
        throw std::logic_error(kDeadlock);
      }
      move_to(now, next);
      now = next;
    }
  }

 private:
  // How much slower than alone `run` computes with `busy` cores of its node computing. Its busy
  // seconds are N ranks on `cores` cores (calibrate's CPU share where they take turns), so:
  //   - where the node's ranks outnumber its cores, at busy x cores / N whenever it computes,
  //     even while the others wait: a rank waiting in MPI is not asleep (Open MPI yield-polls on
  //     an oversubscribed node, the progress pump wakes every 200 us), and a turn resumes on the
  //     caches the other ranks' turns left. Timed by their CPU time on 2 ranks per core, the tiny
  //     GPT's ops cost 1.6x their seconds alone and vgg11's convolutions 0.7x-1.2x, near their
  //     2-busy share both (the seconds alone are timed beside a napping core-mate, not a polling
  //     one); the share predicted the tiny GPT's 2 x 2 pipelines within 3%, alone 14-21% short;
  //   - else each core's contention: busy x cores / N with every core busy (at least alone), in
  //     proportion with fewer.
  double stretch(const StageRun& run, size_t busy) const {
    const double share = run.busy_over_alone() * sharing_.cores / static_cast<double>(sharing_.ranks_per_node);
    if (sharing_.ranks_per_node > sharing_.cores) return share;
    if (sharing_.cores <= 1 || busy <= 1) return 1.0;
    const double all_cores = std::max(1.0, share);
    return 1.0 + (all_cores - 1.0) * static_cast<double>(busy - 1) / static_cast<double>(sharing_.cores - 1);
  }

  // Ranks that stopped computing give their core back; ranks that asked join their node's queue;
  // free cores go to the queue's first.
  void hand_out_cores() {
    for (size_t node = 0; node < on_core_.size(); ++node) {
      std::vector<int>& on_core = on_core_[node];
      std::erase_if(on_core, [&](int r) { return !runs_[static_cast<size_t>(r)].wants_core(); });
    }
    for (size_t r = 0; r < runs_.size(); ++r) {
      if (!runs_[r].wants_core()) continue;
      const auto node = static_cast<size_t>(node_of_run_[r]);
      const int rank = static_cast<int>(r);
      if (std::ranges::find(on_core_[node], rank) != on_core_[node].end()) continue;
      if (std::ranges::find(waiting_[node], rank) != waiting_[node].end()) continue;
      waiting_[node].push_back(rank);
    }
    for (size_t node = 0; node < on_core_.size(); ++node) {
      while (static_cast<int>(on_core_[node].size()) < sharing_.cores && !waiting_[node].empty()) {
        const int r = waiting_[node].front();
        waiting_[node].pop_front();
        on_core_[node].push_back(r);
        turn_left_[static_cast<size_t>(r)] = sharing_.turn_seconds;
      }
    }
  }

  double next_event(double now) const {
    double next = std::numeric_limits<double>::infinity();
    for (size_t node = 0; node < on_core_.size(); ++node) {
      for (const int r : on_core_[node]) {
        const StageRun& run = runs_[static_cast<size_t>(r)];
        next = std::min(next, now + run.compute_left_seconds() * stretch(run, on_core_[node].size()));
        if (!waiting_[node].empty()) next = std::min(next, now + std::max(0.0, turn_left_[static_cast<size_t>(r)]));
      }
    }
    for (const StageRun& run : runs_) {
      if (!run.done() && !run.wants_core() && run.host_seconds() > now) next = std::min(next, run.host_seconds());
    }
    return next;
  }

  // Runs the ranks on cores from `now` to `next`: computes that finish end there; a rank whose
  // turn is over while others wait goes to the back of its node's queue.
  void move_to(double now, double next) {
    constexpr double kDoneSeconds = 1e-12;
    for (size_t node = 0; node < on_core_.size(); ++node) {
      const size_t busy = on_core_[node].size();
      std::vector<int> still_on;
      for (const int r : on_core_[node]) {
        StageRun& run = runs_[static_cast<size_t>(r)];
        double& turn = turn_left_[static_cast<size_t>(r)];
        run.progress((next - now) / stretch(run, busy));
        turn -= next - now;
        if (run.compute_left_seconds() <= kDoneSeconds) {
          // Keeps its core and the rest of its turn if its next instruction computes at once.
          run.end_compute(next);
          still_on.push_back(r);
        } else if (!waiting_[node].empty() && turn <= kDoneSeconds) {
          waiting_[node].push_back(r);
        } else {
          still_on.push_back(r);
        }
      }
      on_core_[node] = std::move(still_on);
    }
  }

  std::vector<StageRun>& runs_;
  std::vector<int> node_of_run_;
  const NodeSharing& sharing_;
  std::vector<std::vector<int>> on_core_;  // per node: the ranks computing
  std::vector<std::deque<int>> waiting_;   // per node: ranks waiting for a core, first first
  std::vector<double> turn_left_;          // per rank on a core: seconds of its turn left
};

}  // namespace

ProgramTimeline run_program_timeline(std::span<const plans::StepProgram> programs, const InstructionPricer& price,
                                     double communication_overlap, const NodeSharing* sharing) {
  const int replicas = sharing ? std::max(1, sharing->replicas) : 1;
  // Each replica (a rank of the stage on its node) has its own messages: replica r of one stage
  // talks to replica r of the next.
  std::vector<std::map<MessageKey, double>> arrivals(static_cast<size_t>(replicas));
  std::vector<StageRun> runs;
  std::vector<int> node_of_run;
  runs.reserve(programs.size() * static_cast<size_t>(replicas));
  for (size_t s = 0; s < programs.size(); ++s) {
    for (int r = 0; r < replicas; ++r) {
      runs.emplace_back(static_cast<int>(s), programs[s], price, communication_overlap,
                        arrivals[static_cast<size_t>(r)], sharing == nullptr);
      if (sharing) node_of_run.push_back(sharing->node_of_stage.at(s));
    }
  }
  if (sharing) {
    NodeScheduler(runs, std::move(node_of_run), *sharing).run();
  } else {
    run_on_their_own(runs);
  }
  // Per stage, the replica that ends last: the step waits for it.
  ProgramTimeline out;
  out.stages.resize(programs.size());
  for (size_t s = 0; s < programs.size(); ++s) {
    const StageRun* last = &runs[s * static_cast<size_t>(replicas)];
    for (int r = 1; r < replicas; ++r) {
      const StageRun& run = runs[s * static_cast<size_t>(replicas) + static_cast<size_t>(r)];
      if (run.timeline().end_seconds > last->timeline().end_seconds) last = &run;
    }
    out.stages[s] = last->timeline();
    out.passes.insert(out.passes.end(), last->passes().begin(), last->passes().end());
    out.gradient_sync.insert(out.gradient_sync.end(), last->gradient_sync().begin(), last->gradient_sync().end());
    out.other_instructions.insert(out.other_instructions.end(), last->other_instructions().begin(),
                                  last->other_instructions().end());
  }
  return out;
}

}  // namespace splitbrain::sim
