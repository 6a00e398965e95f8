#include "exec/cuda/chunked_tensor_table.h"

#include <algorithm>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/release_in_destructor.h"

namespace splitbrain::exec::cuda {
namespace {

bool same(const ChunkedTensor& a, const ChunkedTensor& b) {
  return a.elements == b.elements && a.first_chunk == b.first_chunk && a.first == b.first && a.second == b.second &&
         a.third == b.third && a.fourth == b.fourth;
}

}  // namespace

int64_t number_chunks(std::span<ChunkedTensor> tensors) {
  int64_t chunks = 0;
  for (ChunkedTensor& tensor : tensors) {
    tensor.first_chunk = chunks;
    chunks += (tensor.elements + kElementsPerChunk - 1) / kElementsPerChunk;
  }
  return chunks;
}

ChunkedTensorTable::~ChunkedTensorTable() {
  if (device_ != nullptr) release_in_destructor([&] { SB_CUDA_CHECK(cudaFree(device_)); });
}

const ChunkedTensor* ChunkedTensorTable::on_device(std::span<const ChunkedTensor> tensors) {
  if (tensors.size() == held_.size() && std::equal(tensors.begin(), tensors.end(), held_.begin(), same)) return device_;
  SB_CUDA_CHECK(cudaStreamSynchronize(context_.stream()));  // no queued kernel reads the old table any more
  if (tensors.size() > capacity_) {
    if (device_ != nullptr) SB_CUDA_CHECK(cudaFree(device_));
    device_ = nullptr;
    capacity_ = 0;
    SB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&device_), tensors.size_bytes()));
    capacity_ = tensors.size();
  }
  held_.assign(tensors.begin(), tensors.end());
  if (!held_.empty()) {
    SB_CUDA_CHECK(
        cudaMemcpyAsync(device_, held_.data(), tensors.size_bytes(), cudaMemcpyHostToDevice, context_.stream()));
    context_.count_host_transfer(tensors.size_bytes());
  }
  return device_;
}

}  // namespace splitbrain::exec::cuda
