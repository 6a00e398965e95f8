#include "exec/cuda/device_buffer.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/release_in_destructor.h"

namespace splitbrain::exec::cuda {

namespace {
void require_fits(std::size_t bytes, const DeviceBuffer& buffer, const char* what) {
  if (bytes > buffer.bytes())
    throw std::logic_error(std::string(what) + ": " + std::to_string(bytes) + " bytes do not fit a device buffer of " +
                           std::to_string(buffer.bytes()));
}
}  // namespace

DeviceBuffer::DeviceBuffer(std::size_t bytes) { grow_to(bytes); }

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void* DeviceBuffer::grow_to(std::size_t bytes) {
  if (bytes <= bytes_) return data_;
  release();
  SB_CUDA_CHECK(cudaMalloc(&data_, bytes));
  bytes_ = bytes;
  return data_;
}

void DeviceBuffer::release() noexcept {
  if (data_ != nullptr) release_in_destructor([&] { SB_CUDA_CHECK(cudaFree(data_)); });
  data_ = nullptr;
  bytes_ = 0;
}

void upload(cudaStream_t stream, const void* source, std::size_t bytes, const DeviceBuffer& to) {
  require_fits(bytes, to, "upload");
  SB_CUDA_CHECK(cudaMemcpyAsync(to.data(), source, bytes, cudaMemcpyDefault, stream));
}

void download(cudaStream_t stream, const DeviceBuffer& from, std::size_t bytes, void* destination) {
  require_fits(bytes, from, "download");
  SB_CUDA_CHECK(cudaMemcpyAsync(destination, from.data(), bytes, cudaMemcpyDefault, stream));
}

}  // namespace splitbrain::exec::cuda
