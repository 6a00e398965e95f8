#include "exec/cuda/cuda_host_link.h"

#include "exec/cuda/cuda_array.h"
#include "exec/cuda/cuda_check.h"

namespace splitbrain::exec::cuda {

CudaHostLink::CudaHostLink(CudaContext& context)
    : context_(context), pinned_(std::make_shared<PinnedHostMemory>(context.device())), slots_(context.device()) {}

HostTransfers CudaHostLink::host_transfers() const {
  HostTransfers all = HostLink::host_transfers();
  all += context_.host_transfers();
  return all;
}

void CudaHostLink::upload_values(std::span<const float> host, DeviceArray& into) {
  if (host.empty()) return;
  SB_CUDA_CHECK(cudaMemcpyAsync(CudaArray::data_of(into), host.data(), host.size_bytes(), cudaMemcpyHostToDevice,
                                context_.stream()));
  // The host buffer may go as soon as this returns.
  context_.synchronize();
}

void CudaHostLink::upload_values_queued(std::span<const float> host, DeviceArray& into) {
  if (host.empty()) return;
  if (is_page_locked(host.data())) {
    SB_CUDA_CHECK(cudaMemcpyAsync(CudaArray::data_of(into), host.data(), host.size_bytes(), cudaMemcpyHostToDevice,
                                  context_.stream()));
    return;
  }
  slots_.upload(host.data(), host.size_bytes(), CudaArray::data_of(into), context_.stream());
}

void CudaHostLink::download_values(const DeviceArray& from, std::span<float> host) {
  if (host.empty()) return;
  SB_CUDA_CHECK(cudaMemcpyAsync(host.data(), CudaArray::data_of(from), host.size_bytes(), cudaMemcpyDeviceToHost,
                                context_.stream()));
  context_.synchronize();
}

}  // namespace splitbrain::exec::cuda
