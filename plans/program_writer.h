#pragma once
// ProgramWriter: how the step compiler writes a StepProgram. Buffers are held, like shared
// arrays, by every part of the step that still needs them; `make` emits the alloc, and the drop
// of the last holder emits the free, so no buffer is freed twice or left behind. `finish` turns
// each instruction's reads and writes into dependencies on the other stream's instructions (the
// order on one stream is the program order).

#include <cstdint>
#include <string>
#include <vector>

#include "plans/plan.h"
#include "plans/step_program.h"

namespace splitbrain::plans {

class ProgramWriter {
 public:
  ProgramWriter(const Plan& plan, int rank);

  // A buffer that lives across steps (a model state): no alloc or free in the program.
  int resident(int64_t bytes, MemoryCategory category, std::string name);
  // A new buffer with one holder: emits its alloc.
  int make(int64_t bytes, MemoryCategory category, std::string name);
  void hold(int buffer);
  // One holder lets go (-1: nothing); the last one emits the free.
  void drop(int buffer);
  // Appends an instruction; returns its index.
  int emit(StepInstruction instruction);
  // Waits for the communication instruction `instruction` and lets go of what it read.
  void wait_and_release(int instruction);

  // Throws std::logic_error if a buffer is still held (a lifetime the compiler lost track of).
  StepProgram finish();

 private:
  StepProgram program_;
  std::vector<int> holders_;  // per buffer
};

}  // namespace splitbrain::plans
