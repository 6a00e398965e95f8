#pragma once
// A kernel that keeps a stream busy for a while and does nothing else: what the host queues
// behind it waits on the GPU, as in a step whose queue runs ahead of the GPU, so a timeline that
// starts after it (cuda_event_clock.h) times the GPU's work without the host's launch delay.

#include <cuda_runtime_api.h>

namespace splitbrain::exec::cuda {

// Queues on `stream` one thread that sleeps until `seconds` have passed on the GPU's clock.
void hold_stream(cudaStream_t stream, double seconds);

}  // namespace splitbrain::exec::cuda
