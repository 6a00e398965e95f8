#include "plans/hand_over_groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <compare>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "plans/step_compiler.h"

namespace splitbrain::plans {
namespace {

// A message as both ends name it: the consumer layer, its input position, the micro-batch and the
// direction (a gradient travels back).
using MessageKey = std::tuple<int, int, int, bool>;

struct Message {
  bool send = false;
  int peer = -1;         // stage
  int position = 0;      // this message's place among this stage's messages of its kind with `peer`
  int instruction = -1;  // in the stage's program
  MessageKey key;
  bool done = false;
};

using Group = std::vector<Message>;

// The programs of each stage's rank whose other coordinates are all 0 (replicas run the same).
std::vector<StepProgram> stage_programs(const Plan& plan, const CompiledPlan& compiled, bool evaluation) {
  std::vector<StepProgram> programs;
  for (int stage = 0; stage < plan.stage_count(); ++stage) {
    std::vector<int> coordinates(plan.mesh.axes().size(), 0);
    coordinates[static_cast<size_t>(plan.pipe_axis)] = stage;
    const int rank = plan.mesh.rank_of(coordinates);
    programs.push_back(evaluation ? compile_evaluation(plan, compiled, rank) : compile_step(plan, compiled, rank));
  }
  return programs;
}

// The stage's messages in the groups it posts them in (peers are stages 0 .. stages - 1).
std::vector<Group> posted_groups(const StepProgram& program, int stages) {
  std::vector<Group> groups;
  Group held;
  std::vector<int> count(2 * static_cast<size_t>(stages), 0);  // [send x stages + peer]: messages so far
  for (int i = 0; i < static_cast<int>(program.instructions.size()); ++i) {
    const StepInstruction& instruction = program.instructions[static_cast<size_t>(i)];
    const bool is_send = instruction.op == StepOp::send;
    if (is_send || instruction.op == StepOp::recv) {
      const Collective& transfer = instruction.collectives.at(0);
      const int peer = is_send ? transfer.destination_index : transfer.source_index;
      if (peer < 0 || peer >= stages) {
        throw std::logic_error(fmt::format("hand-over check: instruction {} names stage {} of {}", i, peer, stages));
      }
      held.push_back({is_send, peer, count[static_cast<size_t>((is_send ? stages : 0) + peer)]++, i,
                      MessageKey{instruction.layer, instruction.index, instruction.micro_batch,
                                 moves_gradient(program, instruction)}});
      if (!is_send && !instruction.posted_with_next) groups.push_back(std::exchange(held, {}));
    } else if (instruction.op == StepOp::wait && !held.empty()) {
      for (const Message& m : held) {
        if (m.instruction == instruction.waits_for) {
          groups.push_back(std::exchange(held, {}));
          break;
        }
      }
    }
  }
  if (!held.empty()) groups.push_back(std::move(held));
  return groups;
}

std::string describe(const Message& m) {
  const auto& [layer, index, micro, gradient] = m.key;
  return fmt::format("#{} {} {} of layer {} input {} mb{} {} stage {}", m.instruction, m.send ? "send" : "receive",
                     gradient ? "gradient" : "activation", layer, index, micro, m.send ? "to" : "from", m.peer);
}

// What decides the evaluation's messages and the order each stage posts them in: the model, its
// cut into chunks, the stages, the schedule and the micro-batches (not the shardings, ZeRO or
// recompute, which change sizes and the training step's backward only).
struct EvaluationShape {
  std::shared_ptr<const model::Model> model;  // held, so that no other model takes its address
  std::vector<int> stage_of_layer;
  std::string mesh;  // its axes and sizes
  int pipe_axis = -1;
  int virtual_stages = 1;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int micro_batches = 1;
  auto operator<=>(const EvaluationShape&) const = default;
};

// Whether the evaluation's hand-overs complete in groups, remembered per shape: the simulator
// asks for every timeline it runs, and a planner's search runs thousands of the same shape.
bool evaluation_completes_in_groups(const Plan& plan, const CompiledPlan& compiled) {
  static std::mutex mutex;
  static std::map<EvaluationShape, bool> answers;
  EvaluationShape shape{plan.model,          plan.stage_of_layer, plan.mesh.to_string(), plan.pipe_axis,
                        plan.virtual_stages, plan.schedule,       plan.micro_batches};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = answers.find(shape); it != answers.end()) return it->second;
  }
  const bool completes = !stall_of_grouped_hand_overs(stage_programs(plan, compiled, /*evaluation=*/true));
  const std::lock_guard<std::mutex> lock(mutex);
  constexpr size_t kRemembered = 4096;  // a search's shapes; a long-running process starts over
  if (answers.size() >= kRemembered) answers.clear();
  answers.emplace(std::move(shape), completes);
  return completes;
}

}  // namespace

std::optional<HandOverStall> stall_of_grouped_hand_overs(std::span<const StepProgram> stage_programs) {
  const auto stages = static_cast<int>(stage_programs.size());
  std::vector<std::vector<Group>> groups;
  for (const StepProgram& program : stage_programs) groups.push_back(posted_groups(program, stages));
  std::vector<size_t> current(static_cast<size_t>(stages), 0);
  while (true) {
    bool progress = false;
    for (int s = 0; s < stages; ++s) {
      std::vector<Group>& mine = groups[static_cast<size_t>(s)];
      if (current[static_cast<size_t>(s)] >= mine.size()) continue;
      Group& group = mine[current[static_cast<size_t>(s)]];
      for (Message& m : group) {
        if (m.done) continue;
        const auto& peer_groups = groups[static_cast<size_t>(m.peer)];
        const size_t peer_current = current[static_cast<size_t>(m.peer)];
        if (peer_current >= peer_groups.size()) continue;
        for (Message& match : groups[static_cast<size_t>(m.peer)][peer_current]) {
          if (match.done || match.send == m.send || match.peer != s || match.position != m.position) continue;
          if (match.key != m.key) {
            return HandOverStall{s, m.instruction,
                                 fmt::format("stage {} {} meets stage {} {}: the n-th messages between two stages "
                                             "are different tensors",
                                             s, describe(m), m.peer, describe(match))};
          }
          m.done = match.done = true;
          progress = true;
        }
      }
      if (std::ranges::all_of(group, &Message::done)) {
        ++current[static_cast<size_t>(s)];
        progress = true;
      }
    }
    if (progress) continue;
    std::optional<HandOverStall> stall;
    std::string waits;
    for (int s = 0; s < stages; ++s) {
      const auto& mine = groups[static_cast<size_t>(s)];
      if (current[static_cast<size_t>(s)] >= mine.size()) continue;
      for (const Message& m : mine[current[static_cast<size_t>(s)]]) {
        if (m.done) continue;
        if (!stall) stall = HandOverStall{s, m.instruction, ""};
        waits += fmt::format("{}stage {} waits at {}", waits.empty() ? "" : "; ", s, describe(m));
        break;
      }
    }
    if (!stall) return std::nullopt;
    stall->message = waits;
    return stall;
  }
}

std::optional<HandOverStall> stall_of_plan_hand_overs(const Plan& plan, const CompiledPlan& compiled) {
  if (plan.pipe_axis < 0 || plan.stage_count() < 2) return std::nullopt;
  for (const bool evaluation : {false, true}) {
    if (auto stall = stall_of_grouped_hand_overs(stage_programs(plan, compiled, evaluation))) {
      stall->message = fmt::format("{}: {}", evaluation ? "evaluation" : "training step", stall->message);
      return stall;
    }
  }
  return std::nullopt;
}

bool hand_overs_complete_in_groups(const Plan& plan, const CompiledPlan& compiled) {
  return !stall_of_plan_hand_overs(plan, compiled);
}

bool hand_overs_complete_in_groups(const Plan& plan, const CompiledPlan& compiled,
                                   std::span<const StepProgram> training_programs) {
  if (plan.pipe_axis < 0 || plan.stage_count() < 2) return true;
  if (training_programs.size() != static_cast<size_t>(plan.stage_count())) {
    throw std::logic_error(fmt::format("hand-over check: {} training programs for {} stages", training_programs.size(),
                                       plan.stage_count()));
  }
  return !stall_of_grouped_hand_overs(training_programs) && evaluation_completes_in_groups(plan, compiled);
}

}  // namespace splitbrain::plans
