#pragma once
// One macro per library call, as for MPI (exec/comm/mpi_check.h) and oneDNN: every CUDA runtime,
// cuDNN, cuBLAS and NCCL call of the CUDA backend goes through one of these. A failure throws a
// CudaError whose message names the world rank, file:line, the call as written and the library's
// own error string, e.g.
//   "rank 1: exec/cuda/conv2d.cu:88: cudnnConvolutionForward(...) failed: CUDNN_STATUS_BAD_PARAM"
// (a library never ends the job; the runtime's top level does, see comm::abort_job).

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <nccl.h>

#include <stdexcept>

namespace splitbrain::exec::cuda {

class CudaError : public std::runtime_error {
 public:
  CudaError(const char* library, const char* file, int line, const char* call, const char* error_text);
};

// The libraries' error strings (cuBLAS has no string function before 11.4's cublasGetStatusString).
const char* error_text(cudaError_t status);
const char* error_text(cudnnStatus_t status);
const char* error_text(cublasStatus_t status);
const char* error_text(ncclResult_t status);

inline bool succeeded(cudaError_t status) { return status == cudaSuccess; }
inline bool succeeded(cudnnStatus_t status) { return status == CUDNN_STATUS_SUCCESS; }
inline bool succeeded(cublasStatus_t status) { return status == CUBLAS_STATUS_SUCCESS; }
inline bool succeeded(ncclResult_t status) { return status == ncclSuccess; }

}  // namespace splitbrain::exec::cuda

// Evaluates the call once; throws CudaError unless it succeeded. `library` names it in the message.
#define SB_CUDA_LIBRARY_CHECK(library, ...)                                                             \
  do {                                                                                                  \
    const auto sb_cuda_status_ = (__VA_ARGS__);                                                         \
    if (!::splitbrain::exec::cuda::succeeded(sb_cuda_status_)) {                                        \
      throw ::splitbrain::exec::cuda::CudaError(library, __FILE__, __LINE__, #__VA_ARGS__,              \
                                                ::splitbrain::exec::cuda::error_text(sb_cuda_status_)); \
    }                                                                                                   \
  } while (false)

#define SB_CUDA_CHECK(...) SB_CUDA_LIBRARY_CHECK("CUDA", __VA_ARGS__)
#define SB_CUDNN_CHECK(...) SB_CUDA_LIBRARY_CHECK("cuDNN", __VA_ARGS__)
#define SB_CUBLAS_CHECK(...) SB_CUDA_LIBRARY_CHECK("cuBLAS", __VA_ARGS__)
#define SB_NCCL_CHECK(...) SB_CUDA_LIBRARY_CHECK("NCCL", __VA_ARGS__)
