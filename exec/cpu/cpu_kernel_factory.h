#pragma once
// The CPU backend's kernels: oneDNN primitives (and own code where oneDNN has nothing), all on
// the one CpuContext this factory holds, so the factory outlives every kernel it makes.

#include <memory>

#include "exec/cpu/cpu_context.h"
#include "exec/kernels/kernel_factory.h"

namespace splitbrain::exec::cpu {

// The makers, one per kind of exec/kernels/kernel_kinds.h, each defined in the file of its
// kernel: `std::unique_ptr<Kernel> cpu::make_<name>(CpuContext& context, params...)`.
#define SPLITBRAIN_DECLARE_CPU_KERNEL_MAKER(name, Kernel, params, args) \
  std::unique_ptr<Kernel> make_##name SPLITBRAIN_KERNEL_PREPEND(CpuContext& context, params);
SPLITBRAIN_KERNEL_KINDS(SPLITBRAIN_DECLARE_CPU_KERNEL_MAKER)
#undef SPLITBRAIN_DECLARE_CPU_KERNEL_MAKER

class CpuKernelFactory final : public kernels::KernelFactory {
 public:
  // `threads` oneDNN threads per rank (1: one rank per core; cpu_context.h).
  explicit CpuKernelFactory(int threads = 1);

  // Each forwards to its maker (qualified: the member of the same name would hide it).
#define SPLITBRAIN_CPU_KERNEL_FACTORY_OVERRIDE(name, Kernel, params, args) \
  std::unique_ptr<Kernel> make_##name params override {                    \
    return cpu::make_##name SPLITBRAIN_KERNEL_PREPEND(context_, args);     \
  }
  SPLITBRAIN_KERNEL_KINDS(SPLITBRAIN_CPU_KERNEL_FACTORY_OVERRIDE)
#undef SPLITBRAIN_CPU_KERNEL_FACTORY_OVERRIDE

 private:
  CpuContext context_;
};

}  // namespace splitbrain::exec::cpu
