// `splitbrain calibrate` (under mpirun for the collectives): measures this machine with the
// executor's own kernels and MPI, fits the cost model's rates, and writes a cluster file that
// `plan` and `simulate` read (--cluster FILE).

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <vector>

#include "exec/comm/mpi_check.h"
#include "exec/cpu/conv2d.h"
#include "exec/cpu/cpu_context.h"
#include "exec/cpu/linear.h"
#include "model/errors.h"
#include "model/file_io.h"
#include "sim/cluster_json.h"
#include "sim/cluster_presets.h"
#include "tools/splitbrain/commands.h"
#include "tools/splitbrain/line_fit.h"
#include "tools/splitbrain/mpi_session.h"

namespace splitbrain::tools {
namespace {

using Clock = std::chrono::steady_clock;

struct CalibrateOptions {
  std::string out = "local-cpu-calibrated.json";
  std::string base = "local-cpu";
  int repeats = 5;
};

// Median seconds of `repeats` runs of `work` after one warm-up; every rank runs at once, as in
// training, so the rates include the contention of one rank per core.
template <class Work>
double median_seconds(int repeats, MPI_Comm comm, Work&& work) {
  work();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    SB_MPI_CHECK(MPI_Barrier(comm));
    const auto start = Clock::now();
    work();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Samples {
  std::vector<double> sizes;
  std::vector<double> rates;
};

Samples measure_gemm(exec::cpu::CpuContext& context, int repeats, MPI_Comm comm, bool leader) {
  Samples s;
  for (const auto& [rows, in, out] : std::vector<std::array<int64_t, 3>>{{16, 256, 256}, {64, 512, 512}, {128, 1024, 1024}, {256, 2048, 1024}}) {
    exec::cpu::LinearKernel kernel(context, {rows, in, out, true});
    std::vector<float> x(static_cast<size_t>(rows * in), 0.5f), w(static_cast<size_t>(in * out), 0.01f), b(static_cast<size_t>(out)),
        y(static_cast<size_t>(rows * out));
    const double seconds = median_seconds(repeats, comm, [&] { kernel.forward(x.data(), w.data(), b.data(), y.data()); });
    const double flops = 2.0 * static_cast<double>(rows * in * out);
    s.sizes.push_back(flops);
    s.rates.push_back(flops / seconds);
    if (leader) std::cout << fmt::format("[calibrate] gemm {:>4}x{:>4}x{:>4}  {:8.3f} ms  {:7.2f} GFLOP/s\n", rows, in, out, seconds * 1e3, flops / seconds / 1e9);
  }
  return s;
}

Samples measure_conv(exec::cpu::CpuContext& context, int repeats, MPI_Comm comm, bool leader) {
  Samples s;
  for (const auto& [batch, channels, size] : std::vector<std::array<int64_t, 3>>{{4, 16, 28}, {8, 64, 32}, {16, 128, 16}, {32, 256, 8}}) {
    exec::cpu::Conv2dShape shape;
    shape.batch = batch;
    shape.in_channels = shape.out_channels = channels;
    shape.height = shape.width = size;
    shape.kernel_h = shape.kernel_w = 3;
    shape.pad_top = shape.pad_bottom = shape.pad_left = shape.pad_right = 1;
    exec::cpu::Conv2dKernel kernel(context, shape);
    std::vector<float> x(static_cast<size_t>(batch * channels * size * size), 0.5f), w(static_cast<size_t>(channels * channels * 9), 0.01f),
        b(static_cast<size_t>(channels)), y(x.size());
    const double seconds = median_seconds(repeats, comm, [&] { kernel.forward(x.data(), w.data(), b.data(), y.data()); });
    const double flops = 2.0 * static_cast<double>(batch * channels * size * size * channels * 9);
    s.sizes.push_back(flops);
    s.rates.push_back(flops / seconds);
    if (leader) std::cout << fmt::format("[calibrate] conv3x3 {:>3}x{:>3}ch {:>2}x{:<2}  {:8.3f} ms  {:7.2f} GFLOP/s\n", batch, channels, size, size, seconds * 1e3, flops / seconds / 1e9);
  }
  return s;
}

Samples measure_memory(int repeats, MPI_Comm comm, bool leader) {
  Samples s;
  for (int64_t bytes : {int64_t{1} << 16, int64_t{1} << 20, int64_t{1} << 24, int64_t{1} << 26}) {
    std::vector<char> from(static_cast<size_t>(bytes), 1), to(static_cast<size_t>(bytes));
    const double seconds = median_seconds(repeats, comm, [&] { std::memcpy(to.data(), from.data(), from.size()); });
    const double moved = 2.0 * static_cast<double>(bytes);  // read and write
    s.sizes.push_back(moved);
    s.rates.push_back(moved / seconds);
    if (leader) std::cout << fmt::format("[calibrate] copy {:>10} B  {:7.2f} GB/s\n", bytes, moved / seconds / 1e9);
  }
  return s;
}

// Ring all-reduce over all ranks at sizes 8 B to 32 MB (x4), printed as nccl-tests prints them; the
// fit of t = 2(n-1) alpha + 2(n-1)/n S / bandwidth gives the link.
sim::Link measure_all_reduce(int ranks, int repeats, MPI_Comm comm, bool leader) {
  std::vector<double> x;
  std::vector<double> y;
  if (leader) std::cout << "[calibrate] all_reduce        size(B)     time(us)  algbw(GB/s)  busbw(GB/s)\n";
  for (int64_t bytes = 8; bytes <= (int64_t{64} << 20); bytes *= 4) {
    std::vector<float> buffer(static_cast<size_t>(bytes / 4), 1.0f);
    const double seconds = median_seconds(std::max(repeats, bytes < (1 << 20) ? 20 : repeats), comm, [&] {
      SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(buffer.size()), MPI_FLOAT, MPI_SUM, comm));
    });
    const double algbw = static_cast<double>(bytes) / seconds;
    const double busbw = algbw * 2.0 * (ranks - 1) / ranks;  // nccl-tests' all-reduce factor
    if (leader) std::cout << fmt::format("[calibrate] all_reduce  {:>13}  {:>11.2f}  {:>11.3f}  {:>11.3f}\n", bytes, seconds * 1e6, algbw / 1e9, busbw / 1e9);
    x.push_back(2.0 * (ranks - 1) / ranks * static_cast<double>(bytes));
    y.push_back(seconds);
  }
  // Latency from the smallest message (where it is everything), bandwidth from the slope over
  // the large ones (where latency is nothing): one least-squares line over all sizes lets the
  // largest messages swamp the intercept.
  const size_t large = x.size() - 3;
  const Line line = fit_line(std::span<const double>(x).subspan(large), std::span<const double>(y).subspan(large));
  sim::Link link;
  link.bandwidth_bytes_per_second = line.slope > 0 ? 1.0 / line.slope : 1e9;
  link.latency_seconds = y.front() / (2.0 * (ranks - 1));
  return link;
}

void calibrate(const CalibrateOptions& options) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  int ranks = 1;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  SB_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const bool leader = rank == 0;
  sim::Cluster cluster = sim::resolve_cluster(options.base);
  exec::cpu::CpuContext context(1);
  if (leader) std::cout << fmt::format("[calibrate] {} ranks, one thread each; starting from preset '{}'\n", ranks, options.base);

  const SaturatingRate gemm = [&] { const Samples s = measure_gemm(context, options.repeats, comm, leader); return fit_saturating_rate(s.sizes, s.rates); }();
  const SaturatingRate conv = [&] { const Samples s = measure_conv(context, options.repeats, comm, leader); return fit_saturating_rate(s.sizes, s.rates); }();
  const SaturatingRate memory = [&] { const Samples s = measure_memory(options.repeats, comm, leader); return fit_saturating_rate(s.sizes, s.rates); }();
  const double peak = std::max(gemm.peak, conv.peak);
  cluster.device.peak_fp32_flops_per_second = cluster.device.peak_fp16_flops_per_second =
      cluster.device.peak_bf16_flops_per_second = peak;
  cluster.device.gemm_efficiency = {gemm.peak / peak, gemm.half_size};
  cluster.device.conv_efficiency = {conv.peak / peak, conv.half_size};
  cluster.device.memory_bandwidth_bytes_per_second = memory.peak;
  cluster.device.memory_efficiency = {1.0, memory.half_size};
  if (ranks > 1) {
    cluster.levels.front().link = measure_all_reduce(ranks, options.repeats, comm, leader);
    cluster.levels.front().fan_out = std::max(cluster.levels.front().fan_out, ranks);
  } else if (leader) {
    std::cout << "[calibrate] 1 rank: the link keeps the preset's numbers (run under mpirun -np 2 to measure it)\n";
  }
  if (!leader) return;
  cluster.name = options.base + "-calibrated";
  cluster.description = fmt::format("Measured by `splitbrain calibrate` with {} ranks from preset '{}': gemm peak {:.1f} GFLOP/s "
                                    "(half at {:.3g} FLOP), conv peak {:.1f} GFLOP/s (half at {:.3g} FLOP), copy {:.1f} GB/s, "
                                    "link {:.2f} GB/s and {:.2f} us.",
                                    ranks, options.base, gemm.peak / 1e9, gemm.half_size, conv.peak / 1e9, conv.half_size,
                                    memory.peak / 1e9, cluster.levels.front().link.bandwidth_bytes_per_second / 1e9,
                                    cluster.levels.front().link.latency_seconds * 1e6);
  cluster.sources = {"splitbrain calibrate: oneDNN inner product and 3x3 convolution forward at 4 sizes each, memcpy at 4 sizes, "
                     "MPI_Allreduce from 8 B to 64 MB; rates fitted as peak * size / (size + half); link from t = 2(n-1) alpha + 2(n-1)/n S / B"};
  sim::validate_cluster(cluster, options.out);
  sim::write_cluster_file(cluster, options.out);
  std::cout << fmt::format("[calibrate] {}\n[calibrate] wrote {}\n", cluster.description, options.out);
}

void run_calibrate(const CalibrateOptions& options) {
  MpiSession mpi;
  try {
    calibrate(options);
  } catch (const InputError& e) {
    exec::comm::abort_job(e.what(), 2);
  } catch (const std::exception& e) {
    exec::comm::abort_job(fmt::format("internal error: {}", e.what()), 1);
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* command = app.add_subcommand("calibrate", "Measure this machine (under mpirun for the link) and write a cluster file");
  command->add_option("--out", options->out, "Cluster file to write")->type_name("FILE")->default_val("local-cpu-calibrated.json");
  command->add_option("--base", options->base, "Preset or cluster file whose structure is kept")->type_name("NAME|FILE")->default_val("local-cpu");
  command->add_option("--repeats", options->repeats, "Timed runs per measurement (medians)")->check(CLI::PositiveNumber)->default_val(5);
  command->callback([options] { run_calibrate(*options); });
}

}  // namespace splitbrain::tools
