#pragma once
// How a link's bandwidth at each measured message size departs from its fitted line (calibrate's
// per-size factors, sim::Link::bandwidth_factors): the line holds at the ends, but in between a
// wire may stream faster (a token bucket passes a burst at once) or slower (MPI's switch of
// protocol over TCP).

#include <span>

#include "sim/cluster.h"

namespace splitbrain::tools {

// One measured size of a link: its bytes (as the link's factors are keyed), the seconds it took,
// and the two terms of the fitted line at that size, latency and streaming at the line's rate.
struct SizeTiming {
  double buffer_bytes = 0.0;
  double measured_seconds = 0.0;
  double latency_seconds = 0.0;
  double line_streaming_seconds = 0.0;
};

// Per size, the factor f that makes latency + line_streaming / f the measured time (within
// [1e-3, 1e3]). Sizes where latency is most of the time (streaming under a quarter of it) and
// that streamed slower than the line are left out: a shared host's slow spell cannot be told
// from the wire there, and a disturbance only ever slows. Ones that streamed faster are kept
// (a 1 Gb/s token bucket passed 16 KiB in 16 us; the line, steered by slower sizes, said 134).
// `timings` in increasing size; the result keeps their order.
sim::SizeFactors bandwidth_factors(std::span<const SizeTiming> timings);

}  // namespace splitbrain::tools
