#pragma once
// Fused attention's softmax statistics on the GPU (exec/kernels/attention.h: `fused`): the
// log-sum-exp of every score row, which forward keeps instead of the probabilities, and the
// probabilities made again from recomputed scores and those statistics in backward. Rows of
// `seq` scores, masked ones already -inf (mask_future), so they give exact zeros. Device
// pointers, queued on `stream`. C++17: the .cu file includes it.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace splitbrain::exec::cuda {

// log_sum_exp[r] = max_j s[r][j] + log(sum_j exp(s[r][j] - max)), for `rows` rows of scores.
void row_log_sum_exp(cudaStream_t stream, int64_t rows, int64_t seq, const float* scores, float* log_sum_exp);
// scores[r][j] = exp(scores[r][j] - log_sum_exp[r]) in place: the softmax of each row.
void probabilities_from_log_sum_exp(cudaStream_t stream, int64_t rows, int64_t seq, const float* log_sum_exp,
                                    float* scores);

}  // namespace splitbrain::exec::cuda
