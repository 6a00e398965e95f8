#pragma once
// CudaEventClock: the StepClock (exec/runtime/step_clock.h) of a CUDA stream. Each mark is an
// event recorded on the stream, so the reading is when the GPU reached that point of its queue,
// and the host never waits until seconds_since_start() (cudaEventElapsedTime, about 0.5 us
// resolution). The events are made once and reused by each new start().
// Where the stream was idle, waiting for the host to queue more, that wait is in the reading:
// a mark times what the step took on the GPU's side, host-bound stretches included.
// With a lead, start() first holds the stream that long (stream_hold.h), so the work the host
// queues next is already waiting when the timeline starts: the marks then time the GPU's work
// alone, as in a step whose queue runs ahead (calibrate times kernel problems so).

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "exec/cuda/cuda_context.h"
#include "exec/runtime/step_clock.h"

namespace splitbrain::exec::cuda {

class CudaEventClock final : public StepClock {
 public:
  explicit CudaEventClock(std::shared_ptr<CudaContext> context, double lead_seconds = 0.0);
  ~CudaEventClock() override;
  CudaEventClock(const CudaEventClock&) = delete;
  CudaEventClock& operator=(const CudaEventClock&) = delete;

  void start() override;
  void mark() override;
  std::vector<double> seconds_since_start() override;
  bool host_runs_ahead() const override { return true; }

 private:
  void record();

  std::shared_ptr<CudaContext> context_;
  double lead_seconds_;
  std::vector<cudaEvent_t> events_;  // events_[0] is the start
  size_t recorded_ = 0;              // events_ of the current timeline
};

}  // namespace splitbrain::exec::cuda
