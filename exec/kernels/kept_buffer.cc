#include "exec/kernels/kept_buffer.h"

#include <stdexcept>
#include <string>

namespace splitbrain::exec::kernels {
namespace {

class HostKeptBuffer final : public KeptBuffer {
 public:
  explicit HostKeptBuffer(int64_t bytes) : bytes_(bytes), storage_(new std::byte[static_cast<size_t>(bytes)]) {}
  std::byte* data() override { return storage_.get(); }
  int64_t bytes() const override { return bytes_; }

 private:
  int64_t bytes_;
  std::unique_ptr<std::byte[]> storage_;
};

}  // namespace

std::unique_ptr<KeptBuffer> make_host_kept_buffer(int64_t bytes) {
  if (bytes < 0) throw std::invalid_argument("make_host_kept_buffer: negative size " + std::to_string(bytes));
  return std::make_unique<HostKeptBuffer>(bytes);
}

}  // namespace splitbrain::exec::kernels
