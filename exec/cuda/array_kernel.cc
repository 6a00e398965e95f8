#include "exec/cuda/array_kernel.h"

#include <cstring>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/elementwise_kernels.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

namespace {

std::size_t float_bytes(std::size_t elements) { return elements * sizeof(float); }

// A counted copy between the host's values and the device's, complete when it returns.
template <typename T>
void copy_waiting(CudaContext& context, T* into, const T* from, std::size_t elements) {
  if (elements == 0) return;
  SB_CUDA_CHECK(cudaMemcpyAsync(into, from, elements * sizeof(T), cudaMemcpyDefault, context.stream()));
  context.count_host_transfer(HostTransferPurpose::other, elements * sizeof(T));
  context.synchronize();
}

// The value lands in its slot, held until this is gone.
class QueuedDouble final : public kernels::QueuedDownload {
 public:
  explicit QueuedDouble(PageLockedSlots::Slot& slot) : slot_(slot) {}
  ~QueuedDouble() override { PageLockedSlots::give_back(slot_); }
  QueuedDouble(const QueuedDouble&) = delete;
  QueuedDouble& operator=(const QueuedDouble&) = delete;

  double wait() override {
    PageLockedSlots::wait(slot_);
    double value = 0.0;
    std::memcpy(&value, slot_.memory, sizeof value);
    return value;
  }

 private:
  PageLockedSlots::Slot& slot_;
};

}  // namespace

void ArrayKernel::copy(const float* from, float* into, int64_t elements) {
  if (from == into || elements <= 0) return;
  SB_CUDA_CHECK(cudaMemcpyAsync(into, from, float_bytes(static_cast<std::size_t>(elements)), cudaMemcpyDefault,
                                context_.stream()));
}

void ArrayKernel::fill(float* into, int64_t elements, float value) {
  fill_on_device(context_.stream(), elements, value, into);
}

void queue_row_copy(cudaStream_t stream, const float* from, float* into, const kernels::RowCopy& c) {
  if (c.planes <= 0 || c.rows <= 0 || c.row_elements <= 0) return;
  const std::size_t row_bytes = float_bytes(static_cast<std::size_t>(c.row_elements));
  SB_CUDA_CHECK(cudaMemcpy2DAsync(
      into + c.into_first_row * c.row_elements, static_cast<std::size_t>(c.into_plane_rows) * row_bytes,
      from + c.from_first_row * c.row_elements, static_cast<std::size_t>(c.from_plane_rows) * row_bytes,
      static_cast<std::size_t>(c.rows) * row_bytes, static_cast<std::size_t>(c.planes), cudaMemcpyDeviceToDevice,
      stream));
}

void ArrayKernel::copy_rows(const float* from, float* into, const kernels::RowCopy& c) {
  queue_row_copy(context_.stream(), from, into, c);
}

void ArrayKernel::download(const float* from, std::span<float> host) {
  copy_waiting(context_, host.data(), from, host.size());
}

void ArrayKernel::upload(std::span<const float> host, float* into) {
  copy_waiting(context_, into, host.data(), host.size());
}

void ArrayKernel::download(const double* from, std::span<double> host) {
  copy_waiting(context_, host.data(), from, host.size());
}

void ArrayKernel::upload(std::span<const double> host, double* into) {
  copy_waiting(context_, into, host.data(), host.size());
}

void ArrayKernel::upload_queued(std::span<const int32_t> host, int32_t* into) {
  if (host.empty()) return;
  slots_.upload(host.data(), host.size_bytes(), into, context_.stream());
  context_.count_host_transfer(HostTransferPurpose::labels, host.size_bytes());
}

std::unique_ptr<kernels::QueuedDownload> ArrayKernel::download_queued(const double* from) {
  PageLockedSlots::Slot& slot = slots_.take(sizeof(double));
  auto download = std::make_unique<QueuedDouble>(slot);  // gives the slot back if what follows throws
  SB_CUDA_CHECK(cudaMemcpyAsync(slot.memory, from, sizeof(double), cudaMemcpyDeviceToHost, context_.stream()));
  PageLockedSlots::copy_queued(slot, context_.stream());
  context_.count_host_transfer(HostTransferPurpose::loss, sizeof(double));
  return download;
}

// Host memory until this backend's arrays live on the device (README.md).
std::unique_ptr<kernels::ArrayKernel> make_array_kernel(CudaContext& context) {
  return std::make_unique<ArrayKernel>(context);
}

}  // namespace splitbrain::exec::cuda
