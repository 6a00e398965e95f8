#include "exec/kernels/array_kernel.h"

#include <algorithm>

namespace splitbrain::exec::kernels {
namespace {

// The copy is done when it is queued: host memory is the backend's.
class HostValue final : public QueuedDownload {
 public:
  explicit HostValue(double value) : value_(value) {}
  double wait() override { return value_; }

 private:
  double value_;
};

class HostArrayKernel final : public ArrayKernel {
 public:
  void copy(const float* from, float* into, int64_t elements) override {
    if (from != into) std::copy(from, from + elements, into);
  }
  void fill(float* into, int64_t elements, float value) override { std::fill(into, into + elements, value); }
  void copy_rows(const float* from, float* into, const RowCopy& c) override {
    const int64_t run = c.rows * c.row_elements;
    for (int64_t p = 0; p < c.planes; ++p) {
      const float* source = from + (p * c.from_plane_rows + c.from_first_row) * c.row_elements;
      std::copy(source, source + run, into + (p * c.into_plane_rows + c.into_first_row) * c.row_elements);
    }
  }
  void download(const float* from, std::span<float> host) override { std::copy_n(from, host.size(), host.begin()); }
  void upload(std::span<const float> host, float* into) override { std::copy(host.begin(), host.end(), into); }
  void download(const double* from, std::span<double> host) override { std::copy_n(from, host.size(), host.begin()); }
  void upload(std::span<const double> host, double* into) override { std::copy(host.begin(), host.end(), into); }
  void upload_queued(std::span<const int32_t> host, int32_t* into) override {
    std::copy(host.begin(), host.end(), into);
  }
  std::unique_ptr<QueuedDownload> download_queued(const double* from) override {
    return std::make_unique<HostValue>(*from);
  }
};

}  // namespace

std::unique_ptr<ArrayKernel> make_host_array_kernel() { return std::make_unique<HostArrayKernel>(); }

}  // namespace splitbrain::exec::kernels
