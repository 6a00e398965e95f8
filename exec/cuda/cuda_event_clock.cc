#include "exec/cuda/cuda_event_clock.h"

#include <stdexcept>
#include <utility>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/release_in_destructor.h"
#include "exec/cuda/stream_hold.h"

namespace splitbrain::exec::cuda {

CudaEventClock::CudaEventClock(std::shared_ptr<CudaContext> context, double lead_seconds)
    : context_(std::move(context)), lead_seconds_(lead_seconds) {}

CudaEventClock::~CudaEventClock() {
  for (cudaEvent_t event : events_) release_in_destructor([&] { SB_CUDA_CHECK(cudaEventDestroy(event)); });
}

void CudaEventClock::record() {
  if (recorded_ == events_.size()) {
    cudaEvent_t event = nullptr;
    SB_CUDA_CHECK(cudaEventCreate(&event));
    events_.push_back(event);
  }
  SB_CUDA_CHECK(cudaEventRecord(events_[recorded_], context_->stream()));
  ++recorded_;
}

void CudaEventClock::start() {
  recorded_ = 0;
  hold_stream(context_->stream(), lead_seconds_);
  record();
}

void CudaEventClock::mark() {
  if (recorded_ == 0) throw std::logic_error("CudaEventClock::mark before start");
  record();
}

std::vector<double> CudaEventClock::seconds_since_start() {
  std::vector<double> seconds;
  if (recorded_ < 2) return seconds;
  SB_CUDA_CHECK(cudaEventSynchronize(events_[recorded_ - 1]));
  for (size_t i = 1; i < recorded_; ++i) {
    float milliseconds = 0.0f;
    SB_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, events_[0], events_[i]));
    seconds.push_back(static_cast<double>(milliseconds) * 1e-3);
  }
  return seconds;
}

}  // namespace splitbrain::exec::cuda
