#include "exec/cuda/cuda_device_clock.h"

#include "exec/cuda/cuda_event_clock.h"

namespace splitbrain::exec::cuda {

std::unique_ptr<StepClock> CudaDeviceClock::make_step_clock() const {
  return std::make_unique<CudaEventClock>(context_);
}

}  // namespace splitbrain::exec::cuda
