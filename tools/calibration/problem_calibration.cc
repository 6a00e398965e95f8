#include "tools/calibration/problem_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <thread>

#include "exec/comm/mpi_check.h"
#include "tools/calibration/calibration_timing.h"

namespace splitbrain::tools {
namespace {

// How long a rank that sits out a timed run naps before polling for its end: longer than the
// kernels where a core-mate's wake-ups would matter (tens of microseconds), short against a
// calibration's thousands of runs.
constexpr double kSitOutNapSeconds = 2e-3;

// One timed run: the device's seconds, and the host's to queue it where the host runs ahead of the
// device (else 0: the host's time is the device's).
struct RunSeconds {
  double device = 0.0;
  double host = 0.0;
};

// One run of `work` after a warm-up on the first `busy_ranks` ranks at once, this rank's time (0
// for a rank that sat out); the other ranks sleep, and all leave together. With the caches
// `swept`, they are swept before the run and then `refresh` rewrites the inputs the layer before
// would just have written (its output, or the gradient from the layer after): in a step larger
// than the cache those arrive in it, the weights and saved tensors from long ago do not. Warm, every byte the kernel
// reads is cached, as in a step that fits the cache. `sharing`: the ranks this one shares cores with when the kernels
// compute on the host; nullptr for a GPU's kernels, which do not share the host's cores. A call
// on a GPU that outlasts half the clock's `lead_seconds` waited for the device inside (the loss
// reads its sum): its host seconds are 0, as no queuing can be told apart from the wait.
template <class Refresh, class Work>
RunSeconds rank_seconds_on(int busy_ranks, const CoreSharing* sharing, sim::CacheState caches, MPI_Comm comm,
                           const std::function<void()>& sweep, exec::StepClock& clock, double lead_seconds,
                           Refresh&& refresh, Work&& work) {
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const bool busy = rank < busy_ranks;
  if (busy) {
    work();  // warm-up: page faults, JIT compilation
    // Behind a queue (a GPU), a kernel records its calls' CUDA graph at their second call with
    // the same arrays (exec/cuda/call_graphs.h): the timed call is a replay, as in a run's step.
    if (lead_seconds > 0.0) work();
    if (caches == sim::CacheState::swept) sweep();
    refresh();
  }
  MPI_Request barrier = MPI_REQUEST_NULL;
  SB_MPI_CHECK(MPI_Ibarrier(comm, &barrier));
  wait_asleep(barrier);
  double seconds = 0.0;
  double host_seconds = 0.0;
  double cpu_seconds = 0.0;
  if (busy) {
    const double start_cpu = thread_cpu_seconds();
    clock.start();
    // The host's part as a step's instruction pays it: the calls, then the clock's mark.
    const auto queuing = std::chrono::steady_clock::now();
    work();
    clock.mark();
    if (clock.host_runs_ahead()) {
      host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - queuing).count();
      // A call that outlasts half the lead waited for the device inside: no queuing of its own.
      if (host_seconds >= 0.5 * lead_seconds) host_seconds = 0.0;
    }
    seconds = clock.seconds_since_start().at(0);
    cpu_seconds = thread_cpu_seconds() - start_cpu;
  } else if (sharing != nullptr) {
    // A rank that sits out naps before it polls for the others' end (wait_asleep, every 200 us):
    // each poll wakes it on its core, and a busy core-mate's short kernel loses its caches to it
    // (the tiny GPT's 10-100 us problems timed warm beside a polling core-mate read a median
    // 1.5x their time on a core of their own, and its plans on 2 ranks per core 15-40% slow).
    std::this_thread::sleep_for(std::chrono::duration<double>(kSitOutNapSeconds));
  }
  if (sharing != nullptr) seconds = sharing->cpu_share(seconds, cpu_seconds);  // a sleeping rank adds none
  MPI_Request request = MPI_REQUEST_NULL;
  SB_MPI_CHECK(MPI_Ibarrier(comm, &request));
  wait_asleep(request);
  return {seconds, host_seconds};
}

// Each problem kind timed forward, input gradient and (with weights) weight gradient, as the
// executor's op calls its kernel. The kernels are the backend's, on its memory (kept buffers,
// filled by its array kernel), timed by the backend's clock (BackendKernels::clock), as a step's
// instructions are.
class ProblemTimer {
 public:
  ProblemTimer(BackendKernels& kernels, int busy_ranks, sim::CacheState caches, MPI_Comm comm,
               const CoreSharing* sharing)
      : kernels_(kernels),
        array_(kernels.factory->make_array_kernel()),
        busy_(busy_ranks),
        caches_(caches),
        comm_(comm),
        sharing_(sharing) {}

  // The problem's passes timed, with the host's seconds to queue each.
  sim::Device::MeasuredKernel measure(const sim::KernelProblem& problem) {
    host_seconds_.clear();
    sim::Device::MeasuredKernel seconds = std::visit(*this, problem);
    double sim::Device::MeasuredKernel::*const host_of_call[] = {
        &sim::Device::MeasuredKernel::forward_host_seconds, &sim::Device::MeasuredKernel::backward_input_host_seconds,
        &sim::Device::MeasuredKernel::backward_weight_host_seconds};
    for (size_t call = 0; call < host_seconds_.size() && call < 3; ++call)
      seconds.*host_of_call[call] = host_seconds_[call];
    return seconds;
  }

  sim::Device::MeasuredKernel operator()(const sim::ConvProblem& problem) {
    const exec::kernels::Conv2dShape& shape = problem;  // the one problem type, plans/kernel_problem.h
    const auto kernel = kernels_.factory->make_conv2d(shape);
    const Weighted l = weighted(
        shape.batch * shape.in_channels * shape.height * shape.width,
        shape.out_channels * (shape.in_channels / shape.groups) * shape.kernel_h * shape.kernel_w,
        shape.bias ? shape.out_channels : 0, shape.batch * shape.out_channels * shape.out_height() * shape.out_width());
    sim::Device::MeasuredKernel seconds;
    seconds.forward_seconds = time([&] { rewrite(l.x, l.x_elements); }, [&] { kernel->forward(l.x, l.w, l.b, l.y); });
    seconds.backward_input_seconds =
        time([&] { rewrite(l.y, l.y_elements); }, [&] { kernel->backward_data(l.y, l.w, l.dx); });
    seconds.backward_weight_seconds =
        time([&] { rewrite(l.y, l.y_elements); }, [&] { kernel->backward_weights(l.x, l.y, l.dw, l.db); });
    return seconds;
  }

  sim::Device::MeasuredKernel operator()(const sim::PoolProblem& problem) {
    const exec::kernels::Pool2dShape& shape = problem;
    const auto kernel = kernels_.factory->make_pool2d(
        problem.max ? exec::kernels::PoolKind::max : exec::kernels::PoolKind::average, shape);
    const int64_t x_elements = shape.batch * shape.channels * shape.height * shape.width;
    const int64_t y_elements = shape.batch * shape.channels * shape.out_height() * shape.out_width();
    float* x = filled(x_elements, 0.5f);
    float* y = filled(y_elements, 0.0f);
    float* dx = filled(x_elements, 0.0f);
    void* workspace = kernel->workspace_bytes() > 0 ? bytes(static_cast<int64_t>(kernel->workspace_bytes())) : nullptr;
    sim::Device::MeasuredKernel seconds;
    seconds.forward_seconds = time([&] { rewrite(x, x_elements); }, [&] { kernel->forward(x, y, workspace); });
    seconds.backward_input_seconds = time([&] { rewrite(y, y_elements); }, [&] { kernel->backward(y, workspace, dx); });
    return seconds;
  }

  sim::Device::MeasuredKernel operator()(const sim::ActivationProblem& problem) {
    if (problem.kind == model::OpKind::dropout) return dropout(problem);
    const auto kind =
        problem.kind == model::OpKind::gelu ? exec::kernels::Activation::gelu_tanh : exec::kernels::Activation::relu;
    const auto kernel = kernels_.factory->make_activation(kind, problem.elements);
    const int64_t n = problem.elements;
    float* x = filled(n, 0.5f);
    float* y = filled(n, 0.0f);
    float* dy = filled(n, 0.1f);
    float* dx = filled(n, 0.0f);
    sim::Device::MeasuredKernel seconds;
    seconds.forward_seconds = time([&] { rewrite(x, n); }, [&] { kernel->forward(x, y); });
    seconds.backward_input_seconds = time([&] { rewrite(dy, n); }, [&] { kernel->backward(y, dy, dx); });
    return seconds;
  }

  // The weight gradient as training's backward runs it: accumulated into the step's gradient.
  sim::Device::MeasuredKernel operator()(const sim::LinearProblem& problem) {
    const auto kernel =
        kernels_.factory->make_linear({problem.rows, problem.in_features, problem.out_features, problem.bias});
    const Weighted l = weighted(problem.rows * problem.in_features, problem.out_features * problem.in_features,
                                problem.bias ? problem.out_features : 0, problem.rows * problem.out_features);
    sim::Device::MeasuredKernel seconds;
    seconds.forward_seconds = time([&] { rewrite(l.x, l.x_elements); }, [&] { kernel->forward(l.x, l.w, l.b, l.y); });
    seconds.backward_input_seconds =
        time([&] { rewrite(l.y, l.y_elements); }, [&] { kernel->backward_data(l.y, l.w, l.dx); });
    seconds.backward_weight_seconds =
        time([&] { rewrite(l.y, l.y_elements); }, [&] { kernel->accumulate_weight_gradients(l.x, l.y, l.dw, l.db); });
    return seconds;
  }

  // The fused q, k, v gradient is the attention core's input gradient; it has no weights.
  sim::Device::MeasuredKernel operator()(const sim::AttentionProblem& problem) {
    // Llama's base stands for any rotation: the angles' base does not change the work.
    constexpr double kRopeTheta = 10000.0;
    // A share of the queries is timed as the last block of positions (any block runs the same
    // products; the last one sees the most keys in the causal softmax's loops).
    const auto kernel = kernels_.factory->make_self_attention(
        {problem.batch, problem.seq, problem.heads, problem.head_dim, problem.causal, problem.kv_heads,
         problem.rope ? kRopeTheta : 0.0, problem.fused, problem.queries, problem.seq - problem.query_rows()});
    const int64_t width = problem.heads * problem.head_dim;
    const int64_t qkv_elements =
        problem.batch * problem.seq * (problem.heads + 2 * problem.kv_head_count()) * problem.head_dim;
    const int64_t y_elements = problem.batch * problem.query_rows() * width;
    float* qkv = filled(qkv_elements, 0.5f);
    float* y = filled(y_elements, 0.0f);
    float* kept = filled(kernel->kept_elements(), 0.0f);  // the probabilities or the row statistics
    float* dy = filled(y_elements, 0.1f);
    float* dqkv = filled(qkv_elements, 0.0f);
    sim::Device::MeasuredKernel seconds;
    seconds.forward_seconds = time([&] { rewrite(qkv, qkv_elements); }, [&] { kernel->forward(qkv, y, kept); });
    seconds.backward_input_seconds =
        time([&] { rewrite(dy, y_elements); }, [&] { kernel->backward(qkv, kept, dy, dqkv); });
    return seconds;
  }

  // One backward kernel writes the input gradient and adds the scale's and shift's: all of it is
  // timed as the input gradient.
  sim::Device::MeasuredKernel operator()(const sim::LayerNormProblem& problem) {
    const auto kernel = kernels_.factory->make_layernorm({problem.rows, problem.features});
    const int64_t n = problem.rows * problem.features;
    float* x = filled(n, 0.5f);
    float* gamma = filled(problem.features, 1.0f);
    float* beta = filled(problem.features, 0.0f);
    float* y = filled(n, 0.0f);
    float* statistics = filled(2 * problem.rows, 0.0f);
    float* dy = filled(n, 0.1f);
    float* dx = filled(n, 0.0f);
    float* dgamma = filled(problem.features, 0.0f);
    float* dbeta = filled(problem.features, 0.0f);
    sim::Device::MeasuredKernel seconds;
    seconds.forward_seconds = time([&] { rewrite(x, n); },
                                   [&] { kernel->forward(x, gamma, beta, y, statistics, statistics + problem.rows); });
    seconds.backward_input_seconds =
        time([&] { rewrite(dy, n); },
             [&] { kernel->backward(x, dy, gamma, statistics, statistics + problem.rows, dx, dgamma, dbeta); });
    return seconds;
  }

  // The loss's forward (softmax and summed loss) and its logits' gradient, on labels of class 0.
  sim::Device::MeasuredKernel operator()(const sim::LossProblem& problem) {
    const auto kernel = kernels_.factory->make_softmax_cross_entropy({problem.rows, problem.classes});
    const int64_t n = problem.rows * problem.classes;
    float* logits = filled(n, 0.5f);
    float* probabilities = filled(n, 0.0f);
    float* dlogits = filled(n, 0.0f);
    auto* labels = static_cast<int32_t*>(bytes(problem.rows * static_cast<int64_t>(sizeof(int32_t))));
    array_->upload_queued(std::vector<int32_t>(static_cast<size_t>(problem.rows), 0), labels);
    auto* loss = static_cast<double*>(bytes(static_cast<int64_t>(sizeof(double))));
    const std::span<float> loss_output(filled(1, 0.0f), 1);
    const float scale = 1.0f / static_cast<float>(problem.rows);
    sim::Device::MeasuredKernel seconds;
    seconds.forward_seconds = time([&] { rewrite(logits, n); },
                                   [&] { kernel->forward(logits, labels, probabilities, scale, loss, loss_output); });
    seconds.backward_input_seconds =
        time([&] { rewrite(probabilities, n); }, [&] { kernel->backward(probabilities, labels, scale, dlogits); });
    return seconds;
  }

 private:
  sim::Device::MeasuredKernel dropout(const sim::ActivationProblem& problem) {
    const auto kernel = kernels_.factory->make_dropout(problem.drop_probability);
    const exec::kernels::DropoutBlock block{{problem.elements}, {0}, {problem.elements}};
    const int64_t n = problem.elements;
    float* x = filled(n, 0.5f);
    float* y = filled(n, 0.0f);
    float* dy = filled(n, 0.1f);
    float* dx = filled(n, 0.0f);
    auto* mask = static_cast<uint8_t*>(bytes(n));
    // A new mask for every call, as each step and layer draws its own: one mask timed over and over
    // lets the branch predictor learn it, which no step sees.
    exec::kernels::DropoutKey key{1, 1, 1};
    sim::Device::MeasuredKernel seconds;
    seconds.forward_seconds = time(
        [&] {
          rewrite(x, n);
          ++key.step;
        },
        [&] { kernel->forward(key, block, x, y, mask); });
    seconds.backward_input_seconds = time(
        [&] {
          ++key.step;
          kernel->forward(key, block, x, y, mask);
          rewrite(dy, n);
        },
        [&] { kernel->backward(n, mask, dy, dx); });
    return seconds;
  }

  // The arrays of a layer with weights (convolution, linear): x, w, b, y and their gradients; b and
  // db null without a bias.
  struct Weighted {
    int64_t x_elements, y_elements;
    float *x, *w, *b, *y, *dx, *dw, *db;
  };
  Weighted weighted(int64_t x_elements, int64_t w_elements, int64_t bias_elements, int64_t y_elements) {
    return {x_elements,
            y_elements,
            filled(x_elements, 0.5f),
            filled(w_elements, 0.01f),
            bias_elements > 0 ? filled(bias_elements, 0.1f) : nullptr,
            filled(y_elements, 0.0f),
            filled(x_elements, 0.0f),
            filled(w_elements, 0.0f),
            bias_elements > 0 ? filled(bias_elements, 0.0f) : nullptr};
  }

  // `elements` floats of the backend's memory, all `value`; they live as long as this timer.
  float* filled(int64_t elements, float value) {
    auto* values = static_cast<float*>(bytes(elements * static_cast<int64_t>(sizeof(float))));
    array_->fill(values, elements, value);
    return values;
  }
  void* bytes(int64_t count) {
    buffers_.push_back(kernels_.factory->make_kept_buffer(count));
    return buffers_.back()->data();
  }
  // What the layer before would just have written: new values in the same buffer.
  void rewrite(float* values, int64_t elements) { array_->fill(values, elements, 0.25f); }

  // The device's seconds of one run; the host's to queue it go to host_seconds_, in the order
  // of the calls (each problem times forward, input gradient, then weight gradient).
  template <class Refresh, class Work>
  double time(Refresh&& refresh, Work&& work) {
    const RunSeconds run = rank_seconds_on(busy_, sharing_, caches_, comm_, kernels_.sweep_caches, *kernels_.clock,
                                           kernels_.lead_seconds, refresh, work);
    host_seconds_.push_back(run.host);
    return run.device;
  }

  BackendKernels& kernels_;
  std::unique_ptr<exec::kernels::ArrayKernel> array_;
  std::vector<std::unique_ptr<exec::kernels::KeptBuffer>> buffers_;
  int busy_;
  sim::CacheState caches_;
  MPI_Comm comm_;
  const CoreSharing* sharing_;
  std::vector<double> host_seconds_;
};

}  // namespace

// What calibrate keeps of each problem's runs: the device's seconds of each pass, and the host's
// to queue it.
constexpr double sim::Device::MeasuredKernel::*kMeasuredFields[] = {
    &sim::Device::MeasuredKernel::forward_seconds,
    &sim::Device::MeasuredKernel::backward_input_seconds,
    &sim::Device::MeasuredKernel::backward_weight_seconds,
    &sim::Device::MeasuredKernel::forward_host_seconds,
    &sim::Device::MeasuredKernel::backward_input_host_seconds,
    &sim::Device::MeasuredKernel::backward_weight_host_seconds};

// A shared host's slow spells last longer than one problem's runs (seen: a 2x2 convolution's
// weight gradient 2.5x slower in one calibration than the one before, in between in training),
// so a problem's runs are spread over the whole measurement: `repeats` passes over the list, one
// run per problem and cache state in each, and the median over the passes.
void measure_kernel_problems(const std::vector<PlannedProblem>& problems, int repeats, bool print, MPI_Comm world,
                             MPI_Comm host, BackendKernels& kernels, sim::Device& device) {
  const sim::CacheState states[] = {sim::CacheState::swept, sim::CacheState::warm};
  // Per problem and cache state, per pass: forward, input gradient, weight gradient seconds.
  std::vector<std::array<std::vector<sim::Device::MeasuredKernel>, 2>> runs(problems.size());
  const CoreSharing sharing(host);  // collective: once, not per run
  const CoreSharing* host_sharing = kernels.computes_on_host ? &sharing : nullptr;
  for (int pass = 0; pass < repeats; ++pass) {
    if (print) {
      std::cout << fmt::format("[calibrate] kernel problems: pass {}/{} over {} problems, swept and warm\n", pass + 1,
                               repeats, problems.size())
                << std::flush;
    }
    for (size_t i = 0; i < problems.size(); ++i) {
      for (size_t s = 0; s < 2; ++s) {
        ProblemTimer timer(kernels, problems[i].busy_ranks, states[s], host, host_sharing);
        runs[i][s].push_back(timer.measure(problems[i].problem));
      }
    }
  }
  // Per problem and cache state: each rank's medians of forward, input and weight gradient
  // seconds, then the slowest rank's of the world (as median_seconds does for the curves). Not the
  // median of each run's slowest rank: a step waits for the slower rank between its
  // synchronizations, not after every kernel, and a maximum per run adds the ranks' independent
  // noise to every kernel (two ranks of one host, each 10% noisy, read about 6% slow that way).
  std::vector<double> medians;
  for (size_t i = 0; i < problems.size(); ++i) {
    for (size_t s = 0; s < 2; ++s) {
      for (double sim::Device::MeasuredKernel::*pass_seconds : kMeasuredFields) {
        std::vector<double> values;
        for (const sim::Device::MeasuredKernel& run : runs[i][s]) values.push_back(run.*pass_seconds);
        medians.push_back(upper_median(values));
      }
    }
  }
  SB_MPI_CHECK(
      MPI_Allreduce(MPI_IN_PLACE, medians.data(), static_cast<int>(medians.size()), MPI_DOUBLE, MPI_MAX, world));
  for (size_t i = 0; i < problems.size(); ++i) {
    for (size_t s = 0; s < 2; ++s) {
      const double* median = &medians[(i * 2 + s) * std::size(kMeasuredFields)];
      sim::Device::MeasuredKernel seconds;
      for (size_t field = 0; field < std::size(kMeasuredFields); ++field)
        seconds.*kMeasuredFields[field] = median[field];
      const std::string key = sim::kernel_key(problems[i].problem, problems[i].busy_ranks, states[s]);
      if (print) {
        std::cout << fmt::format(
            "[calibrate] {:>3}/{} {:<78} fwd {:8.3f} ms  bwd-data {:8.3f} ms  bwd-weights {:8.3f} ms", i + 1,
            problems.size(), key, seconds.forward_seconds * 1e3, seconds.backward_input_seconds * 1e3,
            seconds.backward_weight_seconds * 1e3);
        if (seconds.forward_host_seconds > 0.0) {
          std::cout << fmt::format("  host {:.3f} / {:.3f} / {:.3f} ms", seconds.forward_host_seconds * 1e3,
                                   seconds.backward_input_host_seconds * 1e3,
                                   seconds.backward_weight_host_seconds * 1e3);
        }
        std::cout << "\n" << std::flush;
      }
      device.measured_kernels[key] = seconds;
    }
  }
  device.last_level_cache_bytes = kernels.last_level_cache_bytes;
}

}  // namespace splitbrain::tools
