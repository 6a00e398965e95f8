#pragma once
// ProgramWriter: how the step compiler writes a StepProgram. Buffers are held, like shared
// arrays, by every part of the step that still needs them; `make` emits the alloc, and the drop
// of the last holder emits the free, so no buffer is freed twice or left behind. `finish` turns
// each instruction's reads and writes into dependencies on the other stream's instructions (the
// order on one stream is the program order). It walks the memory as it writes (peaks), so a
// caller that wants only the memory (the simulator, pricing many plans) need not keep the list.

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "plans/memory_walk.h"
#include "plans/plan.h"
#include "plans/step_program.h"

namespace splitbrain::plans {

// What ProgramWriter::stop_above throws at the first byte over its limit.
struct MemoryLimitReached {};

class ProgramWriter {
 public:
  // `keep_instructions` false: only the buffers and the memory walk are kept.
  ProgramWriter(const Plan& plan, int rank, bool keep_instructions = true);

  // A buffer that lives across steps (a model state): no alloc or free in the program.
  int resident(StepBuffer buffer);
  // A new buffer with one holder: emits its alloc.
  int make(StepBuffer buffer);
  void hold(int buffer);
  // One holder lets go (-1: nothing); the last one emits the free.
  void drop(int buffer);
  bool keeps_instructions() const { return keep_instructions_; }
  // From here on, an alloc that takes the live bytes over `limit_bytes` throws MemoryLimitReached:
  // whether a plan fits is decided there (its walk's peak is above the limit), and most plans a
  // search weighs that do not fit are over long before their step's end.
  void stop_above(int64_t limit_bytes) { limit_bytes_ = limit_bytes; }
  // What comes next completes the step (StepProgram::passes_end).
  void mark_passes_end() { program_.passes_end = static_cast<int>(program_.instructions.size()); }
  // Appends an instruction; returns its index.
  int emit(StepInstruction instruction);
  // Keeps a pass's operands beside the instructions; returns their index (StepInstruction::operands).
  int add_pass_operands(PassOperands operands);
  // Waits for the communication instruction `instruction` and lets go of what it read.
  void wait_and_release(int instruction);

  // Throws std::logic_error if a buffer is still held (a lifetime the compiler lost track of).
  StepProgram finish();
  // The walk's peaks so far (plans/memory_walk.h: the same as walking the finished program).
  const MemoryPeaks& peaks() const { return counter_.peaks(); }

 private:
  std::string name_of(int buffer) const;
  void count(int buffer, bool allocate);

  const model::Model& net_;
  StepProgram program_;
  std::vector<int> holders_;  // per buffer
  bool keep_instructions_ = true;
  int emitted_ = 0;
  std::map<int, SmallIndexList> unkept_reads_;  // instructions not kept that a wait will release
  MemoryCounter counter_;
  int64_t limit_bytes_ = std::numeric_limits<int64_t>::max();
};

}  // namespace splitbrain::plans
