#include "tools/splitbrain/gemm_table_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <vector>

#include "exec/cpu/cpu_context.h"
#include "exec/cpu/linear.h"
#include "tools/splitbrain/calibration_timing.h"

namespace splitbrain::tools {
namespace {

// The grid spans the zoo's fully connected layers on a CPU rank: rows from one sample (a
// pipeline's micro-batch) to a few hundred, a classifier's 10 outputs to a 4096-wide
// projection, and a tensor-parallel slice's inputs to a VGG classifier's. Shapes beyond it read
// the edge (a GEMM's efficiency levels off there). Four by four by three shapes, three passes
// each: about 20 s on one core.
sim::GemmEfficiencyTable empty_grid() {
  sim::GemmEfficiencyTable table;
  table.m = {1, 8, 64, 256};
  table.n = {8, 64, 512, 4096};
  table.k = {64, 512, 4096};
  return table;
}

}  // namespace

void calibrate_gemm_table(int repeats, bool print, MPI_Comm comm, sim::Device& device) {
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const bool leader = rank == 0 && print;
  sim::GemmEfficiencyTable table = empty_grid();
  for (std::vector<double>& values : table.efficiency) values.assign(table.m.size() * table.n.size() * table.k.size(), 0.0);
  if (leader) {
    std::cout << fmt::format("[calibrate] gemm table: linear kernels at rows {} x out features {} x in features {}\n",
                             fmt::join(table.m, ","), fmt::join(table.n, ","), fmt::join(table.k, ","))
              << std::flush;
  }
  const double peak = device.peak_fp32_flops_per_second;
  exec::cpu::CpuContext context(1);
  for (size_t i = 0; i < table.m.size(); ++i) {
    for (size_t j = 0; j < table.n.size(); ++j) {
      for (size_t l = 0; l < table.k.size(); ++l) {
        const int64_t rows = table.m[i], out = table.n[j], in = table.k[l];
        exec::cpu::LinearKernel kernel(context, {rows, in, out, true});
        std::vector<float> x(static_cast<size_t>(rows * in), 0.5f), w(static_cast<size_t>(out * in), 0.01f);
        std::vector<float> b(static_cast<size_t>(out), 0.0f), y(static_cast<size_t>(rows * out), 0.0f);
        std::vector<float> dx(x.size(), 0.0f), dw(w.size(), 0.0f), db(b.size(), 0.0f);
        const double flops = 2.0 * static_cast<double>(rows) * static_cast<double>(out) * static_cast<double>(in);
        // The passes training runs: the weight gradient accumulates into the step's gradient.
        const double seconds[] = {
            median_seconds(repeats, comm, [&] { kernel.forward(x.data(), w.data(), b.data(), y.data()); }),
            median_seconds(repeats, comm, [&] { kernel.backward_data(y.data(), w.data(), dx.data()); }),
            median_seconds(repeats, comm, [&] { kernel.accumulate_weight_gradients(x.data(), y.data(), dw.data(), db.data()); })};
        const size_t at = table.index(i, j, l);
        for (sim::KernelPass pass : {sim::KernelPass::forward, sim::KernelPass::backward, sim::KernelPass::weight_gradient}) {
          // A shape may beat the curves' fitted peak a little; the table holds fractions of it.
          table.of(pass)[at] = std::clamp(flops / seconds[static_cast<size_t>(pass)] / peak, 1e-6, 1.0);
        }
        if (leader) {
          std::cout << fmt::format("[calibrate] linear {:>3}x{:>4}->{:>4}  fwd {:8.3f} ms {:5.1f}%  bwd data {:8.3f} ms {:5.1f}%  "
                                   "bwd weights {:8.3f} ms {:5.1f}%\n",
                                   rows, in, out, seconds[0] * 1e3, table.of(sim::KernelPass::forward)[at] * 100, seconds[1] * 1e3,
                                   table.of(sim::KernelPass::backward)[at] * 100, seconds[2] * 1e3,
                                   table.of(sim::KernelPass::weight_gradient)[at] * 100)
                    << std::flush;
        }
      }
    }
  }
  device.gemm_table = std::move(table);
}

}  // namespace splitbrain::tools
