#pragma once
// Memory an op keeps from a layer's forward to its backward (dropout masks, softmax
// probabilities, normalisation statistics), in the backend's own memory: host memory on the CPU,
// device memory on a GPU once the CUDA kernels take device pointers. The op hands the pointer to
// its kernels and never reads the contents, so the state stays where the kernels compute.

#include <cstddef>
#include <cstdint>
#include <memory>

namespace splitbrain::exec::kernels {

class KeptBuffer {
 public:
  virtual ~KeptBuffer() = default;
  virtual std::byte* data() = 0;
  virtual int64_t bytes() const = 0;
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(data());
  }
};

// `bytes` of host memory (contents undefined until a kernel writes them).
std::unique_ptr<KeptBuffer> make_host_kept_buffer(int64_t bytes);

}  // namespace splitbrain::exec::kernels
