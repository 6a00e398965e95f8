#pragma once
// kernels::ArrayKernel on the GPU: copies and fills queued on the context's compute stream, in
// order with the layer kernels; the host transfers (download, upload) wait for the stream before
// they return, as their contract says, and are counted (CudaContext::count_host_transfer).

#include "exec/cuda/cuda_context.h"
#include "exec/kernels/array_kernel.h"

namespace splitbrain::exec::cuda {

class ArrayKernel final : public kernels::ArrayKernel {
 public:
  explicit ArrayKernel(CudaContext& context) : context_(context) {}

  void copy(const float* from, float* into, int64_t elements) override;
  void fill(float* into, int64_t elements, float value) override;
  void download(const float* from, std::span<float> host) override;
  void upload(std::span<const float> host, float* into) override;
  void download(const double* from, std::span<double> host) override;
  void upload(std::span<const double> host, double* into) override;
  void upload(std::span<const int32_t> host, int32_t* into) override;

 private:
  CudaContext& context_;
};

}  // namespace splitbrain::exec::cuda
