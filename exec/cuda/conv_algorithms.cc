#include "exec/cuda/conv_algorithms.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/device_buffer.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cuda {
namespace {

// Algorithms whose workspace exceeds this are passed over (some FFT variants ask for several
// GiB on large layers, which would crowd out activations); a direct or GEMM algorithm always
// fits.
constexpr std::size_t kWorkspaceLimitBytes = std::size_t{512} << 20;

// The first result (cuDNN ranks them: by measured time for Find, by heuristics for Get) that
// ran and fits `workspace_bytes`.
template <typename Perf>
std::optional<Perf> first_usable(const Perf* results, int count, std::size_t workspace_bytes) {
  for (int i = 0; i < count; ++i)
    if (results[i].status == CUDNN_STATUS_SUCCESS && results[i].memory <= workspace_bytes) return results[i];
  return std::nullopt;
}

template <typename Perf>
Perf required(const std::optional<Perf>& perf, const char* pass) {
  if (!perf)
    throw kernels::KernelArgumentError(std::string("Conv2dKernel: cuDNN has no algorithm for the ") + pass +
                                       " pass of this shape within " + std::to_string(kWorkspaceLimitBytes >> 20) +
                                       " MiB of workspace");
  return *perf;
}

ConvAlgorithms ranked_by_heuristics(cudnnHandle_t cudnn, const ConvDescriptors& d) {
  int returned = 0;
  cudnnConvolutionFwdAlgoPerf_t forward[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  SB_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(cudnn, d.input, d.filter, d.convolution, d.output,
                                                        CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, forward));
  const auto fwd = required(first_usable(forward, returned, kWorkspaceLimitBytes), "forward");
  cudnnConvolutionBwdDataAlgoPerf_t backward_data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  SB_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnn, d.filter, d.output, d.convolution, d.input,
                                                             CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned,
                                                             backward_data));
  const auto bwd = required(first_usable(backward_data, returned, kWorkspaceLimitBytes), "backward data");
  cudnnConvolutionBwdFilterAlgoPerf_t backward_filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  SB_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnn, d.input, d.output, d.convolution, d.filter,
                                                               CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned,
                                                               backward_filter));
  const auto bwf = required(first_usable(backward_filter, returned, kWorkspaceLimitBytes), "backward weights");
  return {fwd.algo, fwd.memory, bwd.algo, bwd.memory, bwf.algo, bwf.memory};
}

// cudnnFind times each algorithm once, and a convolution of a small batch runs for tens of
// microseconds, so one search can rank a slower algorithm first: on an H100, two processes picked
// algorithms up to 60% apart for the same 64-sample convolution, and calibrate then timed other
// algorithms than the run used. Searching kSearches times and taking the lowest summed time makes
// the choice stable from process to process.
constexpr int kSearches = 5;

// `find(results, &returned)` runs one cudnnFind*Ex for up to `count` algorithms.
template <typename Perf, typename Find>
Perf steadiest(Find&& find, int count, std::size_t workspace_bytes, const char* pass) {
  struct Tally {
    double total_ms = 0.0;
    int searches = 0;
    Perf perf{};
  };
  std::map<int, Tally> by_algorithm;
  std::vector<Perf> results(static_cast<std::size_t>(count));
  for (int search = 0; search < kSearches; ++search) {
    int returned = 0;
    find(results.data(), &returned);
    for (int i = 0; i < returned; ++i) {
      const Perf& r = results[static_cast<std::size_t>(i)];
      if (r.status != CUDNN_STATUS_SUCCESS || r.memory > workspace_bytes) continue;
      Tally& tally = by_algorithm[static_cast<int>(r.algo)];
      tally.total_ms += r.time;
      ++tally.searches;
      if (r.memory >= tally.perf.memory) tally.perf = r;
    }
  }
  std::optional<Perf> best;
  double best_ms = 0.0;
  for (const auto& [algorithm, tally] : by_algorithm) {
    if (tally.searches < kSearches) continue;  // failed in some search: not dependable
    if (!best || tally.total_ms < best_ms) {
      best = tally.perf;
      best_ms = tally.total_ms;
    }
  }
  return required(best, pass);
}

// Times every algorithm of each pass on scratch tensors of the convolution's sizes. Returns
// nothing when the scratch does not fit in the free device memory (a quarter of it at most).
std::optional<ConvAlgorithms> fastest_measured(CudaContext& context, const ConvDescriptors& d) {
  std::size_t free_bytes = 0, total_bytes = 0;
  SB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t workspace_bytes = std::min(kWorkspaceLimitBytes, free_bytes / 4);
  if (d.input_bytes + d.filter_bytes + d.output_bytes + workspace_bytes > free_bytes / 2) return std::nullopt;
  context.synchronize();  // the search runs on the context's stream, beside nothing else
  const DeviceBuffer x(d.input_bytes), w(d.filter_bytes), y(d.output_bytes), workspace(workspace_bytes);
  SB_CUDA_CHECK(cudaMemsetAsync(x.data(), 0, x.bytes(), context.stream()));
  SB_CUDA_CHECK(cudaMemsetAsync(w.data(), 0, w.bytes(), context.stream()));
  SB_CUDA_CHECK(cudaMemsetAsync(y.data(), 0, y.bytes(), context.stream()));
  cudnnHandle_t cudnn = context.cudnn();
  const auto fwd = steadiest<cudnnConvolutionFwdAlgoPerf_t>(
      [&](cudnnConvolutionFwdAlgoPerf_t* results, int* returned) {
        SB_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(
            cudnn, d.input, x.data(), d.filter, w.data(), d.convolution, d.output, y.data(),
            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, returned, results, workspace.data(), workspace_bytes));
      },
      CUDNN_CONVOLUTION_FWD_ALGO_COUNT, workspace_bytes, "forward");
  const auto bwd = steadiest<cudnnConvolutionBwdDataAlgoPerf_t>(
      [&](cudnnConvolutionBwdDataAlgoPerf_t* results, int* returned) {
        SB_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(
            cudnn, d.filter, w.data(), d.output, y.data(), d.convolution, d.input, x.data(),
            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, returned, results, workspace.data(), workspace_bytes));
      },
      CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, workspace_bytes, "backward data");
  const auto bwf = steadiest<cudnnConvolutionBwdFilterAlgoPerf_t>(
      [&](cudnnConvolutionBwdFilterAlgoPerf_t* results, int* returned) {
        SB_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(
            cudnn, d.input, x.data(), d.output, y.data(), d.convolution, d.filter, w.data(),
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, returned, results, workspace.data(), workspace_bytes));
      },
      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, workspace_bytes, "backward weights");
  context.synchronize();  // before the scratch is freed
  return ConvAlgorithms{fwd.algo, fwd.memory, bwd.algo, bwd.memory, bwf.algo, bwf.memory};
}

// The process's choices, by key, and the lock that guards them.
std::map<std::string, ConvAlgorithms>& choices_made() {
  static std::map<std::string, ConvAlgorithms> choices;
  return choices;
}
std::mutex& choices_lock() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

ConvAlgorithms conv_algorithms(CudaContext& context, const ConvDescriptors& descriptors, const std::string& key) {
  const std::lock_guard<std::mutex> lock(choices_lock());
  std::map<std::string, ConvAlgorithms>& found = choices_made();
  const auto cached = found.find(key);
  if (cached != found.end()) return cached->second;
  const std::optional<ConvAlgorithms> measured = fastest_measured(context, descriptors);
  const ConvAlgorithms chosen = measured ? *measured : ranked_by_heuristics(context.cudnn(), descriptors);
  found.emplace(key, chosen);
  return chosen;
}

std::map<std::string, ConvAlgorithms> conv_algorithm_choices() {
  const std::lock_guard<std::mutex> lock(choices_lock());
  return choices_made();
}

void adopt_conv_algorithm_choices(const std::map<std::string, ConvAlgorithms>& choices) {
  const std::lock_guard<std::mutex> lock(choices_lock());
  for (const auto& [key, chosen] : choices) choices_made()[key] = chosen;
}

}  // namespace splitbrain::exec::cuda
