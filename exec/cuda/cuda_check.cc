#include "exec/cuda/cuda_check.h"

#include <string>

#include "exec/comm/mpi_check.h"

namespace splitbrain::exec::cuda {

CudaError::CudaError(const char* library, const char* file, int line, const char* call, const char* error_text)
    : std::runtime_error("rank " + std::to_string(comm::world_rank()) + ": " + file + ":" + std::to_string(line) +
                         ": " + library + " call " + call + " failed: " + error_text) {}

const char* error_text(cudaError_t status) { return cudaGetErrorString(status); }
const char* error_text(cudnnStatus_t status) { return cudnnGetErrorString(status); }
const char* error_text(cublasStatus_t status) { return cublasGetStatusString(status); }
const char* error_text(ncclResult_t status) { return ncclGetErrorString(status); }

}  // namespace splitbrain::exec::cuda
