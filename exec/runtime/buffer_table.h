#pragma once
// The arrays behind a step program's buffer numbers on this rank. The program says when a
// buffer exists, how many bytes it is and what for; the shape comes from the layer's op context
// (its layouts on this rank) or the gradient bucket, and the array is counted in the memory
// tracker under the program's category for exactly as long as the program keeps it. Model
// states are bound, not allocated: the parameters, their gradients and ZeRO's slices that live
// across steps. What an op keeps for its backward (masks, indices) is its own storage, counted
// by the op (LayerOp::kept_bytes), so its buffer has no array here.

#include <cstdint>
#include <vector>

#include "exec/runtime/device_memory.h"
#include "exec/runtime/layer_op.h"
#include "exec/runtime/layer_parameters.h"
#include "exec/runtime/memory_tracker.h"
#include "exec/runtime/mixed_precision.h"
#include "exec/runtime/zero_sharding.h"
#include "plans/compiled_plan.h"
#include "plans/step_program.h"

namespace splitbrain::exec {

class BufferTable {
 public:
  BufferTable(const plans::StepProgram& program, const plans::CompiledPlan& compiled,
              const std::vector<OpContext>& contexts, std::vector<LayerParameters>& parameters, const ZeroSlices& zero,
              DeviceMemory& device, MemoryTracker& memory, MixedPrecision precision = {});

  // Binds the resident buffers to the model states (at the start of every run: ZeRO 3 and
  // checkpoints may have replaced them).
  void bind_model_states();
  // An array of the buffer's shape on the device (zero-filled unless the instruction after the
  // alloc writes it whole). A gathered parameter or a whole gradient of ZeRO
  // also becomes the layer's, for as long as it lives (the ops read parameters through there).
  void allocate(int buffer);
  void release(int buffer);
  // The buffer's array; throws std::logic_error if it does not exist now.
  DeviceArray& at(int buffer);
  const plans::StepBuffer& describe(int buffer) const { return program_.buffers[static_cast<size_t>(buffer)]; }
  // Throws std::logic_error naming the buffers still allocated (a program that leaks).
  void check_all_released() const;

 private:
  std::vector<int64_t> shape_of(const plans::StepBuffer& buffer) const;
  TrackedArray* model_state_of(const plans::StepBuffer& buffer);

  const plans::StepProgram& program_;
  const plans::CompiledPlan& compiled_;
  const std::vector<OpContext>& contexts_;
  std::vector<LayerParameters>& parameters_;
  const ZeroSlices& zero_;
  DeviceMemory& device_;
  MemoryTracker& memory_;
  MixedPrecision precision_;          // the element size each buffer is counted at
  std::vector<TrackedArray> arrays_;  // per buffer; empty while it does not exist
  std::vector<bool> resident_;        // per buffer: a model state, bound rather than allocated
};

}  // namespace splitbrain::exec
