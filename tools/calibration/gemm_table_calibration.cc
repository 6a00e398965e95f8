#include "tools/calibration/gemm_table_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "exec/cpu/linear.h"
#include "tools/calibration/calibration_timing.h"

namespace splitbrain::tools {
namespace {

constexpr sim::KernelPass kPasses[] = {sim::KernelPass::forward, sim::KernelPass::backward,
                                       sim::KernelPass::weight_gradient};

// The grid spans the zoo's fully connected layers on a CPU rank: rows from one sample (a
// pipeline's micro-batch) to a few hundred, a classifier's 10 outputs to a 4096-wide
// projection, and a tensor-parallel slice's inputs to a VGG classifier's. Shapes beyond it read
// the edge (a GEMM's efficiency levels off there). Four by four by three shapes, three passes
// each: few enough that the table adds a small share to a calibration.
sim::GemmEfficiencyTable grid() {
  sim::GemmEfficiencyTable table;
  table.m = {1, 8, 64, 256};
  table.n = {8, 64, 512, 4096};
  table.k = {64, 512, 4096};
  return table;
}

}  // namespace

double GemmRateTable::fastest() const {
  double fastest = 0.0;
  for (const std::vector<double>& rates : flops_per_second) {
    for (double rate : rates) fastest = std::max(fastest, rate);
  }
  return fastest;
}

sim::GemmEfficiencyTable GemmRateTable::relative_to(double peak_flops_per_second) const {
  sim::GemmEfficiencyTable table = grid;
  for (sim::KernelPass pass : kPasses) {
    for (double rate : flops_per_second[static_cast<size_t>(pass)]) {
      table.of(pass).push_back(std::clamp(rate / peak_flops_per_second, 1e-6, 1.0));
    }
  }
  return table;
}

GemmRateTable measure_gemm_table(exec::cpu::CpuContext& context, int repeats, bool print, MPI_Comm comm) {
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const bool leader = rank == 0 && print;
  const auto start = std::chrono::steady_clock::now();
  GemmRateTable rates;
  rates.grid = grid();
  const sim::GemmEfficiencyTable& g = rates.grid;
  if (leader) {
    std::cout << fmt::format("[calibrate] gemm table: linear kernels at rows {} x in features {} x out features {}\n",
                             fmt::join(g.m, ","), fmt::join(g.k, ","), fmt::join(g.n, ","))
              << std::flush;
  }
  constexpr CoreSharing::Cost kernel_cost = CoreSharing::Cost::cpu_share;
  for (const int64_t rows : g.m) {
    for (const int64_t out : g.n) {
      for (const int64_t in : g.k) {
        exec::cpu::LinearKernel kernel(context, {rows, in, out, true});
        std::vector<float> x(static_cast<size_t>(rows * in), 0.5f), w(static_cast<size_t>(out * in), 0.01f);
        std::vector<float> b(static_cast<size_t>(out), 0.0f), y(static_cast<size_t>(rows * out), 0.0f);
        std::vector<float> dx(x.size(), 0.0f), dw(w.size(), 0.0f), db(b.size(), 0.0f);
        const double flops = 2.0 * static_cast<double>(rows) * static_cast<double>(out) * static_cast<double>(in);
        // The passes as training runs them: the weight gradient accumulates into the step's.
        const double seconds[] = {
            median_seconds(
                repeats, comm, [&] { kernel.forward(x.data(), w.data(), b.data(), y.data()); }, kernel_cost),
            median_seconds(
                repeats, comm, [&] { kernel.backward_data(y.data(), w.data(), dx.data()); }, kernel_cost),
            median_seconds(
                repeats, comm, [&] { kernel.accumulate_weight_gradients(x.data(), y.data(), dw.data(), db.data()); },
                kernel_cost)};
        for (sim::KernelPass pass : kPasses) {
          rates.flops_per_second[static_cast<size_t>(pass)].push_back(flops / seconds[static_cast<size_t>(pass)]);
        }
        if (leader) {
          std::cout
              << fmt::format(
                     "[calibrate] linear {:>3}x{:>4}->{:>4}  fwd {:8.3f} ms {:6.2f}  bwd data {:8.3f} ms {:6.2f}  "
                     "bwd weights {:8.3f} ms {:6.2f} GFLOP/s\n",
                     rows, in, out, seconds[0] * 1e3, flops / seconds[0] / 1e9, seconds[1] * 1e3,
                     flops / seconds[1] / 1e9, seconds[2] * 1e3, flops / seconds[2] / 1e9)
              << std::flush;
        }
      }
    }
  }
  if (leader) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << fmt::format("[calibrate] gemm table: {} shapes in {:.1f} s\n", g.m.size() * g.n.size() * g.k.size(),
                             elapsed);
  }
  return rates;
}

}  // namespace splitbrain::tools
