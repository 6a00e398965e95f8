#include "exec/cpu/cpu_context.h"

#include <omp.h>

#include <string>

#include "exec/cpu/dnnl_check.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cpu {

namespace {
int checked_threads(int threads) {
  if (threads < 1)
    throw kernels::KernelArgumentError("CpuContext: threads must be at least 1, got " + std::to_string(threads));
  // Set before the engine exists so oneDNN's first primitive already sees it.
  omp_set_num_threads(threads);
  return threads;
}
}  // namespace

CpuContext::CpuContext(int threads) : threads_(checked_threads(threads)) {
  SB_DNNL_CHECK(engine_ = dnnl::engine(dnnl::engine::kind::cpu, 0));
  SB_DNNL_CHECK(stream_ = dnnl::stream(engine_));
}

}  // namespace splitbrain::exec::cpu
