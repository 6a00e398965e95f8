#include "tools/calibration/message_overhead_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <vector>

#include "exec/comm/mpi_check.h"
#include "exec/comm/pipeline_message.h"
#include "tools/calibration/calibration_timing.h"
#include "tools/calibration/line_fit.h"

namespace splitbrain::tools {
namespace {

constexpr int kStretches = 16;  // timed stretches per run
constexpr int kPieces = 8;      // a stretch's pieces of work, as the layers of a stage
constexpr int kTag = 7;

// Work on a cache-resident array, as a layer's kernels between two hand-overs: a fixed number
// of passes, the same on both ranks.
class Work {
 public:
  Work() : values_(64 * 1024, 1.0f) {}

  void run(int passes) {
    for (int p = 0; p < passes; ++p) {
      for (float& v : values_) v = v * 0.999f + 0.001f;
    }
    observed_ = values_.back();  // a read the compiler must keep, so it keeps the passes
  }

 private:
  std::vector<float> values_;
  volatile float observed_ = 0.0f;
};

struct CallSeconds {
  std::vector<double> send;     // each send's call
  std::vector<double> receive;  // each receive's call, its message arrived
};

// One timed run over `pair`: kStretches stretches of kPieces pieces of work, each followed by a
// send to the peer, the receive of the message the peer sent a stretch earlier and the wait for
// this rank's previous send; a first, untimed stretch sends the first message.
void run_stretches(MPI_Comm pair, Work& work, int passes_per_piece, std::vector<float>& out, std::vector<float>& in,
                   CallSeconds& calls) {
  int me = 0;
  SB_MPI_CHECK(MPI_Comm_rank(pair, &me));
  const int peer = 1 - me;
  SB_MPI_CHECK(MPI_Barrier(pair));
  std::unique_ptr<exec::comm::PendingCollective> previous;
  for (int s = 0; s <= kStretches; ++s) {
    for (int piece = 0; piece < kPieces; ++piece) {
      work.run(passes_per_piece);
      // As the executor tests its pending sends after each layer, releasing the progress pump.
      if (previous) previous->test();
    }
    const double send_start = host_seconds();
    auto sending = exec::comm::start_message(out, peer, kTag, pair);
    const double receive_start = host_seconds();
    if (s > 0) {
      exec::comm::receive_message(in, peer, kTag, pair);
      calls.receive.push_back(host_seconds() - receive_start);
      calls.send.push_back(receive_start - send_start);
    }
    if (previous) previous->wait();
    previous = std::move(sending);
  }
  exec::comm::receive_message(in, peer, kTag, pair);  // the last message, untimed
  previous->wait();
}

}  // namespace

MessageOverheads measure_message_overheads(MPI_Comm pair, const sim::Link& link, int repeats, bool print) {
  int size = 0;
  SB_MPI_CHECK(MPI_Comm_size(pair, &size));
  if (size != 2) throw std::invalid_argument("measure_message_overheads: the pair must have two ranks");
  Work work;
  // Passes of work per stretch: 1 ms, and at least 4x the largest message's time on the link, so
  // the receive finds its message arrived. The slower rank's pass sets the count for both.
  const double pass_start = host_seconds();
  work.run(8);
  double pass_seconds = (host_seconds() - pass_start) / 8;
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &pass_seconds, 1, MPI_DOUBLE, MPI_MAX, pair));
  const std::vector<double> sizes_bytes{2048, 8192, 32768};
  const double wire_seconds = link.latency_seconds + sizes_bytes.back() / link.bandwidth_at(sizes_bytes.back());
  const int passes_per_piece = static_cast<int>(std::ceil(std::max(1e-3, 4.0 * wire_seconds) / pass_seconds / kPieces));

  std::vector<double> send_seconds;
  std::vector<double> receive_seconds;
  for (const double bytes : sizes_bytes) {
    std::vector<float> out(static_cast<size_t>(bytes) / sizeof(float), 1.0f);
    std::vector<float> in(out.size());
    CallSeconds calls;
    // The first exchange of all sets up the transport (connections, buffers): untimed.
    if (send_seconds.empty()) run_stretches(pair, work, passes_per_piece, out, in, calls);
    calls = {};
    for (int r = 0; r < repeats; ++r) run_stretches(pair, work, passes_per_piece, out, in, calls);
    // The median call (a few take milliseconds: a TCP stall, the scheduler), the pair's slower rank's.
    double slower[2] = {upper_median(calls.send), upper_median(calls.receive)};
    SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, slower, 2, MPI_DOUBLE, MPI_MAX, pair));
    send_seconds.push_back(slower[0]);
    receive_seconds.push_back(slower[1]);
    if (print) {
      std::cout << fmt::format("[calibrate]   message {:>7} B: send's call {:7.1f} us, receive's {:7.1f} us\n",
                               static_cast<int64_t>(bytes), send_seconds.back() * 1e6, receive_seconds.back() * 1e6);
    }
  }
  auto overhead = [&](const std::vector<double>& seconds) {
    const Line line = fit_line(sizes_bytes, seconds);
    // A negative slope or intercept is noise around zero: the per-byte part then averages out.
    if (line.slope <= 0.0) {
      double mean = 0.0;
      for (double s : seconds) mean += s / static_cast<double>(seconds.size());
      return sim::MessageOverhead{mean, 0.0};
    }
    if (line.intercept < 0.0) return sim::MessageOverhead{0.0, upper_median(seconds) / upper_median(sizes_bytes)};
    return sim::MessageOverhead{line.intercept, line.slope};
  };
  return {overhead(send_seconds), overhead(receive_seconds)};
}

}  // namespace splitbrain::tools
