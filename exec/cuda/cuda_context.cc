#include "exec/cuda/cuda_context.h"

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/release_in_destructor.h"

namespace splitbrain::exec::cuda {

CudaContext::CudaContext(int device, Fp32Math math, KernelGraphs graphs)
    : device_(device), math_(math), graphs_(graphs) {
  SB_CUDA_CHECK(cudaSetDevice(device));
  // Non-blocking: the legacy default stream, used by other libraries, must not serialise with it.
  SB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  SB_CUDNN_CHECK(cudnnCreate(&cudnn_));
  SB_CUDNN_CHECK(cudnnSetStream(cudnn_, stream_));
  SB_CUBLAS_CHECK(cublasCreate(&cublas_));
  SB_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  SB_CUBLAS_CHECK(
      cublasSetMathMode(cublas_, math == Fp32Math::tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH));
}

CudaContext::~CudaContext() {
  if (stream_ != nullptr) release_in_destructor([&] { SB_CUDA_CHECK(cudaStreamSynchronize(stream_)); });
  staging_.clear();
  workspace_ = DeviceBuffer();
  if (cublas_ != nullptr) release_in_destructor([&] { SB_CUBLAS_CHECK(cublasDestroy(cublas_)); });
  if (cudnn_ != nullptr) release_in_destructor([&] { SB_CUDNN_CHECK(cudnnDestroy(cudnn_)); });
  if (stream_ != nullptr) release_in_destructor([&] { SB_CUDA_CHECK(cudaStreamDestroy(stream_)); });
}

void* CudaContext::grown(DeviceBuffer& buffer, std::size_t bytes) {
  if (bytes > buffer.bytes()) synchronize();
  return buffer.grow_to(bytes);
}

void* CudaContext::workspace(std::size_t bytes) { return grown(workspace_, bytes); }

void* CudaContext::staging(std::size_t slot, std::size_t bytes) {
  if (slot >= staging_.size()) staging_.resize(slot + 1);
  return grown(staging_[slot], bytes);
}

void CudaContext::synchronize() const {
  ++host_waits_;
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace splitbrain::exec::cuda
