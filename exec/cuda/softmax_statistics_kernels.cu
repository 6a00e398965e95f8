// Fused attention's softmax statistics (softmax_statistics_kernels.h): the twins of the CPU
// kernel's log-sum-exp in masked_softmax and its probabilities_from_statistics. One thread per
// row for the statistics (a row is read twice: its maximum, then the sum), one per score for the
// probabilities.

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/grid.h"
#include "exec/cuda/softmax_statistics_kernels.h"

namespace splitbrain::exec::cuda {
namespace {

__global__ void row_log_sum_exp_kernel(int64_t rows, int64_t seq, const float* scores, float* log_sum_exp) {
  SB_GRID_STRIDE_LOOP(r, rows) {
    const float* row = scores + r * seq;
    float max = row[0];  // column 0 is never masked
    for (int64_t j = 1; j < seq; ++j) max = fmaxf(max, row[j]);
    float sum = 0.0f;
    for (int64_t j = 0; j < seq; ++j) sum += expf(row[j] - max);  // exp(-inf) = 0 for masked scores
    log_sum_exp[r] = max + logf(sum);
  }
}

__global__ void probabilities_kernel(int64_t rows, int64_t seq, const float* log_sum_exp, float* scores) {
  SB_GRID_STRIDE_LOOP(e, rows * seq) { scores[e] = expf(scores[e] - log_sum_exp[e / seq]); }
}

}  // namespace

void row_log_sum_exp(cudaStream_t stream, int64_t rows, int64_t seq, const float* scores, float* log_sum_exp) {
  row_log_sum_exp_kernel<<<blocks_for(rows), kThreadsPerBlock, 0, stream>>>(rows, seq, scores, log_sum_exp);
  SB_CUDA_CHECK(cudaGetLastError());
}

void probabilities_from_log_sum_exp(cudaStream_t stream, int64_t rows, int64_t seq, const float* log_sum_exp,
                                    float* scores) {
  probabilities_kernel<<<blocks_for(rows * seq), kThreadsPerBlock, 0, stream>>>(rows, seq, log_sum_exp, scores);
  SB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace splitbrain::exec::cuda
