#include "plans/hand_over_groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "plans/plan_error.h"
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

// The program of stage `stage` on the ranks whose other coordinates are all 0.
StepProgram stage_program(const Plan& plan, const CompiledPlan& compiled, int stage) {
  for (int rank = 0; rank < plan.mesh.rank_count(); ++rank) {
    bool replica_zero = true;
    for (int axis = 0; axis < static_cast<int>(plan.mesh.axes().size()); ++axis) {
      const int coordinate = plan.mesh.coordinate(rank, axis);
      if (axis == plan.pipe_axis ? coordinate != stage : coordinate != 0) replica_zero = false;
    }
    if (replica_zero) return compile_step(plan, compiled, rank);
  }
  throw PlanError(fmt::format("hand-overs: no rank of stage {}", stage));
}

// The stage's messages in the groups it posts them in.
std::vector<Group> posted_groups(const StepProgram& program) {
  std::vector<Group> groups;
  Group held;
  std::map<std::pair<bool, int>, int> count;  // (send, peer) -> messages so far
  for (int i = 0; i < static_cast<int>(program.instructions.size()); ++i) {
    const StepInstruction& instruction = program.instructions[static_cast<size_t>(i)];
    const bool is_send = instruction.op == StepOp::send;
    if (is_send || instruction.op == StepOp::recv) {
      const Collective& transfer = instruction.collectives.at(0);
      const int peer = is_send ? transfer.destination_index : transfer.source_index;
      held.push_back({is_send, peer, count[{is_send, peer}]++, i,
                      MessageKey{instruction.layer, instruction.index, instruction.micro_batch,
                                 moves_gradient(program, instruction)}});
      if (!is_send) groups.push_back(std::exchange(held, {}));
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

}  // namespace

std::optional<HandOverStall> stall_of_grouped_hand_overs(const Plan& plan, const CompiledPlan& compiled) {
  if (plan.pipe_axis < 0 || plan.stage_count() < 2) return std::nullopt;
  const int stages = plan.stage_count();
  std::vector<std::vector<Group>> groups;
  for (int s = 0; s < stages; ++s) groups.push_back(posted_groups(stage_program(plan, compiled, s)));
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

}  // namespace splitbrain::plans
