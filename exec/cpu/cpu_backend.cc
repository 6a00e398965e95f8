#include "exec/cpu/cpu_backend.h"

#include <memory>

#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/ops/layer_ops.h"

namespace splitbrain::exec::cpu {

OpFactory cpu_backend(int threads) { return ops::make_layer_ops(std::make_shared<CpuKernelFactory>(threads)); }

}  // namespace splitbrain::exec::cpu
