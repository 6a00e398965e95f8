#pragma once
// What an op keeps for each micro-batch in flight, from its forward to its backward: one buffer
// of the backend's memory per micro-batch (kernels/kept_buffer.h), made by the kernel factory so
// it lies where the op's kernels read it. Pipelines keep several micro-batches at once.

#include <cstdint>
#include <map>
#include <memory>

#include "exec/kernels/kernel_factory.h"

namespace splitbrain::exec::ops {

class KeptPerMicroBatch {
 public:
  // `factory` must outlive this (as it outlives every kernel it made).
  explicit KeptPerMicroBatch(kernels::KernelFactory& factory) : factory_(&factory) {}

  // A new buffer of `bytes` for `micro`, replacing any it had.
  kernels::KeptBuffer& keep(int micro, int64_t bytes);
  // The buffer kept for `micro`; std::logic_error when there is none (a backward without its
  // forward).
  kernels::KeptBuffer& at(int micro) const;
  bool holds(int micro) const { return buffers_.count(micro) != 0; }
  void release(int micro) { buffers_.erase(micro); }
  // Bytes of every buffer held now (LayerOp::kept_bytes).
  int64_t bytes() const;

 private:
  kernels::KernelFactory* factory_;
  std::map<int, std::unique_ptr<kernels::KeptBuffer>> buffers_;
};

}  // namespace splitbrain::exec::ops
