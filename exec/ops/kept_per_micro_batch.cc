#include "exec/ops/kept_per_micro_batch.h"

#include <stdexcept>
#include <string>

namespace splitbrain::exec::ops {

kernels::KeptBuffer& KeptPerMicroBatch::keep(int micro, int64_t bytes) {
  std::unique_ptr<kernels::KeptBuffer>& slot = buffers_[micro];
  slot = factory_->make_kept_buffer(bytes);
  return *slot;
}

kernels::KeptBuffer& KeptPerMicroBatch::at(int micro) const {
  const auto found = buffers_.find(micro);
  if (found == buffers_.end())
    throw std::logic_error("an op's backward for micro-batch " + std::to_string(micro) + " came without its forward");
  return *found->second;
}

int64_t KeptPerMicroBatch::bytes() const {
  int64_t total = 0;
  for (const auto& [micro, buffer] : buffers_) total += buffer->bytes();
  return total;
}

}  // namespace splitbrain::exec::ops
