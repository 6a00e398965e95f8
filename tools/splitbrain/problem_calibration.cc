#include "tools/splitbrain/problem_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "exec/cpu/conv2d.h"
#include "exec/cpu/cpu_context.h"
#include "exec/cpu/dropout.h"
#include "exec/cpu/eltwise.h"
#include "exec/cpu/linear.h"
#include "exec/cpu/pooling.h"
#include "exec/comm/mpi_check.h"
#include "tools/splitbrain/calibration_timing.h"

namespace splitbrain::tools {
namespace {

exec::kernels::Conv2dShape kernel_shape(const sim::ConvProblem& p) {
  exec::kernels::Conv2dShape shape;
  shape.batch = p.batch;
  shape.in_channels = p.in_channels;
  shape.height = p.height;
  shape.width = p.width;
  shape.out_channels = p.out_channels;
  shape.kernel_h = p.kernel_h;
  shape.kernel_w = p.kernel_w;
  shape.stride_h = p.stride_h;
  shape.stride_w = p.stride_w;
  shape.pad_top = p.pad_top;
  shape.pad_bottom = p.pad_bottom;
  shape.pad_left = p.pad_left;
  shape.pad_right = p.pad_right;
  shape.dilation_h = p.dilation_h;
  shape.dilation_w = p.dilation_w;
  shape.groups = p.groups;
  shape.bias = p.bias;
  return shape;
}

std::vector<float> filled(int64_t elements, float value) {
  return std::vector<float>(static_cast<size_t>(elements), value);
}

// Waits for a non-blocking collective without spinning: a rank that sits out a measurement must
// leave its core (and, with SMT, its sibling's execution units) to the busy ones, as an idle core
// does when fewer ranks train.
void wait_asleep(MPI_Request& request) {
  int done = 0;
  while (true) {
    SB_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done != 0) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// One run of `work` after a warm-up on the first `busy_ranks` ranks at once, the slowest busy
// rank's; the other ranks sleep. With the caches `swept`, they are swept before the run and
// then `refresh` rewrites the inputs the layer before would just have written (its output, or the
// gradient from the layer after): in a step larger than the cache those arrive in it, the
// weights and saved tensors from long ago do not. Warm, every byte the kernel reads is cached,
// as in a step that fits the cache.
template <class Refresh, class Work>
double slowest_seconds_on(int busy_ranks, sim::CacheState caches, MPI_Comm comm, Refresh&& refresh, Work&& work) {
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const bool busy = rank < busy_ranks;
  if (busy) {
    work();  // warm-up: page faults, JIT compilation
    if (caches == sim::CacheState::swept) evict_caches();
    refresh();
  }
  MPI_Request barrier = MPI_REQUEST_NULL;
  SB_MPI_CHECK(MPI_Ibarrier(comm, &barrier));
  wait_asleep(barrier);
  const auto start = std::chrono::steady_clock::now();
  if (busy) work();
  double slowest = busy ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() : 0.0;
  MPI_Request request = MPI_REQUEST_NULL;
  SB_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm, &request));
  wait_asleep(request);
  return slowest;
}

void rewrite(std::vector<float>& values) { std::fill(values.begin(), values.end(), 0.25f); }

// Each problem kind timed forward, input gradient and (with weights) weight gradient, as the
// executor's op calls its kernel.
class ProblemTimer {
 public:
  ProblemTimer(exec::cpu::CpuContext& context, int busy_ranks, sim::CacheState caches, MPI_Comm comm)
      : context_(context), busy_(busy_ranks), caches_(caches), comm_(comm) {}

  sim::Device::MeasuredKernel operator()(const sim::ConvProblem& problem) {
    const exec::kernels::Conv2dShape shape = kernel_shape(problem);
    exec::cpu::Conv2dKernel kernel(context_, shape);
    std::vector<float> x = filled(shape.batch * shape.in_channels * shape.height * shape.width, 0.5f);
    std::vector<float> w =
        filled(shape.out_channels * (shape.in_channels / shape.groups) * shape.kernel_h * shape.kernel_w, 0.01f);
    std::vector<float> b = filled(shape.out_channels, 0.1f);
    std::vector<float> y = filled(shape.batch * shape.out_channels * shape.out_height() * shape.out_width(), 0.0f);
    std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
    float* bias = shape.bias ? b.data() : nullptr;
    float* bias_grad = shape.bias ? db.data() : nullptr;
    sim::Device::MeasuredKernel seconds;
    seconds.forward_seconds = time([&] { rewrite(x); }, [&] { kernel.forward(x.data(), w.data(), bias, y.data()); });
    seconds.backward_input_seconds =
        time([&] { rewrite(y); }, [&] { kernel.backward_data(y.data(), w.data(), dx.data()); });
    seconds.backward_weight_seconds =
        time([&] { rewrite(y); }, [&] { kernel.backward_weights(x.data(), y.data(), dw.data(), bias_grad); });
    return seconds;
  }

  sim::Device::MeasuredKernel operator()(const sim::PoolProblem& problem) {
    exec::kernels::Pool2dShape shape;
    shape.batch = problem.batch;
    shape.channels = problem.channels;
    shape.height = problem.height;
    shape.width = problem.width;
    shape.kernel_h = problem.kernel_h;
    shape.kernel_w = problem.kernel_w;
    shape.stride_h = problem.stride_h;
    shape.stride_w = problem.stride_w;
    shape.pad_top = shape.pad_bottom = problem.pad_h;
    shape.pad_left = shape.pad_right = problem.pad_w;
    shape.ceil_mode = problem.ceil_mode;
    exec::cpu::Pool2dKernel kernel(
        context_, problem.max ? exec::kernels::PoolKind::max : exec::kernels::PoolKind::average, shape);
    std::vector<float> x = filled(shape.batch * shape.channels * shape.height * shape.width, 0.5f);
    std::vector<float> y = filled(shape.batch * shape.channels * shape.out_height() * shape.out_width(), 0.0f);
    std::vector<float> dx(x.size());
    std::vector<std::byte> workspace(kernel.workspace_bytes());
    sim::Device::MeasuredKernel seconds;
    seconds.forward_seconds = time([&] { rewrite(x); }, [&] { kernel.forward(x.data(), y.data(), workspace.data()); });
    seconds.backward_input_seconds =
        time([&] { rewrite(y); }, [&] { kernel.backward(y.data(), workspace.data(), dx.data()); });
    return seconds;
  }

  sim::Device::MeasuredKernel operator()(const sim::ActivationProblem& problem) {
    if (problem.kind == model::OpKind::dropout) return dropout(problem);
    const auto kind =
        problem.kind == model::OpKind::gelu ? exec::kernels::Activation::gelu_tanh : exec::kernels::Activation::relu;
    exec::cpu::ActivationKernel kernel(context_, kind, problem.elements);
    std::vector<float> x = filled(problem.elements, 0.5f), y(x.size()), dy = filled(problem.elements, 0.1f),
                       dx(x.size());
    sim::Device::MeasuredKernel seconds;
    seconds.forward_seconds = time([&] { rewrite(x); }, [&] { kernel.forward(x.data(), y.data()); });
    seconds.backward_input_seconds =
        time([&] { rewrite(dy); }, [&] { kernel.backward(y.data(), dy.data(), dx.data()); });
    return seconds;
  }

  // The weight gradient as training's backward runs it: accumulated into the step's gradient.
  sim::Device::MeasuredKernel operator()(const sim::LinearProblem& problem) {
    exec::cpu::LinearKernel kernel(context_, {problem.rows, problem.in_features, problem.out_features, problem.bias});
    std::vector<float> x = filled(problem.rows * problem.in_features, 0.5f),
                       w = filled(problem.out_features * problem.in_features, 0.01f);
    std::vector<float> b = filled(problem.out_features, 0.1f), y = filled(problem.rows * problem.out_features, 0.0f);
    std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
    float* bias = problem.bias ? b.data() : nullptr;
    float* bias_grad = problem.bias ? db.data() : nullptr;
    sim::Device::MeasuredKernel seconds;
    seconds.forward_seconds = time([&] { rewrite(x); }, [&] { kernel.forward(x.data(), w.data(), bias, y.data()); });
    seconds.backward_input_seconds =
        time([&] { rewrite(y); }, [&] { kernel.backward_data(y.data(), w.data(), dx.data()); });
    seconds.backward_weight_seconds = time(
        [&] { rewrite(y); }, [&] { kernel.accumulate_weight_gradients(x.data(), y.data(), dw.data(), bias_grad); });
    return seconds;
  }

 private:
  sim::Device::MeasuredKernel dropout(const sim::ActivationProblem& problem) {
    exec::cpu::DropoutKernel kernel(problem.drop_probability);
    const exec::kernels::DropoutBlock block{{problem.elements}, {0}, {problem.elements}};
    std::vector<float> x = filled(problem.elements, 0.5f), y(x.size()), dy = filled(problem.elements, 0.1f),
                       dx(x.size());
    std::vector<uint8_t> mask(x.size());
    const exec::kernels::DropoutKey key{1, 1, 1};
    sim::Device::MeasuredKernel seconds;
    seconds.forward_seconds =
        time([&] { rewrite(x); }, [&] { kernel.forward(key, block, x.data(), y.data(), mask.data()); });
    seconds.backward_input_seconds =
        time([&] { rewrite(dy); }, [&] { kernel.backward(problem.elements, mask.data(), dy.data(), dx.data()); });
    return seconds;
  }

  template <class Refresh, class Work>
  double time(Refresh&& refresh, Work&& work) {
    return slowest_seconds_on(busy_, caches_, comm_, refresh, work);
  }

  exec::cpu::CpuContext& context_;
  int busy_;
  sim::CacheState caches_;
  MPI_Comm comm_;
};

// The largest cache of this rank's first CPU as Linux describes it (sysfs), in bytes; 0 where it
// does not. Not sysconf's: in a virtual machine that reports the host socket's whole L3 (256 MB
// where the guest's CPUs share one 32 MB slice of it).
double last_level_cache_bytes() {
  double largest = 0.0;
  for (int index = 0; index < 16; ++index) {
    std::ifstream size_file(fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/size", index));
    std::string size;
    if (!(size_file >> size)) break;
    double bytes = std::strtod(size.c_str(), nullptr);
    if (size.ends_with('K')) bytes *= 1024.0;
    if (size.ends_with('M')) bytes *= 1024.0 * 1024.0;
    largest = std::max(largest, bytes);
  }
  return largest;
}

}  // namespace

// A shared host's slow spells last longer than one problem's runs (seen: a 2x2 convolution's
// weight gradient timed at 14 ms in one calibration, 36 ms in the next and 24 ms in training),
// so a problem's runs are spread over the whole measurement: `repeats` passes over the list, one
// run per problem and cache state in each, and the median over the passes.
void measure_kernel_problems(const std::vector<PlannedProblem>& problems, int repeats, bool print, MPI_Comm comm,
                             sim::Device& device) {
  exec::cpu::CpuContext context;
  const sim::CacheState states[] = {sim::CacheState::swept, sim::CacheState::warm};
  // Per problem and cache state, per pass: forward, input gradient, weight gradient seconds.
  std::vector<std::array<std::vector<sim::Device::MeasuredKernel>, 2>> runs(problems.size());
  for (int pass = 0; pass < repeats; ++pass) {
    if (print) {
      std::cout << fmt::format("[calibrate] kernel problems: pass {}/{} over {} problems, swept and warm\n", pass + 1,
                               repeats, problems.size())
                << std::flush;
    }
    for (size_t i = 0; i < problems.size(); ++i) {
      for (size_t s = 0; s < 2; ++s) {
        ProblemTimer timer(context, problems[i].busy_ranks, states[s], comm);
        runs[i][s].push_back(std::visit(timer, problems[i].problem));
      }
    }
  }
  for (size_t i = 0; i < problems.size(); ++i) {
    for (size_t s = 0; s < 2; ++s) {
      const auto median_of = [&](double sim::Device::MeasuredKernel::*pass_seconds) {
        std::vector<double> values;
        for (const sim::Device::MeasuredKernel& run : runs[i][s]) values.push_back(run.*pass_seconds);
        return upper_median(values);
      };
      const sim::Device::MeasuredKernel seconds{median_of(&sim::Device::MeasuredKernel::forward_seconds),
                                                median_of(&sim::Device::MeasuredKernel::backward_input_seconds),
                                                median_of(&sim::Device::MeasuredKernel::backward_weight_seconds)};
      const std::string key = sim::kernel_key(problems[i].problem, problems[i].busy_ranks, states[s]);
      if (print) {
        std::cout << fmt::format(
                         "[calibrate] {:>3}/{} {:<78} fwd {:8.3f} ms  bwd-data {:8.3f} ms  bwd-weights {:8.3f} ms\n",
                         i + 1, problems.size(), key, seconds.forward_seconds * 1e3,
                         seconds.backward_input_seconds * 1e3, seconds.backward_weight_seconds * 1e3)
                  << std::flush;
      }
      device.measured_kernels[key] = seconds;
    }
  }
  device.last_level_cache_bytes = last_level_cache_bytes();
}

}  // namespace splitbrain::tools
