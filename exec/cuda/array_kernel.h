#pragma once
// kernels::ArrayKernel on the GPU: copies and fills queued on the context's compute stream, in
// order with the layer kernels. The host transfers are counted (CudaContext::count_host_transfer):
// download and upload wait for the stream before they return, as their contract says; the queued
// ones go through page-locked slots (page_locked_slots.h) and wait for nothing.

#include <memory>

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/page_locked_slots.h"
#include "exec/kernels/array_kernel.h"

namespace splitbrain::exec::cuda {

// `c`'s rows from `from` into `into`, queued on `stream` (one cudaMemcpy2DAsync: a plane's rows per
// line); nothing for an empty copy.
void queue_row_copy(cudaStream_t stream, const float* from, float* into, const kernels::RowCopy& c);

class ArrayKernel final : public kernels::ArrayKernel {
 public:
  explicit ArrayKernel(CudaContext& context) : context_(context), slots_(context.device()) {}

  void copy(const float* from, float* into, int64_t elements) override;
  void fill(float* into, int64_t elements, float value) override;
  // One strided copy (cudaMemcpy2DAsync: a plane's rows per line).
  void copy_rows(const float* from, float* into, const kernels::RowCopy& copy) override;
  void download(const float* from, std::span<float> host) override;
  void upload(std::span<const float> host, float* into) override;
  void download(const double* from, std::span<double> host) override;
  void upload(std::span<const double> host, double* into) override;
  void upload_queued(std::span<const int32_t> host, int32_t* into) override;
  std::unique_ptr<kernels::QueuedDownload> download_queued(const double* from) override;
  // Page-locked slots made so far (each reused once its copy is done).
  std::size_t page_locked_slots() const { return slots_.size(); }

 private:
  CudaContext& context_;
  PageLockedSlots slots_;
};

}  // namespace splitbrain::exec::cuda
