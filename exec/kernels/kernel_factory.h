#pragma once
// What a backend provides to the shared ops (exec/ops): one kernel per layer, built once for the
// layer's local shapes. The ops hold the orchestration (halo exchange, partial-sum bias,
// gradient accumulation, loss scaling, statistics all-reduce, ...) and call only these, so a
// backend is a KernelFactory plus its collectives; only kernels differ between backends.
// Kernels take and give fp32 buffers in the backend's memory (host memory for both backends
// today); a factory's kernels may share state (an engine, a stream), so the factory must outlive
// every kernel it made. The kinds of kernel are listed once, in kernel_kinds.h.

#include <memory>

#include "exec/kernels/kernel_kinds.h"

namespace splitbrain::exec::kernels {

class KernelFactory {
 public:
  virtual ~KernelFactory() = default;

  // make_conv2d, make_linear, ...: one per line of kernel_kinds.h.
#define SPLITBRAIN_DECLARE_KERNEL_FACTORY_MAKER(name, Kernel, params, args) \
  virtual std::unique_ptr<Kernel> make_##name params = 0;
  SPLITBRAIN_KERNEL_KINDS(SPLITBRAIN_DECLARE_KERNEL_FACTORY_MAKER)
#undef SPLITBRAIN_DECLARE_KERNEL_FACTORY_MAKER
};

}  // namespace splitbrain::exec::kernels
