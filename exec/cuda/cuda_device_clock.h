#pragma once
// CudaDeviceClock: CudaArrayDevice's clock (DeviceClock, exec/runtime/device_clock.h): events on
// the compute stream time a step, and the context counts the host's waits for the stream.

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "exec/cuda/cuda_context.h"
#include "exec/runtime/device_clock.h"

namespace splitbrain::exec::cuda {

class CudaDeviceClock final : public DeviceClock {
 public:
  // Shared, not referred to: each step clock made keeps the context too.
  explicit CudaDeviceClock(std::shared_ptr<CudaContext> context) : context_(std::move(context)) {}

  // Events on the compute stream (cuda_event_clock.h): timing a step adds no waits.
  std::unique_ptr<StepClock> make_step_clock() const override;
  std::optional<int64_t> host_waits() const override { return context_->host_waits(); }

 private:
  std::shared_ptr<CudaContext> context_;
};

}  // namespace splitbrain::exec::cuda
