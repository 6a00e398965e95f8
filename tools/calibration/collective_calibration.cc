#include "tools/calibration/collective_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <vector>

#include "exec/comm/collective_algorithms.h"
#include "exec/comm/progress_pump.h"
#include "exec/cpu/conv2d.h"
#include "exec/cpu/cpu_context.h"
#include "sim/collective_cost.h"
#include "tools/calibration/calibration_timing.h"
#include "tools/calibration/line_fit.h"
#include "tools/calibration/link_size_factors.h"

namespace splitbrain::tools {
namespace {

using plans::CollectiveKind;

constexpr CollectiveKind kMeasuredKinds[] = {CollectiveKind::all_reduce, CollectiveKind::all_gather,
                                             CollectiveKind::reduce_scatter, CollectiveKind::all_to_all,
                                             CollectiveKind::send_recv};

// nccl-tests' bus bandwidth factor: what each rank's link carries relative to the buffer.
double bus_factor(CollectiveKind kind, int n) {
  switch (kind) {
    case CollectiveKind::all_reduce:
      return 2.0 * (n - 1) / n;
    case CollectiveKind::send_recv:
      return 1.0;
    default:
      return static_cast<double>(n - 1) / n;
  }
}

// Ranks leave a barrier up to one link latency apart (its last message is still on the wire to
// some), and a timed run starts at each rank's exit, so one call timed alone carries that skew:
// over 2 emulated nodes 0.1 ms apart, a one-way 16 KiB send timed alone took about 1.5x what the
// pipeline's runs move it in. As OSU's and nccl-tests' loops do, several calls after one barrier
// share it: as many as keep a run's bytes within 256 KiB (at most 8), one where the bytes alone
// dwarf the skew.
int calls_per_timed_run(int64_t bytes) {
  constexpr int64_t kRunBytes = int64_t{256} << 10;
  return static_cast<int>(std::clamp<int64_t>(kRunBytes / std::max<int64_t>(bytes, 1), 1, 8));
}

// Whether some ranks of `comm` time-share cores. Those wait for each other's turn at every
// collective of a step too: their start skew is part of the cost, not the timing's, so one call
// is timed per barrier (for 2 ranks on one core, loops of 8 calls fitted an all-reduce latency of
// 7 us against 33 us one call at a time, and predicted a SplitBrain plan whose layers wait on
// such collectives 43% fast). Collective over `comm`.
bool ranks_take_turns(MPI_Comm comm) {
  int shared = CoreSharing(comm).shares_cores() ? 1 : 0;
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_MAX, comm));
  return shared != 0;
}

// Times one kind over sizes 8 B .. 64 MiB and fits t = alpha * A(n) + B(n, S) / bandwidth, where
// A and B are the simulator's latency and bandwidth terms for the kind's algorithm: latency from
// the smallest message (where it is everything), bandwidth from the slope over the three largest
// (where latency is nothing); one least-squares line over all sizes lets the large ones swamp it.
sim::Link measure_kind(CollectiveKind kind, sim::Algorithm algorithm, const CollectiveCalibration& options,
                       CollectiveTransport& transport, MPI_Comm comm, int n, int me) {
  const bool print = me == 0 && options.print;
  auto seconds_of = [&](double latency, double bandwidth, double bytes) {
    if (kind == CollectiveKind::send_recv) return latency + bytes / bandwidth;
    return sim::flat_collective_seconds(kind, algorithm, n, bytes, sim::Link{bandwidth, latency});
  };
  if (print) {
    std::cout << fmt::format("[calibrate] {:<14} {:>12} {:>11} {:>11} {:>11}\n", plans::collective_name(kind),
                             "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)");
  }
  // Every power of 4, and of 2 from 8 KiB to 2 MiB: the messages of a small model's layers
  // (activations, tensor-parallel partial sums), where a link's rate turns from latency to
  // bandwidth and, over TCP, moves unevenly (on one emulated link 4x the bytes, 32 to 128 KiB,
  // took 7x the time); a size between two measured ones is read off their factors.
  std::vector<int64_t> sizes;
  for (int64_t bytes = 8; bytes <= (int64_t{32} << 20);) {
    sizes.push_back(bytes);
    bytes *= bytes >= (int64_t{8} << 10) && bytes < (int64_t{2} << 20) ? 2 : 4;
  }
  sizes.push_back(int64_t{64} << 20);
  const bool take_turns = ranks_take_turns(comm);
  std::vector<double> bandwidth_terms;
  std::vector<double> times;
  std::vector<double> sizes_used;
  auto measure = [&](int64_t bytes) {
    const int repeats = bytes < (int64_t{1} << 20) ? std::max(options.repeats, 20) : options.repeats;
    const int calls = take_turns ? 1 : calls_per_timed_run(bytes);
    // A send/recv is timed as round trips, A to B and back, each leg one message one way.
    const int legs = !take_turns && kind == CollectiveKind::send_recv ? 2 : 1;
    const TimedCalls run = transport.prepare(kind, comm, bytes, legs == 2);
    const double seconds = median_seconds(repeats, comm, [&] { run(calls); }) / (calls * legs);
    const double algbw = static_cast<double>(bytes) / seconds;
    if (print) {
      std::cout << fmt::format("[calibrate] {:<14} {:>12} {:>11.2f} {:>11.3f} {:>11.3f}\n", "", bytes, seconds * 1e6,
                               algbw / 1e9, algbw * bus_factor(kind, n) / 1e9);
    }
    return seconds;
  };
  for (int64_t size : sizes) {
    // Every rank's piece a whole number of floats.
    const int64_t bytes = std::max<int64_t>(4 * n, size / (4 * n) * (4 * n));
    sizes_used.push_back(static_cast<double>(bytes));
    bandwidth_terms.push_back(seconds_of(0.0, 1.0, static_cast<double>(bytes)));
    times.push_back(measure(bytes));
  }
  const size_t large = bandwidth_terms.size() - 3;
  auto fit_large = [&] {
    return fit_line(std::span<const double>(bandwidth_terms).subspan(large),
                    std::span<const double>(times).subspan(large));
  };
  Line line = fit_large();
  // Large sizes stream at one rate, so their times lie on a line; one that lies off it by more than
  // half was slowed by the shared host (seen in CI: an all-gather line that missed its own 64 MiB
  // time by 2.5x). Such sizes are measured again, keeping each size's faster median: a
  // disturbance only ever slows. Every rank sees the same times (the slowest rank's), so all take
  // the same branch.
  for (int retry = 0; retry < 2; ++retry) {
    double worst_ratio = 1.0;
    for (size_t i = large; i < times.size(); ++i) {
      const double on_line = line.intercept + line.slope * bandwidth_terms[i];
      const double ratio = on_line > 0 ? times[i] / on_line : std::numeric_limits<double>::infinity();
      worst_ratio = std::max({worst_ratio, ratio, 1.0 / ratio});
    }
    if (worst_ratio <= 1.5) break;
    if (print) {
      std::cout << fmt::format("[calibrate] {:<14} large sizes {:.1f}x off their line: measuring them again\n",
                               plans::collective_name(kind), worst_ratio);
    }
    for (size_t i = large; i < times.size(); ++i) {
      times[i] = std::min(times[i], measure(static_cast<int64_t>(sizes_used[i])));
    }
    line = fit_large();
  }
  sim::Link link;
  link.bandwidth_bytes_per_second = line.slope > 0 ? 1.0 / line.slope : bandwidth_terms.back() / times.back();
  const double latency_terms = seconds_of(1.0, std::numeric_limits<double>::max(), 8.0);
  // No size can take less than the latency, so the fastest of all sizes bounds it: a spell of the
  // shared host that slows the smallest size alone (seen: 764 us at 8 B, 16 us at 32 B over
  // shared memory) cannot make every short message on that link cost as much.
  const double fastest = *std::min_element(times.begin(), times.end());
  link.latency_seconds = latency_terms > 0 ? fastest / latency_terms : 0.0;
  std::vector<SizeTiming> timings;
  for (size_t i = 0; i < sizes.size(); ++i) {
    timings.push_back({sizes_used[i], times[i],
                       seconds_of(link.latency_seconds, std::numeric_limits<double>::max(), sizes_used[i]),
                       bandwidth_terms[i] / link.bandwidth_bytes_per_second});
  }
  link.bandwidth_factors = bandwidth_factors(timings);
  if (print) {
    std::cout << fmt::format("[calibrate] {:<14} fitted: {:.3f} GB/s, {:.2f} us latency\n",
                             plans::collective_name(kind), link.bandwidth_bytes_per_second / 1e9,
                             link.latency_seconds * 1e6);
  }
  return link;
}

}  // namespace

// How much of an all-reduce issued during compute (as the runtime overlaps gradient buckets:
// MPI_Iallreduce, the progress pump while it is in flight, MPI_Test between layers) is hidden: (T_compute + T_reduce -
// T_both) / min(T_compute, T_reduce), in [-1, 1] (below 0: the two together take longer than in turn).
double measure_overlap(const CollectiveCalibration& options, MPI_Comm comm, bool print) {
  exec::cpu::CpuContext context(1);
  exec::kernels::Conv2dShape shape;
  shape.batch = 16;
  shape.in_channels = shape.out_channels = 64;
  shape.height = shape.width = 16;
  shape.kernel_h = shape.kernel_w = 3;
  shape.pad_top = shape.pad_bottom = shape.pad_left = shape.pad_right = 1;
  exec::cpu::Conv2dKernel conv(context, shape);
  std::vector<float> x(static_cast<size_t>(16 * 64 * 16 * 16), 0.5f), w(static_cast<size_t>(64 * 64 * 9), 0.01f), b(64),
      y(x.size());
  std::vector<float> gradients(size_t{4} << 20, 1.0f);  // 16 MiB
  MPI_Request request = MPI_REQUEST_NULL;
  // The runtime's way: the process's progress pump runs from the start to the end of the reduction.
  exec::comm::ProgressHold progress;
  auto start_reduce = [&] {
    progress = exec::comm::keep_mpi_progressing();
    exec::comm::start_float_sum_all_reduce(MPI_IN_PLACE, gradients.data(), static_cast<int>(gradients.size()), comm,
                                           &request);
  };
  auto finish_reduce = [&] {
    SB_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    progress = {};
  };
  const double reduce = median_seconds(options.repeats, comm, [&] {
    start_reduce();
    finish_reduce();
  });
  const double layer =
      median_seconds(options.repeats, comm, [&] { conv.forward(x.data(), w.data(), b.data(), y.data()); });
  // About as much compute as communication, in layer-sized pieces.
  const int layers = std::max(1, static_cast<int>(reduce / layer + 0.5));
  auto compute = [&](bool nudge) {
    for (int i = 0; i < layers; ++i) {
      conv.forward(x.data(), w.data(), b.data(), y.data());
      int done = 0;
      if (nudge) SB_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    }
  };
  const double alone = median_seconds(options.repeats, comm, [&] { compute(false); });
  const double both = median_seconds(options.repeats, comm, [&] {
    start_reduce();
    compute(true);
    finish_reduce();
  });
  const double hidden = (alone + reduce - both) / std::min(alone, reduce);
  const double overlap = std::clamp(hidden, -1.0, 1.0);
  if (print) {
    std::cout << fmt::format(
        "[calibrate] overlap: 16 MiB all-reduce {:.2f} ms, compute {:.2f} ms, both {:.2f} ms -> {:+.2f} (the host "
        "pays {:.2f}x an overlapped reduction's time)\n",
        reduce * 1e3, alone * 1e3, both * 1e3, overlap, 1.0 - overlap);
  }
  return overlap;
}

MeasuredCommunication calibrate_collectives(const CollectiveCalibration& options, MPI_Comm comm,
                                            const sim::Cluster& cluster) {
  int me = 0;
  int n = 1;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &me));
  SB_MPI_CHECK(MPI_Comm_size(comm, &n));
  CollectiveTransport& transport = options.transport != nullptr ? *options.transport : mpi_collective_transport();
  MeasuredCommunication measured;
  for (CollectiveKind kind : kMeasuredKinds) {
    const sim::Algorithm algorithm =
        kind == CollectiveKind::send_recv ? sim::Algorithm::ring : cluster.algorithms.for_kind(kind);
    measured.links[kind] = measure_kind(kind, algorithm, options, transport, comm, n, me);
  }
  measured.all_reduce_link = measured.links.at(CollectiveKind::all_reduce);
  return measured;
}

}  // namespace splitbrain::tools
