#pragma once
// Owned GPU memory (cudaMalloc / cudaFree) that knows its size in bytes, and the copies into and
// out of it on a stream. Move-only: exactly one owner frees it.

#include <cuda_runtime_api.h>

#include <cstddef>

namespace splitbrain::exec::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  std::size_t bytes() const { return bytes_; }
  // Like unique_ptr::get(): a const owner still hands out a writable pointer (the memory is not
  // part of the owner's value).
  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

  // Reallocates (contents lost) when smaller than `bytes`; never shrinks. Returns data().
  void* grow_to(std::size_t bytes);

 private:
  void release() noexcept;

  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Asynchronous on `stream`, from or to host or device memory (cudaMemcpyDefault: the kernels take
// either, cuda_context.h). From pageable host memory the upload has returned once the source may
// be reused; a download is complete only after the stream is synchronised. `bytes` must fit the
// buffer: std::logic_error otherwise (a kernel sized its buffers wrongly).
void upload(cudaStream_t stream, const void* source, std::size_t bytes, const DeviceBuffer& to);
void download(cudaStream_t stream, const DeviceBuffer& from, std::size_t bytes, void* destination);

}  // namespace splitbrain::exec::cuda
